#!/bin/bash
# make install DESTDIR=... puts every file where the README says: the module
# for the first target kernel, the udev rule, the modules-load entry, the
# tools' systemd unit and memtrackd's config.
set -uo pipefail
cd "$(dirname "$0")/../.."
rel=$(scripts/kernel-release 6.1)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
make install KVER="$rel" DESTDIR="$d" >/dev/null || exit 1
for f in "lib/modules/$rel/extra/memtrack.ko" etc/udev/rules.d/99-memtrack.rules \
	etc/modules-load.d/memtrack.conf lib/systemd/system/memtrackd.service \
	etc/memtrack/memtrackd.conf; do
	[ -f "$d/$f" ] || { echo "not installed: /$f"; exit 1; }
done
grep -q "^ExecStart=/usr/local/bin/memtrackd " "$d/lib/systemd/system/memtrackd.service" ||
	{ echo "memtrackd.service: ExecStart is not /usr/local/bin/memtrackd"; exit 1; }
