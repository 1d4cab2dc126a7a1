// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's command line (top_opts.h): its options parsed and
 * checked, the usage; -o takes any column that sorts (top_columns.h).
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "config.h"
#include "top_columns.h"
#include "top_opts.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: memtrack-top [-d SECONDS] [-o SORT] [-F FILTER] [-p PID,...]\n"
		"                    [-u USER] [--group WHAT] [--pss] [--proc] [-C]\n"
		"                    [--cluster HOST:PORT|prometheus:URL]\n"
		"       memtrack-top -b [-n ITERATIONS] [-d SECONDS] [--json] [-o SORT]\n"
		"                       [-F FILTER] [-p PID,...] [-u USER] [--group WHAT]\n"
		"                       [--top ROWS] [--pss] [--proc]\n"
		"       memtrack-top -b --cluster HOST:PORT|prometheus:URL [-n ITERATIONS]\n"
		"                       [-d SECONDS]\n"
		"                       [--json] [--top ROWS]\n"
		"  (interactive: h for the keys)\n"
		"  -b, --batch        print samples as text (like top -b), no terminal\n"
		"  -n, --iterations N stop after N samples (default: until killed)\n"
		"  -d, --delay SEC    seconds between samples, 0.1..3600 (default 2)\n"
		"  -j, --json         JSON lines: a summary object, then one per process\n"
		"  -o, --sort KEY     a column that sorts, shown if hidden (its title,\n"
		"                     any case, %% and /s may go, or its JSON name):\n"
		"                     rss (default), pid, cpu, anon, file, shmem, swap,\n"
		"                     virt, minflt, majflt, pgalloc, kmalloc, growth, a\n"
		"                     counter's; or time (CPU time); -o help lists them\n"
		"      --top ROWS     print only the first ROWS processes of each sample\n"
		"  -F, --filter TEXT  only commands holding TEXT (any case); pod=TEXT,\n"
		"                     namespace=TEXT, container=TEXT: those names (keys\n"
		"                     F4 and \\)\n"
		"  -p, --pid PID,...  only these processes (kernel threads too)\n"
		"  -u, --user USER    only USER's processes (a name or a uid; key u)\n"
		"      --group WHAT   one row per program, cgroup, container or pod, its\n"
		"                     processes summed (keys p, g, G)\n"
		"      --pss          PSS and USS columns, from /proc/PID/smaps_rollup of\n"
		"                     the rows shown only (key X in the interactive view)\n"
		"      --proc         read /proc even when the memtrack module is loaded\n"
		"      --kernel-threads\n"
		"                     list kernel threads (key K), -b too; hidden by\n"
		"                     default in both\n"
		"      --cluster HOST:PORT|prometheus:URL\n"
		"                     every node's processes and the programs summed\n"
		"                     across nodes, from a memtrackd aggregator (key A;\n"
		"                     authentication from memtrackd.conf) or from a\n"
		"                     Prometheus API the nodes remote-write to; -b: the\n"
		"                     --top ROWS largest processes (default 100)\n"
		"      --growth-window SEC\n"
		"                     the growth flag (FLAG, LEAK?+RATE/s): RSS's low\n"
		"                     point rose in each quarter of the last SEC seconds\n"
		"                     (1..86400, default 60) ...\n"
		"      --growth-min-rate RATE\n"
		"                     ... by RATE bytes/s or more (K, M, G suffixes;\n"
		"                     default 1K); GROWTH is RSS's change over the window\n"
		"  -C, --no-color     no colours (also when NO_COLOR is set, or the\n"
		"                     terminal has none)\n"
		"  -h, --help         this help\n"
		"  -V, --version      the release\n"
		"\n"
		"Exit status: 0; 1 when the processes cannot be read (no /proc, the\n"
		"module refused) or the cluster cannot be reached; 2 on usage errors\n"
		"(and a bad ~/.config/memtrack/toprc line, or no terminal without -b).\n");
}

static const char *const group_names[] = {
	[TOP_GROUP_PROGRAM] = "program", [TOP_GROUP_CGROUP] = "cgroup",
	[TOP_GROUP_CONTAINER] = "container", [TOP_GROUP_POD] = "pod",
};

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* -p PID,...: the pids, sorted; -1 if one is not a pid (or no memory) */
static int parse_pids(const char *s, struct top_opts *o)
{
	size_t n = 1, k = 0;
	const char *p;
	char *end;
	long v;

	for (p = s; *p; p++)
		n += *p == ',';
	o->pids = realloc(o->pids, (o->npids + n) * sizeof(*o->pids));
	if (!o->pids)
		return -1;
	for (p = s; k < n; k++, p = end + 1) {
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || (*end && *end != ',') || v <= 0 ||
		    v > INT32_MAX || *p == '+' || *p == ' ')
			return -1;
		o->pids[o->npids++] = (pid_t)v;
	}
	qsort(o->pids, o->npids, sizeof(*o->pids), cmp_pid);
	return 0;
}

/* -u USER: a name, else a uid; -1 if neither */
static int parse_user(const char *s, struct top_opts *o)
{
	struct passwd *pw = getpwnam(s);
	char *end;
	unsigned long v;

	if (pw) {
		o->uid = pw->pw_uid;
	} else {
		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || end == s || *end || *s == '-' || v >= (uid_t)-1)
			return -1;
		o->uid = (uid_t)v;
	}
	o->by_user = true;
	o->user = s;
	return 0;
}

