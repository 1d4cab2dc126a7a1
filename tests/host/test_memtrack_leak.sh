#!/bin/bash
# Host checks of the leak tracer's user side that need no kernel module:
#  - the build (-Werror), user/tests/test_leak.c (stack decoding),
#    user/tests/test_scan.c (--scan's classifier on synthetic memory) and
#    user/tests/test_preload_read.c (the in-process engine's table read
#    while a shard rehashes);
#  - mt_leak_find_probes() on live processes: every libc allocator's file
#    offset agrees with readelf -sW + readelf -lW, and the libstdc++
#    operator new/delete variants are found in a C++ process;
#  - mt_sym_lookup() on a -O2 -g fixture agrees with addr2line -f -i,
#    an inlined function shown as inlined, and a C++ name demangled; on a
#    stripped copy, the object+offset it gives is what addr2line takes (its
#    path, not all UTF-8, in JSON as UTF-8 with U+FFFD);
#  - memtrack-leak's usage errors (exit 2) and its message without the module
#    (--engine uprobe: -p's default engine, injected, needs no module).
# Runs as tests/host/prelude.sh says: "PASS name" or "FAIL name: why" per
# check, test names as arguments run only those (unit-leak, unit-scan and
# unit-preload-read: the unit tests' own), --list prints them.
. "$(dirname "$0")/prelude.sh"
tests build-user-warning-free build-fixtures unit-leak unit-scan unit-preload-read \
	elfsyms-runs elfsyms-libc-found elfsyms-libc-offsets-match-readelf \
	elfsyms-libc-all-allocators elfsyms-no-duplicate-offsets elfsyms-libc-apis \
	elfsyms-libstdcxx-operator-count elfsyms-libstdcxx-operators elfsyms-libstdcxx-apis \
	elfsyms-skip-matches-objdump elfsyms-free-and-delete-skip elfsyms-offset-differs-from-vaddr \
	symbolize-{inl,direct}-matches-addr2line symbolize-inlined-frame-marked \
	symbolize-cxx-demangled symbolize-unmapped-address symbolize-stripped-pie-offset-is-addr2lines \
	leak-help-documents-every-option leak-usage-{no-pid,cmd-interval,cmd-count,bad-pid,zero-pid} \
	leak-usage-{bad-interval,neg-interval,bad-count,bad-top,bad-min-age,json-folded} \
	leak-usage-{scan-by-lib,scan-folded,extra-arg,unknown-option} leak-no-such-pid \
	leak-without-module leak-attach-dump-detach leak-attach-sends-probes leak-text-report \
	leak-text-mismatches leak-json-report leak-folded leak-text-object-offset \
	leak-json-object-offset leak-folded-object-offset leak-fds-probes-and-report \
	leak-eperm-message leak-other-abi-refused leak-ctrl-c-detaches
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
}

# ---- build --------------------------------------------------------------------
# The library, tools and unit tests, rebuilt where out of date: user/Makefile
# compiles every file with -Werror.
build_test build-user-warning-free user user-tests
if out=$(gcc -O2 -g -Wall -Wextra -Werror -o "$tmp/leakdemo" tests/progs/leakdemo.c 2>&1) &&
   out=$(g++ -O0 -g -Wall -Wextra -Werror -o "$tmp/leakdemo_cxx" tests/progs/leakdemo_cxx.cc 2>&1); then
	! want build-fixtures || pass build-fixtures
else
	fail build-fixtures "$out"
	finish
fi
units=$root/build/tests/user
probes=$units/leak_probes
sym=$units/leak_symbolize
leak=$root/build/bin/memtrack-leak

# ---- unit tests -----------------------------------------------------------------
unit unit-leak "" "$units/test_leak"
unit unit-scan "" "$units/test_scan"
unit unit-preload-read "" "$units/test_preload_read"

# ---- fixtures ---------------------------------------------------------------------
# Start one; wait until it has printed its first lines (it is then set up).
start() { # out-file cmd...
	local out=$1 i
	shift
	"$@" >"$out" &
	pids+=($!)
	for i in $(seq 100); do
		[ -s "$out" ] && grep -q '^ra' "$out" && return 0
		sleep 0.05
	done
	return 1
}
start "$tmp/c.out" "$tmp/leakdemo" 60 || broken fixture-c "leakdemo printed nothing"
cpid=${pids[-1]}
start "$tmp/cxx.out" "$tmp/leakdemo_cxx" 60 || broken fixture-cxx "leakdemo_cxx printed nothing"
cxxpid=${pids[-1]}

