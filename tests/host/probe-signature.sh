#!/bin/bash
# A probe whose signature does not match its tracepoint must fail the module
# build with the kernel's own flags (Debian builds with
# -Werror=incompatible-pointer-types), and the matching one must build: the
# guard every hook_*.c relies on.  usage: probe-signature.sh RELEASE [TEST...]
# (and --list; tests/host/prelude.sh has the conventions)
# (a kernel of a scripts/buildroot root builds inside that root)
args_usage=RELEASE
. "$(dirname "$0")/prelude.sh"
tests probe-signature-enforced
kdir=/lib/modules/${args[0]}/build
work=$tmp
cache=${MEMTRACK_CACHE:-/var/cache/memtrack}
inroot=()
if [ ! -d "$kdir" ] && [ -e "$cache/kernels/${args[0]}/root" ]; then
	inroot=(env MEMTRACK_BIND="$work" "$root/scripts/inroot" "$cache/kernels/${args[0]}/root")
fi
probe() {
	cat >"$work/$1.c" <<C
#include <linux/mm_types.h>
#include <linux/slab.h>
#include <trace/events/kmem.h>
static void probe(void *data, $2) { }
static void __used check(void) { check_trace_callback_type_mm_page_alloc(probe); }
C
}

probe_signature_enforced() {
	probe right 'struct page *page, unsigned int order, gfp_t gfp, int migratetype'
	probe wrong 'struct page *page, unsigned int order'
	# Listed: 5.10's kbuild builds only listed objects of an external module.
	echo 'obj-m := right.o wrong.o' >"$work/Kbuild"
	"${inroot[@]}" env -u MAKEFLAGS make -C "$kdir" M="$work" right.o >"$work/right.log" 2>&1 ||
		{ cat "$work/right.log" >&2; echo "matching probe did not build" >&2; return 1; }
	if "${inroot[@]}" env -u MAKEFLAGS make -C "$kdir" M="$work" wrong.o >"$work/wrong.log" 2>&1; then
		echo "mismatched probe built: signature checks are not enforced" >&2
		return 1
	fi
	grep -q 'incompatible-pointer-types' "$work/wrong.log" ||
		{ cat "$work/wrong.log" >&2; echo "failed for another reason" >&2; return 1; }
}

run probe-signature-enforced probe_signature_enforced
finish
