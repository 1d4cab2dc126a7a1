#!/bin/bash
# memtrack-top's data source and memtrack-top on the host, where there is
# no module: the /proc path of tests/guest/test_top.py (which knows where it
# runs).  Needs make user, make progs and make -C user tests.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=$(python3 tests/guest/test_top.py "$@" 2>&1)
echo "$out"
grep -q '^guest: [1-9][0-9]* passed, 0 failed$' <<<"$out"