# ---- elfsyms ------------------------------------------------------------------
# File offset of SYMBOL in OBJECT by readelf: st_value through its PT_LOAD.
# Several versions of one name may exist: all their offsets, one a line.
readelf_offsets() { # object symbol
	local vals v type off va pa fs rest found=
	vals=$(readelf -sW "$1" | awk -v s="$2" '
		$4 == "FUNC" && $7 != "UND" {
			n = $8; sub(/@.*/, "", n)
			if (n == s) print $2
		}' | sort -u)
	[ -n "$vals" ] || return 1
	for v in $vals; do
		while read -r type off va pa fs rest; do
			[ "$type" = LOAD ] || continue
			if (( 0x$v >= va && 0x$v < va + fs )); then
				printf '%#x\n' $((0x$v - va + off))
				found=1
				break
			fi
		done < <(readelf -lW "$1")
	done
	[ -n "$found" ]
}

"$probes" "$cpid" >"$tmp/c.probes" 2>"$tmp/err"; rc=$?
if ! want elfsyms-runs; then
	:
elif [ $rc -eq 0 ]; then
	pass elfsyms-runs
else
	fail elfsyms-runs "$(cat "$tmp/err")"
fi
libc=$(awk '$1 ~ /\/libc\.so/ { print $1; exit }' "$tmp/c.probes")
if [ -z "$libc" ]; then
	fail elfsyms-libc-found "no libc probe in: $(head -3 "$tmp/c.probes")"
else
	! want elfsyms-libc-found || pass elfsyms-libc-found
	# every triple the library gives agrees with readelf for its symbol
	if want elfsyms-libc-offsets-match-readelf; then
		bad=
		while read -r path off api symbol _; do
			[ "$path" = "$libc" ] || continue
			offs=$(readelf_offsets "$libc" "$symbol")
			grep -qx -- "$off" <<<"$offs" || bad="$bad $symbol($off, readelf: ${offs//$'\n'/,})"
		done <"$tmp/c.probes"
		[ -z "$bad" ] && pass elfsyms-libc-offsets-match-readelf ||
			fail elfsyms-libc-offsets-match-readelf "$bad"
	fi
	# every allocator libc defines has a probe at its offset (aliases share one)
	if want elfsyms-libc-all-allocators; then
		missing=
		for s in malloc calloc realloc reallocarray free posix_memalign \
			aligned_alloc memalign valloc pvalloc; do
			offs=$(readelf_offsets "$libc" "$s") || { missing="$missing $s(not in libc)"; continue; }
			found=
			for o in $offs; do
				awk -v p="$libc" -v o="$o" '$1 == p && $2 == o { f = 1 } END { exit !f }' \
					"$tmp/c.probes" && found=1
			done
			[ -n "$found" ] || missing="$missing $s"
		done
		[ -z "$missing" ] && pass elfsyms-libc-all-allocators ||
			fail elfsyms-libc-all-allocators "no probe for:$missing"
	fi
	# one probe per offset
	if want elfsyms-no-duplicate-offsets; then
		dups=$(awk '{ print $1, $2 }' "$tmp/c.probes" | sort | uniq -d)
		[ -z "$dups" ] && pass elfsyms-no-duplicate-offsets ||
			fail elfsyms-no-duplicate-offsets "$dups"
	fi
	# APIs match the symbols
	if want elfsyms-libc-apis; then
		badapi=$(awk '{
			s = $4; a = $3; want = s
			if (s ~ /^_Znw/) want = "new"; else if (s ~ /^_Zna/) want = "new[]"
			else if (s ~ /^_Zdl/) want = "delete"; else if (s ~ /^_Zda/) want = "delete[]"
			if (a != want) print s "->" a }' "$tmp/c.probes")
		[ -z "$badapi" ] && pass elfsyms-libc-apis || fail elfsyms-libc-apis "$badapi"
	fi
fi

"$probes" "$cxxpid" >"$tmp/cxx.probes" 2>"$tmp/err" || broken elfsyms-cxx-runs "$(cat "$tmp/err")"
libstdcxx=$(awk '$1 ~ /\/libstdc\+\+\.so/ { print $1; exit }' "$tmp/cxx.probes")
if [ -z "$libstdcxx" ]; then
	broken elfsyms-libstdcxx-found "no libstdc++ probe"
elif want_any elfsyms-libstdcxx-operator-count elfsyms-libstdcxx-operators elfsyms-libstdcxx-apis; then
	missing=
	badapi=
	# every operator new/new[]/delete/delete[] libstdc++ exports (20 in
	# Debian 12's: plain, nothrow, sized, aligned and their combinations)
	ops=$(readelf -W --dyn-syms "$libstdcxx" |
		awk '$7 != "UND" && $8 ~ /^_Z(nw|na|dl|da)[mP]/ { sub(/@.*/, "", $8); print $8 }' |
		sort -u)
	if want elfsyms-libstdcxx-operator-count; then
		[ "$(wc -w <<<"$ops")" -ge 20 ] && pass elfsyms-libstdcxx-operator-count ||
			fail elfsyms-libstdcxx-operator-count "readelf lists only: $ops"
	fi
	for s in $ops; do
		case $s in
		_Znw*) api=new ;; _Zna*) api='new[]' ;; _Zdl*) api=delete ;; *) api='delete[]' ;;
		esac
		offs=$(readelf_offsets "$libstdcxx" "$s") || { missing="$missing $s(not defined)"; continue; }
		line=$(awk -v p="$libstdcxx" -v o="$offs" '$1 == p && $2 == o' "$tmp/cxx.probes")
		if [ -z "$line" ]; then
			missing="$missing $s"
		elif [ "$(awk '{ print $3 }' <<<"$line")" != "$api" ]; then
			badapi="$badapi $s->$(awk '{ print $3 }' <<<"$line")"
		fi
	done
	if want elfsyms-libstdcxx-operators; then
		[ -z "$missing" ] && pass elfsyms-libstdcxx-operators ||
			fail elfsyms-libstdcxx-operators "no probe at readelf's offset for:$missing"
	fi
	if want elfsyms-libstdcxx-apis; then
		[ -z "$badapi" ] && pass elfsyms-libstdcxx-apis || fail elfsyms-libstdcxx-apis "$badapi"
	fi
