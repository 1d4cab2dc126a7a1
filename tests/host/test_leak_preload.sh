#!/bin/bash
# memtrack-leak -- COMMAND with the in-process engine (libmemtrack-preload.so)
# on the host, where there is no module: the -- COMMAND tests of
# tests/guest/test_leak_tool.py, fixtures in both builds, with
# LEAK_ENGINE=preload.  Runs as tests/host/prelude.sh says.
. "$(dirname "$0")/prelude.sh"
export LEAK_ENGINE=preload
python_suite tests/guest/test_leak_tool.py user leak-progs
finish
