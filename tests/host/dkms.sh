#!/bin/bash
# dkms add + dkms build for a kernel release, in private dkms and source trees
# so the host's own dkms state is untouched.  usage: dkms.sh RELEASE [TEST...]
# (and --list; tests/host/prelude.sh has the conventions)
args_usage=RELEASE
. "$(dirname "$0")/prelude.sh"
tests dkms-build
rel=${args[0]}
ver=$(cat "$root/VERSION")
work=$tmp

dkms_build() {
	mkdir -p "$work/dkms"
	# what make install-dkms puts in /usr/src/memtrack-VERSION
	make -C "$root" -s dkms-source DKMS_SRC="$work/src" >"$work/log" 2>&1 ||
		{ cat "$work/log" >&2; return 1; }
	local opts=(--sourcetree "$work/src" --dkmstree "$work/dkms")
	# A kernel the host has no headers for is built in its build root
	# (scripts/buildroot), as a user's own machine of that release would.
	local inroot=() ko
	local kroot=${MEMTRACK_CACHE:-/var/cache/memtrack}/kernels/$rel/root
	if [ ! -d "/lib/modules/$rel/build" ] && [ -d "$kroot" ]; then
		inroot=(env MEMTRACK_BIND="$work" "$root/scripts/inroot" "$kroot")
	fi
	cd "$work"
	"${inroot[@]}" dkms add -m memtrack -v "$ver" "${opts[@]}" >"$work/log" 2>&1 &&
		"${inroot[@]}" dkms build -m memtrack -v "$ver" -k "$rel" "${opts[@]}" >>"$work/log" 2>&1 || {
		cat "$work/log" >&2
		return 1
	}
	ko=$(find "$work/dkms/memtrack/$ver/$rel" -name 'memtrack.ko*' | head -n 1)
	[ -n "$ko" ] || { echo "dkms built no memtrack.ko for $rel" >&2; cat "$work/log" >&2; return 1; }
	modinfo -F vermagic "$ko" | grep -q "^$rel " || { echo "$ko: wrong vermagic" >&2; return 1; }
}

run dkms-build dkms_build
finish
