// SPDX-License-Identifier: GPL-2.0
/*
 * Samples from memtrack.ko over generic netlink (libmemtrack): GET_SUMMARY
 * and a GET_TASKS dump each time, and the "events" multicast group for RSS
 * growth alerts, which exist nowhere else.
 *
 * Privileges: the dumps need none, but the module zeroes the event counters
 * (page allocations, kmalloc, reclaim, allocation failures) of processes the
 * caller neither owns nor may ptrace, as /proc would; memory sizes and
 * faults are public.  Joining "events" needs CAP_SYS_ADMIN, checked when
 * joining only: both sockets are opened here, before root is dropped.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "memtrack.h"
#include "memtrackd.h"

struct module_src {
	struct mt_handle *h;
	bool events;
	uint64_t overruns;
};

static void fill_proc(struct mtd_proc *p, const struct memtrack_task *t)
{
	static const struct {
		int from, to;
	} map[] = {
		{ MEMTRACK_CTR_MIN_FLT, MTD_C_MIN_FLT },
		{ MEMTRACK_CTR_MAJ_FLT, MTD_C_MAJ_FLT },
		{ MEMTRACK_CTR_PG_ALLOC, MTD_C_PG_ALLOC },
		{ MEMTRACK_CTR_PG_FREE, MTD_C_PG_FREE },
		{ MEMTRACK_CTR_KMALLOC_CALLS, MTD_C_KMALLOC },
		{ MEMTRACK_CTR_KMALLOC_ALLOC, MTD_C_KMALLOC_BYTES },
		{ MEMTRACK_CTR_KFREE_CALLS, MTD_C_KFREE },
		{ MEMTRACK_CTR_PG_ALLOC_FAIL, MTD_C_PG_ALLOC_FAIL },
		{ MEMTRACK_CTR_RECLAIM_STALLS, MTD_C_RECLAIM_STALLS },
		{ MEMTRACK_CTR_RECLAIM_NS, MTD_C_RECLAIM_NS },
	};
	size_t i;

	p->pid = t->tgid;
	p->exited = t->exited;
	memcpy(p->comm, t->comm, MTD_COMM_LEN - 1);
	p->comm[MTD_COMM_LEN - 1] = 0;
	p->rss_anon = t->mm.rss_anon;
	p->rss_file = t->mm.rss_file;
	p->rss_shmem = t->mm.rss_shmem;
	p->swap = t->mm.swap;
	for (i = 0; i < ARRAY_SIZE(map); i++)
		p->ctr[map[i].to] = t->counters[map[i].from];
	p->ctr[MTD_C_OOM_KILLS] = t->oom_victim ? 1 : 0;
}

static void fill_system(struct mtd_sample *s, const struct memtrack_summary *m)
{
	static const struct {
		size_t off;
		int mem;
	} mems[] = {
#define M(field, idx) { offsetof(struct memtrack_summary, field), idx }
		M(mem_total, MTD_M_TOTAL), M(mem_free, MTD_M_FREE),
		M(file_pages, MTD_M_FILE), M(anon_pages, MTD_M_ANON),
		M(shmem, MTD_M_SHMEM), M(mapped, MTD_M_MAPPED),
		M(dirty, MTD_M_DIRTY), M(writeback, MTD_M_WRITEBACK),
		M(slab_reclaimable, MTD_M_SLAB_RECLAIMABLE),
		M(slab_unreclaimable, MTD_M_SLAB_UNRECLAIMABLE),
		M(page_tables, MTD_M_PAGE_TABLES), M(swap_free, MTD_M_SWAP_FREE),
	}, sys[] = {
		M(page_allocs, MTD_S_PG_ALLOC), M(page_frees, MTD_S_PG_FREE),
		M(kmallocs, MTD_S_KMALLOC), M(kfrees, MTD_S_KFREE),
		M(page_alloc_failures, MTD_S_PG_ALLOC_FAIL),
		M(direct_reclaim_stalls, MTD_S_RECLAIM_STALLS),
		M(direct_reclaim_ns, MTD_S_RECLAIM_NS),
		M(oom_kills, MTD_S_OOM_KILLS),
#undef M
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mems); i++) {
		memcpy(&s->mem[mems[i].mem], (const char *)m + mems[i].off, 8);
		s->mem_have |= 1U << mems[i].mem;
	}
	for (i = 0; i < ARRAY_SIZE(sys); i++) {
		memcpy(&s->sys[sys[i].mem], (const char *)m + sys[i].off, 8);
		s->sys_have |= 1U << sys[i].mem;
	}
}

/*
 * The module was reloaded (a new family id) or unloaded: a new request
 * socket needs no privilege, so reconnect.  Its events need CAP_SYS_ADMIN
 * to join again: growth alerts stop until memtrackd restarts.
 */
