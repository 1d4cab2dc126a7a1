// SPDX-License-Identifier: GPL-2.0
/* memtrack-leak's command line: options into struct leak_opts, usage text. */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "libmemtrack.h"

const char prog[] = "memtrack-leak";

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s -p PID [options]\n"
"       %s [options] -- COMMAND [ARGS...]\n"
"Report the call stacks of PID holding memory it allocated and has not freed,\n"
"or run COMMAND traced from its first allocation and report once, at its exit.\n"
"Blocks freed by the wrong API (new[] by delete, malloc by delete, ...) are\n"
"reported too, with the allocating and the freeing stack.\n"
"\n"
"  -p, --pid PID         process to trace (needs the rights of ptrace on it)\n"
"  -i, --interval SEC    seconds between reports (default 10)\n"
"  -n, --count COUNT     stop after COUNT reports (default: until Ctrl-C)\n"
"      --min-age SEC     only allocations at least SEC seconds old (default 0)\n"
"      --top N           stacks per report, by outstanding bytes (default 10)\n"
"  -j, --json            one JSON document per report\n"
"      --folded          folded stacks \"root;...;leaf BYTES\" per line (flame graphs)\n"
"      --scan            classify the outstanding blocks like valgrind memcheck:\n"
"                        definitely/indirectly/possibly lost, still reachable\n"
"                        (stops PID's threads with ptrace while it reads their\n"
"                        registers, stacks, data/bss, TLS and heap)\n"
"      --by-lib          outstanding bytes and allocator calls per calling\n"
"                        object (frames[0]'s ELF file) and API\n"
"      --fds             file descriptors still open instead of memory, by count\n"
"  -f, --follow-forks    trace the children PID forks too, until they exec\n"
"      --engine ENGINE   how the program is traced: with a COMMAND, preload\n"
"                        (default: a library loaded into it records its\n"
"                        allocations, no module needed); with -p, inject\n"
"                        (default: the same library loaded into the running\n"
"                        process with ptrace; its calls' GOT slots point at\n"
"                        it until the detach); or uprobe (memtrack.ko's\n"
"                        probes; static programs, which the library cannot\n"
"                        reach, use it)\n"
"  -o, --output FILE     write reports to FILE instead of standard output\n"
"  -h, --help            this text\n"
"  -V, --version         the release\n"
"\n"
"Exit status: 0; 1 on errors; 2 on usage errors; 3 when the session ends\n"
"under -p: the process exited or exec'd (after a last report of what it held\n"
"at that moment), or memtrack.ko was unloaded.  With\n"
"COMMAND: the command's own exit status, or 128+N if signal N killed it (127:\n"
"not found; 126: found but could not be run, as the shell says).  SIGTERM,\n"
"SIGHUP, SIGINT and SIGQUIT sent to\n"
"memtrack-leak are passed on to COMMAND; -i and -n do not apply to it.\n"
"\n"
"With a command, --scan runs at its exit (the preload engine).  With -p it\n"
"knows only blocks allocated since the attach (either engine).  Older blocks may\n"
"hold pointers, so the whole [heap] outside known blocks counts as a root,\n"
"like data and bss: a block only an older, unreachable one points to shows\n"
"as reachable, never as lost.  Other anonymous mappings (older mmap-ed\n"
"blocks, other arenas) are not roots.\n", prog, prog);
}

static void die_usage(const char *fmt, const char *arg)
{
	warnx(fmt, arg);
	fprintf(stderr, "Try '%s --help'.\n", prog);
	exit(2);
}

/* A positive decimal number of seconds (fractions allowed) -> ms. */
static long long parse_seconds(const char *s, const char *opt, bool zero_ok)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v != v || v < 0 || v > 1e9 ||
	    (!zero_ok && v * 1000 < 1)) {
		warnx("%s: invalid number of seconds '%s'", opt, s);
		fprintf(stderr, "Try '%s --help'.\n", prog);
		exit(2);
	}
	return (long long)(v * 1000 + 0.5);
}

static long parse_count(const char *s, const char *opt, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		warnx("%s: invalid number '%s'", opt, s);
		fprintf(stderr, "Try '%s --help'.\n", prog);
		exit(2);
	}
	return v;
}

