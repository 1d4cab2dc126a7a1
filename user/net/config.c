// SPDX-License-Identifier: GPL-2.0
/*
 * memtrackd's configuration: one INI file, section [memtrackd], read with
 * inih.  Every key is checked; an unknown key or a bad value is an error
 * naming the line, and the daemon does not start.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ini.h>

#include "config.h"

void mtn_config_defaults(struct mtn_config *c)
{
	memset(c, 0, sizeof(*c));
	if (gethostname(c->node, sizeof(c->node) - 1) < 0 || !c->node[0])
		strcpy(c->node, "localhost");
	strcpy(c->listen, "127.0.0.1");
	c->port = MTN_DEFAULT_PORT;
	c->source = MTN_SOURCE_AUTO;
	c->max_programs = MTN_DEFAULT_MAX_PROGRAMS;
	c->program_ttl_ms = MTN_DEFAULT_PROGRAM_TTL_MS;
	c->sample_interval_ms = 5000;
	strcpy(c->user, "nobody");
	c->relay_buffer_kb = 4096;
	c->containers = true;
	mtn_agg_config_defaults(&c->agg);
	mtn_rw_config_defaults(&c->rw);
}

struct parse_ctx {
	struct mtn_config *c;
	char *err;
	size_t errlen;
	bool failed;		/* inih goes on after an error: keep the first */
	FILE *f;
	int line;		/* the line inih is at */
	bool line_ended;	/* the last read ended a line */
	int auth_line;		/* where auth was set, for what it lacks */
	int port_line;		/* where port was set */
	unsigned int listen_port;	/* a port given in listen, 0 none */
	int agg_listen_line, agg_port_line;	/* the same in [aggregate] */
};

/*
 * A comment after a value, "top_pids = 5  # the largest", as
 * memtrackd.conf(5) allows: cut at a '#' after a blank (inih itself only
 * knows ';' there).  A line that is all comment is inih's.
 */
static void cut_comment(char *s)
{
	char *p = s + strspn(s, " \t");

	if (*p == '#' || *p == ';')
		return;
	for (; *p; p++) {
		if (*p == '#' && p > s && (p[-1] == ' ' || p[-1] == '\t')) {
			strcpy(p, "\n");
			return;
		}
	}
}

/*
 * "[memtrackd" with no ']': inih skips the line as an error, and the keys
 * after it would be blamed on the section before it.  Said as it is.
 */
static void check_header(struct parse_ctx *x, const char *s)
{
	const char *p = s + strspn(s, " \t");
	size_t n = strcspn(p, "\r\n");

	if (*p != '[' || memchr(p, ']', n) || x->failed)
		return;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	snprintf(x->err, x->errlen, "\"%.*s\": a section name needs its ]",
		 (int)(n > 64 ? 64 : n), p);
	x->failed = true;
}

/*
 * inih's reader: fgets, counting lines, so that a check made after the
 * whole file can still name the line of the key it is about.
 */
static char *read_line(char *str, int num, void *stream)
{
	struct parse_ctx *x = stream;
	char *s = fgets(str, num, x->f);

	if (s) {
		x->line += x->line_ended;
		x->line_ended = strchr(s, '\n') != NULL;
		cut_comment(s);
		check_header(x, s);
	}
	return s;
}

static int copy_str(char *dst, size_t size, const char *v)
{
	size_t n = strlen(v);

	if (!n || n >= size)
		return -EINVAL;
	memcpy(dst, v, n + 1);
	return 0;
}

/* "HOST:PORT" or "[ADDR6]:PORT", comma-separated. */
static int parse_aggregators(struct mtn_config *c, const char *v)
{
	char buf[1024], *tok, *save = NULL;

	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, v);
	c->nr_aggregators = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct mtn_aggregator *a = &c->aggregators[c->nr_aggregators];

		while (*tok == ' ')
			tok++;
		if (c->nr_aggregators == MTN_MAX_AGGREGATORS ||
		    mtn_parse_hostport(tok, a->addr, sizeof(a->addr), &a->port))
			return -EINVAL;
		c->nr_aggregators++;
	}
	return c->nr_aggregators ? 0 : -EINVAL;
}

/* A section's port given in listen becomes its port; in port too: -EINVAL. */
static int port_from_listen(const char *path, unsigned int listen_port,
			    int listen_line, int port_line, unsigned int *port,
			    char *err, size_t errlen)
{
	if (!listen_port)
		return 0;
	if (port_line) {
		snprintf(err, errlen, "%s:%d: port: the port is in listen already (line %d)",
			 path, port_line, listen_line);
		return -EINVAL;
	}
	*port = listen_port;
	return 0;
}