/* --growth-window: 0 and *out, or -1 */
static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 1 || v > 86400)
		return -1;
	*out = v;
	return 0;
}

/* --growth-min-rate: bytes/s, a K, M or G suffix for KiB, MiB, GiB */
static int parse_rate(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	if (*end == 'K' || *end == 'k')
		v *= 1024, end++;
	else if (*end == 'M')
		v *= 1024 * 1024, end++;
	else if (*end == 'G')
		v *= 1024 * 1024 * 1024, end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int top_opts_parse(int argc, char **argv, struct top_opts *o)
{
	static const struct option longopts[] = {
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "delay", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "sort", required_argument, NULL, 'o' },
		{ "proc", no_argument, NULL, 'P' },
		{ "kernel-threads", no_argument, NULL, 'K' },
		{ "top", required_argument, NULL, 'T' },
		{ "pss", no_argument, NULL, 'S' },
		{ "cluster", required_argument, NULL, 'L' },
		{ "growth-window", required_argument, NULL, 'W' },
		{ "growth-min-rate", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "no-color", no_argument, NULL, 'C' },
		{ "filter", required_argument, NULL, 'F' },
		{ "group", required_argument, NULL, 'G' },
		{ "pid", required_argument, NULL, 'p' },
		{ "user", required_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	*o = (struct top_opts){
		.delay = 2, .sort = top_column_index("rss"),
		.growth = { TOP_GROWTH_WINDOW, TOP_GROWTH_MIN_RATE },
	};
	while ((c = getopt_long(argc, argv, "bn:d:jo:hVCF:p:u:", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			o->batch = true;
			break;
		case 'n':
			errno = 0;
			o->iterations = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || o->iterations <= 0) {
				warnx("-n: not a positive count: %s", optarg);
				return 2;
			}
			break;
		case 'd':
			errno = 0;
			o->delay = strtod(optarg, &end);
			if (errno || *end || end == optarg || !isfinite(o->delay) ||
			    o->delay < 0.1 || o->delay > 3600) {
				warnx("-d: seconds from 0.1 to 3600: %s", optarg);
				return 2;
			}
			o->delay_set = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'o':
			if (!strcmp(optarg, "help")) {
				top_sort_keys_print(stdout);
				exit(fflush(stdout) ? 1 : 0);
			}
			o->sort = top_column_sort_find(optarg);
			if (o->sort < 0) {
				warnx("-o: not a column that sorts: %s", optarg);
				return 2;
			}
			o->sort_key = optarg;
			o->sort_set = true;
			break;
		case 'P':
			o->proc = true;
			break;
		case 'K':
			o->kthreads = true;
			break;
		case 'T':
			errno = 0;
			o->rows = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || o->rows <= 0) {
				warnx("--top: not a positive count: %s", optarg);
				return 2;
			}
			break;
		case 'S':
			o->smaps = true;
			break;
		case 'L': {
			char addr[256];
			unsigned int port;

			/* an aggregator, or a Prometheus API (top_cluster.c) */
			if (!strncmp(optarg, "prometheus:", 11) ?
			    strncasecmp(optarg + 11, "http://", 7) &&
			    strncasecmp(optarg + 11, "https://", 8) :
			    mtn_parse_hostport(optarg, addr, sizeof(addr), &port)) {
				warnx("--cluster: HOST:PORT (IPv6 in []) or prometheus:http(s)://... expected: %s", optarg);
				return 2;
			}
			o->cluster = optarg;
			break;
		}
		case 'W':
			if (parse_seconds(optarg, &o->growth.window)) {
				warnx("--growth-window: seconds from 1 to 86400: %s", optarg);
				return 2;
			}
			break;
		case 'R':
			if (parse_rate(optarg, &o->growth.min_rate)) {
				warnx("--growth-min-rate: bytes/s (K, M, G: KiB, MiB, GiB), 0 or more: %s", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			exit(mt_print_version("memtrack-top"));
		case 'C':
			o->mono = true;
			break;
		case 'F':
			if (strlen(optarg) >= sizeof(((struct top_view_opts *)0)->filter)) {
				warnx("-F: at most 63 characters: %s", optarg);
				return 2;
			}
			o->filter = optarg;
			break;
		case 'p':
			if (parse_pids(optarg, o)) {
				warnx("-p: process IDs separated by commas: %s", optarg);
				return 2;
			}
			break;
		case 'u':
			if (parse_user(optarg, o)) {
				warnx("-u: no such user: %s", optarg);
				return 2;
			}
			break;
		case 'G': {
			size_t i;

			for (i = 1; i < MT_ARRAY_SIZE(group_names); i++)
				if (group_names[i] && !strcmp(optarg, group_names[i]))
					break;
			if (i == MT_ARRAY_SIZE(group_names)) {
				warnx("--group: program, cgroup, container or pod: %s", optarg);
				return 2;
			}
			o->group = i;
			break;
		}
		default:
			fprintf(stderr, "Try '%s --help'.\n",
				program_invocation_short_name);
			return 2;
		}
	}
	if (optind < argc) {
		warnx("unexpected argument: %s", argv[optind]);
		fprintf(stderr, "Try '%s --help'.\n",
			program_invocation_short_name);
		return 2;
	}
	if (o->rows && !o->batch) {
		warnx("--top needs -b (the terminal shows what fits)");
		return 2;
	}
	if (o->json && !o->batch) {
		warnx("--json needs -b");
		return 2;
	}
	return 0;
}