static void set_fmt(struct leak_opts *o, enum fmt fmt)
{
	if (o->fmt != FMT_TEXT && o->fmt != fmt)
		die_usage("%s", "--json and --folded exclude each other");
	o->fmt = fmt;
}

/*
 * One option c with its argument arg; periodic: -i or -n was given,
 * engine: --engine was.
 */
static void parse_option(struct leak_opts *o, int c, const char *arg,
			 bool *periodic, bool *engine)
{
	switch (c) {
	case 'p':
		o->pid = parse_count(arg, "-p", 1, INT_MAX);
		break;
	case 'i':
		o->interval_ms = parse_seconds(arg, "-i", false);
		*periodic = true;
		break;
	case 'n':
		o->count = parse_count(arg, "-n", 1, INT_MAX);
		*periodic = true;
		break;
	case 'a':
		o->min_age_ms = parse_seconds(arg, "--min-age", true);
		if (o->min_age_ms > UINT32_MAX)
			die_usage("--min-age: '%s' is too long", arg);
		break;
	case 't':
		o->top = parse_count(arg, "--top", 1, INT_MAX);
		break;
	case 'j':
		set_fmt(o, FMT_JSON);
		break;
	case 'F':
		set_fmt(o, FMT_FOLDED);
		break;
	case 'D':
		o->fds = true;
		break;
	case 'f':
		o->follow = true;
		break;
	case 'o':
		o->output = arg;
		break;
	case 'S':
	case 'B':
		if (o->mode != MODE_STACKS)
			die_usage("%s", "--scan and --by-lib exclude each other");
		o->mode = c == 'S' ? MODE_SCAN : MODE_BYLIB;
		break;
	case 'E':
		if (!strcmp(arg, "preload"))
			o->engine = ENGINE_PRELOAD;
		else if (!strcmp(arg, "uprobe"))
			o->engine = ENGINE_UPROBE;
		else if (!strcmp(arg, "inject"))
			o->engine = ENGINE_INJECT;
		else
			die_usage("--engine: '%s' is none of preload, inject and uprobe", arg);
		*engine = true;
		break;
	case 'h':
		usage(stdout);
		exit(0);
	case 'V':
		exit(mt_print_version(prog));
	default:
		fprintf(stderr, "Try '%s --help'.\n", prog);
		exit(2);
	}
}

/* The options that do not go together. */
static void check_args(const struct leak_opts *o, bool periodic)
{
	if (!o->pid && !o->cmd)
		die_usage("%s", "-p PID or -- COMMAND is required");
	if (o->pid && o->engine == ENGINE_PRELOAD)
		die_usage("%s", "--engine preload is for -- COMMAND: a running process is traced with --engine inject or uprobe");
	if (o->cmd && o->engine == ENGINE_INJECT)
		die_usage("%s", "--engine inject is for -p: a command is traced with --engine preload or uprobe");
	if (o->cmd && periodic)
		die_usage("%s", "-i and -n are for -p: a command gets one report, at its exit");
	if (o->cmd && o->fds && o->engine == ENGINE_UPROBE)
		die_usage("%s", "--fds with a command needs --engine preload");
	if (o->fds && o->mode != MODE_STACKS)
		die_usage("%s", "--fds goes with neither --scan nor --by-lib");
	if (o->mode != MODE_STACKS && o->fmt == FMT_FOLDED)
		die_usage("%s", "--folded goes with neither --scan nor --by-lib");
}

void parse_args(struct leak_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "min-age", required_argument, NULL, 'a' },
		{ "top", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "folded", no_argument, NULL, 'F' },
		{ "fds", no_argument, NULL, 'D' },
		{ "follow-forks", no_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "scan", no_argument, NULL, 'S' },
		{ "by-lib", no_argument, NULL, 'B' },
		{ "engine", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	bool periodic = false, engine = false;
	int c;

	*o = (struct leak_opts){ .interval_ms = 10000, .top = 10 };
	while ((c = getopt_long(argc, argv, "+p:i:n:jfo:hV", opts, NULL)) != -1)
		parse_option(o, c, optarg, &periodic, &engine);
	if (optind < argc) {
		if (o->pid)
			die_usage("unexpected argument '%s'", argv[optind]);
		o->cmd = &argv[optind];
	}
	if (o->pid && !engine)
		o->engine = ENGINE_INJECT;
	check_args(o, periodic);
}
