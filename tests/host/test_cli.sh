#!/bin/bash
# The command lines people already know: every program's --version (GNU
# form, the VERSION file's release), --help (stdout, exit 0, every option
# of its man page, its exit statuses), a bad option (stderr only, exit 2,
# the program's name and "Try 'PROG --help'." however it was run); the man pages
# (scdoc) render at 80 columns without a warning and document every long
# option the program's --help lists; the bash completions complete those
# options, the arguments with a fixed set of values and memtrack-leak's
# command after --, each once and with the programs off PATH (memtrack-top's
# sort keys from the program itself).  usage:
# test_cli.sh [TEST...] (and --list; tests/host/prelude.sh has the
# conventions)
. "$(dirname "$0")/prelude.sh"
progs=(memtrack-top memtrack-leak memtrack-events memtrack-query memtrackd)
tests version help-and-bad-option man-pages-render-clean \
	man-pages-document-every-option completions-options completions-arguments
need user man
release=$(cat VERSION)

# The page of a program: section 1, memtrackd's 8.
page() {
	case $1 in
	memtrackd) echo build/man/memtrackd.8 ;;
	*) echo "build/man/$1.1" ;;
	esac
}

# The long options a program's --help lists, sorted.
long_options() {
	"build/bin/$1" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u
}

version() {
	local p out err
	for p in "${progs[@]}"; do
		for opt in --version -V; do
			out=$("build/bin/$p" $opt 2>"$tmp/err") ||
				{ echo "$p $opt: exit $?"; return 1; }
			err=$(cat "$tmp/err")
			[ "${out%%$'\n'*}" = "$p (memtrack) $release" ] && [ -z "$err" ] ||
				{ echo "$p $opt: '$out' (stderr '$err'), want '$p (memtrack) $release'"; return 1; }
		done
	done
}

help_and_bad_option() {
	local p out rc
	for p in "${progs[@]}"; do
		rc=0
		out=$("build/bin/$p" --help 2>"$tmp/err") || rc=$?
		[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] && grep -q -- "--version" <<<"$out" ||
			{ echo "$p --help: exit $rc, stderr '$(cat "$tmp/err")', stdout ${#out} bytes"; return 1; }
		grep -q "^Exit status: 0" <<<"$out" ||
			{ echo "$p --help: no 'Exit status: 0...' paragraph"; return 1; }
		# run by a path, it still says its name, then where to look
		rc=0
		out=$("build/bin/$p" --no-such-option 2>"$tmp/err") || rc=$?
		[ $rc -eq 2 ] && [ -z "$out" ] &&
			[ "$(cat "$tmp/err")" = "$p: unrecognized option '--no-such-option'"$'\n'"Try '$p --help'." ] ||
			{ echo "$p --no-such-option: exit $rc, stdout '$out', stderr '$(cat "$tmp/err")'"; return 1; }
	done
	# an argument where none is taken, and no query: the same two lines
	rc=0
	"build/bin/memtrackd" extra 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] && [ "$(tail -n 1 "$tmp/err")" = "Try 'memtrackd --help'." ] &&
		grep -q '^memtrackd: unexpected argument "extra"' "$tmp/err" ||
		{ echo "memtrackd extra: exit $rc, stderr '$(cat "$tmp/err")'"; return 1; }
	rc=0
	"build/bin/memtrack-query" 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] && [ "$(cat "$tmp/err")" = "memtrack-query: no query"$'\n'"Try 'memtrack-query --help'." ] ||
		{ echo "memtrack-query with no query: exit $rc, stderr '$(cat "$tmp/err")'"; return 1; }
}

man_pages_render_clean() {
	local m n
	n=$(ls build/man | wc -l)
	[ "$n" -ge 7 ] || { echo "$n man pages in build/man"; return 1; }
	for m in build/man/*; do
		MANWIDTH=80 man --warnings -l "$m" >"$tmp/out" 2>"$tmp/err"
		[ ! -s "$tmp/err" ] || { echo "$m: $(head -5 "$tmp/err")"; return 1; }
		# whole: a stray request in a paragraph ends the page early
		grep -q "^SEE ALSO" "$tmp/out" || { echo "$m: cut short (no SEE ALSO)"; return 1; }
		# its NAME section names it
		n=${m##*/}
		grep -A1 "^NAME" "$tmp/out" | grep -qE "^ +${n%.*} - " ||
			{ echo "$m: NAME does not name it: $(grep -A1 "^NAME" "$tmp/out")"; return 1; }
	done
}

