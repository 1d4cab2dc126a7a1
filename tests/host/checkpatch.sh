#!/bin/bash
# The kernel code passes checkpatch.pl with no error and no warning.
# checkpatch.pl is not in Debian's headers packages: take it (with the data
# files it reads) from linux-source-6.1, fetched once into build/tools.
# Runs as tests/host/prelude.sh says (test names as arguments, --list).
. "$(dirname "$0")/prelude.sh"
tests checkpatch-clean
tools=$root/build/tools
cp=$tools/linux-source-6.1/scripts/checkpatch.pl

fetch_checkpatch() {
	[ ! -f "$cp" ] || return 0
	mkdir -p "$tools"
	cd "$tools"
	apt-get download linux-source-6.1 >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null && apt-get download linux-source-6.1 >/dev/null; }
	dpkg-deb --fsys-tarfile linux-source-6.1_*.deb |
		tar -xO --wildcards './usr/src/linux-source-6.1.tar.xz' |
		tar -xJ --wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch'
	rm -f linux-source-6.1_*.deb
	cd "$root"
}

checkpatch_clean() {
	local out
	fetch_checkpatch
	# --terse prints nothing for a clean file, one line per problem otherwise.
	out=$(perl "$cp" --no-tree --terse --show-types -f kmod/*.c kmod/*.h \
		kmod/features/*.c include/uapi/linux/memtrack.h 2>&1) || true
	[ -z "$out" ] || { echo "$out"; return 1; }
}

run checkpatch-clean checkpatch_clean
finish
