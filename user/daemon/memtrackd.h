/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrackd: the node daemon.  Shared types of its parts: config (config.c),
 * where samples come from (source.c), the per-program
 * state kept across samples (programs.c), the exposition text (metrics.c),
 * the HTTP endpoint (http.c), privileges (privs.c), logging (log.c).
 */
#ifndef MEMTRACKD_H
#define MEMTRACKD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "conn.h"
#include "memtrack.h"

#define MTD_DEFAULT_CONFIG	"/etc/memtrack/memtrackd.conf"
#define MTD_DEFAULT_PORT	9471
#define MTD_COMM_LEN		16
#define MTD_MAX_TOP_PIDS	1000
/* Programs (comm values) remembered; later ones share MTD_OTHER_COMM. */
#define MTD_DEFAULT_MAX_PROGRAMS	4096
#define MTD_OTHER_COMM		"[other]"
#define MTD_MAX_AGGREGATORS	8

/* ---- log.c ---- */
void mtd_log_init(bool to_stderr);
void mtd_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- agg_config.c: the [aggregate] section ---- */
#define MTD_AGG_DEFAULT_PORT	9472

struct mtd_agg_config {
	char listen[64];		/* numeric IPv4 or IPv6 address */
	unsigned int port;
	unsigned int down_after_ms;	/* no frame for this long: down */
	unsigned int idle_timeout_ms;	/* no frame for this long: close */
	unsigned int max_nodes;
	unsigned int max_conns;		/* nodes and query clients */
	unsigned int records_keep;	/* module records kept per node */
	/* refuse a node whose name is not its PSK identity / certificate CN */
	bool require_identity_match;
};

void mtd_agg_config_defaults(struct mtd_agg_config *c);
/* One key: 1 fine, 0 bad value (*why says why), -1 unknown key. */
int mtd_agg_config_key(struct mtd_agg_config *c, const char *name,
		       const char *value, const char **why);
struct mtd_config;
/* memtrackd --aggregate, until SIGTERM/SIGINT: the exit status. */
int mtd_aggregate_main(const struct mtd_config *c, bool foreground);

/* ---- config.c ---- */
enum mtd_source_kind { MTD_SOURCE_AUTO, MTD_SOURCE_MODULE, MTD_SOURCE_PROC };

struct mtd_config {
	char node[256];
	char listen[64];		/* numeric IPv4 or IPv6 address */
	unsigned int port;
	enum mtd_source_kind source;
	unsigned int top_pids;		/* 0: no per-PID series */
	unsigned int max_programs;
	unsigned int sample_interval_ms;	/* 0: sample only on a scrape */
	char user[64];			/* drop to this user after setup */
	bool keep_ptrace;		/* keep CAP_SYS_PTRACE after dropping */
	/* relay: aggregators to send snapshots to (numeric address, port) */
	unsigned int nr_aggregators;
	struct {
		char addr[64];
		unsigned int port;
	} aggregators[MTD_MAX_AGGREGATORS];
	unsigned int relay_buffer_kb;
	/* how relay peers prove who they are (conn.h) */
	struct mtd_auth_config auth;
	/* memtrackd --aggregate: section [aggregate] (agg_config.c) */
	struct mtd_agg_config agg;
};

void mtd_config_defaults(struct mtd_config *c);
/* yes/true/1, no/false/0: 0, or -1 for anything else. */
int mtd_parse_bool(const char *v, bool *out);
/* A numeric IPv4 or IPv6 address. */
bool mtd_valid_address(const char *v);
/* A decimal in min..max into *out: 0, or -1. */
int mtd_parse_uint(const char *v, unsigned long min, unsigned long max,
		   unsigned int *out);
/* 0, or -1 with a message (file:line: why) in err. */
int mtd_config_load(const char *path, struct mtd_config *c,
		    char *err, size_t errlen);

/* ---- one sample: processes and system figures ---- */

/* Per-process counters; those a source cannot give stay unset in `have`. */
enum mtd_ctr {
	MTD_C_MIN_FLT,
	MTD_C_MAJ_FLT,
	MTD_C_PG_ALLOC,
	MTD_C_PG_FREE,
	MTD_C_KMALLOC,
	MTD_C_KMALLOC_BYTES,
	MTD_C_KFREE,
	MTD_C_PG_ALLOC_FAIL,
	MTD_C_RECLAIM_STALLS,
	MTD_C_RECLAIM_NS,
	MTD_C_OOM_KILLS,
	MTD_NR_CTR
};

