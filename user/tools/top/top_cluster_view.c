// SPDX-License-Identifier: GPL-2.0
/*
 * How the cluster's rows look (top_cluster.h): sizes in KiB as in the local
 * view; a process row names its node; a per-program row sums the program's
 * processes on every node that is up.  Text for the terminal and -b, JSON
 * lines for -b --json.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "top.h"
#include "top_cluster.h"
#include "top_cluster_view.h"

#define KIB(x)	((uint64_t)(x) >> 10)

/* A comm may hold spaces; a column of text may not. */
static void column_text(char *dst, size_t size, const char *s)
{
	size_t i;

	for (i = 0; i + 1 < size && s[i]; i++)
		dst[i] = s[i] == ' ' || s[i] == '\t' ? '_' : s[i];
	dst[i] = '\0';
}

int top_cluster_format_header(char *buf, size_t len, bool programs)
{
	if (programs)
		return snprintf(buf, len, "%-16s %7s %10s %10s %10s %8s %8s",
				"COMMAND", "NPROC", "RSS", "ANON", "FILE",
				"SHMEM", "SWAP");
	return snprintf(buf, len, "%-16s %7s %-16s %10s %10s %10s %8s %8s",
			"NODE", "PID", "COMMAND", "RSS", "ANON", "FILE",
			"SHMEM", "SWAP");
}

int top_cluster_format_proc(const struct top_cluster_proc *p, char *buf,
			    size_t len)
{
	char node[TOP_NODE_LEN], comm[sizeof(p->comm)];

	column_text(node, sizeof(node), p->node);
	column_text(comm, sizeof(comm), p->comm);
	return snprintf(buf, len, "%-16.16s %7d %-16s %10" PRIu64 " %10" PRIu64
			" %10" PRIu64 " %8" PRIu64 " %8" PRIu64, node, p->pid,
			comm, KIB(p->rss), KIB(p->anon), KIB(p->file),
			KIB(p->shmem), KIB(p->swap));
}

int top_cluster_format_prog(const struct top_cluster_prog *p, char *buf,
			    size_t len)
{
	char comm[sizeof(p->comm)];

	column_text(comm, sizeof(comm), p->comm);
	return snprintf(buf, len, "%-16s %7" PRIu64 " %10" PRIu64 " %10" PRIu64
			" %10" PRIu64 " %8" PRIu64 " %8" PRIu64, comm, p->nproc,
			KIB(p->rss), KIB(p->anon), KIB(p->file),
			KIB(p->shmem), KIB(p->swap));
}

void top_cluster_status(const struct top_cluster_snap *s, const char *name,
			double now, char *buf, size_t len)
{
	int n;

	if (!s->have) {
		snprintf(buf, len, "cluster %s: %s", name,
			 s->error[0] ? s->error : "asking...");
		return;
	}
	n = snprintf(buf, len, "cluster %s: %u nodes up, %u down, answer %.1fs old",
		     name, s->nodes_up, s->nodes_down, now - s->when);
	if (s->error[0] && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, " (now: %s)", s->error);
}

void top_cluster_batch_text(FILE *f, const struct top_cluster_snap *s,
			    const char *name)
{
	char line[256], when[16];
	time_t now = time(NULL);
	size_t i;

	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	fprintf(f, "memtrack-top - %s, cluster %s: %u nodes up, %u down\n\n",
		when, name, s->nodes_up, s->nodes_down);
	top_cluster_format_header(line, sizeof(line), false);
	fprintf(f, "%s\n", line);
	for (i = 0; i < s->nprocs; i++) {
		top_cluster_format_proc(&s->procs[i], line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	fputc('\n', f);
	top_cluster_format_header(line, sizeof(line), true);
	fprintf(f, "%s\n", line);
	for (i = 0; i < s->nprogs; i++) {
		top_cluster_format_prog(&s->progs[i], line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	fputc('\n', f);
}

void top_cluster_batch_json(FILE *f, const struct top_cluster_snap *s,
			    const char *name)
{
	size_t i;

	fprintf(f, "{\"type\":\"cluster\",\"aggregator\":");
	mt_json_print(f, name);
	fprintf(f, ",\"nodes_up\":%u,\"nodes_down\":%u,\"processes\":%zu,"
		"\"programs\":%zu}\n", s->nodes_up, s->nodes_down, s->nprocs,
		s->nprogs);
	for (i = 0; i < s->nprocs; i++) {
		const struct top_cluster_proc *p = &s->procs[i];

		fprintf(f, "{\"type\":\"task\",\"node\":");
		mt_json_print(f, p->node);
		fprintf(f, ",\"pid\":%d,\"comm\":", p->pid);
		mt_json_print(f, p->comm);
		fprintf(f, ",\"rss\":%" PRIu64 ",\"rss_anon\":%" PRIu64
			",\"rss_file\":%" PRIu64 ",\"rss_shmem\":%" PRIu64
			",\"swap\":%" PRIu64 "}\n", p->rss, p->anon, p->file,
			p->shmem, p->swap);
	}
	for (i = 0; i < s->nprogs; i++) {
		const struct top_cluster_prog *p = &s->progs[i];

		fprintf(f, "{\"type\":\"program\",\"comm\":");
		mt_json_print(f, p->comm);
		fprintf(f, ",\"nproc\":%" PRIu64 ",\"rss\":%" PRIu64
			",\"rss_anon\":%" PRIu64 ",\"rss_file\":%" PRIu64
			",\"rss_shmem\":%" PRIu64 ",\"swap\":%" PRIu64 "}\n",
			p->nproc, p->rss, p->anon, p->file, p->shmem, p->swap);
	}
}
