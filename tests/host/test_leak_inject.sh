#!/bin/bash
# memtrack-leak -p with the injected in-process engine (libmemtrack-preload.so
# loaded into the running target with ptrace; no module, on the host):
# tests/guest/test_leak_inject.py, which runs the -p tests of the memtrack-leak
# suites with LEAK_ENGINE=inject and its own tests of the injection.  Runs as
# tests/host/prelude.sh says.
. "$(dirname "$0")/prelude.sh"
export LEAK_ENGINE=inject
python_suite tests/guest/test_leak_inject.py user progs leak-progs
finish
