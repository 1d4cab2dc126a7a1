# The prelude every shell suite of tests/host sources first, so that they
# run, select tests, report and build alike (the Python suites have the same
# conventions in tests/lib/harness.py):
#
#     args_usage="RELEASE"                # only if the suite takes arguments
#     . "$(dirname "$0")/prelude.sh"
#     tests name-a name-b ...             # the suite's tests, in order,
#                                         # before any work (--list does none)
#     need user progs                     # what it runs, if out of date
#     if want name-a; then ... pass name-a / fail name-a "why"; fi
#     finish
#
# Calling convention, the same for every suite, shell or Python:
#
#     SUITE.sh [ARGS] [TEST...]     run every test, or only those named (an
#                                   unknown name: the names on stderr, exit 2)
#     SUITE.sh --list               the suite's test names, one a line
#
# Each result is a line "PASS name (1.2s)" or "FAIL name (1.2s): why"
# ("SKIP name: why" where a test cannot run here), the time since the result
# before it (or the suite's start); the last is "host: N passed, N failed";
# the exit status is 1 if any failed, else 0.
#
# What it gives the suite:
#   $root          the checkout, also the current directory
#   $tmp           a directory of its own, removed at exit (after the
#                  suite's cleanup function, if it defines one)
#   "${args[@]}"   the arguments args_usage names (one word each)
#   tests NAME...  declare the tests: --list prints them and exits, names
#                  given on the command line are checked against them
#   want NAME      true if NAME is to run (every test when none was named)
#   want_any NAME...  true if any of them is to run (for shared set-up)
#   pass NAME | fail NAME WHY | skip NAME WHY     one result
#   broken WHAT WHY  "FAIL WHAT: WHY", counted: set-up that did not work
#   unit NAME PREFIX CMD...   a unit-test program (test NAME): its own
#                  PASS/FAIL lines, their names prefixed with PREFIX
#   run NAME CMD...  test NAME: CMD (a function, say) run with set -e in a
#                  subshell must succeed; what it printed is why it did not
#   python_suite FILE TARGET...  a Python suite (tests/lib/harness.py) as
#                  this one: its tests declared, TARGET... built (need), the
#                  selected tests run, its lines shown and counted
#   build TARGET...  make TARGET (user, user-tests, man, progs, leak-progs), only
#                  if make -q says it is out of date; make's output if it fails
#   build_test NAME TARGET...  test NAME: build; if that fails, finish
#   need TARGET... build, or else "FAIL build: make's errors" and finish:
#                  for a suite whose build is not one of its tests
#   finish         the count line and the exit status
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$root"

