// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top: a memory-first top.  Who holds memory, who grows, who
 * allocates and who faults, from memtrack.ko when it is loaded and from
 * /proc otherwise.
 *
 *   memtrack-top [-d SECONDS] [-o SORT] [--pss] [--proc]       interactive
 *                [--cluster HOST:PORT|prometheus:URL]
 *   memtrack-top -b [-n ITERATIONS] [-d SECONDS] [--json] [-o SORT]
 *                   [--top ROWS] [--pss] [--proc]
 *   memtrack-top -b --cluster HOST:PORT|prometheus:URL [-n ITERATIONS] [-d SECONDS]
 *                   [--json] [--top ROWS]
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <locale.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "top.h"
#include "config.h"
#include "query_target.h"
#include "top_cluster.h"
#include "top_cluster_view.h"
#include "top_columns.h"
#include "top_smaps.h"
#include "top_toprc.h"
#include "top_ui.h"
#include "top_view.h"

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
		"  -o, --sort KEY     a column that sorts (its title, any case; /s may\n"
		"                     go): rss (default), pid, cpu, anon, file, shmem,\n"
		"                     swap, virt, minflt, majflt, pgalloc, kmalloc,\n"
		"                     growth; or time (CPU time, not a column)\n"
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

static const char *const sort_names[] = {
	[TOP_SORT_RSS] = "rss", [TOP_SORT_CPU] = "cpu",
	[TOP_SORT_TIME] = "time", [TOP_SORT_PID] = "pid",
	[TOP_SORT_GROWTH] = "growth",
};

struct opts {
	bool batch, json, proc, smaps, mono;
	bool kthreads;			/* --kernel-threads: listed from the start */
	bool delay_set, sort_set;	/* -d, -o given: they beat toprc */
	long iterations;		/* 0: for ever */
	long rows;			/* --top; 0: all */
	double delay;
	enum top_sort sort;
	const char *cluster;		/* --cluster */
	struct top_growth growth;	/* --growth-window, --growth-min-rate */
	const char *filter;		/* -F */
	enum top_group group;		/* --group */
	pid_t *pids;			/* -p, sorted; NULL: all */
	size_t npids;
	bool by_user;			/* -u */
	uid_t uid;
	const char *user;
};

static const char *const group_names[] = {
	[TOP_GROUP_PROGRAM] = "program", [TOP_GROUP_CGROUP] = "cgroup",
	[TOP_GROUP_CONTAINER] = "container", [TOP_GROUP_POD] = "pod",
};

/* The interactive view's settings from toprc, where -d and -o did not set them. */
static int load_toprc(const struct opts *o, struct top_ui_opts *uo)
{
	static char path[4096];
	struct top_toprc rc = { .sort = o->sort, .delay = o->delay };
	char err[4200];

	top_layout_default(&rc.layout);
	uo->layout = rc.layout;
	if (top_toprc_path(path, sizeof(path)))
		return 0;
	uo->toprc = path;
	if (top_toprc_load(path, &rc, err, sizeof(err))) {
		fprintf(stderr, "memtrack-top: %s\n", err);
		return -1;
	}
	uo->layout = rc.layout;
	if (rc.has_delay && !o->delay_set)
		uo->delay = rc.delay;
	if (rc.has_sort && !o->sort_set)
		uo->sort = rc.sort;
	return 0;
}

/*
 * -o: rss, cpu, time, pid, growth, or any column that sorts by its title
 * (any case), "/s" left off or not.
 */
