#!/bin/bash
# The module builds for kernel REL with W=1 and sparse on every file (C=2)
# without a single warning or error: kbuild's extra warnings and sparse's
# address-space and endianness checks are part of the kernel coding style.
#   tests/host/build_clean.sh REL
set -uo pipefail
cd "$(dirname "$0")/../.."
[ $# = 1 ] || { echo "usage: $0 KERNEL-RELEASE" >&2; exit 2; }
log=$(make module KVER="$1" W=1 C=2 2>&1)
rc=$?
if [ $rc != 0 ] || grep -E 'warning:|error:' <<<"$log"; then
	[ $rc = 0 ] || tail -n 40 <<<"$log"
	exit 1
fi
