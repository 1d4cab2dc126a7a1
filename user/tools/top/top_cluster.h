/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrack-top's cluster view: the processes of every node and the totals
 * per program across nodes, as a memtrackd aggregator knows them (its
 * `nodes`, `top N` and `sum ... by comm` queries, query_client.h).
 *
 * The aggregator answers from the latest snapshot of each node, so a slow
 * node never delays it; a slow or absent aggregator must not freeze the
 * screen either, so a thread asks, and the view shows the latest answer
 * with its age, or why there is none.
 */
#ifndef MEMTRACK_TOP_CLUSTER_H
#define MEMTRACK_TOP_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOP_NODE_LEN	64

struct top_cluster_proc {
	char node[TOP_NODE_LEN];
	int32_t pid;
	char comm[16];
	uint64_t rss, anon, file, shmem, swap;	/* bytes */
};

/* A program's processes summed over every node that is up. */
struct top_cluster_prog {
	char comm[16];
	uint64_t nproc, rss, anon, file, shmem, swap;
};

struct top_cluster_snap {
	bool have;			/* an answer came (the rest is valid) */
	double when;			/* CLOCK_MONOTONIC seconds of it */
	unsigned int nodes_up, nodes_down;
	struct top_cluster_proc *procs;	/* largest RSS first */
	size_t nprocs;
	struct top_cluster_prog *progs;	/* largest RSS first */
	size_t nprogs;
	char error[256];		/* the last attempt's failure, or "" */
};

struct top_cluster;

/*
 * "ADDR:PORT" ([ADDR6]:PORT), numeric; cfgpath: memtrackd.conf for the
 * authentication keys (NULL: the default file if readable).  NULL with err
 * on a bad address or unreadable credentials.
 */
struct top_cluster *top_cluster_new(const char *server, const char *cfgpath,
				    size_t max_procs, char *err,
				    size_t errlen);
void top_cluster_free(struct top_cluster *c);

/* Ask now and wait for the answer (batch mode); 0 or -1 (s->error). */
int top_cluster_fetch(struct top_cluster *c, int timeout_ms,
		      struct top_cluster_snap *s);

/* Ask every interval_ms from a thread (interactive); 0 or -errno. */
int top_cluster_start(struct top_cluster *c, int interval_ms);
/* A copy of the latest answer (never waits for the aggregator). */
void top_cluster_latest(struct top_cluster *c, struct top_cluster_snap *s);

void top_cluster_snap_free(struct top_cluster_snap *s);
/* "ADDR:PORT" as given, for the header. */
const char *top_cluster_name(const struct top_cluster *c);

#endif