static int parse_sort(const char *s, enum top_sort *out)
{
	char title[32];
	size_t i;

	for (i = 0; i < sizeof(sort_names) / sizeof(sort_names[0]); i++)
		if (sort_names[i] && !strcmp(s, sort_names[i])) {
			*out = i;
			return 0;
		}
	if (!top_sort_from_title(s, out))
		return 0;
	snprintf(title, sizeof(title), "%s/s", s);
	return top_sort_from_title(title, out);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* -p PID,...: the pids, sorted; -1 if one is not a pid (or no memory) */
static int parse_pids(const char *s, struct opts *o)
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
static int parse_user(const char *s, struct opts *o)
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

/* 0, or 2 after printing why (the exit status of a usage error). */
static int parse_args(int argc, char **argv, struct opts *o)
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

	*o = (struct opts){
		.delay = 2, .sort = TOP_SORT_RSS,
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
				fprintf(stderr, "memtrack-top: -n: not a positive count: %s\n", optarg);
				return 2;
			}
			break;
		case 'd':
			errno = 0;
			o->delay = strtod(optarg, &end);
			if (errno || *end || end == optarg || !isfinite(o->delay) ||
			    o->delay < 0.1 || o->delay > 3600) {
				fprintf(stderr, "memtrack-top: -d: seconds from 0.1 to 3600: %s\n", optarg);
				return 2;
			}
			o->delay_set = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'o':
			if (parse_sort(optarg, &o->sort)) {
				fprintf(stderr, "memtrack-top: -o: not a column that sorts: %s\n", optarg);
				return 2;
			}
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
				fprintf(stderr, "memtrack-top: --top: not a positive count: %s\n", optarg);
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
			    mtd_parse_hostport(optarg, addr, sizeof(addr), &port)) {
				fprintf(stderr, "memtrack-top: --cluster: HOST:PORT (IPv6 in []) or prometheus:http(s)://... expected: %s\n", optarg);
				return 2;
			}
			o->cluster = optarg;
			break;
		}
		case 'W':
			if (parse_seconds(optarg, &o->growth.window)) {
				fprintf(stderr, "memtrack-top: --growth-window: seconds from 1 to 86400: %s\n", optarg);
				return 2;
			}
			break;
		case 'R':
			if (parse_rate(optarg, &o->growth.min_rate)) {
				fprintf(stderr, "memtrack-top: --growth-min-rate: bytes/s (K, M, G: KiB, MiB, GiB), 0 or more: %s\n", optarg);
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
				fprintf(stderr, "memtrack-top: -F: at most 63 characters: %s\n", optarg);
				return 2;
			}
			o->filter = optarg;
			break;
		case 'p':
			if (parse_pids(optarg, o)) {
				fprintf(stderr, "memtrack-top: -p: process IDs separated by commas: %s\n", optarg);
				return 2;
			}
			break;
		case 'u':
			if (parse_user(optarg, o)) {
				fprintf(stderr, "memtrack-top: -u: no such user: %s\n", optarg);
				return 2;
			}
			break;
		case 'G': {
			size_t i;

			for (i = 1; i < MT_ARRAY_SIZE(group_names); i++)
				if (group_names[i] && !strcmp(optarg, group_names[i]))
					break;
			if (i == MT_ARRAY_SIZE(group_names)) {
				fprintf(stderr, "memtrack-top: --group: program, cgroup, container or pod: %s\n", optarg);
				return 2;
			}
			o->group = i;
			break;
		}
		default:
			fprintf(stderr, "Try 'memtrack-top --help'.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "memtrack-top: unexpected argument: %s\nTry 'memtrack-top --help'.\n",
			argv[optind]);
		return 2;
	}
	if (o->rows && !o->batch) {
		fprintf(stderr, "memtrack-top: --top needs -b (the terminal shows what fits)\n");
		return 2;
	}
	if (o->json && !o->batch) {
		fprintf(stderr, "memtrack-top: --json needs -b\n");
		return 2;
	}
	return 0;
}

