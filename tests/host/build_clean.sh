#!/bin/bash
# The module builds for kernel RELEASE (the .ko every VM suite of it loads),
# and that one build, with W=1 and sparse on every file (C=2), says not a
# single warning or error: kbuild's extra warnings and sparse's address-space
# and endianness checks are part of the kernel coding style.  One build for
# both, so that no second build rewrites the .ko a VM may be loading.
# usage: build_clean.sh RELEASE [TEST...] (and --list; tests/host/prelude.sh
# has the conventions)
args_usage=RELEASE
. "$(dirname "$0")/prelude.sh"
tests module-builds build-W1-sparse-clean

log=$tmp/build.log
rc=0
make module KVER="${args[0]}" W=1 C=2 >"$log" 2>&1 || rc=$?
if want module-builds; then
	if [ $rc = 0 ] && [ -f "build/${args[0]}/memtrack.ko" ]; then
		pass module-builds
	else
		fail module-builds "make module KVER=${args[0]} exited $rc: $(tail -n 40 "$log")"
	fi
fi
if want build-W1-sparse-clean; then
	if [ $rc != 0 ]; then
		fail build-W1-sparse-clean "the build failed"
	elif grep -E 'warning:|error:' "$log"; then
		fail build-W1-sparse-clean "W=1 or sparse warned (above)"
	else
		pass build-W1-sparse-clean
	fi
fi
finish