man_pages_document_every_option() {
	local p o missing
	for p in "${progs[@]}"; do
		MANWIDTH=200 man -l "$(page "$p")" 2>/dev/null >"$tmp/page"
		missing=$(long_options "$p" | while read -r o; do
			grep -qF -- "$o" "$tmp/page" || echo "$o"
		done)
		[ -z "$missing" ] || { echo "$(page "$p") lacks" $missing; return 1; }
	done
}

# complete WORD...: what the program's completion offers for the last word,
# sorted, each as many times as offered; the programs off PATH, as before
# an install (the completion must not need to run them).
complete_words() {
	bash -c '
		source /usr/share/bash-completion/bash_completion
		source "completions/bash/$1"
		fn=$(complete -p "$1" | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' complete "$@" 2>/dev/null | sort | paste -sd' '
}

expect() { # WANT WORD...
	local want=$1 got
	shift
	got=$(complete_words "$@")
	[ "$got" = "$want" ] || { echo "complete '$*': '$got', want '$want'"; return 1; }
}

# The same for commands on PATH, which bash's compgen -c gives once per
# directory that has them (/bin and /usr/bin on a merged /usr; readline
# shows each once).
expect_commands() { # WANT WORD...
	local want=$1 got
	shift
	got=$(complete_words "$@" | tr ' ' '\n' | sort -u | paste -sd' ')
	[ "$got" = "$want" ] || { echo "complete '$*': '$got', want '$want'"; return 1; }
}

completions_options() {
	local p want
	for p in "${progs[@]}"; do
		bash -n "completions/bash/$p" || return 1
		want=$(long_options "$p" | paste -sd' ')
		# memtrack-leak offers the -- before a command too
		[ "$p" != memtrack-leak ] || want="-- $want"
		expect "$want" "$p" -- || return 1
	done
	expect "--group --growth-min-rate --growth-window" memtrack-top --gr
}

# -o's keys: the columns' that sort and time, each counter's title in lower
# case without its "/s" (from the ABI's list, tests/guest/uapi.py).
sort_keys() {
	{
		printf '%s\n' anon cpu file growth pid rss shmem swap time virt
		python3 -c 'import sys; sys.path.insert(0, "tests/guest"); import uapi
for c in uapi.COUNTER_INFO: print(c["title"].lower().removesuffix("/s"))'
	} | sort | paste -sd' '
}

completions_arguments() {
	# -o's keys are the program's (-o help, which reads no process): the
	# program completed, here from PATH
	PATH="$PWD/build/bin:$PATH" expect "$(sort_keys)" memtrack-top --sort "" || return 1
	PATH="$PWD/build/bin:$PATH" expect "pgalloc pgfail pgfree pid" memtrack-top -o p || return 1
	expect "root" memtrack-top -u roo || return 1
	expect "inject preload uprobe" memtrack-leak --engine ""
	expect "task,mmap" memtrack-events -c task,m
	expect "all alloc_fail" memtrack-events --class a
	expect "sum" memtrack-query s
	expect "comm container namespace node pod" memtrack-query -j sum rss by ""
	expect "namespace,comm namespace,container namespace,node namespace,pod" \
		memtrack-query sum rss by namespace,
	expect "pod=" memtrack-query sum rss where p
	expect "anon file nproc rss shmem swap" memtrack-query top 5 by ""
	expect_commands "mkfifo" memtrack-leak --json -- mkfif
	# after --, the command's own completion, not memtrack-leak's options
	expect "" memtrack-leak -- mkfifo --sc
	expect "$$" memtrack-leak -p "$$"
}

run version version
run help-and-bad-option help_and_bad_option
run man-pages-render-clean man_pages_render_clean
run man-pages-document-every-option man_pages_document_every_option
run completions-options completions_options
run completions-arguments completions_arguments
finish