fi

# The skip each probe has, from objdump: past a leading endbr64 and
# test %rdi,%rdi when a jmp/jcc (which uprobes emulate) follows, else 0.
# libc's free (test; je) and libstdc++'s delete (endbr64; jmp) must have one.
objdump_skip() { # object file-offset (== vaddr for libc and libstdc++ code)
	objdump -d --no-show-raw-insn --start-address="$2" \
		--stop-address=$(($2 + 16)) "$1" |
		awk -F'\t' '/^ *[0-9a-f]+:\t/ { print $2 }' | awk '
		NR == 1 && $1 == "endbr64" { at += 4; next }
		!tested && $0 ~ /^test +%rdi,%rdi$/ { at += 3; tested = 1; next }
		{ print ($1 ~ /^j/) ? at : 0; exit }'
}
if want elfsyms-skip-matches-objdump; then
	badskip=
	for f in "$tmp/c.probes" "$tmp/cxx.probes"; do
		while read -r path off api symbol probe_skip; do
			objskip=$(objdump_skip "$path" "$off")
			[ "$probe_skip" = "$objskip" ] ||
				badskip="$badskip $symbol($probe_skip, objdump: $objskip)"
		done <"$f"
	done
	[ -z "$badskip" ] && pass elfsyms-skip-matches-objdump ||
		fail elfsyms-skip-matches-objdump "$badskip"
fi
if want elfsyms-free-and-delete-skip; then
	free_skip=$(awk -v p="$libc" '$1 == p && $4 == "free" { print $5 }' "$tmp/c.probes")
	del_skip=$(awk -v p="$libstdcxx" '$1 == p && $4 == "_ZdlPv" { print $5 }' "$tmp/cxx.probes")
	[ "$free_skip" = 3 ] && [ "$del_skip" = 4 ] && pass elfsyms-free-and-delete-skip ||
		fail elfsyms-free-and-delete-skip "free +$free_skip, _ZdlPv +$del_skip (want +3, +4)"
fi

# libc and libstdc++ have p_vaddr == p_offset for their code; an object
# linked at 0x200000 (st_value 0x201xxx, file offset 0x1xxx) tells a
# conversion that works from one that does nothing.
printf '#include <stddef.h>\nvoid *pvalloc(size_t n) { (void)n; return NULL; }\n' >"$tmp/fake.c"
if ! want elfsyms-offset-differs-from-vaddr; then
	:
