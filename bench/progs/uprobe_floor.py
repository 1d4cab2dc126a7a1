#!/usr/bin/python3
"""uprobe_floor.py PID LIBC SPEC...: empty BPF programs on the uprobes
memtrack-leak places in PID's libc, so a run under it costs what the uprobe
machinery alone costs.  SPEC is SYMBOL[+SKIP][:ret]: a uprobe SKIP bytes past
SYMBOL's entry (where memtrack-leak puts its breakpoint) and, with :ret, a
uretprobe on it too.  Prints "attached", then waits for SIGINT.  (BCC, not
bpftrace: Debian's bpftrace refuses a probe past a function's entry.)"""
import signal
import sys

from bcc import BPF

pid, libc = int(sys.argv[1]), sys.argv[2]
b = BPF(text="int empty(void *ctx) { return 0; }")
for spec in sys.argv[3:]:
    sym, ret = (spec[:-4], True) if spec.endswith(":ret") else (spec, False)
    sym, _, skip = sym.partition("+")
    b.attach_uprobe(name=libc, sym=sym, sym_off=int(skip or 0), fn_name="empty", pid=pid)
    if ret:
        b.attach_uretprobe(name=libc, sym=sym, fn_name="empty", pid=pid)
print("attached", flush=True)
signal.sigwait({signal.SIGINT, signal.SIGTERM})
