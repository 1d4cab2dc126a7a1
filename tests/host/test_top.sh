#!/bin/bash
# memtrack-top's data source and memtrack-top on the host, where there is
# no module: the /proc path of tests/guest/test_top.py (which knows where it
# runs).  Runs as tests/host/prelude.sh says (test names as arguments, --list).
. "$(dirname "$0")/prelude.sh"
python_suite tests/guest/test_top.py user progs user-tests
finish
