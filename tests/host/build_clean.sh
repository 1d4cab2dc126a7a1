#!/bin/bash
# The module builds for kernel RELEASE with W=1 and sparse on every file
# (C=2) without a single warning or error: kbuild's extra warnings and
# sparse's address-space and endianness checks are part of the kernel coding
# style.  usage: build_clean.sh RELEASE [TEST...] (and --list;
# tests/host/prelude.sh has the conventions)
args_usage=RELEASE
. "$(dirname "$0")/prelude.sh"
tests build-W1-sparse-clean

w1_sparse_clean() {
	local log rc=0
	log=$(make module KVER="${args[0]}" W=1 C=2 2>&1) || rc=$?
	if [ $rc != 0 ]; then
		tail -n 40 <<<"$log"
		return 1
	fi
	! grep -E 'warning:|error:' <<<"$log"
}
want build-W1-sparse-clean && run build-W1-sparse-clean w1_sparse_clean
finish
