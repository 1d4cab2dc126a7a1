// SPDX-License-Identifier: GPL-2.0
/*
 * memtrackd: the memtrack node daemon.
 *
 *   memtrackd [-c FILE] [-f]
 *
 * Reads memory figures from memtrack.ko (or /proc without it) and serves
 * them to Prometheus on /metrics.  Everything privileged is opened first
 * (netlink sockets, the listening socket), then root is dropped.  The main
 * thread samples periodically and reads events; the HTTP thread samples on
 * each scrape.  One mutex keeps them apart (the netlink socket and the
 * state are not shared safely otherwise).
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>

#include <linux/memtrack.h>

#include "../aggregator/aggregate.h"
#include "config.h"
#include "conn.h"
#include "http.h"
#include "log.h"
#include "libmemtrack.h"
#include "metrics.h"
#include "privs.h"
#include "relay.h"
#include "relay_proto.h"
#include "remote_write.h"
#include "service.h"
#include "snapshot.h"
#include "state.h"
#include "tcp.h"

struct daemon_ctx {
	pthread_mutex_t lock;
	struct mtn_config cfg;
	struct mtd_source *src;
	struct mtd_state *st;
	struct mtd_relay *relay;	/* NULL: no aggregators */
	struct mtn_creds *creds;	/* the relay's, NULL without it */
	struct mtd_rw *rw;		/* NULL: no remote_write */
	struct utsname uts;		/* memtrack_node_info's machine, release */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrackd [-c FILE] [-f] [--aggregate]\n"
		"memtrack's node daemon: a Prometheus exporter of every program's\n"
		"memory, a relay to aggregators, or (--aggregate) an aggregator.\n"
		"  -c, --config FILE  configuration (default " MTN_DEFAULT_CONFIG ")\n"
		"  -f, --foreground   log to stderr, not syslog (it never forks)\n"
		"  -a, --aggregate    be an aggregator ([aggregate] section)\n"
		"  -h, --help         this help\n"
		"  -V, --version      the release\n"
		"\n"
		"Exit status: 0 when a signal ends it; 1 when it cannot start (a port\n"
		"in use, no such user, no module with source = module); 2 on usage\n"
		"errors and a bad configuration line.\n");
}

/* Take a sample and fold it in; the caller holds the lock. */
static int sample_locked(struct daemon_ctx *d)
{
	struct mtd_sample s = { 0 };
	int err;

	err = mtd_source_sample(d->src, &s);
	if (!err)
		err = mtd_state_update(d->st, &s);
	mtd_sample_free(&s);
	if (err)
		mtn_log(LOG_ERR, "sampling (%s): %s", mtd_source_name(d->src),
			strerror(-err));
	return err;
}

