#!/bin/bash
# make install DESTDIR=... puts every file where the README says: the module
# for 6.1, the udev rule, the modules-load entry, memtrackd's systemd units
# (running /usr/local/sbin/memtrackd, hardened: systemd-analyze's exposure
# 3.0 or below) and its config, the tools, memtrack-leak's in-process
# engine (/usr/local/lib/memtrack/, where the installed memtrack-leak looks
# for it), the man pages and the bash completions; make uninstall removes
# exactly that (a changed config stays); make install-user the user side
# only; make dkms-source the module's sources and nothing of build/.
# usage: install_tree.sh [TEST...] (and --list; tests/host/prelude.sh has
# the conventions)
. "$(dirname "$0")/prelude.sh"
tests make-install-destdir units-hardened make-uninstall-destdir \
	make-install-user-destdir dkms-source-tree
rel=$(scripts/kernel-release 6.1)
release=$(cat VERSION)
d=$tmp/destdir

# Every file under a tree, relative, sorted.
files() {
	(cd "$1" && find . -type f -o -type l | sed 's|^\./||' | sort)
}

expected_user_files() {
	local p
	for p in memtrack-top memtrack-leak memtrack-events memtrack-query; do
		echo "usr/local/bin/$p"
		echo "usr/local/share/bash-completion/completions/$p"
		echo "usr/local/share/man/man1/$p.1"
	done
	echo usr/local/sbin/memtrackd
	echo usr/local/share/bash-completion/completions/memtrackd
	echo usr/local/share/man/man8/memtrackd.8
	echo usr/local/share/man/man5/memtrackd.conf.5
	echo usr/local/share/man/man4/memtrack.4
	echo usr/local/lib/memtrack/libmemtrack-preload.so
	echo usr/local/share/doc/memtrack/README.md
	echo usr/local/share/doc/memtrack/grafana-dashboard.json
}

expected_files() {
	expected_user_files
	echo "lib/modules/$rel/extra/memtrack.ko"
	echo etc/udev/rules.d/99-memtrack.rules
	echo etc/modules-load.d/memtrack.conf
	echo etc/memtrack/memtrackd.conf
	echo lib/systemd/system/memtrackd.service
	echo lib/systemd/system/memtrackd-aggregate.service
}

installed() {
	[ -d "$d" ] || make install KVER="$rel" DESTDIR="$d" >"$tmp/log" 2>&1 ||
		{ cat "$tmp/log"; return 1; }
}

install_tree() {
	installed
	diff <(expected_files | sort) <(files "$d") ||
		{ echo "installed files differ from the expected (<) ones"; return 1; }
	local u
	for u in memtrackd memtrackd-aggregate; do
		grep -q "^ExecStart=/usr/local/sbin/memtrackd " "$d/lib/systemd/system/$u.service" ||
			{ echo "$u.service: ExecStart is not /usr/local/sbin/memtrackd"; return 1; }
	done
	"$d/usr/local/bin/memtrack-top" --version | grep -qx "memtrack-top (memtrack) $release"
	[ -x "$d/usr/local/sbin/memtrackd" ]
}

units_hardened() {
	local u score
	installed
	for u in memtrackd memtrackd-aggregate; do
		# as installed, but running the binary where DESTDIR put it
		sed "s|=/usr/local/sbin/|=$d/usr/local/sbin/|" \
			"$d/lib/systemd/system/$u.service" >"$tmp/$u.service"
		# it checks the Documentation= man pages too: the installed ones
		MANPATH=$d/usr/local/share/man systemd-analyze verify "$tmp/$u.service" \
			>"$tmp/verify" 2>&1 && [ ! -s "$tmp/verify" ] ||
			{ cat "$tmp/verify"; return 1; }
		score=$(systemd-analyze security --offline=true "$tmp/$u.service" 2>&1 |
			sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
		[ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 3.0) }' ||
			{ echo "$u.service: exposure '$score', want 3.0 or less"; return 1; }
	done
}

uninstall_tree() {
	installed
	# a config the admin changed stays; everything else goes
	echo "# changed" >>"$d/etc/memtrack/memtrackd.conf"
	make uninstall KVER="$rel" DESTDIR="$d" >"$tmp/log" 2>&1 || { cat "$tmp/log"; return 1; }
	diff <(echo etc/memtrack/memtrackd.conf) <(files "$d") ||
		{ echo "left after uninstall (>)"; return 1; }
	rm -rf "$d"
	make install KVER="$rel" DESTDIR="$d" >"$tmp/log" 2>&1 &&
		make uninstall KVER="$rel" DESTDIR="$d" >>"$tmp/log" 2>&1 || { cat "$tmp/log"; return 1; }
	[ -z "$(files "$d")" ] || { echo "left after uninstall:" $(files "$d"); return 1; }
}

install_user_tree() {
	local du=$tmp/user
	make install-user DESTDIR="$du" >"$tmp/log" 2>&1 || { cat "$tmp/log"; return 1; }
	diff <(expected_user_files | sort) <(files "$du") ||
		{ echo "install-user: files differ from the expected (<) ones"; return 1; }
}

dkms_source_tree() {
	local s=$tmp/src
	make dkms-source DKMS_SRC="$s" >"$tmp/log" 2>&1 || { cat "$tmp/log"; return 1; }
	[ -d "$s/memtrack-$release/kmod" ] || { echo "no $s/memtrack-$release/kmod"; return 1; }
	[ ! -e "$s/memtrack-$release/build" ] || { echo "build/ copied"; return 1; }
	grep -qx "PACKAGE_VERSION=\"$release\"" "$s/memtrack-$release/dkms.conf" ||
		{ echo "dkms.conf: $(grep PACKAGE_VERSION "$s/memtrack-$release/dkms.conf")"; return 1; }
	# only what the module's build reads: no tests, tools or docs
	[ -z "$(cd "$s/memtrack-$release" && ls -d tests user doc 2>/dev/null)" ] ||
		{ echo "more than the module's sources"; return 1; }
}

want_any make-install-destdir units-hardened make-uninstall-destdir && need user man
run make-install-destdir install_tree
run units-hardened units_hardened
run make-uninstall-destdir uninstall_tree
run make-install-user-destdir install_user_tree
run dkms-source-tree dkms_source_tree
finish