static int reconnect(struct module_src *ms)
{
	struct mt_handle *h = mt_open(0);

	if (!h)
		return -ENOENT;
	mtd_log(LOG_WARNING, "memtrack.ko reloaded: reconnected%s",
		ms->events ? "; no more RSS growth alerts until restarted" : "");
	mt_close(ms->h);
	ms->h = h;
	ms->events = false;
	ms->overruns = 0;
	return 0;
}

static int module_sample(struct mtd_source *src, struct mtd_sample *s)
{
	struct module_src *ms = src->priv;
	struct memtrack_summary sum;
	struct memtrack_task *tasks;
	size_t n, i;
	int err;

	err = mt_get_summary(ms->h, &sum);
	if (err && !reconnect(ms))
		err = mt_get_summary(ms->h, &sum);
	if (err)
		return err;
	err = mt_dump_tasks(ms->h, NULL, &tasks, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		struct mtd_proc *p = mtd_sample_add(s);

		if (!p) {
			free(tasks);
			return -ENOMEM;
		}
		fill_proc(p, &tasks[i]);
	}
	free(tasks);
	s->ctr_have = (1U << MTD_NR_CTR) - 1;
	fill_system(s, &sum);
	return 0;
}

static int module_events_fd(struct mtd_source *src)
{
	struct module_src *ms = src->priv;

	return ms->events ? mt_events_fd(ms->h) : -1;
}

struct event_ctx {
	struct module_src *ms;
	struct mtd_state *st;
	struct mtd_buf *records;
};

static int on_record(const struct memtrack_rec_hdr *rec, void *arg)
{
	struct event_ctx *x = arg;
	struct memtrack_task t;

	if (x->records)
		mtd_buf_append(x->records, rec, rec->size);
	if (rec->type != MEMTRACK_REC_RSS_GROWTH)
		return 0;
	/* a process born since the last sample: ask for its comm */
	if (!mt_get_task(x->ms->h, rec->tgid, false, &t)) {
		char comm[MTD_COMM_LEN];

		memcpy(comm, t.comm, MTD_COMM_LEN - 1);
		comm[MTD_COMM_LEN - 1] = 0;
		mtd_state_growth_alert(x->st, rec->tgid, comm);
	} else {
		mtd_state_growth_alert(x->st, rec->tgid, NULL);
	}
	return 0;
}

static int module_read_events(struct mtd_source *src, struct mtd_state *st,
			      struct mtd_buf *records)
{
	struct module_src *ms = src->priv;
	struct event_ctx x = { ms, st, records };
	uint64_t ov;
	int n;

	if (!ms->events)
		return 0;
	n = mt_read_events(ms->h, on_record, &x);
	ov = mt_events_overruns(ms->h);
	mtd_state_add_overruns(st, ov - ms->overruns);
	ms->overruns = ov;
	return n < 0 ? n : 0;
}

static void module_close(struct mtd_source *src)
{
	struct module_src *ms = src->priv;

	mt_close(ms->h);
	free(ms);
}

static const struct mtd_source_ops module_ops = {
	.name = "module",
	.sample = module_sample,
	.events_fd = module_events_fd,
	.read_events = module_read_events,
	.close = module_close,
};

int mtd_source_module_open(struct mtd_source *src, char *err, size_t errlen)
{
	struct module_src *ms = calloc(1, sizeof(*ms));
	int e;

	if (!ms) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ms->h = mt_open(0);
	if (!ms->h) {
		e = errno ? errno : ENOENT;
		snprintf(err, errlen, "memtrack.ko: %s", mt_errmsg());
		free(ms);
		return -e;
	}
	e = mt_subscribe(ms->h);
	if (e)
		mtd_log(LOG_WARNING, "no RSS growth alerts: %s",
			mt_errmsg());
	ms->events = !e;
	src->ops = &module_ops;
	src->priv = ms;
	return 0;
}