/* The relay's and remote write's own families, after the rest. */
static int own_metrics(struct daemon_ctx *d, const struct mtd_expo_opts *o,
		       struct mtn_buf *out)
{
	if (d->relay)
		mtd_relay_metrics(d->relay, o, out);
	if (d->rw)
		mtd_rw_metrics(d->rw, o, out);
	return out->oom ? -ENOMEM : 0;
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int scrape(void *arg, struct mtn_buf *out)
{
	struct daemon_ctx *d = arg;
	struct mtd_expo_opts o = {
		.node = d->cfg.node_label ? d->cfg.node : NULL,
		.nodename = d->cfg.node,
		.machine = d->uts.machine,
		.release = d->uts.release,
		.source = mtd_source_name(d->src),
		.top_pids = d->cfg.top_pids,
		.containers = d->cfg.containers,
	};
	int err;

	pthread_mutex_lock(&d->lock);
	err = sample_locked(d);
	if (!err)
		err = mtd_metrics_format(d->st, &o, out);
	if (!err)
		err = own_metrics(d, &o, out);
	pthread_mutex_unlock(&d->lock);
	return err;
}

/*
 * The periodic sample to the remote write endpoints: the series of
 * /metrics, through the sink; the caller holds the lock.
 */
static void remote_write(struct daemon_ctx *d)
{
	struct mtd_expo_opts o = {
		.nodename = d->cfg.node,
		.machine = d->uts.machine,
		.release = d->uts.release,
		.source = mtd_source_name(d->src),
		.top_pids = d->cfg.top_pids,
		.containers = d->cfg.containers,
		.sink = mtd_rw_begin(d->rw, wall_ms()),
	};
	struct mtn_buf scratch = { 0 };	/* HELP and TYPE lines, unused */

	if (!mtd_metrics_format(d->st, &o, &scratch))
		own_metrics(d, &o, &scratch);
	free(scratch.p);
	mtd_rw_commit(d->rw);
}

/* The periodic sample to the aggregators; the caller holds the lock. */
static void relay_snapshot(struct daemon_ctx *d)
{
	struct mtn_buf b = { 0 };
	int err = mtd_snapshot_format(d->st, mtd_source_name(d->src), &b);

	if (!err)
		err = mtd_relay_push(d->relay, MTN_RELAY_SNAPSHOT, b.p, b.len);
	if (err)
		mtn_log(LOG_WARNING, "relay: snapshot not queued: %s",
			strerror(err < 0 ? -err : ENOMEM));
	free(b.p);
}

/*
 * Module records to the aggregators, as they came (struct memtrack_rec_hdr
 * + payload each), at most MTD_RELAY_RECORDS_MAX bytes a message, cut
 * between records.
 */
#define MTD_RELAY_RECORDS_MAX	(512 * 1024)

static void relay_records(struct daemon_ctx *d, const struct mtn_buf *b)
{
	size_t start = 0, end = 0;

	if (b->oom)
		mtn_log(LOG_WARNING, "relay: records lost: out of memory");
	if (!d->relay || b->oom)
		return;
	while (start < b->len) {
		const struct memtrack_rec_hdr *h;

		while (end < b->len) {
			h = (const void *)(b->p + end);
			if (end > start &&
			    end + h->size - start > MTD_RELAY_RECORDS_MAX)
				break;
			end += h->size;
		}
		if (mtd_relay_push(d->relay, MTN_RELAY_RECORDS, b->p + start,
				   end - start))
			mtn_log(LOG_WARNING, "relay: records not queued");
		start = end;
	}
}

/* Until SIGTERM/SIGINT: periodic samples, events. */
static void run(struct daemon_ctx *d, int sigfd)
{
	int64_t next = mt_mono_ms() + d->cfg.sample_interval_ms;
	bool events_off = false;

	for (;;) {
		struct pollfd pfd[2] = { { .fd = sigfd, .events = POLLIN } };
		int evfd, timeout = -1;

		/* a scrape may have reconnected the source: ask each time */
		pthread_mutex_lock(&d->lock);
		evfd = events_off ? -1 : mtd_source_events_fd(d->src);
		pthread_mutex_unlock(&d->lock);
		pfd[1].fd = evfd;
		pfd[1].events = POLLIN;

		if (d->cfg.sample_interval_ms) {
			int64_t left = next - mt_mono_ms();

			timeout = left > 0 ? (int)left : 0;
		}
		if (poll(pfd, evfd >= 0 ? 2 : 1, timeout) < 0) {
			if (errno == EINTR)
				continue;
			mtn_log(LOG_ERR, "poll: %s", strerror(errno));
			return;
		}
		if ((pfd[0].revents & POLLIN) && mtn_exit_signalled(sigfd))
			return;
		if (evfd >= 0 && pfd[1].revents) {
			int err;

			struct mtn_buf recs = { 0 };

			pthread_mutex_lock(&d->lock);
			err = mtd_source_read_events(d->src, d->st,
						     d->relay ? &recs : NULL);
			pthread_mutex_unlock(&d->lock);
			relay_records(d, &recs);
			free(recs.p);
			/* e.g. the module was unloaded: stop, do not spin */
			if (err && err != -EINTR) {
				mtn_log(LOG_WARNING,
					"reading events: %s; no more events",
					strerror(-err));
				events_off = true;
			}
		}
		if (d->cfg.sample_interval_ms && mt_mono_ms() >= next) {
			pthread_mutex_lock(&d->lock);
			if (!sample_locked(d) && d->relay)
				relay_snapshot(d);
			if (d->rw && d->st->have_sample)
				remote_write(d);
			pthread_mutex_unlock(&d->lock);
			next = mt_mono_ms() + d->cfg.sample_interval_ms;
		}
	}
}

int main(int argc, char **argv)
{
	static struct daemon_ctx d = { .lock = PTHREAD_MUTEX_INITIALIZER };
	static const struct option longopts[] = {
		{ "aggregate", no_argument, NULL, 'a' },
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cfgpath = NULL;
	bool foreground = false, aggregate = false;
	int opt, lfds[MTD_HTTP_MAX_SOCKETS], nlfd, sigfd;
	struct mtd_http *http;
	char err[512], status[1024];
	sigset_t sigs;

	mt_set_progname(argv, "memtrackd");
	while ((opt = getopt_long(argc, argv, "ac:fhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			aggregate = true;
			break;
		case 'c':
			cfgpath = optarg;
			break;
		case 'f':
			foreground = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			return mt_print_version("memtrackd");
		default:
			fprintf(stderr, "Try 'memtrackd --help'.\n");
			return 2;
		}
	}
	if (optind != argc) {
		warnx("unexpected argument \"%s\" (the settings are in the file -c names)",
		      argv[optind]);
		fprintf(stderr, "Try 'memtrackd --help'.\n");
		return 2;
	}
	mtn_log_init(true);
	mtn_config_defaults(&d.cfg);
	/* the default file is optional; one named with -c is not */
	if ((cfgpath || access(MTN_DEFAULT_CONFIG, F_OK) == 0) &&
	    mtn_config_load(cfgpath ? cfgpath : MTN_DEFAULT_CONFIG, &d.cfg,
			    err, sizeof(err))) {
		mtn_log(LOG_ERR, "%s", err);
		return 2;
	}
	if (aggregate)
		return mtd_aggregate_main(&d.cfg, foreground);

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	signal(SIGPIPE, SIG_IGN);

	nlfd = mtn_listen_all(d.cfg.listen, d.cfg.port, lfds,
			      MTD_HTTP_MAX_SOCKETS, err, sizeof(err));
	/*
	 * a name that does not resolve (tcp.h: -EHOSTUNREACH, no socket call
	 * gives it when listening) is the config's mistake; -EAGAIN, the
	 * resolver not answering now, is not (exit 1)
	 */
	if ((nlfd == -EHOSTUNREACH || nlfd == -EAGAIN) && d.cfg.listen_line) {
		mtn_log(LOG_ERR, "%s:%d: listen: %s", cfgpath ? cfgpath :
			MTN_DEFAULT_CONFIG, d.cfg.listen_line, err);
		return nlfd == -EHOSTUNREACH ? 2 : 1;
	}
	if (nlfd < 0) {
		mtn_log(LOG_ERR, "%s", err);
		return 1;
	}
	/* every part of libmemtrack reads the host's tree and state there */
	if (d.cfg.rootfs[0])
		setenv("MEMTRACK_ROOTFS", d.cfg.rootfs, 1);
	d.src = mtd_source_open(d.cfg.source, d.cfg.kernel_threads,
				d.cfg.containers, d.cfg.rootfs, err,
				sizeof(err));
	if (!d.src) {
		mtn_log(LOG_ERR, "%s", err);
		return 1;
	}
	d.st = mtd_state_new(d.cfg.max_programs, d.cfg.program_ttl_ms);
	if (!d.st) {
		mtn_log(LOG_ERR, "out of memory");
		return 1;
	}
	d.st->events = mtd_source_events_fd(d.src) >= 0;
	/* the kernel's release and machine cannot change while it runs */
	if (uname(&d.uts) < 0)
		memset(&d.uts, 0, sizeof(d.uts));
	/* key files may be readable by root only */
	if (d.cfg.nr_aggregators) {
		d.creds = mtn_creds_load(&d.cfg.auth, false, err, sizeof(err));
		if (!d.creds) {
			mtn_log(LOG_ERR, "relay credentials: %s", err);
			return 1;
		}
	}
	if (d.cfg.rw.nr_urls) {
		d.rw = mtd_rw_new(&d.cfg, err, sizeof(err));
		if (!d.rw) {
			mtn_log(LOG_ERR, "remote write: %s", err);
			return 1;
		}
	}
	if (mtn_drop_privileges(d.cfg.user,
				(d.cfg.keep_ptrace ? MTN_KEEP_PTRACE : 0) |
				(d.cfg.containers ? MTN_KEEP_READ_SEARCH : 0),
				err, sizeof(err))) {
		mtn_log(LOG_ERR, "dropping privileges: %s", err);
		return 1;
	}
	/* fail now, not at the first scrape */
	if (sample_locked(&d))
		return 1;
	mtn_log_started(foreground);
	/* before any thread starts, so that only sigfd sees them */
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sigfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sigfd < 0) {
		mtn_log(LOG_ERR, "signalfd: %s", strerror(errno));
		return 1;
	}
	if (d.cfg.nr_aggregators) {
		d.relay = mtd_relay_start(&d.cfg, d.creds);
		if (!d.relay) {
			mtn_log(LOG_ERR, "cannot start the relay");
			return 1;
		}
	}
	if (d.rw && mtd_rw_start(d.rw)) {
		mtn_log(LOG_ERR, "cannot start remote write");
		return 1;
	}
	http = mtd_http_start(lfds, nlfd, scrape, &d);
	if (!http) {
		mtn_log(LOG_ERR, "cannot start the HTTP server");
		return 1;
	}
	snprintf(status, sizeof(status),
		 "memtrackd %s, node %s, source %s, serving http://%s%s%s:%u/metrics (%d address%s)",
		 MEMTRACK_VERSION, d.cfg.node, mtd_source_name(d.src),
		 strchr(d.cfg.listen, ':') ? "[" : "", d.cfg.listen,
		 strchr(d.cfg.listen, ':') ? "]" : "", d.cfg.port, nlfd,
		 nlfd > 1 ? "es" : "");
	mtn_log(LOG_INFO, "%s", status);
	mtn_service_ready(status);
	run(&d, sigfd);
	mtn_service_stopping();
	mtd_http_stop(http);
	mtd_relay_stop(d.relay);
	mtd_rw_stop(d.rw);
	mtn_creds_free(d.creds);
	mtd_source_close(d.src);
	mtd_state_free(d.st);
	return 0;
}