static int handle_line(void *user, const char *section, const char *name,
		  const char *value)
{
	struct parse_ctx *x = user;
	struct mtn_config *c = x->c;
	const char *why = "bad value";
	char msg[256];
	int r;

	if (x->failed)
		return 0;
	x->failed = true;
	if (!strcmp(section, "aggregate")) {
		r = mtn_agg_config_key(&c->agg, name, value, msg, sizeof(msg));

		if (!r && !strcmp(name, "listen"))
			x->agg_listen_line = x->line;
		if (!r && !strcmp(name, "port"))
			x->agg_port_line = x->line;
		if (!r)
			return 1;
		if (r == -ENOENT) {
			snprintf(x->err, x->errlen, "unknown key \"%s\" in [aggregate]",
				 name);
			return 0;
		}
		snprintf(x->err, x->errlen, "%s = \"%s\": %s", name, value,
			 msg);
		return 0;
	}
	if (strcmp(section, "memtrackd")) {
		snprintf(x->err, x->errlen, "unknown section [%s]", section);
		return 0;
	}
	r = mtn_rw_config_key(&c->rw, name, value, msg, sizeof(msg));
	if (!r) {
		if (!c->rw_line)
			c->rw_line = x->line;
		return 1;
	}
	if (r != -ENOENT) {
		why = msg;
		goto bad;
	}
	if (!strcmp(name, "node")) {
		if (!copy_str(c->node, sizeof(c->node), value))
			return 1;
		why = "must be 1..255 characters";
	} else if (!strcmp(name, "node_label")) {
		if (!mtn_parse_bool(value, &c->node_label))
			return 1;
		why = "must be yes or no";
	} else if (!strcmp(name, "listen")) {
		if (!mtn_parse_listen(value, c->listen, sizeof(c->listen),
				      &x->listen_port)) {
			c->listen_line = x->line;
			return 1;
		}
		why = MTN_LISTEN_WHY;
	} else if (!strcmp(name, "port")) {
		if (!mtn_parse_uint(value, 1, 65535, &c->port)) {
			x->port_line = x->line;
			return 1;
		}
		why = "must be 1..65535";
	} else if (!strcmp(name, "source")) {
		if (!strcmp(value, "auto"))
			c->source = MTN_SOURCE_AUTO;
		else if (!strcmp(value, "module"))
			c->source = MTN_SOURCE_MODULE;
		else if (!strcmp(value, "proc"))
			c->source = MTN_SOURCE_PROC;
		else
			goto bad_source;
		return 1;
bad_source:
		why = "must be auto, module or proc";
	} else if (!strcmp(name, "top_pids")) {
		if (!mtn_parse_uint(value, 0, MTN_MAX_TOP_PIDS, &c->top_pids))
			return 1;
		why = "must be 0..1000";
	} else if (!strcmp(name, "max_programs")) {
		if (!mtn_parse_uint(value, 1, 1000000, &c->max_programs))
			return 1;
		why = "must be 1..1000000";
	} else if (!strcmp(name, "program_ttl")) {
		if (!mtn_parse_duration_ms(value, 0, 30 * 86400000UL,
					   &c->program_ttl_ms) &&
		    (c->program_ttl_ms == 0 || c->program_ttl_ms >= 1000))
			return 1;
		why = "must be 0 (never) or a duration of 1s..30d with its unit (ms, s, m, h)";
	} else if (!strcmp(name, "kernel_threads")) {
		if (!mtn_parse_bool(value, &c->kernel_threads))
			return 1;
		why = "must be yes or no";
	} else if (!strcmp(name, "sample_interval")) {
		if (!mtn_parse_duration_ms(value, 0, 3600000,
					   &c->sample_interval_ms) &&
		    (c->sample_interval_ms == 0 || c->sample_interval_ms >= 100))
			return 1;
		why = "must be 0 (only on a scrape) or a duration of 100ms..1h with its unit (ms, s, m, h)";
	} else if (!strcmp(name, "sample_interval_ms")) {
		/* the key before durations had units; still read */
		if (!mtn_parse_uint(value, 0, 3600000, &c->sample_interval_ms) &&
		    (c->sample_interval_ms == 0 || c->sample_interval_ms >= 100))
			return 1;
		why = "must be 0 or 100..3600000";
	} else if (!strcmp(name, "user")) {
		if (!copy_str(c->user, sizeof(c->user), value))
			return 1;
		why = "must be 1..63 characters";
	} else if (!strcmp(name, "aggregators")) {
		if (!parse_aggregators(c, value))
			return 1;
		why = "must be HOST:PORT[, ...] (an address or a host name, IPv6 in [], at most 8)";
	} else if (!strcmp(name, "relay_buffer_kb")) {
		if (!mtn_parse_uint(value, 4, 1048576, &c->relay_buffer_kb))
			return 1;
		why = "must be 4..1048576";
	} else if (!strcmp(name, "auth")) {
		if (!strcmp(value, "none"))
			c->auth.kind = MTN_AUTH_NONE;
		else if (!strcmp(value, "psk"))
			c->auth.kind = MTN_AUTH_PSK;
		else if (!strcmp(value, "cert"))
			c->auth.kind = MTN_AUTH_CERT;
		else
			goto bad_auth;
		x->auth_line = x->line;
		return 1;
bad_auth:
		why = "must be none, psk or cert";
	} else if (!strcmp(name, "psk_file") || !strcmp(name, "ca_file") ||
		   !strcmp(name, "cert_file") || !strcmp(name, "key_file")) {
		char *dst = name[0] == 'p' ? c->auth.psk_file :
			    name[0] == 'c' && name[1] == 'a' ? c->auth.ca_file :
			    name[0] == 'c' ? c->auth.cert_file :
			    c->auth.key_file;

		if (value[0] == '/' &&
		    !copy_str(dst, sizeof(c->auth.psk_file), value))
			return 1;
		why = "must be an absolute path of at most 255 characters";
	} else if (!strcmp(name, "keep_ptrace")) {
		if (!mtn_parse_bool(value, &c->keep_ptrace))
			return 1;
		why = "must be yes or no";
	} else if (!strcmp(name, "containers")) {
		if (!mtn_parse_bool(value, &c->containers))
			return 1;
		why = "must be yes or no";
	} else if (!strcmp(name, "rootfs")) {
		if (value[0] == '/' && !copy_str(c->rootfs, sizeof(c->rootfs),
						 value))
			return 1;
		why = "must be an absolute path of at most 255 characters";
	} else {
		snprintf(x->err, x->errlen, "unknown key \"%s\"", name);
		return 0;
	}
bad:
	snprintf(x->err, x->errlen, "%s = \"%s\": %s", name, value, why);
	return 0;
}

