// SPDX-License-Identifier: GPL-2.0
/* Which aggregator a query client asks (query_target.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "conn.h"
#include "query_target.h"

int mtn_query_target(const char *cfgpath, const char *server,
		     struct mtn_query_target *t, char *err, size_t errlen)
{
	struct mtn_config cfg;
	char why[512];
	int e;

	mtn_config_defaults(&cfg);
	if (cfgpath || access(MTN_DEFAULT_CONFIG, R_OK) == 0) {
		e = mtn_config_load(cfgpath ? cfgpath : MTN_DEFAULT_CONFIG,
				    &cfg, why, sizeof(why));
		if (e) {
			snprintf(err, errlen, "%s", why);
			return e;
		}
	}
	if (server) {
		if (mtn_parse_hostport(server, t->addr, sizeof(t->addr),
				     &t->port)) {
			snprintf(err, errlen, "%s: HOST:PORT expected", server);
			return -EINVAL;
		}
	} else if (cfg.nr_aggregators) {
		strcpy(t->addr, cfg.aggregators[0].addr);
		t->port = cfg.aggregators[0].port;
	} else {
		strcpy(t->addr, cfg.agg.listen);
		t->port = cfg.agg.port;
	}
	t->creds = mtn_creds_load(&cfg.auth, false, why, sizeof(why));
	if (!t->creds) {
		snprintf(err, errlen, "credentials: %s", why);
		return -ENOKEY;
	}
	return 0;
}
