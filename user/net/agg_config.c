// SPDX-License-Identifier: GPL-2.0
/*
 * The [aggregate] section of memtrackd.conf: what memtrackd --aggregate
 * listens on and how much it keeps.  Every bound has a limit so that a
 * typo cannot ask for unbounded memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "libmemtrack.h"

void mtn_agg_config_defaults(struct mtn_agg_config *c)
{
	strcpy(c->listen, "127.0.0.1");
	c->port = MTN_AGG_DEFAULT_PORT;
	c->down_after_ms = 3000;
	c->idle_timeout_ms = 30000;
	c->max_nodes = 4096;
	c->max_conns = 8192;
	c->records_keep = 10000;
}

/* 0, or -EINVAL with why in err. */
static int checked(int r, const char *why, char *err, size_t errlen)
{
	if (!r)
		return 0;
	snprintf(err, errlen, "%s", why);
	return -EINVAL;
}

int mtn_agg_config_key(struct mtn_agg_config *c, const char *name,
		       const char *value, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		size_t off;
		unsigned long min, max;
		const char *why;
		bool unit;		/* a duration with its unit, else ms */
	} keys[] = {
		{ "port", offsetof(struct mtn_agg_config, port), 1, 65535,
		  "must be 1..65535", false },
		{ "down_after", offsetof(struct mtn_agg_config, down_after_ms),
		  100, 3600000,
		  "must be a duration of 100ms..1h with its unit (ms, s, m, h)",
		  true },
		{ "idle_timeout",
		  offsetof(struct mtn_agg_config, idle_timeout_ms), 1000, 3600000,
		  "must be a duration of 1s..1h with its unit (ms, s, m, h)",
		  true },
		/* the keys before durations had units; still read */
		{ "down_after_ms", offsetof(struct mtn_agg_config, down_after_ms),
		  100, 3600000, "must be 100..3600000", false },
		{ "idle_timeout_ms",
		  offsetof(struct mtn_agg_config, idle_timeout_ms), 1000, 3600000,
		  "must be 1000..3600000", false },
		{ "max_nodes", offsetof(struct mtn_agg_config, max_nodes), 1,
		  100000, "must be 1..100000", false },
		{ "max_conns", offsetof(struct mtn_agg_config, max_conns), 1,
		  100000, "must be 1..100000", false },
		{ "records_keep", offsetof(struct mtn_agg_config, records_keep),
		  0, 1000000, "must be 0..1000000", false },
	};
	size_t i;

	if (!strcmp(name, "listen"))
		return checked(mtn_parse_listen(value, c->listen,
						sizeof(c->listen),
						&c->listen_port),
			       MTN_LISTEN_WHY, err, errlen);
	if (!strcmp(name, "require_identity_match"))
		return checked(mtn_parse_bool(value,
					      &c->require_identity_match),
			       "must be yes or no", err, errlen);
	for (i = 0; i < MT_ARRAY_SIZE(keys); i++) {
		unsigned int *v = (unsigned int *)((char *)c + keys[i].off);

		if (strcmp(name, keys[i].name))
			continue;
		if (keys[i].unit)
			return checked(mtn_parse_duration_ms(value, keys[i].min,
							     keys[i].max, v),
				       keys[i].why, err, errlen);
		return checked(mtn_parse_uint(value, keys[i].min, keys[i].max,
					      v), keys[i].why, err, errlen);
	}
	return -ENOENT;
}
