// SPDX-License-Identifier: GPL-2.0
/*
 * The remote_write keys of [memtrackd]: where memtrackd sends every sample
 * as Prometheus remote write (memtrackd/remote_write.c), and how it proves
 * who it is there.  Like Prometheus's remote_write block, but one set of
 * options for every URL.  Credentials never go in a URL: a password or a
 * token is read from a file readable by its owner only, at start.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "libmemtrack.h"

void mtn_rw_config_defaults(struct mtn_rw_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->node_label, "node");
	/* Prometheus's queue: 10,000 samples a shard; ours is one shard */
	c->queue_samples = 100000;
	c->batch_samples = 2000;
	c->timeout_ms = 10000;
}

/* http(s)://HOST[:PORT]/..., no user:password@, no spaces. */
static const char *check_url(const char *v)
{
	const char *host, *end;

	if (!strncasecmp(v, "http://", 7))
		host = v + 7;
	else if (!strncasecmp(v, "https://", 8))
		host = v + 8;
	else
		return "must be an http:// or https:// URL";
	end = host + strcspn(host, "/?#");
	if (end == host)
		return "has no host";
	if (memchr(host, '@', end - host))
		return "must not hold credentials: use remote_write_user and remote_write_password_file, or remote_write_bearer_token_file";
	if (strpbrk(v, " \t\"\\"))
		return "must not hold spaces, quotes or backslashes";
	return NULL;
}

/* A Prometheus label name: [a-zA-Z_][a-zA-Z0-9_]*, not __reserved. */
static bool label_name(const char *v)
{
	size_t i;

	if (!v[0] || (v[0] >= '0' && v[0] <= '9') || !strncmp(v, "__", 2))
		return false;
	for (i = 0; v[i]; i++)
		if (!(v[i] == '_' || (v[i] >= 'a' && v[i] <= 'z') ||
		      (v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= '0' && v[i] <= '9')))
			return false;
	return true;
}

static int copy(char *dst, size_t size, const char *v)
{
	if (!v[0] || strlen(v) >= size)
		return -EINVAL;
	strcpy(dst, v);
	return 0;
}

/* 0, or -EINVAL with why in err. */
static int checked(int r, const char *why, char *err, size_t errlen)
{
	if (!r)
		return 0;
	snprintf(err, errlen, "%s", why);
	return -EINVAL;
}

int mtn_rw_config_key(struct mtn_rw_config *c, const char *name,
		      const char *value, char *err, size_t errlen)
{
	const char *why;

	if (strncmp(name, "remote_write", 12))
		return -ENOENT;
	name += 12;
	if (!*name) {
		if (c->nr_urls == MTN_MAX_REMOTE_WRITES)
			return checked(-EINVAL, "at most 4 remote_write URLs",
				       err, errlen);
		why = check_url(value);
		if (!why &&
		    copy(c->urls[c->nr_urls], sizeof(c->urls[0]), value))
			why = "must be at most 511 characters";
		if (why)
			return checked(-EINVAL, why, err, errlen);
		c->nr_urls++;
		return 0;
	}
	if (!strcmp(name, "_node_label")) {
		if (strlen(value) < sizeof(c->node_label) && label_name(value)) {
			strcpy(c->node_label, value);
			return 0;
		}
		return checked(-EINVAL, "must be a label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __, at most 63 characters)",
			       err, errlen);
	}
	if (!strcmp(name, "_queue_samples"))
		return checked(mtn_parse_uint(value, 100, 10000000,
					      &c->queue_samples),
			       "must be 100..10000000", err, errlen);
	if (!strcmp(name, "_batch_samples"))
		return checked(mtn_parse_uint(value, 1, 100000,
					      &c->batch_samples),
			       "must be 1..100000", err, errlen);
	if (!strcmp(name, "_timeout"))
		return checked(mtn_parse_duration_ms(value, 100, 300000,
						     &c->timeout_ms),
			       "must be a duration of 100ms..5m with its unit (ms, s, m)",
			       err, errlen);
	if (!strcmp(name, "_user"))
		return checked(strchr(value, ':') ? -EINVAL :
			       copy(c->user, sizeof(c->user), value),
			       "must be 1..127 characters, no colon", err,
			       errlen);
	{
		static const struct {
			const char *key;
			size_t off;
		} files[] = {
			{ "_ca_file", offsetof(struct mtn_rw_config, ca_file) },
			{ "_cert_file", offsetof(struct mtn_rw_config, cert_file) },
			{ "_key_file", offsetof(struct mtn_rw_config, key_file) },
			{ "_password_file",
			  offsetof(struct mtn_rw_config, password_file) },
			{ "_bearer_token_file",
			  offsetof(struct mtn_rw_config, bearer_token_file) },
		};
		size_t i;

		for (i = 0; i < MT_ARRAY_SIZE(files); i++) {
			char *dst = (char *)c + files[i].off;

			if (strcmp(name, files[i].key))
				continue;
			return checked(value[0] != '/' ? -EINVAL :
				       copy(dst, 256, value),
				       "must be an absolute path of at most 255 characters",
				       err, errlen);
		}
	}
	return -ENOENT;
}

int mtn_rw_config_check(const struct mtn_rw_config *c, char *err,
			size_t errlen)
{
	const char *why = NULL;

	if (!c->nr_urls && (c->ca_file[0] || c->cert_file[0] ||
			    c->key_file[0] || c->user[0] ||
			    c->password_file[0] || c->bearer_token_file[0]))
		why = "remote_write options without a remote_write URL";
	else if (!c->cert_file[0] != !c->key_file[0])
		why = "remote_write_cert_file and remote_write_key_file go together";
	else if (!c->user[0] != !c->password_file[0])
		why = "remote_write_user and remote_write_password_file go together";
	else if (c->user[0] && c->bearer_token_file[0])
		why = "basic auth (remote_write_user) or a bearer token, not both";
	return why ? checked(-EINVAL, why, err, errlen) : 0;
}
