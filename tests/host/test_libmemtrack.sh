#!/bin/bash
# Host checks of libmemtrack and memtrack-events that need no kernel module:
# the build (-Wall -Wextra -Werror), memtrack-events' command line and its
# errors without the module, user/tests/test_records.c (hand-built record
# buffers through the record walker and the text/JSON formatters) and
# user/tests/test_json.c (the JSON string writer, also against Python's).
# Runs as tests/host/prelude.sh says: "PASS name" or "FAIL name: why" per
# check, test names as arguments run only those, --list prints them.
. "$(dirname "$0")/prelude.sh"
tests build-user-warning-free build-make-user-from-top help-documents-every-option \
	usage-bad-class usage-empty-class usage-page-needs-filter usage-kmalloc-needs-filter \
	usage-bad-pid usage-bad-count usage-extra-argument usage-unknown-option \
	no-module-ring-error no-module-ring-error-with-filter no-module-netlink-error \
	records records-json-matches-text-every-type json json-writer-equals-python-json-dumps \
	events-count-stops-after-n-records events-sig{INT,TERM}-json-filter-passed-through

# ---- build ----------------------------------------------------------------
# The library, tools and unit tests, rebuilt where out of date: user/Makefile
# compiles every file with -Werror.
build_test build-user-warning-free user user-tests
if ! want build-make-user-from-top; then
	:
elif out=$(make user 2>&1) && [ -x build/bin/memtrack-events ]; then
	pass build-make-user-from-top
else
	fail build-make-user-from-top "$(echo "$out" | tail -5)"
fi
ev=build/bin/memtrack-events
units=build/tests/user

# ---- command line ------------------------------------------------------------
if want help-documents-every-option; then
	out=$("$ev" --help 2>&1); rc=$?
	missing=
	for w in -p --pid -t --tgid -c --class -j --json -N --netlink -n --count \
		-h --help task mmap shm oom reclaim alloc_fail rss page kmalloc all default; do
		grep -q -- "$w\b" <<<"$out" || missing="$missing $w"
	done
	if [ $rc -eq 0 ] && [ -z "$missing" ]; then
		pass help-documents-every-option
	else
		fail help-documents-every-option "exit $rc, not mentioned:$missing"
	fi
fi

