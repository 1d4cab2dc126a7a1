// SPDX-License-Identifier: GPL-2.0
/*
 * The snapshot the relay sends (kind MTN_RELAY_SNAPSHOT, text, version 3 as
 * relay_proto.h describes it): one line per program with live processes,
 * then one per live process of the last sample (kernel threads left out as
 * in /metrics), so that an aggregator can answer both per-program sums and
 * top-N across nodes.  Plain decimal
 * fields in a fixed order keep it cheap to parse (snapshot_parse.c).
 */
#include <string.h>

#include "libmemtrack.h"
#include "relay_proto.h"
#include "snapshot.h"
#include "state.h"

/* A name of at most max bytes, escaped, then sep; "-" for "". */
static void put_name(struct mtn_buf *b, const char *name, size_t max, char sep)
{
	const unsigned char *c = (const unsigned char *)name;
	size_t k, len = strnlen(name, max);

	if (!len)
		mtn_buf_append(b, "-", 1);
	for (k = 0; k < len; k++) {
		if (c[k] <= 0x20 || c[k] >= 0x7f || c[k] == '\\' ||
		    (len == 1 && c[k] == '-'))
			mtn_buf_printf(b, "\\%03o", c[k]);
		else
			mtn_buf_append(b, &c[k], 1);
	}
	mtn_buf_append(b, &sep, 1);
}

/* NS POD CONTAINER COMM and the newline. */
static void put_where(struct mtn_buf *b, const char *ns, const char *pod,
		      const char *container, const char *comm)
{
	put_name(b, ns, 256, ' ');
	put_name(b, pod, 256, ' ');
	put_name(b, container, 256, ' ');
	put_name(b, comm, MEMTRACK_COMM_LEN, '\n');
}

int mtd_snapshot_format(const struct mtd_state *st, const char *source,
			struct mtn_buf *b)
{
	size_t i, n = 0, nproc = 0;

	for (i = 0; i < st->nprogs; i++)
		n += st->progs[i].nproc > 0;
	for (i = 0; i < st->cur.nr; i++)
		nproc += !st->cur.procs[i].exited && !st->cur.procs[i].kthread;
	mtn_buf_printf(b, "snapshot/%d %s %zu %zu\n", MTN_SNAPSHOT_VERSION,
		       source, n, nproc);
	for (i = 0; i < st->nprogs; i++) {
		const struct mtd_program *pr = &st->progs[st->order[i]];

		if (!pr->nproc)
			continue;
		mtn_buf_printf(b, "p %u %llu %llu %llu %llu ", pr->nproc,
			       (unsigned long long)pr->rss_anon,
			       (unsigned long long)pr->rss_file,
			       (unsigned long long)pr->rss_shmem,
			       (unsigned long long)pr->swap);
		put_where(b, pr->where.ns, pr->where.pod, pr->where.container,
			  pr->comm);
	}
	for (i = 0; i < st->cur.nr; i++) {
		const struct mtd_proc *p = &st->cur.procs[i];

		if (p->exited || p->kthread)
			continue;
		mtn_buf_printf(b, "t %d %llu %llu %llu %llu ", p->pid,
			       (unsigned long long)p->rss_anon,
			       (unsigned long long)p->rss_file,
			       (unsigned long long)p->rss_shmem,
			       (unsigned long long)p->swap);
		if (p->ct)
			put_where(b, p->ct->ns, p->ct->pod,
				  p->ct->id[0] ? p->ct->name : "", p->comm);
		else
			put_where(b, "", "", "", p->comm);
	}
	return b->oom ? -1 : 0;
}
