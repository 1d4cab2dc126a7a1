#!/bin/bash
# memtrack-top's PSS/USS columns on the host (/proc path):
# tests/guest/test_top_smaps.py, which knows where it runs.  Needs make user,
# make progs and strace.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=$(python3 tests/guest/test_top_smaps.py "$@" 2>&1)
echo "$out"
grep -q '^guest: [1-9][0-9]* passed, 0 failed$' <<<"$out"
