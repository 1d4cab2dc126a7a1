/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrackd.conf, the one configuration of memtrackd, memtrackd --aggregate
 * and the query clients (memtrack-query, memtrack-top --cluster): section
 * [memtrackd] (config.c), section [aggregate] (agg_config.c), and the
 * checks of single values (config_value.c).  Errors: net's one convention
 * (tcp.h's top comment): a negative errno, the sentence in (err, errlen).
 */
#ifndef MEMTRACK_NET_CONFIG_H
#define MEMTRACK_NET_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "conn.h"

#define MTN_DEFAULT_CONFIG	"/etc/memtrack/memtrackd.conf"
#define MTN_DEFAULT_PORT	9471
#define MTN_AGG_DEFAULT_PORT	9472
#define MTN_MAX_TOP_PIDS	1000
/* Programs (comm values) remembered; later ones share one row. */
#define MTN_DEFAULT_MAX_PROGRAMS	4096
#define MTN_DEFAULT_PROGRAM_TTL_MS	300000
#define MTN_MAX_AGGREGATORS	8

/* ---- agg_config.c: the [aggregate] section ---- */
struct mtn_agg_config {
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

void mtn_agg_config_defaults(struct mtn_agg_config *c);
/*
 * One key: 0, -EINVAL for a bad value (what it must be in err), -ENOENT
 * for a key not of the section.
 */
int mtn_agg_config_key(struct mtn_agg_config *c, const char *name,
		       const char *value, char *err, size_t errlen);

/* ---- rw_config.c: remote_write* keys of [memtrackd] ---- */
#define MTN_MAX_REMOTE_WRITES	4

struct mtn_rw_config {
	unsigned int nr_urls;
	char urls[MTN_MAX_REMOTE_WRITES][512];	/* http:// or https:// */
	char node_label[64];		/* the node's label name ("node") */
	unsigned int queue_samples;	/* per endpoint; past it: dropped */
	unsigned int batch_samples;	/* at most this many a request */
	unsigned int timeout_ms;	/* of one request */
	/* TLS: the server's CA; a client certificate and its key */
	char ca_file[256], cert_file[256], key_file[256];
	/* basic auth (user and a password file) or a bearer token file */
	char user[128], password_file[256], bearer_token_file[256];
};

void mtn_rw_config_defaults(struct mtn_rw_config *c);
/*
 * One key: 0, -EINVAL for a bad value (what it must be in err), -ENOENT
 * for a key that is not a remote_write one.
 */
int mtn_rw_config_key(struct mtn_rw_config *c, const char *name,
		      const char *value, char *err, size_t errlen);
/* The keys together (auth needs its parts): 0, or -EINVAL with why in err. */
int mtn_rw_config_check(const struct mtn_rw_config *c, char *err,
			size_t errlen);

/* ---- config.c: the [memtrackd] section, and the file ---- */
enum mtn_source_kind { MTN_SOURCE_AUTO, MTN_SOURCE_MODULE, MTN_SOURCE_PROC };

struct mtn_config {
	char node[256];
	bool node_label;		/* a node label on every series */
	char listen[256];		/* numeric address or host name */
	int listen_line;		/* its line, for errors at start; 0 none */
	unsigned int port;
	enum mtn_source_kind source;
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
	struct mtn_aggregator {
		char addr[256];
		unsigned int port;
	} aggregators[MTN_MAX_AGGREGATORS];
	unsigned int relay_buffer_kb;
	/* how relay peers prove who they are (conn.h) */
	struct mtn_auth_config auth;
	/* Prometheus remote write endpoints (rw_config.c) */
	struct mtn_rw_config rw;
	int rw_line;			/* the first remote_write* line */
	/* memtrackd --aggregate: section [aggregate] (agg_config.c) */
	struct mtn_agg_config agg;
};

void mtn_config_defaults(struct mtn_config *c);
/*
 * 0, or a negative errno with "FILE:LINE: why" (or "FILE: why") in err:
 * -EINVAL for a bad key, value or section, -ENOMEM, or the errno of
 * opening the file (-ENOENT, -EACCES, ...).
 */
int mtn_config_load(const char *path, struct mtn_config *c,
		    char *err, size_t errlen);

/* ---- config_value.c ---- */
/*
 * The checks of single values below give 0, or -EINVAL (and nothing in
 * *out) for a value not of their form: the caller knows the key and says
 * what the value must be.
 */
/* yes/true/1, no/false/0: 0, or -EINVAL for anything else. */
int mtn_parse_bool(const char *v, bool *out);
/* A numeric IPv4 or IPv6 address or a host name (its form only). */
bool mtn_valid_host(const char *v);
/* A decimal in min..max into *out: 0, or -EINVAL. */
int mtn_parse_uint(const char *v, unsigned long min, unsigned long max,
		   unsigned int *out);
/*
 * A duration, a decimal with a unit (ms, s, m, h; "0" alone if min_ms is
 * 0), within min_ms..max_ms, into *out in ms: 0, or -EINVAL.
 */
int mtn_parse_duration_ms(const char *v, unsigned long min_ms,
			  unsigned long max_ms, unsigned int *out);
/*
 * "HOST:PORT" (HOST a numeric IPv4 address or a host name) or
 * "[ADDR6]:PORT", the port 1..65535: 0, or -EINVAL if malformed or the
 * host does not fit alen.
 */
int mtn_parse_hostport(const char *s, char *addr, size_t alen,
		       unsigned int *port);
/*
 * A listen value: "HOST", "HOST:PORT", "[ADDR6]:PORT" or a bare IPv6
 * address (two colons or more), HOST numeric or a name, as node_exporter's
 * --web.listen-address; *port 0 if none is given.  0, or -EINVAL.
 */
int mtn_parse_listen(const char *v, char *host, size_t hlen,
		     unsigned int *port);
#define MTN_LISTEN_WHY \
	"must be HOST, HOST:PORT or [IPV6]:PORT (HOST an address or a host name)"

#endif /* MEMTRACK_NET_CONFIG_H */