elif gcc -shared -fPIC -O2 -Wl,-Ttext-segment=0x200000 -o "$tmp/libfake.so" "$tmp/fake.c" 2>"$tmp/err"; then
	LD_PRELOAD=$tmp/libfake.so sleep 60 &
	pids+=($!)
	fpid=$!
	for i in $(seq 100); do
		grep -q libfake "/proc/$fpid/maps" 2>/dev/null && break
		sleep 0.05
	done
	got=$("$probes" "$fpid" | awk -v p="$tmp/libfake.so" '$1 == p { print $2, $3 }')
	offs=$(readelf_offsets "$tmp/libfake.so" pvalloc)
	value=$(readelf -sW "$tmp/libfake.so" | awk '$8 == "pvalloc" { print "0x" $2; exit }')
	if [ -n "$offs" ] && [ "$got" = "$offs pvalloc" ] && (( offs != value )); then
		pass elfsyms-offset-differs-from-vaddr
	else
		fail elfsyms-offset-differs-from-vaddr "got '$got', readelf offset '$offs', st_value '$value'"
	fi
else
	fail elfsyms-offset-differs-from-vaddr "cannot build libfake.so: $(cat "$tmp/err")"
fi

# ---- symbolize --------------------------------------------------------------------
# leakdemo is PIE: file address = runtime address - (runtime main - nm main)
main_rt=$(awk '$1 == "main" { print $2 }' "$tmp/c.out")
main_nm=$(nm "$tmp/leakdemo" | awk '$3 == "main" { print $1 }')
bias=$((main_rt - 0x$main_nm))
for site in inl direct; do
	want "symbolize-$site-matches-addr2line" || continue
	ra=$(awk -v s="$site" '$1 == "ra" && $2 == s { print $3 }' "$tmp/c.out")
	# ours: "function file:line inlined|-" per frame, file reduced to its name
	ours=$("$sym" -r "$cpid" "$ra" | awk -F'\t' '{ n = split($3, p, "/"); print $2, p[n], $4 }')
	theirs=$(addr2line -f -i -e "$tmp/leakdemo" "$(printf '%#x' $((ra - 1 - bias)))" |
		sed 's/ (discriminator [0-9]*)//' | awk '
		NR % 2 { fn = $0; next }
		{ n = split($0, p, "/"); f[++k] = fn " " p[n] }
		END { for (i = 1; i <= k; i++) print f[i], (i < k ? "inlined" : "-") }')
	if [ -n "$ours" ] && [ "$ours" = "$theirs" ]; then
		pass "symbolize-$site-matches-addr2line"
	else
		fail "symbolize-$site-matches-addr2line" "ours '$ours' addr2line '$theirs'"
	fi
done
if want symbolize-inlined-frame-marked; then
	ra=$(awk '$1 == "ra" && $2 == "inl" { print $3 }' "$tmp/c.out")
	first=$("$sym" -r "$cpid" "$ra" | head -1 | cut -f2,4)
	last=$("$sym" -r "$cpid" "$ra" | tail -1 | cut -f2,4)
	[ "$first" = $'leak_inlined\tinlined' ] && [ "$last" = $'leak_site\t-' ] &&
		pass symbolize-inlined-frame-marked ||
		fail symbolize-inlined-frame-marked "first '$first' last '$last'"
fi
if want symbolize-cxx-demangled; then
	ra=$(awk '$1 == "ra" { print $2 }' "$tmp/cxx.out")
	got=$("$sym" -r "$cxxpid" "$ra" | head -1)
	grep -qP '\tdemo::make_ints\(int\)\t.*leakdemo_cxx\.cc:[0-9]+\t-\tleakdemo_cxx\+0x[0-9a-f]+$' <<<"$got" &&
		pass symbolize-cxx-demangled || fail symbolize-cxx-demangled "'$got'"
fi
if want symbolize-unmapped-address; then
	got=$("$sym" "$cpid" 0x10 | cut -f2,5)
	[ "$got" = $'??\t-' ] && pass symbolize-unmapped-address ||
		fail symbolize-unmapped-address "'$got'"
fi

# A stripped copy of the PIE: no function, no line, so a frame is its object
# and the address in it, the runtime address less the load bias.  That is
# what addr2line takes: on the unstripped file it gives the call of grab().
# Its directory's name is UTF-8 (dé€) then a byte that is not (0xff): JSON
# gives the path as UTF-8 with U+FFFD.
sdir=$tmp/$'d\xc3\xa9\xe2\x82\xac\xff'
mkdir "$sdir"
strip -o "$sdir/leakdemo-stripped" "$tmp/leakdemo"
start "$tmp/s.out" "$sdir/leakdemo-stripped" 60 || broken fixture-stripped "printed nothing"
spid=${pids[-1]}
sbias=$(($(awk '$1 == "main" { print $2 }' "$tmp/s.out") - 0x$main_nm))
sra_inl=$(awk '$1 == "ra" && $2 == "inl" { print $3 }' "$tmp/s.out")
sra_direct=$(awk '$1 == "ra" && $2 == "direct" { print $3 }' "$tmp/s.out")
soff_inl=$(printf '%#x' $((sra_inl - 1 - sbias)))
soff_direct=$(printf '%#x' $((sra_direct - 1 - sbias)))
line_of() { grep -nF -- "$1" tests/progs/leakdemo.c | cut -d: -f1; }
a2l() { # offset: "function file:line" of addr2line -f, file reduced to its name
	addr2line -f -e "$tmp/leakdemo" "$1" | sed 's/ (discriminator [0-9]*)//' |
		paste -sd' ' | awk '{ n = split($2, p, "/"); print $1, p[n] }'
}
if want symbolize-stripped-pie-offset-is-addr2lines; then
	bad=
	for site in "inl $sra_inl leak_inlined return grab(n, &ra_inl);" \
		    "direct $sra_direct leak_direct void *p = grab(n, &ra_direct);"; do
		read -r name ra fn text <<<"$site"
		expect="$fn leakdemo.c:$(line_of "$text")"
		got=$("$sym" -r "$spid" "$ra")
		obj=$(cut -f5 <<<"$got")
		[ "$(cut -f2,3 <<<"$got")" = $'??\t??:0' ] && [ "${obj%+*}" = leakdemo-stripped ] &&
			[ "$(a2l "${obj#*+}")" = "$expect" ] ||
			bad="$bad $name: '$got' -> addr2line '$(a2l "${obj#*+}")', want '$expect';"
	done
	[ -z "$bad" ] && pass symbolize-stripped-pie-offset-is-addr2lines ||
		fail symbolize-stripped-pie-offset-is-addr2lines "$bad"
fi

# ---- memtrack-leak command line -----------------------------------------------------
if want leak-help-documents-every-option; then
	out=$("$leak" --help 2>&1); rc=$?
	missing=
	for w in -p --pid -i --interval -n --count --min-age --top -j --json --folded \
		--fds -f --follow-forks -o --output -h --help; do
		grep -q -- "$w\b" <<<"$out" || missing="$missing $w"
	done
	[ $rc -eq 0 ] && [ -z "$missing" ] && pass leak-help-documents-every-option ||
		fail leak-help-documents-every-option "exit $rc, not mentioned:$missing"
fi

usage_case() { # name expected-stderr args...
	local name=$1 expect=$2 out rc
	shift 2
	want "$name" || return 0
	out=$("$leak" "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$expect" <<<"$out"; then
		pass "$name"
	else
		fail "$name" "memtrack-leak $* -> exit $rc, stderr '$out'"
	fi
}
usage_case leak-usage-no-pid "-p PID or -- COMMAND is required"
usage_case leak-usage-cmd-interval "-i and -n are for -p" -i 1 -- true
usage_case leak-usage-cmd-count "-i and -n are for -p" -n 1 -- true
usage_case leak-usage-bad-pid "invalid number 'x'" -p x
usage_case leak-usage-zero-pid "invalid number '0'" -p 0
usage_case leak-usage-bad-interval "invalid number of seconds '0'" -p 1 -i 0
usage_case leak-usage-neg-interval "invalid number of seconds '-1'" -p 1 -i -1
usage_case leak-usage-bad-count "invalid number '0'" -p 1 -n 0
usage_case leak-usage-bad-top "invalid number 'many'" -p 1 --top many
usage_case leak-usage-bad-min-age "invalid number of seconds 'old'" -p 1 --min-age old
usage_case leak-usage-json-folded "exclude each other" -p 1 --json --folded
usage_case leak-usage-scan-by-lib "--scan and --by-lib exclude each other" -p 1 --scan --by-lib
usage_case leak-usage-scan-folded "goes with neither --scan nor --by-lib" -p 1 --folded --scan
usage_case leak-usage-extra-arg "unexpected argument 'extra'" -p 1 extra
usage_case leak-usage-unknown-option "unrecognized option" -p 1 --bogus

if want leak-no-such-pid; then
	out=$("$leak" -p 999999999 2>&1); rc=$?
	[ $rc -eq 1 ] && grep -qF "no such process: 999999999" <<<"$out" &&
		pass leak-no-such-pid || fail leak-no-such-pid "exit $rc, '$out'"
fi

if ! want leak-without-module; then
	:
elif grep -qw memtrack /proc/net/genetlink 2>/dev/null || [ -d /sys/module/memtrack ]; then
	skip leak-without-module "memtrack.ko is loaded"
else
	out=$("$leak" -p "$cpid" --engine uprobe -n 1 -i 0.1 2>&1); rc=$?
	[ $rc -eq 1 ] && grep -qF "memtrack.ko is not loaded" <<<"$out" &&
		pass leak-without-module || fail leak-without-module "exit $rc, '$out'"
fi

# ---- memtrack-leak end to end, against user/tests/fake_genl.so -------------------
# The shim answers the netlink commands as the module would (see its header),
# to the uprobe engine (-p's default is the injected one, with no netlink):
# stack 1 (malloc) grows by 1000 bytes per dump, its frames are the return
# addresses into leak_site (through inlined leak_inlined) and leak_direct.
ra_inl=$(awk '$1 == "ra" && $2 == "inl" { print $3 }' "$tmp/c.out")
ra_direct=$(awk '$1 == "ra" && $2 == "direct" { print $3 }' "$tmp/c.out")
fake() (
	MT_FAKE_LOG=$tmp/fake.log MT_FAKE_FRAMES1=$ra_inl,$ra_direct \
	MT_FAKE_FRAMES2=$ra_direct LD_PRELOAD=$units/fake_genl.so exec "$leak" \
		--engine uprobe "$@"
)
if want_any leak-attach-dump-detach leak-attach-sends-probes leak-text-report leak-text-mismatches; then
	rm -f "$tmp/fake.log"
	out=$(fake -p "$cpid" -i 0.1 -n 2 --min-age 1.5 2>"$tmp/err"); rc=$?
	nprobes=$("$probes" "$cpid" | wc -l)
fi
if want leak-attach-dump-detach; then
	if [ $rc -eq 0 ] &&
	   grep -qx "attach tgid=$cpid probes=$nprobes .*" "$tmp/fake.log" &&
	   [ "$(grep -c "^stacks tgid=$cpid min_age=1500$" "$tmp/fake.log")" = 2 ] &&
	   grep -qx "detach tgid=$cpid" "$tmp/fake.log"; then
		pass leak-attach-dump-detach
	else
		fail leak-attach-dump-detach "exit $rc, $(cat "$tmp/err"), log: $(grep -v ^probe "$tmp/fake.log")"
	fi
fi
# every probe sent is one the library found, at its entry + skip
if want leak-attach-sends-probes; then
	if diff <("$probes" "$cpid" | while read -r path off _ _ skip; do
			printf '%s %#x\n' "$path" $((off + skip)); done | sort) \
		<(awk '$1 == "probe" { print $2, $3 }' "$tmp/fake.log" | sort) >"$tmp/diff"; then
		pass leak-attach-sends-probes
	else
		fail leak-attach-sends-probes "$(head -5 "$tmp/diff")"
	fi
fi
if want leak-text-report; then
	expect="  #2 2000 bytes in 2 blocks (malloc), oldest"
	if [ "$(grep -c ' report [12]: ' <<<"$out")" = 2 ] &&
	   grep -qF "$expect" <<<"$out" && grep -q "growth +1000$" <<<"$out" &&
	   grep -q "growth +0$" <<<"$out" &&
	   grep -qE '^ +leak_inlined \(.*leakdemo\.c:[0-9]+\) \(inlined\)$' <<<"$out" &&
	   grep -qE '^ +leak_site \(.*leakdemo\.c:[0-9]+\)$' <<<"$out" &&
	   ! grep -q '#3' <<<"$out"; then
		pass leak-text-report
	else
		fail leak-text-report "$out"
	fi
fi
# the mismatch section: allocating stack (FRAMES2), then the freeing one (FRAMES1)
if want leak-text-mismatches; then
	mis=$(awk '/^  Mismatched free\(\) \/ delete \/ delete \[\]: 1 allocating stack$/ { on = 1 }
		on && /^$/ { exit } on' <<<"$out")
	if [ "$(grep -c 'Mismatched free()' <<<"$out")" = 2 ] &&
	   grep -qx '  ! 2 blocks allocated by new\[\], freed by delete' <<<"$mis" &&
	   [ "$(sed -n '/allocated at:/,/freed (last time) at:/p' <<<"$mis" | grep -c 'leak_inlined')" = 0 ] &&
	   [ "$(sed -n '/freed (last time) at:/,$p' <<<"$mis" | grep -c 'leak_inlined')" = 1 ]; then
		pass leak-text-mismatches
	else
		fail leak-text-mismatches "$out"
	fi
fi
if ! want leak-json-report; then
	:
elif fake -p "$cpid" -i 0.1 -n 2 --json -o "$tmp/json" 2>"$tmp/err" &&
   python3 - "$tmp/json" <<'PY'
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
assert len(docs) == 2, docs
for d in docs:
    assert set(d) >= {"time", "pid", "stacks"}, d
    for s in d["stacks"]:
        assert set(s) >= {"bytes", "blocks", "oldest_s", "growth", "api", "frames"}, s
        for f in s["frames"]:
            assert set(f) >= {"address", "offset", "function", "file", "line",
                              "inlined", "module"}, f
s1 = [s for s in docs[1]["stacks"] if s["api"] == "malloc"][0]
assert s1["bytes"] == 2000 and s1["growth"] == 1000, s1
fr = s1["frames"]
assert fr[0]["function"] == "leak_inlined" and fr[0]["inlined"] is True, fr
assert fr[1]["function"] == "leak_site" and fr[1]["inlined"] is False, fr
assert docs[1]["stacks"][0]["api"] == "new[]", docs[1]
# stacks 3 and 4 hold no blocks: mismatches only
assert [s["stack_id"] for s in docs[1]["stacks"]] == [2, 1], docs[1]["stacks"]
m, = docs[1]["mismatches"]
assert (m["alloc_api"], m["free_api"], m["count"], m["alloc_stack_id"],
        m["free_stack_id"]) == ("new[]", "delete", 2, 3, 4), m
assert [f["function"] for f in m["alloc_frames"]] == ["leak_direct"], m
assert [f["function"] for f in m["free_frames"]] == ["leak_inlined", "leak_site", "leak_direct"], m
PY
then
	pass leak-json-report
else
	fail leak-json-report "$(cat "$tmp/err") $(head -c 600 "$tmp/json")"
fi
if want leak-folded; then
	out=$(fake -p "$cpid" -i 0.1 -n 1 --folded 2>&1)
	grep -qx "leak_direct;leak_site;leak_inlined 1000" <<<"$out" &&
		grep -qx "leak_direct 4096" <<<"$out" &&
		pass leak-folded || fail leak-folded "'$out'"
fi
# Frames in the stripped PIE: object+offset as addr2line takes it (checked
# above), not the runtime address, in text, JSON ("offset") and folded.
sfake() (
	MT_FAKE_FRAMES1=$sra_inl MT_FAKE_FRAMES2=$sra_direct \
	LD_PRELOAD=$units/fake_genl.so exec "$leak" --engine uprobe "$@"
)
if want leak-text-object-offset; then
	out=$(sfake -p "$spid" -i 0.1 -n 1 2>&1)
	grep -qxF "        ?? (leakdemo-stripped+$soff_inl)" <<<"$out" &&
		grep -qxF "        ?? (leakdemo-stripped+$soff_direct)" <<<"$out" &&
		pass leak-text-object-offset || fail leak-text-object-offset "'$out'"
fi
if ! want leak-json-object-offset; then
	:
elif sfake -p "$spid" -i 0.1 -n 1 --json -o "$tmp/sjson" 2>"$tmp/err" &&
   python3 - "$tmp/sjson" "$sra_inl" "$soff_inl" "$sra_direct" "$soff_direct" "$tmp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
want = {int(sys.argv[i], 16): int(sys.argv[i + 1], 16) for i in (2, 4)}
frames = [f for s in d["stacks"] for f in s["frames"]]
assert sorted(f["address"] for f in frames) == sorted(want), frames
for f in frames:
    assert f["module"] == sys.argv[6] + "/d\u00e9\u20ac\ufffd/leakdemo-stripped", f
    assert f["offset"] == want[f["address"]] and f["function"] is None, f
PY
then
	pass leak-json-object-offset
else
	fail leak-json-object-offset "$(cat "$tmp/err") $(head -c 600 "$tmp/sjson")"
fi
if want leak-folded-object-offset; then
	out=$(sfake -p "$spid" -i 0.1 -n 1 --folded 2>&1)
	grep -qx "leakdemo-stripped+$soff_inl 1000" <<<"$out" &&
		grep -qx "leakdemo-stripped+$soff_direct 4096" <<<"$out" &&
		pass leak-folded-object-offset || fail leak-folded-object-offset "'$out'"
fi
# --fds: libc's descriptor calls and close (MEMTRACK_API_OPEN.. _CLOSE, 15..28)
# are probed, no allocator; -f sets MEMTRACK_LEAK_F_CHILDREN; the fake's
# stacks are memory, so an fds report lists none of them.
if want leak-fds-probes-and-report; then
	rm -f "$tmp/fake.log"
	out=$(fake -p "$cpid" -i 0.1 -n 1 --fds -f --json 2>&1); rc=$?
	apis=$(awk '$1 == "probe" { print $4 }' "$tmp/fake.log" | sort -n | uniq | tr '\n' ' ')
	if [ $rc -eq 0 ] && grep -qx "attach tgid=$cpid probes=[0-9]* len=[0-9]* flags=3" "$tmp/fake.log" &&
	   grep -qx "arm tgid=$cpid" "$tmp/fake.log" &&
	   [ "$apis" = "15 16 17 18 19 20 21 22 23 24 25 26 27 28 " ] &&
	   grep -q '"total_fds":0,"nr_stacks":0,"fds":\[\],"mismatches":\[\]}$' <<<"$out"; then
		pass leak-fds-probes-and-report
	else
		fail leak-fds-probes-and-report "exit $rc, apis '$apis', '$out', $(grep -v ^probe "$tmp/fake.log")"
	fi
fi
if want leak-eperm-message; then
	out=$(MT_FAKE_ATTACH_ERR=-1 fake -p "$cpid" -n 1 2>&1); rc=$?
	[ $rc -eq 1 ] && grep -qF "permission denied: tracing $cpid needs the rights of ptrace" <<<"$out" &&
		pass leak-eperm-message || fail leak-eperm-message "exit $rc, '$out'"
fi
# A module of another ABI version is refused at open, before any request
# whose structures it would lay out otherwise; nothing is attached.
if want leak-other-abi-refused; then
	rm -f "$tmp/fake.log"
	out=$(MT_FAKE_LOG=$tmp/fake.log MT_FAKE_ABI=1 fake -p "$cpid" -n 1 2>&1); rc=$?
	abi=$(awk '$2 == "MEMTRACK_ABI_VERSION" { print $3 }' "$root/include/uapi/linux/memtrack.h")
	[ $rc -eq 1 ] && grep -qF "memtrack.ko speaks ABI version 1, this program $abi" <<<"$out" &&
		! grep -q attach "$tmp/fake.log" 2>/dev/null &&
		pass leak-other-abi-refused || fail leak-other-abi-refused "exit $rc, abi '$abi', '$out'"
fi
if want leak-ctrl-c-detaches; then
	rm -f "$tmp/fake.log"
	# a simple command, so that $! is memtrack-leak itself
	MT_FAKE_LOG=$tmp/fake.log LD_PRELOAD=$units/fake_genl.so \
		"$leak" --engine uprobe -p "$cpid" -i 10 >/dev/null 2>&1 &
	lpid=$!
	for i in $(seq 100); do
		grep -q attach "$tmp/fake.log" 2>/dev/null && break
		sleep 0.05
	done
	kill -INT $lpid
	for i in $(seq 100); do
		kill -0 $lpid 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL $lpid 2>/dev/null && echo "memtrack-leak ignored SIGINT"
	wait $lpid; rc=$?
	[ $rc -eq 0 ] && grep -qx "detach tgid=$cpid" "$tmp/fake.log" &&
		pass leak-ctrl-c-detaches || fail leak-ctrl-c-detaches "exit $rc, log: $(grep -v ^probe "$tmp/fake.log")"
fi

finish
