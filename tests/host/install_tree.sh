#!/bin/bash
# make install DESTDIR=... puts every file where the README says: the module
# for 6.1, the udev rule, the modules-load entry, memtrackd's systemd unit
# (running /usr/local/bin/memtrackd) and its config, the tools and
# memtrack-leak's in-process engine (/usr/local/lib/memtrack/, where the
# installed memtrack-leak looks for it).  usage: install_tree.sh
# [TEST...] (and --list; tests/host/prelude.sh has the conventions)
. "$(dirname "$0")/prelude.sh"
tests make-install-destdir

install_tree() {
	local rel f d=$tmp/destdir
	rel=$(scripts/kernel-release 6.1)
	make install KVER="$rel" DESTDIR="$d" >/dev/null
	for f in "lib/modules/$rel/extra/memtrack.ko" etc/udev/rules.d/99-memtrack.rules \
		etc/modules-load.d/memtrack.conf lib/systemd/system/memtrackd.service \
		etc/memtrack/memtrackd.conf usr/local/lib/memtrack/libmemtrack-preload.so \
		usr/local/bin/memtrack-leak; do
		[ -f "$d/$f" ] || { echo "not installed: /$f"; return 1; }
	done
	grep -q "^ExecStart=/usr/local/bin/memtrackd " "$d/lib/systemd/system/memtrackd.service" ||
		{ echo "memtrackd.service: ExecStart is not /usr/local/bin/memtrackd"; return 1; }
}
want make-install-destdir && run make-install-destdir install_tree
finish
