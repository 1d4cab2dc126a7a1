#!/bin/bash
# Containers and pods on the host (/proc path): libmemtrack's unit test of
# every cgroup path form, each runtime's state files and the cache
# (user/tests/unit/test_container.c, as root and as nobody), then
# tests/guest/test_containers.py with real runc and crun containers.
# Runs as tests/host/prelude.sh says (test names as arguments, --list).
. "$(dirname "$0")/prelude.sh"
tests unit-as-root unit-as-nobody $(python3 tests/guest/test_containers.py --list)
need user-tests
if want unit-as-root; then
	mkdir -p "$tmp/root"
	unit unit-as-root root- build/tests/user/test_container "$tmp/root"
fi
if want unit-as-nobody; then
	mkdir -p "$tmp/nobody" && chown nobody "$tmp/nobody" && chmod 755 "$tmp"
	unit unit-as-nobody nobody- setpriv --reuid=nobody --regid=nogroup --clear-groups \
		build/tests/user/test_container "$tmp/nobody"
fi
python_suite tests/guest/test_containers.py user progs
finish
