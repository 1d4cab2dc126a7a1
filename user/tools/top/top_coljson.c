// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's columns in -b --json (top_coljson.h): each column's value
 * after its name, sizes in bytes, null for what a cell shows as "-".
 */
#include <inttypes.h>
#include <stdio.h>
#include "top_coljson.h"
#include "top_view.h"

/* The text of the cell, a JSON string. */
void top_json_text(FILE *f, const struct top_column *c,
		   const struct top_row *r)
{
	char b[256];

	c->cell(c, r, b, sizeof(b));
	mt_json_print(f, b);
}

/* The sort value, a whole number (bytes, a pid). */
void top_json_int(FILE *f, const struct top_column *c,
		  const struct top_row *r)
{
	fprintf(f, "%.0f", c->sort(c, r));
}

void top_json_pid(FILE *f, const struct top_column *c,
		  const struct top_row *r)
{
	(void)c;
	fprintf(f, "%d", r->t.pid);
}

void top_json_user(FILE *f, const struct top_column *c,
		   const struct top_row *r)
{
	(void)c;
	mt_json_print(f, r->user);
}

void top_json_comm(FILE *f, const struct top_column *c,
		   const struct top_row *r)
{
	(void)c;
	mt_json_print(f, r->t.comm);
}

void top_json_cgroup(FILE *f, const struct top_column *c,
		     const struct top_row *r)
{
	(void)c;
	mt_json_print(f, r->cgroup);
}

/* A JSON string, or null for "" (a name the runtime's state did not give). */
static void json_name(FILE *f, const char *key, const char *s)
{
	fprintf(f, ",\"%s\":", key);
	if (s[0])
		mt_json_print(f, s);
	else
		fputs("null", f);
}

/*
 * "container": runtime, ID and name, null outside one; "pod": UID, name,
 * namespace and QoS class, null outside Kubernetes.  Names the runtime's
 * state did not give: the container's ID's first 12 digits (as docker ps
 * shows it), a null pod name and namespace.
 */
void top_json_container(FILE *f, const struct top_column *col,
			const struct top_row *r)
{
	const struct mt_container *c = r->ct;

	(void)col;
	/* a pod's row sums its containers: none of them in particular */
	if (!c || !c->id[0] || r->gkind == TOP_GROUP_POD) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"runtime\":\"%s\"", mt_runtime_name(c->runtime));
	json_name(f, "id", c->id);
	json_name(f, "name", c->name);
	fputc('}', f);
}

void top_json_pod(FILE *f, const struct top_column *col,
		  const struct top_row *r)
{
	const struct mt_container *c = r->ct;

	(void)col;
	if (!c || !c->pod_uid[0]) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"uid\":\"%s\"", c->pod_uid);
	json_name(f, "name", c->pod);
	json_name(f, "namespace", c->ns);
	fprintf(f, ",\"qos\":\"%s\"}", mt_qos_name(c->qos));
}

void top_json_cpu(FILE *f, const struct top_column *c,
		  const struct top_row *r)
{
	(void)c;
	fprintf(f, "%.2f", r->cpu_pct);
}

/* null: no smaps_rollup (a kernel thread, not ours to read) */
void top_json_pss(FILE *f, const struct top_column *c,
		  const struct top_row *r)
{
	(void)c;
	if (r->has_smaps)
		fprintf(f, "%" PRIu64, r->pss);
	else
		fputs("null", f);
}

void top_json_uss(FILE *f, const struct top_column *c,
		  const struct top_row *r)
{
	(void)c;
	if (r->has_smaps)
		fprintf(f, "%" PRIu64, r->uss);
	else
		fputs("null", f);
}

/* null: no limit (memory.max "max", or no memory controller) */
void top_json_limit(FILE *f, const struct top_column *c,
		    const struct top_row *r)
{
	(void)c;
	if (r->cg_max == TOP_NO_LIMIT)
		fputs("null", f);
	else
		fprintf(f, "%" PRIu64, r->cg_max);
}

void top_json_growth(FILE *f, const struct top_column *c,
		     const struct top_row *r)
{
	(void)c;
	fprintf(f, "%" PRId64, r->rss_growth);
}

/* The flag's text, null for none. */
void top_json_flag(FILE *f, const struct top_column *c,
		   const struct top_row *r)
{
	if (r->growing)
		top_json_text(f, c, r);
	else
		fputs("null", f);
}