struct mtd_proc {
	int32_t pid;
	bool exited;			/* module: kept after exit, counters only */
	uint64_t start;			/* /proc: start time; identifies the pid */
	char comm[MTD_COMM_LEN];
	uint64_t rss_anon, rss_file, rss_shmem, swap;	/* bytes */
	uint64_t ctr[MTD_NR_CTR];
};

/* System memory gauges (bytes) and counters; `have` bits say which exist. */
enum mtd_mem {
	MTD_M_TOTAL, MTD_M_FREE, MTD_M_AVAILABLE, MTD_M_FILE, MTD_M_ANON,
	MTD_M_SHMEM, MTD_M_MAPPED, MTD_M_DIRTY, MTD_M_WRITEBACK,
	MTD_M_SLAB_RECLAIMABLE, MTD_M_SLAB_UNRECLAIMABLE, MTD_M_PAGE_TABLES,
	MTD_M_SWAP_TOTAL, MTD_M_SWAP_FREE,
	MTD_NR_MEM
};

enum mtd_sysctr {
	MTD_S_PG_ALLOC, MTD_S_PG_FREE, MTD_S_KMALLOC, MTD_S_KFREE,
	MTD_S_PG_ALLOC_FAIL, MTD_S_RECLAIM_STALLS, MTD_S_RECLAIM_NS,
	MTD_S_OOM_KILLS, MTD_S_PG_FAULT, MTD_S_PG_MAJFAULT,
	MTD_NR_SYSCTR
};

struct mtd_sample {
	struct mtd_proc *procs;
	size_t nr, cap;
	uint32_t ctr_have;		/* 1 << MTD_C_* */
	uint64_t mem[MTD_NR_MEM];
	uint32_t mem_have;
	uint64_t sys[MTD_NR_SYSCTR];
	uint32_t sys_have;
};

void mtd_sample_free(struct mtd_sample *s);
/* A zeroed row at the end of s->procs, NULL when out of memory. */
struct mtd_proc *mtd_sample_add(struct mtd_sample *s);

/* ---- source.c: where samples come from ---- */
struct mtd_source;
struct mtd_state;
struct mtd_buf;

/* Opens what it needs now, before privileges are dropped; NULL, err set. */
struct mtd_source *mtd_source_open(enum mtd_source_kind kind,
				   char *err, size_t errlen);
void mtd_source_close(struct mtd_source *src);
/* "module" or "proc". */
const char *mtd_source_name(const struct mtd_source *src);
int mtd_source_sample(struct mtd_source *src, struct mtd_sample *out);
/*
 * Event socket to poll, -1 if none; handle what is waiting, and append the
 * raw records to *records if not NULL (for the relay).
 */
int mtd_source_events_fd(struct mtd_source *src);
int mtd_source_read_events(struct mtd_source *src, struct mtd_state *st,
			   struct mtd_buf *records);

/* ---- programs.c: state across samples ---- */

struct mtd_state *mtd_state_new(unsigned int max_programs);
void mtd_state_free(struct mtd_state *st);
/* Fold a new sample in; the sample then belongs to the state. */
int mtd_state_update(struct mtd_state *st, struct mtd_sample *s);
/* An RSS growth alert for process tgid; comm NULL: look it up. */
void mtd_state_growth_alert(struct mtd_state *st, int32_t tgid,
			    const char *comm);
void mtd_state_add_overruns(struct mtd_state *st, uint64_t n);

/* ---- metrics.c ---- */
struct mtd_buf {
	char *p;
	size_t len, cap;
	bool oom;
};

void mtd_buf_printf(struct mtd_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void mtd_buf_append(struct mtd_buf *b, const void *data, size_t len);
/* A label value with \ " and newline escaped, invalid UTF-8 as U+FFFD. */
void mtd_buf_label(struct mtd_buf *b, const char *s, size_t len);

struct mtd_expo_opts {
	const char *node;
	const char *source;
	unsigned int top_pids;
};

/* The whole /metrics text; 0 or -ENOMEM. */
int mtd_metrics_format(const struct mtd_state *st,
		       const struct mtd_expo_opts *o, struct mtd_buf *b);

/* ---- http.c ---- */
struct mtd_http;

typedef int (*mtd_scrape_fn)(void *arg, struct mtd_buf *out);

/* Serve on the bound, listening socket fd (taken over). */
struct mtd_http *mtd_http_start(int fd, mtd_scrape_fn fn, void *arg);
void mtd_http_stop(struct mtd_http *h);
/* socket + bind + listen on addr:port; fd or -errno with err set. */
int mtd_listen(const char *addr, unsigned int port, char *err, size_t errlen);

/* ---- privs.c ---- */
int mtd_drop_privileges(const char *user, bool keep_ptrace,
			char *err, size_t errlen);

#endif /* MEMTRACKD_H */
