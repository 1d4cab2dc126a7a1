/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrackd.conf, the one configuration of memtrackd, memtrackd --aggregate
 * and the query clients (memtrack-query, memtrack-top --cluster): section
 * [memtrackd] (config.c), section [aggregate] (agg_config.c), and the
 * checks of single values (config_value.c).
 */
#ifndef MEMTRACK_NET_CONFIG_H
#define MEMTRACK_NET_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "conn.h"

#define MTD_DEFAULT_CONFIG	"/etc/memtrack/memtrackd.conf"
#define MTD_DEFAULT_PORT	9471
#define MTD_AGG_DEFAULT_PORT	9472
#define MTD_MAX_TOP_PIDS	1000
/* Programs (comm values) remembered; later ones share one row. */
#define MTD_DEFAULT_MAX_PROGRAMS	4096
#define MTD_DEFAULT_PROGRAM_TTL_MS	300000
#define MTD_MAX_AGGREGATORS	8

/* ---- agg_config.c: the [aggregate] section ---- */
struct mtd_agg_config {
	char listen[256];		/* numeric address or host name */
	unsigned int port;
	unsigned int listen_port;	/* a port given in listen, 0 none */
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

/* ---- rw_config.c: remote_write* keys of [memtrackd] ---- */
#define MTD_MAX_REMOTE_WRITES	4

struct mtd_rw_config {
	unsigned int nr_urls;
	char urls[MTD_MAX_REMOTE_WRITES][512];	/* http:// or https:// */
	char node_label[64];		/* the node's label name ("node") */
	unsigned int queue_samples;	/* per endpoint; past it: dropped */
	unsigned int batch_samples;	/* at most this many a request */
	unsigned int timeout_ms;	/* of one request */
	/* TLS: the server's CA; a client certificate and its key */
	char ca_file[256], cert_file[256], key_file[256];
	/* basic auth (user and a password file) or a bearer token file */
	char user[128], password_file[256], bearer_token_file[256];
};

void mtd_rw_config_defaults(struct mtd_rw_config *c);
/* One key: 1 fine, 0 bad value (*why says why), -1 not a remote_write key. */
int mtd_rw_config_key(struct mtd_rw_config *c, const char *name,
		      const char *value, const char **why);
/* The keys together (auth needs its parts): NULL, or why not. */
const char *mtd_rw_config_check(const struct mtd_rw_config *c);

/* ---- config.c: the [memtrackd] section, and the file ---- */
enum mtd_source_kind { MTD_SOURCE_AUTO, MTD_SOURCE_MODULE, MTD_SOURCE_PROC };

struct mtd_config {
	char node[256];
	bool node_label;		/* a node label on every series */
	char listen[256];		/* numeric address or host name */
	int listen_line;		/* its line, for errors at start; 0 none */
	unsigned int port;
	enum mtd_source_kind source;
	unsigned int top_pids;		/* 0: no per-PID series */
	unsigned int max_programs;
	/* a program with no process for this long is forgotten; 0 never */
	unsigned int program_ttl_ms;
	bool kernel_threads;		/* per-program series of them too */
	unsigned int sample_interval_ms;	/* 0: sample only on a scrape */
	char user[64];			/* drop to this user after setup */
	bool keep_ptrace;		/* keep CAP_SYS_PTRACE after dropping */
	/* container, pod and namespace labels (libmemtrack's containers):
	 * the cgroup of every process read, and the runtimes' state under
	 * rootfs, which CAP_DAC_READ_SEARCH kept after dropping reads */
	bool containers;
	char rootfs[256];		/* "": $MEMTRACK_ROOTFS or / */
	/* relay: aggregators to send snapshots to (address or name, port) */
	unsigned int nr_aggregators;
	struct mtd_aggregator {
		char addr[256];
		unsigned int port;
	} aggregators[MTD_MAX_AGGREGATORS];
	unsigned int relay_buffer_kb;
	/* how relay peers prove who they are (conn.h) */
	struct mtd_auth_config auth;
	/* Prometheus remote write endpoints (rw_config.c) */
	struct mtd_rw_config rw;
	int rw_line;			/* the first remote_write* line */
	/* memtrackd --aggregate: section [aggregate] (agg_config.c) */
	struct mtd_agg_config agg;
};

void mtd_config_defaults(struct mtd_config *c);
/* 0, or -1 with a message (file:line: why) in err. */
int mtd_config_load(const char *path, struct mtd_config *c,
		    char *err, size_t errlen);

/* ---- config_value.c ---- */
/* yes/true/1, no/false/0: 0, or -1 for anything else. */
int mtd_parse_bool(const char *v, bool *out);
/* A numeric IPv4 or IPv6 address or a host name (its form only). */
bool mtd_valid_host(const char *v);
/* A decimal in min..max into *out: 0, or -1. */
int mtd_parse_uint(const char *v, unsigned long min, unsigned long max,
		   unsigned int *out);
/*
 * A duration, a decimal with a unit (ms, s, m, h; "0" alone if min_ms is
 * 0), within min_ms..max_ms, into *out in ms: 0, or -1.
 */
int mtd_parse_duration_ms(const char *v, unsigned long min_ms,
			  unsigned long max_ms, unsigned int *out);
/*
 * "HOST:PORT" (HOST a numeric IPv4 address or a host name) or
 * "[ADDR6]:PORT", the port 1..65535: 0, or -1 if malformed or the host does
 * not fit alen.
 */
int mtd_parse_hostport(const char *s, char *addr, size_t alen,
		       unsigned int *port);
/*
 * A listen value: "HOST", "HOST:PORT", "[ADDR6]:PORT" or a bare IPv6
 * address (two colons or more), HOST numeric or a name, as node_exporter's
 * --web.listen-address; *port 0 if none is given.  0, or -1.
 */
int mtd_parse_listen(const char *v, char *host, size_t hlen,
		     unsigned int *port);
#define MTD_LISTEN_WHY \
	"must be HOST, HOST:PORT or [IPV6]:PORT (HOST an address or a host name)"

#endif /* MEMTRACK_NET_CONFIG_H */