suite=${0##*/}
declare -A declared=() reported=() selected=()
order=()
args=()
listing=
passed=0
failed=0
# the time a result takes: since the one before it
last_result=$EPOCHREALTIME

usage() {
	echo "usage: $suite${args_usage:+ $args_usage} [TEST...] | $suite --list" >&2
	exit 2
}

for a; do
	case $a in
	--list) listing=1 ;;
	-*) usage ;;
	*)
		if [ ${#args[@]} -lt $(wc -w <<<"${args_usage-}") ]; then
			args+=("$a")
		else
			selected[$a]=1
		fi
		;;
	esac
done
[ -n "$listing" ] || [ ${#args[@]} -eq $(wc -w <<<"${args_usage-}") ] || usage

tmp=$(mktemp -d)
prelude_exit() {
	! declare -F cleanup >/dev/null || cleanup
	rm -rf "$tmp"
}
trap prelude_exit EXIT

tests() { # NAME...
	local n
	for n; do
		declared[$n]=1
		order+=("$n")
	done
	if [ -n "$listing" ]; then
		printf '%s\n' "${order[@]}"
		exit 0
	fi
	for n in "${!selected[@]}"; do
		if [ -z "${declared[$n]-}" ]; then
			echo "$suite: no test $n; its tests: ${order[*]}" >&2
			exit 2
		fi
	done
}

want() { # NAME
	[ ${#selected[@]} -eq 0 ] || [ -n "${selected[$1]-}" ]
}

want_any() { # NAME...
	local n
	for n; do
		! want "$n" || return 0
	done
	return 1
}

# $took: the seconds since the last result, as "(1.2s)"; the next one
# counts from now (set here, not in a $(subshell), which would forget it).
took() {
	local now=$EPOCHREALTIME ds
	ds=$(( (${now/./} - ${last_result/./}) / 100000 ))
	last_result=$now
	took="($((ds / 10)).$((ds % 10))s)"
}

# A result for a name tests did not declare is a failure of the suite.
result_for() { # NAME
	if [ -z "${declared[$1]-}" ]; then
		echo "FAIL $1: not declared by tests in $suite"
		failed=$((failed + 1))
	fi
	reported[$1]=1
}

pass() { # NAME
	result_for "$1"
	took
	echo "PASS $1 $took"
	passed=$((passed + 1))
}

fail() { # NAME WHY
	result_for "$1"
	took
	echo "FAIL $1 $took: $2"
	failed=$((failed + 1))
}

broken() { # WHAT WHY
	took
	echo "FAIL $1 $took: $2"
	failed=$((failed + 1))
}

skip() { # NAME WHY
	result_for "$1"
	echo "SKIP $1: $2"
}

unit() { # NAME PREFIX CMD...
	local name=$1 prefix=$2 out rc p f
	shift 2
	want "$name" || return 0
	out=$("$@" 2>&1); rc=$?
	sed -E "s/^(PASS|FAIL) /\\1 $prefix/" <<<"$out"
	p=$(grep -c '^PASS ' <<<"$out")
	f=$(grep -c '^FAIL ' <<<"$out")
	passed=$((passed + p))
	failed=$((failed + f))
	reported[$name]=1
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		fail "$name" "$* exited $rc"
	elif [ "$p" -eq 0 ]; then
		fail "$name" "$* passed no test"
	fi
}

run() { # NAME CMD...
	local name=$1 out rc
	shift
	want "$name" || return 0
	out=$(set -e; "$@" 2>&1); rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "$name"
	else
		fail "$name" "$out"
	fi
}

python_suite() { # FILE TARGET...
	local file=$1 out rc verdict name rest n
	local -a mine=() names
	shift
	names=($(python3 "$file" --list))
	tests "${names[@]}"
	# of the names asked for, its own (a shell suite may have others)
	for n in "${names[@]}"; do
		[ -z "${selected[$n]-}" ] || mine+=("$n")
	done
	[ ${#selected[@]} -eq 0 ] || [ ${#mine[@]} -gt 0 ] || return 0
	need "$@"
	set -- "$file"
	out=$(python3 "$1" "${mine[@]}" 2>&1); rc=$?
	echo "$out"
	while read -r verdict name rest; do
		name=${name%:}		# "FAIL name: why"
		reported[$name]=1
		if [ "$verdict" = PASS ]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
		fi
	done < <(grep -E '^(PASS|FAIL) ' <<<"$out")
	[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || broken "$1" "exited $rc"
}

build() { # TARGET...
	local t out
	local -a mk
	for t; do
		case $t in
		user-tests) mk=(-C user TOP="$root" tests) ;;
		user | man | progs | leak-progs) mk=("$t") ;;
		*) echo "build: no target $t" >&2; return 2 ;;
		esac
		make -q "${mk[@]}" >/dev/null 2>&1 && continue
		out=$(make -s "${mk[@]}" 2>&1) || { echo "$out"; return 1; }
	done
}

build_test() { # NAME TARGET...
	local name=$1 out
	shift
	if out=$(build "$@" 2>&1); then
		! want "$name" || pass "$name"
	else
		fail "$name" "$(grep -iE 'error|warning' <<<"$out" | head -5)"
		finish
	fi
}

need() { # TARGET...
	local out
	out=$(build "$@" 2>&1) && return 0
	broken build "$(grep -iE 'error|warning' <<<"$out" | head -5)"
	finish
}

finish() {
	local n
	for n in "${order[@]}"; do
		if want "$n" && [ -z "${reported[$n]-}" ]; then
			echo "FAIL $n: did not run"
			failed=$((failed + 1))
		fi
	done
	echo "host: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}
