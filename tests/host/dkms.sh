#!/bin/bash
# dkms add + dkms build for a kernel release, in private dkms and source trees
# so the host's own dkms state is untouched.  usage: dkms.sh RELEASE
set -euo pipefail
rel=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$root/dkms.conf")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/memtrack-$ver" "$work/dkms"
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 cp --parents -t "$work/src/memtrack-$ver")
opts=(--sourcetree "$work/src" --dkmstree "$work/dkms")
# A kernel the host has no headers for is built in its build root
# (scripts/buildroot), as a user's own machine of that release would.
run=()
kroot=${MEMTRACK_CACHE:-/var/cache/memtrack}/kernels/$rel/root
if [ ! -d "/lib/modules/$rel/build" ] && [ -d "$kroot" ]; then
	run=(env MEMTRACK_BIND="$work" "$root/scripts/inroot" "$kroot")
fi
cd "$work"
"${run[@]}" dkms add -m memtrack -v "$ver" "${opts[@]}" >"$work/log" 2>&1 &&
	"${run[@]}" dkms build -m memtrack -v "$ver" -k "$rel" "${opts[@]}" >>"$work/log" 2>&1 || {
	cat "$work/log" >&2
	exit 1
}
ko=$(find "$work/dkms/memtrack/$ver/$rel" -name 'memtrack.ko*' | head -n 1)
[ -n "$ko" ] || { echo "dkms built no memtrack.ko for $rel" >&2; cat "$work/log" >&2; exit 1; }
modinfo -F vermagic "$ko" | grep -q "^$rel " || { echo "$ko: wrong vermagic" >&2; exit 1; }
