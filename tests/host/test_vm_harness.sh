#!/bin/bash
# tests/vm/run --batch, the boot make check runs several VM suites in: one
# boot of kernel RELEASE running seven suites that each look at what the
# one before left.  usage: test_vm_harness.sh RELEASE [TEST...] (and --list;
# tests/host/prelude.sh has the conventions)
args_usage=RELEASE
. "$(dirname "$0")/prelude.sh"
tests suites-run-in-order-each-with-the-module-afresh \
	leftovers-killed-and-scratch-emptied timeout-kills-a-suite-and-goes-on \
	kernel-problem-belongs-to-its-suite guest-death-fails-its-suite-and-stops

out=$tmp/out
batch=$tmp/batch
# each suite: NAME, SECONDS, a command line run by /bin/sh in the guest
{
	printf 'leave\t60\t%s\n' "grep -c '^memtrack ' /proc/modules; echo 'retention_ms 12345' >/proc/memtrack/config; setsid sleep 1000 </dev/null >/dev/null 2>&1 & sleep 2000 </dev/null >/dev/null 2>&1 & echo x >/tmp/left; echo y >/dev/shm/left; ip netns add left-behind; echo done"
	printf 'look\t60\t%s\n' "grep -c '^memtrack ' /proc/modules; grep retention_ms /proc/memtrack/config; pgrep -c -x sleep; find /tmp /var/tmp /dev/shm -mindepth 1 -xdev | while read -r p; do case \"\$PWD/\" in \"\$p\"/*) ;; *) echo \"\$p\" ;; esac; done | wc -l; ip netns list | wc -l"
	printf 'slow\t3\t%s\n' "echo started; sleep 60; echo not-killed"
	printf 'warn\t60\t%s\n' "echo 'WARNING: test-made problem line' >/dev/kmsg"
	printf 'after\t60\t%s\n' "echo fine"
	printf 'crash\t60\t%s\n' "echo c >/proc/sysrq-trigger"
	printf 'never\t60\t%s\n' "echo ran"
} >"$batch"

MEMTRACK_VM_OUT=$out tests/vm/run --kernel "${args[0]}" --timeout 300 --batch "$batch" \
	>"$tmp/stdout" 2>"$tmp/stderr"
boot_rc=$?
s=$out/suites
verdict() { grep "^suite $1 " "$tmp/stdout" | cut -d' ' -f3; }

order_and_afresh() {
	[ "$(verdict leave)" = 0 ] && [ "$(verdict look)" = 0 ] ||
		{ echo "verdicts: $(cat "$tmp/stdout")"; return 1; }
	[ "$(sed -n 1p "$s/leave/stdout")" = 1 ] || { echo "leave: module not loaded"; return 1; }
	[ "$(sed -n 1p "$s/look/stdout")" = 1 ] || { echo "look: module not loaded"; return 1; }
	# a fresh load: the retention leave set is gone
	[ "$(sed -n 2p "$s/look/stdout")" = "retention_ms 15000" ] ||
		{ echo "look: $(sed -n 2p "$s/look/stdout")"; return 1; }
	[ "$(grep -c . "$tmp/stdout")" = 7 ] || { cat "$tmp/stdout"; return 1; }
	# every suite started before the next
	[ ! "$s/look/started" -ot "$s/leave/finished" ] || { echo "look before leave ended"; return 1; }
}

leftovers() {
	grep -q "vm-init: killed 2 process(es) the suite left behind" "$s/leave/stderr" ||
		{ cat "$s/leave/stderr"; return 1; }
	# no sleep, empty scratch mounts, no namespace
	[ "$(sed -n 3,99p "$s/look/stdout" | tr "\n" " ")" = "0 0 0 " ] ||
		{ echo "look saw: $(sed -n 3,99p "$s/look/stdout" | tr '\n' ' ')"; return 1; }
}

timeout_goes_on() {
	[ "$(verdict slow)" = 124 ] || { echo "slow: verdict $(verdict slow)"; return 1; }
	[ "$(cat "$s/slow/stdout")" = started ] || { cat "$s/slow/stdout"; return 1; }
	grep -q "vm-init: timed out after 3 s" "$s/slow/stderr" || { cat "$s/slow/stderr"; return 1; }
	[ "$(verdict warn)" != "" ] || { echo "no suite after the timeout"; return 1; }
}

problem_line() {
	[ "$(verdict warn)" = 125 ] || { echo "warn: verdict $(verdict warn)"; return 1; }
	grep -q "vm: dmesg: .*WARNING: test-made problem line" "$s/warn/harness" ||
		{ cat "$s/warn/harness"; return 1; }
	[ "$(verdict after)" = 0 ] && [ ! -s "$s/after/harness" ] ||
		{ echo "after: $(verdict after) $(cat "$s/after/harness")"; return 1; }
	[ "$(cat "$s/after/stdout")" = fine ] || return 1
}

death() {
	[ "$(verdict crash)" = 127 ] || { echo "crash: verdict $(verdict crash)"; return 1; }
	grep -q "guest never reported a status" "$s/crash/harness" || { cat "$s/crash/harness"; return 1; }
	[ "$(verdict never)" = not-run ] && [ ! -e "$s/never" ] ||
		{ echo "never: $(verdict never)"; return 1; }
	# the run's status: its first failing suite's
	[ $boot_rc = 124 ] || { echo "exit $boot_rc, want slow's 124"; return 1; }
}

run suites-run-in-order-each-with-the-module-afresh order_and_afresh
run leftovers-killed-and-scratch-emptied leftovers
run timeout-kills-a-suite-and-goes-on timeout_goes_on
run kernel-problem-belongs-to-its-suite problem_line
run guest-death-fails-its-suite-and-stops death
finish
