#!/bin/bash
# The unwind rules every side shares (memtrack_unwind.h) on rows of known
# programs; the unwind tables libmemtrack builds for LEAK_UNWIND (user/lib/unwind.c)
# against readelf --debug-dump=frames-interp: for known functions of libc
# and of the leak fixtures (with and without frame pointers), the CFA rule
# and offset and where RBP is saved, row by row, must be what readelf says
# (rows that differ only in other registers merged; RA undefined ->
# "outermost"; RA not at CFA-8 or a CFA expression -> "unknown").  And the
# tables built in one pass over .eh_frame (the default) equal, row for row,
# those libdw's CFI gives, for libc, libstdc++, perl, python3, libbcc and
# every library it links (libLLVM and libclang-cpp: a million rows each)
# and the fixtures.
# Runs as tests/host/prelude.sh says (test names as arguments, --list).
. "$(dirname "$0")/prelude.sh"
dump=build/tests/user/unwind_dump
libc=$(gcc -print-file-name=libc.so.6)
libc=$(readlink -f "$libc")

# OBJECT FUNCTION: the functions whose rows are compared; then the objects
# whose whole table is checked for order
cases=("$libc malloc" "$libc free" "$libc qsort_r" "$libc __libc_start_main"
	"build/tests/leaks/nofp/c_apis main" "build/tests/leaks/nofp/c_apis _start"
	"build/tests/leaks/fp/c_apis main" "build/tests/leaks/nofp/cpp_cases main"
	"build/tests/leaks/fp/threads main")
sorted=("$libc" build/tests/leaks/nofp/cpp_cases)
case_name() { # "OBJECT FUNCTION"
	set -- $1
	echo "unwind-rows-$(basename "$1")-$(basename "$(dirname "$1")")-$2"
}
names=()
for case in "${cases[@]}"; do
	names+=("$(case_name "$case")")
done
for obj in "${sorted[@]}"; do
	names+=("unwind-rows-sorted-$(basename "$obj")")
done
names+=(unwind-rules unwind-onepass-equals-libdw)
tests "${names[@]}"
need user-tests leak-progs

# compare OBJECT FUNCTION: prints nothing when equal, else the difference
compare() {
	python3 - "$1" "$2" "$dump" <<'PY'
import subprocess, sys
obj, fn, dump = sys.argv[1:]
sym = [l.split() for l in subprocess.run(["readelf", "-sW", obj], capture_output=True,
       text=True).stdout.splitlines()]
addr = [int(f[1], 16) for f in sym if len(f) >= 8 and f[3] == "FUNC" and
        f[7].split("@")[0] == fn]
if not addr:
    sys.exit(f"{fn} not in {obj}")
pc = addr[0]
want, cur = [], None
for line in subprocess.run(["readelf", "--debug-dump=frames-interp", obj],
                           capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if len(f) >= 6 and f[3] == "FDE":
        lo, hi = (int(x, 16) for x in f[5][3:].split(".."))
        cur = (lo, hi) if lo <= pc < hi else None
        cols = None
    elif cur and f and f[0] == "LOC":
        cols = f[1:]
    elif cur and cols and len(f) == len(cols) + 1:
        r = dict(zip(cols, f[1:]))
        if r.get("ra") == "u":
            rule = "outermost u"
        elif r.get("ra") != "c-8" or not r["CFA"].startswith(("rsp+", "rbp+")):
            rule = "unknown u"
        else:
            rule = f"{r['CFA']} {r.get('rbp', 'u')}"
        if not want or want[-1][1] != rule:
            want.append((int(f[0], 16), rule))
    elif cur and not f:
        break
if not cur:
    sys.exit(f"no FDE for {fn} at {pc:#x}")
lo, hi = cur
if not want:
    # frames-interp prints no table for an FDE whose only rule is
    # DW_CFA_undefined rip (_start): read the instructions themselves.
    raw = subprocess.run(["readelf", "--debug-dump=frames", obj], capture_output=True,
                         text=True).stdout.split("\n\n")
    # (an FDE of _start's, whose CIE says DW_CFA_undefined rip).
    fde = [b.strip() for b in raw if f"pc={lo:016x}..{hi:016x}" in b]
    cie = fde[0].split("cie=")[1].split()[0] if fde else None
    cies = [b.strip() for b in raw if cie and b.strip().startswith(cie + " ")]
    if cies and "DW_CFA_undefined: r16" in cies[0] + fde[0]:
        want = [(lo, "outermost u")]
got = []
for line in subprocess.run([dump, obj], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    a, rule = int(line.split()[0], 16), " ".join(line.split()[1:])
    if a <= lo:
        got = [(lo, rule)]
    elif a < hi:
        got.append((a, rule))
if got != want:
    sys.exit(f"{fn} [{lo:#x},{hi:#x}): ours {got}, readelf {want}")
PY
}

for case in "${cases[@]}"; do
	name=$(case_name "$case")
	want "$name" || continue
	set -- $case
	if out=$(compare "$1" "$2" 2>&1); then
		pass "$name"
	else
		fail "$name" "$out"
	fi
done

# The one reduction of CFI rows (memtrack_unwind.h) on rows of known programs.
unit unwind-rules "" build/tests/user/test_unwind_rules

# One pass over .eh_frame against libdw's CFI, on objects large and small.
bcc=$(ls /usr/lib/x86_64-linux-gnu/libbcc.so.0 2>/dev/null)
objs=("$libc" "$(readlink -f "$(gcc -print-file-name=libstdc++.so.6)")"
	/usr/bin/perl "$(readlink -f /usr/bin/python3)" build/tests/leaks/*/*)
if [ -n "$bcc" ]; then
	objs+=("$bcc")
	mapfile -t -O "${#objs[@]}" objs < <(ldd "$bcc" | awk '$3 ~ /^\// {print $3}')
fi
unit unwind-onepass-equals-libdw unwind-onepass- build/tests/user/test_unwind_onepass "${objs[@]}"

# Every row sorted and ending in "no rule", as the module requires.
for obj in "${sorted[@]}"; do
	want "unwind-rows-sorted-$(basename "$obj")" || continue
	if out=$("$dump" "$obj" | python3 -c '
import sys
rows = [l.split() for l in sys.stdin]
addrs = [int(r[0], 16) for r in rows]
if not rows or addrs != sorted(set(addrs)) or rows[-1][1] != "-":
    sys.exit("unsorted, or not ending in no rule")'); then
		pass "unwind-rows-sorted-$(basename "$obj")"
	else
		fail "unwind-rows-sorted-$(basename "$obj")" "$out"
	fi
done
finish
