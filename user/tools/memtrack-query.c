// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-query: ask a memtrackd aggregator about the cluster.
 *
 *   memtrack-query [-c CONF] [-s ADDR:PORT] [-t MS] [--json] QUERY...
 *
 * The query words are joined with spaces and sent as they are; the
 * aggregator parses them (agg_query.c lists the queries).  The aggregator
 * is -s, else the first of the config's aggregators, else its [aggregate]
 * listen address and port.  A malformed query is refused before any
 * connection.  Exit status: 0, 1 (cannot ask: connection, authentication,
 * timeout), 2 (usage, a malformed query, or the aggregator refused it).
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/memtrack.h>

#include "libmemtrack.h"
#include "conn.h"
#include "query_client.h"
#include "query_parse.h"
#include "query_prom.h"
#include "query_target.h"
#include "relay_proto.h"

static const char prog[] = "memtrack-query";

#define DEFAULT_TIMEOUT_MS	10000
/* remote write every 10 s, a few batches late: down after a minute */
#define DEFAULT_DOWN_AFTER_MS	60000

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrack-query [-c CONF] [-s HOST:PORT | -P URL] [-t MS] [--json] QUERY...\n"
		"Ask a memtrackd aggregator, or a Prometheus-compatible store the nodes\n"
		"remote-write to, about the cluster's nodes, programs and processes, or\n"
		"(the aggregator) a node's relayed events.\n"
		"  -c, --config CONF      memtrackd.conf: authentication, aggregator address\n"
		"  -s, --server HOST:PORT the aggregator (IPv6 as [ADDR]:PORT)\n"
		"  -P, --prometheus URL   a Prometheus-compatible API instead (PromQL)\n"
		"      --down-after MS    with -P: a node is down when its last sample is\n"
		"                         older (default %d)\n"
		"  -t, --timeout MS       give up after MS milliseconds (default %d)\n"
		"  -j, --json             JSON instead of a table\n"
		"  -h, --help             this help\n"
		"  -V, --version          the release\n"
		"queries:\n"
		"  nodes\n"
		"  sum FIELD[,FIELD...] [by KEY[,KEY...]] [where COND [and COND]...]\n"
		"  top N [by FIELD] [where COND [and COND]...]\n"
		"  events NODE [LAST]\n"
		"  FIELD: rss anon file shmem swap nproc; KEY: node namespace pod\n"
		"  container comm; COND: KEY=VALUE (e.g. namespace=prod)\n"
		"\n"
		"Exit status: 0 on an answer; 1 when the aggregator or Prometheus cannot\n"
		"be reached, refuses the credentials or does not answer in time; 2 on\n"
		"usage errors and a malformed or refused query.\n",
		DEFAULT_DOWN_AFTER_MS, DEFAULT_TIMEOUT_MS);
}

static void print_json(const struct mtn_query_result *r)
{
	size_t i, j;

	printf("[");
	for (i = 0; i < r->nrows; i++) {
		printf("%s{", i ? ",\n " : "");
		for (j = 0; j < r->ncols; j++) {
			const char *c = r->cells[i * r->ncols + j];

			printf("%s", j ? ", " : "");
			mt_json_print(stdout, r->cols[j]);
			printf(": ");
			if (r->numeric[j])
				printf("%s", c);
			else
				mt_json_print(stdout, c);
		}
		printf("}");
	}
	printf("]\n");
}

static void print_table(const struct mtn_query_result *r)
{
	size_t *w = calloc(r->ncols, sizeof(*w)), i, j;

	if (!w)
		return;
	for (j = 0; j < r->ncols; j++)
		w[j] = strlen(r->cols[j]);
	for (i = 0; i < r->nrows; i++)
		for (j = 0; j < r->ncols; j++) {
			size_t n = strlen(r->cells[i * r->ncols + j]);

			if (n > w[j])
				w[j] = n;
		}
	for (i = 0; i <= r->nrows; i++) {
		for (j = 0; j < r->ncols; j++) {
			const char *c = i ? r->cells[(i - 1) * r->ncols + j] :
				r->cols[j];
			bool last = j + 1 == r->ncols;

			if (r->numeric[j])
				printf("%*s%s", (int)w[j], c, last ? "" : "  ");
			else if (last)
				printf("%s", c);
			else
				printf("%-*s  ", (int)w[j], c);
		}
		putchar('\n');
	}
	free(w);
}

struct rec_out {
	bool json;
	size_t n;
};

static int print_record(const struct memtrack_rec_hdr *rec, void *arg)
{
	struct rec_out *o = arg;
	char line[2048], *p = line;
	int n;

	n = o->json ? mt_format_json(rec, line, sizeof(line)) :
		mt_format_text(rec, line, sizeof(line));
	/* a record with many counters may not fit the stack buffer */
	if (n >= (int)sizeof(line)) {
		p = malloc(n + 1);
		if (!p)
			return -ENOMEM;
		if (o->json)
			mt_format_json(rec, p, n + 1);
		else
			mt_format_text(rec, p, n + 1);
	}
	if (o->json)
		printf("%s%s", o->n ? ",\n " : "", p);
	else
		printf("%s\n", p);
	if (p != line)
		free(p);
	o->n++;
	return 0;
}

