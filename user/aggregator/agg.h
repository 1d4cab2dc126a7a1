/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrackd --aggregate: the aggregator's shared types, inside
 * user/aggregator (its entry point is aggregate.h).  aggregate.c
 * accepts connections, authenticates them and reads their HELLO (a
 * thread each, at most MAX_OPENING at once), serves query clients (a
 * thread each: their queries are long and their answers large), hands
 * nodes' connections to agg_loop.c's event loops (a few threads for all
 * of them; agg_conn.c handles their frames), and keeps the node table;
 * agg_node.c stores what nodes send;
 * snapshot_parse.c reads their snapshots; agg_query.c answers queries.
 */
#ifndef MEMTRACK_AGGREGATOR_AGG_H
#define MEMTRACK_AGGREGATOR_AGG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/memtrack.h>

#include "buf.h"
#include "config.h"
#include "conn.h"
#include "relay_proto.h"

/* One process or one program of a node's snapshot. */
/* Where a row runs: offsets of its names in the snapshot's names. */
enum agg_where { AGG_NS, AGG_POD, AGG_CONTAINER, AGG_NR_WHERE };

struct agg_row {
	char comm[MEMTRACK_COMM_LEN];	/* NUL-terminated, unescaped */
	int32_t pid;			/* process rows */
	uint32_t nproc;			/* program rows */
	uint64_t anon, file, shmem, swap;	/* bytes */
	uint32_t where[AGG_NR_WHERE];	/* 0: "" (the host's) */
};

struct agg_snapshot {
	char source[16];
	struct agg_row *progs, *procs;
	size_t nprogs, nprocs;
	char *names;			/* NUL-terminated names, "" first */
	size_t names_len;
};

/* A row's namespace, pod or container name ("" outside one). */
static inline const char *agg_row_where(const struct agg_snapshot *s,
					const struct agg_row *r,
					enum agg_where w)
{
	return s->names + r->where[w];
}

/* snapshot_parse.c: 0, or -EBADMSG with why in err. */
int agg_snapshot_parse(const char *text, size_t len, struct agg_snapshot *s,
		       char *err, size_t errlen);
void agg_snapshot_free(struct agg_snapshot *s);
void agg_snapshot_swap(struct agg_snapshot *a, struct agg_snapshot *b);

struct agg_node {
	pthread_mutex_t lock;
	char name[MTN_RELAY_MAX_NODE + 1];
	uint64_t session;
	uint64_t first_seq;		/* first stored of this session */
	uint64_t want;			/* the next seq it wants */
	uint64_t received;		/* stored this session */
	uint64_t gaps;			/* seqs never received this session */
	uint64_t sessions;		/* sessions seen (daemon restarts) */
	int64_t last_seen_ms;		/* mt_mono_ms(), any frame */
	bool reported_down;		/* logged as down */
	int64_t last_seen_real_ms;	/* the same, wall clock, for humans */
	unsigned int conns;		/* open connections of this node */
	struct agg_snapshot snap;
	/* the latest records, a ring of copies */
	void **recs;
	size_t rec_first, rec_count;
	uint64_t recs_dropped;		/* pushed out of the ring */
};

struct agg_loops;

struct agg {
	const struct mtn_agg_config *cfg;
	struct mtn_creds *creds;
	enum mtn_auth_kind auth;
	pthread_mutex_t lock;		/* the table and the counts below */
	struct agg_node **nodes;	/* max_nodes slots, nnodes used */
	size_t nnodes;
	unsigned int conns;
	unsigned int opening;		/* handshake or HELLO under way */
	struct agg_loops *loops;	/* nodes' connections (agg_loop.c) */
};

/* A connection, from accept to close. */
struct agg_conn {
	struct agg *a;
	int fd;
	char peer[300];			/* address, then who it proved to be */
	struct mtn_conn *c;
};

/*
 * A node's connection after WELCOME, served by an event loop: the frame
 * being read and the deadlines are agg_loop.c's, the rest aggregate.c's.
 */
struct agg_node_conn {
	struct agg_conn x;
	char name[MTN_RELAY_MAX_NODE + 1];
	uint64_t session, oldest;
	struct agg_node *n;		/* NULL until its first valid DATA */
	/* agg_loop.c */
	uint8_t hdr[MTN_RELAY_HDR_LEN];
	size_t got;			/* bytes of hdr, then of body */
	uint8_t type;
	uint32_t len;
	uint8_t *body;
	int64_t frame_by;		/* the frame begun must end by; 0 none */
	int64_t idle_by;		/* the next frame must begin by */
	struct agg_node_conn *prev, *next;
	struct agg_loop *loop;
};

int64_t agg_real_ms(void);

/* agg_node.c: the node named name, NULL if there is none. */
struct agg_node *agg_node_find(struct agg *a, const char *name);
/* The same, created if need be; NULL when the table is full. */
struct agg_node *agg_node_get(struct agg *a, const char *name);
/*
 * Whether one DATA body (after seq and kind) of module records is whole
 * and well-formed, before anything of it is stored: 0, or -EBADMSG with
 * err set.
 */
int agg_records_check(uint8_t kind, const uint8_t *data, size_t len,
		      char *err, size_t errlen);
/*
 * Store the checked module records of one DATA body: 0 or -ENOMEM with err
 * set.  The caller holds n->lock.
 */
int agg_node_store(struct agg *a, struct agg_node *n, const uint8_t *data,
		   size_t len, char *err, size_t errlen);

/* agg_conn.c: the peer, what of its connection, why: a warning. */
void agg_conn_log(const struct agg_conn *x, const char *what,
		  const char *why);
/* A read or write error for the log. */
const char *agg_errstr(int err);
/* A frame of 8 bytes, seq: *err 0 or -errno. */
void agg_send_ack(const struct agg_conn *x, uint8_t type, uint64_t seq,
		  int *err);
/* A node's connection joins it: the seq it wants next, 0 for all. */
uint64_t agg_node_attach(struct agg_node *n, uint64_t session,
			 uint64_t oldest);
/* The connection closed (or its fd), and the count of connections. */
void agg_conn_end(struct agg_conn *x);
/*
 * One whole frame of a node's connection (the body is the callee's to
 * free): 0 to go on, -1 to close the connection (logged).
 */
int agg_node_frame(struct agg_node_conn *nc, uint8_t type, uint8_t *body,
		   uint32_t len);
/* The connection is closed: its counts, its memory. */
void agg_node_conn_end(struct agg_node_conn *nc);

/*
 * agg_loop.c: nthreads event loops (epoll), started before the first node
 * connects; NULL on failure.  agg_loops_add hands nc over (its socket
 * made non-blocking for reads; sends wait at most SEND_MS): 0, or -errno
 * and nc is still the caller's.
 */
#define AGG_LOOP_SEND_MS	200
struct agg_loops *agg_loops_start(struct agg *a, unsigned int nthreads);
int agg_loops_add(struct agg_loops *l, struct agg_node_conn *nc);

/* agg_query.c: the RESULT body for query text q into b. */
void agg_query(struct agg *a, const char *q, size_t len, struct mtn_buf *b);

#endif /* MEMTRACK_AGGREGATOR_AGG_H */