/* inih's handler: nonzero means the line was fine. */
static int handle(void *user, const char *section, const char *name,
		  const char *value)
{
	struct parse_ctx *x = user;
	bool before = x->failed;
	int ok = handle_line(user, section, name, value);

	if (ok)
		x->failed = before;
	return ok;
}

int mtn_config_load(const char *path, struct mtn_config *c,
		    char *err, size_t errlen)
{
	char whybuf[512] = "syntax error";
	struct parse_ctx x = {
		.c = c, .err = whybuf, .errlen = sizeof(whybuf),
		.line_ended = true,
	};
	int line, e;

	x.f = fopen(path, "r");
	if (!x.f) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	line = ini_parse_stream(read_line, &x, handle, &x);
	fclose(x.f);
	if (line < 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	if (line > 0) {
		snprintf(err, errlen, "%s:%d: %s", path, line, whybuf);
		return -EINVAL;
	}
	e = port_from_listen(path, x.listen_port, c->listen_line, x.port_line,
			     &c->port, err, errlen);
	if (!e)
		e = port_from_listen(path, c->agg.listen_port,
				     x.agg_listen_line, x.agg_port_line,
				     &c->agg.port, err, errlen);
	if (e)
		return e;
	if (c->auth.kind == MTN_AUTH_PSK && !c->auth.psk_file[0]) {
		snprintf(err, errlen, "%s:%d: auth = psk needs psk_file", path,
			 x.auth_line);
		return -EINVAL;
	}
	if (c->auth.kind == MTN_AUTH_CERT &&
	    (!c->auth.ca_file[0] || !c->auth.cert_file[0] ||
	     !c->auth.key_file[0])) {
		snprintf(err, errlen,
			 "%s:%d: auth = cert needs ca_file, cert_file and key_file",
			 path, x.auth_line);
		return -EINVAL;
	}
	if (mtn_rw_config_check(&c->rw, whybuf, sizeof(whybuf))) {
		snprintf(err, errlen, "%s:%d: %s", path, c->rw_line, whybuf);
		return -EINVAL;
	}
	/* the relay and remote write send the periodic samples */
	if (c->rw.nr_urls && !c->sample_interval_ms) {
		snprintf(err, errlen,
			 "%s:%d: remote_write needs sample_interval > 0",
			 path, c->rw_line);
		return -EINVAL;
	}
	if (c->nr_aggregators && !c->sample_interval_ms) {
		snprintf(err, errlen,
			 "%s: aggregators need sample_interval > 0", path);
		return -EINVAL;
	}
	return 0;
}