static void sleep_for(double sec)
{
	struct timespec ts = { .tv_sec = (time_t)sec };

	ts.tv_nsec = (long)((sec - ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Batch samples of the cluster; a failed answer ends it (exit 1). */
static int run_cluster_batch(const struct opts *o)
{
	struct top_cluster *c;
	struct top_cluster_snap s;
	char err[512];
	int timeout_ms = o->delay > 5 ? (int)(o->delay * 1000) : 5000;
	long i;
	int rc = 0;

	c = top_cluster_new(o->cluster, NULL, o->rows ? (size_t)o->rows : 100,
			    err, sizeof(err));
	if (!c) {
		fprintf(stderr, "memtrack-top: --cluster: %s\n", err);
		return 1;
	}
	for (i = 0; !o->iterations || i < o->iterations; i++) {
		if (i)
			sleep_for(o->delay);
		if (top_cluster_fetch(c, timeout_ms, &s)) {
			fprintf(stderr, "memtrack-top: %s: %s\n",
				top_cluster_name(c), s.error);
			rc = 1;
			break;
		}
		if (o->json)
			top_cluster_batch_json(stdout, &s, top_cluster_name(c));
		else
			top_cluster_batch_text(stdout, &s, top_cluster_name(c));
		top_cluster_snap_free(&s);
		if (fflush(stdout) == EOF)
			break;
	}
	top_cluster_free(c);
	return rc;
}

/*
 * A sample filtered or grouped as the interactive view would show it: the
 * view's rows printed in the table's place.
 */
static int batch_view(struct top_table *tb, const struct opts *o,
		      unsigned int show)
{
	struct top_view_opts vo = {
		.kthreads = o->kthreads, .group = o->group, .sort = o->sort,
		.pids = o->pids, .npids = o->npids, .by_user = o->by_user,
		.uid = o->uid,
	};
	struct top_view v = { 0 };
	struct top_row *rows = tb->rows;
	size_t n = tb->n, nrows;
	int err;

	if (o->filter)
		snprintf(vo.filter, sizeof(vo.filter), "%s", o->filter);
	err = top_view_build(&v, tb, &vo);
	if (err)
		goto out;
	nrows = o->rows && (size_t)o->rows < v.n ? (size_t)o->rows : v.n;
	tb->rows = v.rows;
	tb->n = v.n;
	if (o->smaps)
		top_rows_smaps(tb->rows, nrows);
	if (o->json)
		top_batch_json(stdout, tb, mt_source_name(tb->src), show, v.n,
			       nrows);
	else
		top_batch_text(stdout, tb, mt_source_name(tb->src), show, v.n,
			       nrows);
	tb->rows = rows;
	tb->n = n;
out:
	top_view_free(&v);
	return err;
}

static int run_batch(struct mt_source *src, const struct opts *o)
{
	struct top_table tb;
	unsigned int show;
	size_t rows, listed;
	long i;
	int err = 0;

	top_table_init(&tb, src, &o->growth);
	for (i = 0; !o->iterations || i < o->iterations; i++) {
		if (i)
			sleep_for(o->delay);
		err = top_table_refresh(&tb);
		if (err) {
			fprintf(stderr, "memtrack-top: %s\n", mt_errmsg());
			break;
		}
		show = top_table_show(&tb, o->smaps);
		if (o->filter || o->group || o->npids || o->by_user) {
			err = batch_view(&tb, o, show);
			if (err) {
				fprintf(stderr, "memtrack-top: %s\n", strerror(-err));
				break;
			}
			if (fflush(stdout) == EOF)
				break;
			continue;
		}
		top_table_sort(&tb, o->sort, false);
		/* the interactive view's default: kernel threads hidden */
		listed = o->kthreads ? tb.n : top_table_kthreads_last(&tb);
		rows = o->rows && (size_t)o->rows < listed ? (size_t)o->rows :
		       listed;
		/* the printed rows only: each file is a walk of page tables */
		if (o->smaps)
			top_rows_smaps(tb.rows, rows);
		if (o->json)
			top_batch_json(stdout, &tb, mt_source_name(src), show,
				       listed, rows);
		else
			top_batch_text(stdout, &tb, mt_source_name(src), show,
				       listed, rows);
		if (fflush(stdout) == EOF)
			break;		/* reader gone: nothing to print to */
	}
	top_table_free(&tb);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct mt_source *src;
	struct opts o;
	int rc;

	/* getopt's messages name the program, not the path it was run by */
	argv[0] = (char *)"memtrack-top";
	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	/* the terminal's character set: text is fitted in screen cells
	 * (top_text.c), -b's columns too */
	setlocale(LC_CTYPE, "");
	/*
	 * Every refresh builds arrays of megabytes (the dump's rows): keep
	 * their pages in the heap rather than unmap them and fault them in,
	 * zeroed, again the next time.
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	if (!o.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		fprintf(stderr, "memtrack-top: not a terminal: use -b for batch output\n");
		return 2;
	}
	if (!o.batch && o.iterations) {
		fprintf(stderr, "memtrack-top: -n needs -b\n");
		return 2;
	}
	if (o.batch && o.cluster)
		return run_cluster_batch(&o);
	src = mt_source_open(o.proc ? MT_SOURCE_PROC : 0);
	if (!src) {
		fprintf(stderr, "memtrack-top: %s\n", mt_errmsg());
		return 1;
	}
	if (o.batch) {
		rc = run_batch(src, &o);
	} else {
		struct top_ui_opts uo = {
			.delay = o.delay, .sort = o.sort, .smaps = o.smaps,
			.kthreads = o.kthreads, .group = o.group,
			.filter = o.filter, .pids = o.pids, .npids = o.npids,
			.by_user = o.by_user, .uid = o.uid, .user = o.user,
			.cluster = o.cluster, .growth = o.growth,
			/* https://no-color.org: set and not empty */
			.mono = o.mono || (getenv("NO_COLOR") &&
					   getenv("NO_COLOR")[0]),
		};

		rc = load_toprc(&o, &uo) ? 2 : top_ui_run(src, &uo);
	}
	mt_source_close(src);
	free(o.pids);
	return rc;
}
