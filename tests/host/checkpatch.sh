#!/bin/bash
# The kernel code passes checkpatch.pl with no error and no warning.
# checkpatch.pl is not in Debian's headers packages: take it (with the data
# files it reads) from linux-source-6.1, fetched once into build/tools.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tools=$root/build/tools
cp=$tools/linux-source-6.1/scripts/checkpatch.pl
if [ ! -f "$cp" ]; then
	mkdir -p "$tools"
	cd "$tools"
	apt-get download linux-source-6.1 >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null && apt-get download linux-source-6.1 >/dev/null; }
	dpkg-deb --fsys-tarfile linux-source-6.1_*.deb |
		tar -xO --wildcards './usr/src/linux-source-6.1.tar.xz' |
		tar -xJ --wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch'
	rm -f linux-source-6.1_*.deb
fi
cd "$root"
# --terse prints nothing for a clean file, one line per problem otherwise.
out=$(perl "$cp" --no-tree --terse --show-types -f kmod/*.c kmod/*.h \
	kmod/features/*.c include/uapi/linux/memtrack.h 2>&1) || true
if [ -n "$out" ]; then
	echo "$out"
	exit 1
fi