static int print_records(const struct mtn_query_result *r, bool json)
{
	struct rec_out o = { json, 0 };
	int n;

	if (json)
		printf("[");
	n = mt_walk_records(r->recs, r->recs_len, print_record, &o);
	if (json)
		printf("]\n");
	if (n < 0) {
		warnx("malformed records from the aggregator");
		return 1;
	}
	return 0;
}

/* An option's milliseconds, 1..max: 0, or -1 with a message. */
static int parse_ms(const char *opt, const char *arg, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(arg, &end, 10);
	if (errno || end == arg || *end || *out < 1 || *out > max) {
		warnx("%s: milliseconds, 1..%ld: '%s'", opt, max, arg);
		return -1;
	}
	return 0;
}

static int print_result(const struct mtn_query_result *res, bool json)
{
	if (res->records)
		return print_records(res, json);
	if (json)
		print_json(res);
	else
		print_table(res);
	return 0;
}

/*
 * What a query got (rc from mtn_query_run or mtn_prom_query), printed; the
 * exit status: 0, 1 (no answer), 2 (the query refused).  res is freed.
 */
static int answer(int rc, struct mtn_query_result *res, const char *err,
		  bool json)
{
	int ret = 0;

	if (rc) {
		warnx("%s", err);
		mtn_query_result_free(res);
		return 1;
	}
	if (!res->ok) {
		warnx("%s", res->error);
		ret = 2;
	} else {
		ret = print_result(res, json);
	}
	mtn_query_result_free(res);
	return ret;
}

/*
 * Whether query parses, as the aggregator will parse it (query_parse.h):
 * a malformed one is refused before a connection is made, as -P refuses
 * it, with the aggregator's own words for it.
 */
static bool query_well_formed(const char *query)
{
	char text[MTN_RELAY_MAX_QUERY + 1], why[512];
	struct mtn_query q;

	snprintf(text, sizeof(text), "%s", query);
	if (!mtn_query_parse(text, &q, why, sizeof(why)))
		return true;
	warnx("%s", why);
	return false;
}

/* The same query, answered by a Prometheus-compatible API (query_prom.h). */
static int ask_prometheus(const char *url, long down_after, const char *query,
			  long timeout, bool json)
{
	struct mtn_query_result res;
	struct mtn_prom *p;
	char err[512];
	int ret;

	p = mtn_prom_new(url, down_after, err, sizeof(err));
	if (!p) {
		warnx("--prometheus: %s", err);
		return 2;
	}
	ret = answer(mtn_prom_query(p, query, timeout, &res, err, sizeof(err)),
		     &res, err, json);
	mtn_prom_free(p);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "server", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", required_argument, NULL, 'P' },
		{ "down-after", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cfgpath = NULL, *server = NULL, *prom_url = NULL;
	long down_after = DEFAULT_DOWN_AFTER_MS;
	struct mtn_query_result res;
	struct mtn_query_client *q;
	struct mtn_query_target t;
	struct mtn_creds *creds;
	char err[512], query[MTN_RELAY_MAX_QUERY + 1] = "";
	long timeout = DEFAULT_TIMEOUT_MS;
	bool json = false;
	int opt, i, ret;

	mt_set_progname(argv, prog);
	while ((opt = getopt_long(argc, argv, "+c:s:t:jP:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			cfgpath = optarg;
			break;
		case 's':
			server = optarg;
			break;
		case 't':
			if (parse_ms("--timeout", optarg, 3600000, &timeout))
				return 2;
			break;
		case 'j':
			json = true;
			break;
		case 'P':
			prom_url = optarg;
			break;
		case 'D':
			if (parse_ms("--down-after", optarg, 86400000, &down_after))
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			return mt_print_version(prog);
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return 2;
		}
	}
	if (optind == argc) {
		warnx("no query");
		fprintf(stderr, "Try '%s --help'.\n", prog);
		return 2;
	}
	for (i = optind; i < argc; i++) {
		size_t n = strlen(query);

		if (n + strlen(argv[i]) + 2 > sizeof(query)) {
			warnx("query too long");
			return 2;
		}
		snprintf(query + n, sizeof(query) - n, "%s%s", n ? " " : "",
			 argv[i]);
	}
	if (prom_url && server) {
		warnx("--server or --prometheus, not both");
		return 2;
	}
	if (prom_url)
		return ask_prometheus(prom_url, down_after, query, timeout, json);
	if (!query_well_formed(query))
		return 2;
	ret = mtn_query_target(cfgpath, server, &t, err, sizeof(err));
	if (ret) {
		warnx("%s", err);
		/* credentials that cannot be read: 1; the config or --server: 2 */
		return ret == -ENOKEY ? 1 : 2;
	}
	creds = t.creds;
	q = mtn_query_connect(t.addr, t.port, creds, timeout, err, sizeof(err));
	if (!q) {
		warnx("%s", err);
		mtn_creds_free(creds);
		return 1;
	}
	ret = answer(mtn_query_run(q, query, timeout, &res, err, sizeof(err)),
		     &res, err, json);
	mtn_query_close(q);
	mtn_creds_free(creds);
	return ret;
}