# usage errors: exit 2 and a message naming the problem
usage_case() {
	local name=$1 expect=$2
	shift 2
	local out rc
	want "$name" || return 0
	out=$("$ev" "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$expect" <<<"$out"; then
		pass "$name"
	else
		fail "$name" "memtrack-events $* -> exit $rc, stderr '$out'"
	fi
}
usage_case usage-bad-class "memtrack-events: unknown event class 'bogus'" -c task,bogus
usage_case usage-empty-class "unknown event class ''" -c ''
usage_case usage-page-needs-filter "classes page and kmalloc need -p PID or -t TGID" -c page
usage_case usage-kmalloc-needs-filter "need -p PID or -t TGID" -c mmap,kmalloc
usage_case usage-bad-pid "invalid pid 'x'" -p x
usage_case usage-bad-count "invalid count '0'" -n 0
usage_case usage-extra-argument "unexpected argument 'foo'" foo
usage_case usage-unknown-option "Try 'memtrack-events --help'" --bogus

# ---- without the module ---------------------------------------------------------
# no_module NAME EXPECTED-STDERR ARGS...: exit 1 with exactly that message
no_module() {
	local name=$1 msg=$2 out rc
	shift 2
	want "$name" || return 0
	if [ -e /dev/memtrack ] || [ -d /sys/module/memtrack ]; then
		skip "$name" "memtrack.ko is loaded here"
		return 0
	fi
	out=$(timeout 10 "$ev" "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 1 ] && [ "$out" = "$msg" ]; then
		pass "$name"
	else
		fail "$name" "exit $rc, stderr '$out'"
	fi
}
msg="memtrack-events: /dev/memtrack: No such file or directory: memtrack.ko is not loaded (load it with: modprobe memtrack)"
no_module no-module-ring-error "$msg"
no_module no-module-ring-error-with-filter "$msg" -p 1 -c page --json
no_module no-module-netlink-error \
	'memtrack-events: memtrack.ko is not loaded (no generic netlink family "memtrack"; load it with: modprobe memtrack)' --netlink

# ---- record walking and formatting ------------------------------------------------
unit records records- "$units/test_records"

# Every sample record: the JSON line parses and has exactly the text line's
# fields and values (a string's bytes, \ooo in the text, as UTF-8 with
# U+FFFD for what is not).
want records-json-matches-text-every-type &&
	"$units/test_records" --dump >"$tmp/dump" 2>&1
if ! want records-json-matches-text-every-type; then
	:
elif out=$(python3 - "$tmp/dump" <<'PY' 2>&1
import json, re, sys

lines = open(sys.argv[1], "rb").read().splitlines()
assert len(lines) == 36, "expected 18 text+JSON pairs, got %d lines" % len(lines)

def unescape(s):
    b = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)
    return b.encode("latin-1").decode("utf-8", "replace")

for text, js in zip(lines[0::2], lines[1::2]):
    text = text.decode("ascii")
    obj = json.loads(js.decode("utf-8"))
    head, _, rest = text.partition(" ")
    cpu, pidtgid, typ, *fields = text.split(" ")[1:]
    want = {"time": float(head), "cpu": int(cpu.strip("[]")),
            "pid": int(pidtgid.split("/")[0]),
            "tgid": int(pidtgid.split("/")[1]), "type": typ}
    for f in fields:
        k, v = f.split("=", 1)
        if re.fullmatch(r"-?[0-9]+", v):
            want[k] = int(v)
        else:
            want[k] = unescape(v)
    if list(obj) != list(want):
        sys.exit("keys differ: %s vs %s" % (list(obj), list(want)))
    if obj != want:
        sys.exit("values differ:\n%s\n%s" % (obj, want))
PY
); then
	pass records-json-matches-text-every-type
else
	fail records-json-matches-text-every-type "$out"
fi

# ---- the JSON string writer --------------------------------------------------------
unit json json- "$units/test_json"

# Python's json module as the reference: each case of test_json, and 20,000
# random byte strings weighted to UTF-8's edges, come out exactly as
# json.dumps(bytes.decode("utf-8", "replace"), ensure_ascii=False) (Python
# substitutes maximal subparts too), valid UTF-8 that parses back to that.
want json-writer-equals-python-json-dumps &&
	"$units/test_json" --dump >"$tmp/json-cases"
if ! want json-writer-equals-python-json-dumps; then
	:
elif out=$(python3 - "$units/test_json" "$tmp/json-cases" <<'PY' 2>&1
import json, random, subprocess, sys

def check(raw, got, what):
    want = raw.decode("utf-8", "replace")
    if got != json.dumps(want, ensure_ascii=False).encode():
        sys.exit("%s %s: got %r" % (what, raw.hex(), got))
    if json.loads(got.decode("utf-8")) != want:
        sys.exit("%s %s: does not parse back" % (what, raw.hex()))

cases = open(sys.argv[2], "rb").read().split(b"\n")[:-1]
assert len(cases) >= 26, "%d cases" % len(cases)
for line in cases:
    hexin, got = line.split(b"\t", 1)
    check(bytes.fromhex(hexin.decode()), got, "case")

rnd = random.Random(13)
pool = [bytes([b]) for b in range(1, 256)] + [
    c.encode() for c in "\u00e9\u20ac\U0001f600\u0080\u07ff\u0800\uffff\U00010000\U0010ffff"]
inputs = [b"".join(rnd.choice(pool) for _ in range(rnd.randrange(0, 24)))
          for _ in range(20000)]
# bytes 0x80.. more often: cut multi-byte characters and stray bytes
inputs += [bytes(rnd.randrange(0x80, 0x100) for _ in range(rnd.randrange(1, 8)))
           for _ in range(20000)]
out = subprocess.run([sys.argv[1], "--stdin"], input=b"".join(i.hex().encode() + b"\n" for i in inputs),
                     capture_output=True, check=True).stdout.split(b"\n")
assert len(out) == len(inputs) + 1, "%d lines for %d inputs" % (len(out), len(inputs))
for raw, got in zip(inputs, out):
    check(raw, got, "random")
PY
); then
	pass json-writer-equals-python-json-dumps
else
	fail json-writer-equals-python-json-dumps "$out"
fi

# ---- memtrack-events' main loop, against a stand-in for /dev/memtrack ----------
# fake_dev.so (LD_PRELOAD) makes /dev/memtrack a FIFO and records the filter
# memtrack-events sets; the FIFO is fed the sample records of test_records.
"$units/test_records" --binary >"$tmp/records.bin"
fake_run() {	# fake_run SIGNAL_AFTER_FEED ARGS...: runs in $tmp/fake/
	local sig=$1
	shift
	rm -rf "$tmp/fake"
	mkdir "$tmp/fake"
	mkfifo "$tmp/fake/dev"
	MT_FAKE_DEV=$tmp/fake/dev MT_FAKE_FILTER_OUT=$tmp/fake/filter \
		LD_PRELOAD=$root/$units/fake_dev.so \
		timeout 10 "$ev" "$@" >"$tmp/fake/out" 2>"$tmp/fake/err" &
	local pid=$!
	# the tool has the FIFO open once the filter is set
	for _ in $(seq 100); do
		[ -s "$tmp/fake/filter" ] && break
		sleep 0.05
	done
	cat "$tmp/records.bin" >"$tmp/fake/dev"
	if [ "$sig" != none ]; then
		sleep 0.5
		kill -"$sig" $pid
	fi
	wait $pid
	echo $? >"$tmp/fake/rc"
}

# -n 3: the LOST record is printed but not counted; 3 more records, exit 0
if want events-count-stops-after-n-records; then
	fake_run none -n 3
	expect=$("$units/test_records" --dump | sed -n '1p;3p;5p;7p')
	if [ "$(cat "$tmp/fake/rc")" = 0 ] && [ "$(cat "$tmp/fake/out")" = "$expect" ] &&
	   [ "$(cat "$tmp/fake/err")" = "memtrack-events: 3 records, 5 lost" ] &&
	   [ "$(cat "$tmp/fake/filter")" = "classes=0x7f flags=0 pid=0 tgid=0" ]; then
		pass events-count-stops-after-n-records
	else
		fail events-count-stops-after-n-records "exit $(cat "$tmp/fake/rc"), stderr '$(cat "$tmp/fake/err")', filter '$(cat "$tmp/fake/filter")', stdout: $(cat "$tmp/fake/out")"
	fi
fi

# SIGINT after the records: every record as JSON, counts on stderr, exit 0;
# -p and -c go to the kernel's filter (records are not filtered again here)
for sig in INT TERM; do
	want "events-sig$sig-json-filter-passed-through" || continue
	fake_run $sig -p 1234 -c page,kmalloc --json
	expect=$("$units/test_records" --dump | sed -n '2~2p')
	if [ "$(cat "$tmp/fake/rc")" = 0 ] && [ "$(cat "$tmp/fake/out")" = "$expect" ] &&
	   [ "$(cat "$tmp/fake/err")" = "memtrack-events: 17 records, 5 lost" ] &&
	   [ "$(cat "$tmp/fake/filter")" = "classes=0x180 flags=0 pid=1234 tgid=0" ]; then
		pass "events-sig$sig-json-filter-passed-through"
	else
		fail "events-sig$sig-json-filter-passed-through" "exit $(cat "$tmp/fake/rc"), stderr '$(cat "$tmp/fake/err")', filter '$(cat "$tmp/fake/filter")', stdout lines $(wc -l <"$tmp/fake/out")"
	fi
done

finish
