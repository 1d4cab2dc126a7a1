// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-events: print memtrack.ko's memory event records as they happen.
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "libmemtrack.h"

static const char *prog = "memtrack-events";
static volatile sig_atomic_t stop;

struct state {
	bool json;
	bool netlink;
	uint32_t classes;
	pid_t pid, tgid;
	unsigned long long max;		/* 0: no limit */
	unsigned long long seen;	/* records, LOST not counted */
	unsigned long long lost;	/* sum of LOST records */
	char line[16384];
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [-p PID] [-t TGID] [-c CLASS,...] [--json] [--netlink] [-n COUNT]\n"
"\n"
"Print memtrack.ko's memory events as they happen, one line per record:\n"
"time (seconds since boot, CLOCK_MONOTONIC), [cpu], pid/tgid, type, then\n"
"the record's fields as key=value (addresses in hex, sizes in bytes).\n"
"\n"
"  -p, --pid PID         only events of thread PID\n"
"  -t, --tgid TGID       only events of process TGID\n"
"  -c, --class LIST      event classes, comma-separated: task, mmap, shm, oom,\n"
"                        reclaim, alloc_fail, rss, page, kmalloc, all, default\n"
"                        (default: all but page and kmalloc; those two are\n"
"                        high-volume and need -p or -t)\n"
"  -j, --json            one JSON object per line instead of text\n"
"  -N, --netlink         read the generic netlink \"events\" group instead of\n"
"                        /dev/memtrack (filters are then applied here)\n"
"  -n, --count COUNT     exit after COUNT records (lost-record notices\n"
"                        not counted)\n"
"  -h, --help            this help\n"
"  -V, --version         the release\n"
"\n"
"On SIGINT or SIGTERM (or after COUNT records) it prints to stderr how many\n"
"records it saw and how many were lost, and exits 0.\n"
"Exit status: 0 done, 1 error, 2 usage error.\n", prog);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", prog);
	exit(2);
}

static unsigned long long number(const char *s, const char *what,
				 unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v == 0 || v > max)
		usage_error("invalid %s '%s'", what, s);
	return v;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* --netlink: the group carries everybody's records; filter here. */
static bool wanted(const struct state *st, const struct memtrack_rec_hdr *r)
{
	if (r->type == MEMTRACK_REC_LOST)
		return true;
	if (st->pid && r->pid != st->pid)
		return false;
	if (st->tgid && r->tgid != st->tgid)
		return false;
	return mt_record_class(r->type) & st->classes ||
	       !mt_record_class(r->type);	/* a type newer than us */
}

static int print_record(const struct memtrack_rec_hdr *r, void *arg)
{
	struct state *st = arg;
	int n;

	if (st->netlink && !wanted(st, r))
		return 0;
	if (r->type == MEMTRACK_REC_LOST)
		st->lost += ((const struct memtrack_rec_lost *)r)->lost;
	else
		st->seen++;
	if (st->json)
		n = mt_format_json(r, st->line, sizeof(st->line));
	else
		n = mt_format_text(r, st->line, sizeof(st->line));
	if (n >= (int)sizeof(st->line))
		n = sizeof(st->line) - 1;
	st->line[n] = '\n';
	fwrite(st->line, 1, n + 1, stdout);
	if (st->max && r->type != MEMTRACK_REC_LOST && st->seen >= st->max)
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tgid", required_argument, NULL, 't' },
		{ "class", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "netlink", no_argument, NULL, 'N' },
		{ "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct state st = { .classes = MEMTRACK_CLASS_DEFAULT };
	struct mt_handle *h = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, orig;
	int c, fd, ret = 0;

	mt_set_progname(argv, prog);
	while ((c = getopt_long(argc, argv, "p:t:c:jNn:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			st.pid = number(optarg, "pid", INT_MAX);
			break;
		case 't':
			st.tgid = number(optarg, "tgid", INT_MAX);
			break;
		case 'c':
			if (mt_class_parse(optarg, &st.classes) < 0)
				usage_error("%s", mt_errmsg());
			break;
		case 'j':
			st.json = true;
			break;
		case 'N':
			st.netlink = true;
			break;
		case 'n':
			st.max = number(optarg, "count", ULLONG_MAX);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			return mt_print_version(prog);
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return 2;
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (st.classes & (MEMTRACK_CLASS_PAGE | MEMTRACK_CLASS_KMALLOC) &&
	    !st.pid && !st.tgid)
		usage_error("classes page and kmalloc need -p PID or -t TGID");

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (st.netlink) {
		h = mt_open(0);
		if (!h || mt_subscribe(h) < 0) {
			warnx("%s", mt_errmsg());
			mt_close(h);
			return 1;
		}
		fd = mt_events_fd(h);
	} else {
		struct memtrack_filter f = {
			.classes = st.classes,
			.pid = st.pid,
			.tgid = st.tgid,
		};

		fd = mt_ring_open(&f, true);
		if (fd < 0) {
			warnx("%s", mt_errmsg());
			return 1;
		}
	}

	while (!stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n;

		/* signals are only let in while waiting here */
		n = ppoll(&p, 1, NULL, &orig);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			warn("poll");
			ret = 1;
			break;
		}
		if (st.netlink)
			n = mt_read_events(h, print_record, &st);
		else
			n = mt_ring_read(fd, print_record, &st);
		fflush(stdout);
		if (n == -EINTR)
			continue;
		if (n < 0) {
			warnx("%s", mt_errmsg());
			ret = 1;
			break;
		}
		if (st.max && st.seen >= st.max)
			break;
	}

	if (st.netlink)
		warnx("%llu records, %llu lost, %llu netlink receive buffer overruns (records lost: unknown)",
		      st.seen, st.lost,
		      (unsigned long long)mt_events_overruns(h));
	else
		warnx("%llu records, %llu lost", st.seen, st.lost);
	if (st.netlink)
		mt_close(h);
	else
		close(fd);
	if (fflush(stdout) || ferror(stdout)) {
		warn("writing output");
		ret = 1;
	}
	return ret;
}
