#!/bin/bash
# memtrack-top's PSS/USS columns on the host (/proc path):
# tests/guest/test_top_smaps.py, which knows where it runs.  Needs strace.
# Runs as tests/host/prelude.sh says (test names as arguments, --list).
. "$(dirname "$0")/prelude.sh"
python_suite tests/guest/test_top_smaps.py user progs
finish
