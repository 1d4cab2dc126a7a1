// SPDX-License-Identifier: GPL-2.0
/*
 * Where memtrackd's samples come from: libmemtrack's data source (the one
 * memtrack-top reads), memtrack.ko over generic netlink when it is loaded,
 * /proc otherwise or when the config says so.
 *
 * With the module: GET_SUMMARY and a GET_TASKS dump each time, and the
 * "events" multicast group for RSS growth alerts, which exist nowhere else.
 * The dumps need no privilege, but the module zeroes the event counters
 * (page allocations, kmalloc, reclaim, allocation failures) of processes the
 * caller neither owns nor may ptrace, as /proc would; memory sizes and
 * faults are public.  Joining "events" needs CAP_SYS_ADMIN, checked when
 * joining only: both sockets are opened here, before root is dropped.
 *
 * From /proc: per process /proc/PID/stat (comm, faults, start time) and
 * status (RssAnon, RssFile, RssShmem, VmSwap), the system's memory from
 * meminfo and vmstat.  /proc has no per-process page allocation, kernel
 * heap or reclaim counts: those families are left out.  A process that
 * exits between the directory listing and the reads is skipped.
 *
 * Kernel threads (kthreadd, kworker/1:1-events, ...) have no address space
 * and their comms come and go: unless asked for, their rows are marked and
 * programs.c leaves them out, so that they do not fill max_programs.
 * Neither source marks them: the module's
 * task rows have no flags, and libmemtrack's /proc reader keeps none of
 * stat's.  A row with no address space (VmSize 0: a kernel thread, or a
 * process past exit_mm()) is checked against /proc/PID/stat's PF_KTHREAD;
 * not ppid 2, which in a pid namespace is any process.  The module's row
 * of an exited process keeps the mm it had at exit, which only a kernel
 * thread lacks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "libmemtrack.h"
#include "buf.h"
#include "log.h"
#include "sample.h"
#include "state.h"

struct mtd_source {
	struct mt_source *s;
	bool module;			/* the module, not /proc */
	bool kthreads;			/* keep kernel threads' rows */
	bool events;			/* subscribed to its events */
	uint64_t overruns;
	unsigned int reopened;		/* mt_source_reopened() last seen */
	struct mt_containers *containers;	/* NULL: none looked up */
};

static void fill_proc(struct mtd_proc *p, const struct memtrack_task *t,
		      bool module)
{
	size_t i;

	p->pid = t->tgid;
	p->exited = t->exited;
	/* the module keeps exited processes; /proc: pid and start time */
	p->start = module ? 0 : t->start_ns;
	memcpy(p->comm, t->comm, MEMTRACK_COMM_LEN - 1);
	p->comm[MEMTRACK_COMM_LEN - 1] = 0;
	p->rss_anon = t->mm.rss_anon;
	p->rss_file = t->mm.rss_file;
	p->rss_shmem = t->mm.rss_shmem;
	p->swap = t->mm.swap;
	for (i = 0; i < MEMTRACK_NR_COUNTERS; i++)
		p->ctr[i] = t->counters[i];
	p->ctr[MTD_C_OOM_KILLS] = t->oom_victim ? 1 : 0;
}

/* A figure of struct mt_sysinfo, and which source has it. */
enum { BOTH, MODULE, PROC };

struct sys_field {
	size_t off;
	int idx;			/* MTD_M_* or MTD_S_* */
	int from;
};

static void copy_fields(uint64_t *dst, uint32_t *have,
			const struct sys_field *f, size_t n,
			const struct mt_sysinfo *si, bool module)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (f[i].from == (module ? PROC : MODULE))
			continue;
		memcpy(&dst[f[i].idx], (const char *)si + f[i].off, 8);
		*have |= 1U << f[i].idx;
	}
}

/*
 * The system's memory (the module's summary, or /proc/meminfo and with it
 * SwapTotal; MemAvailable, which the module has not, /proc/meminfo's in
 * both, as the dashboard's used memory needs it) and counters, each
 * source's own.
 */
static void fill_system(struct mtd_sample *s, const struct mt_sysinfo *si,
			bool module)
{
#define F(field, idx, from) { offsetof(struct mt_sysinfo, field), idx, from }
	static const struct sys_field mems[] = {
		F(sum.mem_total, MTD_M_TOTAL, BOTH),
		F(sum.mem_free, MTD_M_FREE, BOTH),
		/* the module has none: /proc/meminfo's in both (the lib's) */
		F(mem_available, MTD_M_AVAILABLE, BOTH),
		F(sum.file_pages, MTD_M_FILE, BOTH),
		F(sum.anon_pages, MTD_M_ANON, BOTH),
		F(sum.shmem, MTD_M_SHMEM, BOTH),
		F(sum.mapped, MTD_M_MAPPED, BOTH),
		F(sum.dirty, MTD_M_DIRTY, BOTH),
		F(sum.writeback, MTD_M_WRITEBACK, BOTH),
		F(sum.slab_reclaimable, MTD_M_SLAB_RECLAIMABLE, BOTH),
		F(sum.slab_unreclaimable, MTD_M_SLAB_UNRECLAIMABLE, BOTH),
		F(sum.page_tables, MTD_M_PAGE_TABLES, BOTH),
		F(swap_total, MTD_M_SWAP_TOTAL, PROC),
		F(sum.swap_free, MTD_M_SWAP_FREE, BOTH),
	}, sys[] = {
		F(sum.page_allocs, MTD_S_PG_ALLOC, PROC),
		F(sum.page_frees, MTD_S_PG_FREE, PROC),
		F(sum.page_allocs, MTD_S_PG_ALLOC_CALLS, MODULE),
		F(sum.page_frees, MTD_S_PG_FREE_CALLS, MODULE),
		F(sum.kmallocs, MTD_S_KMALLOC, MODULE),
		F(sum.kfrees, MTD_S_KFREE, MODULE),
		F(sum.page_alloc_failures, MTD_S_PG_ALLOC_FAIL, MODULE),
		F(sum.direct_reclaim_stalls, MTD_S_RECLAIM_STALLS, BOTH),
		F(sum.direct_reclaim_ns, MTD_S_RECLAIM_NS, MODULE),
		F(sum.oom_kills, MTD_S_OOM_KILLS, BOTH),
		F(pgfault, MTD_S_MIN_FLT, PROC),
		F(pgmajfault, MTD_S_MAJ_FLT, PROC),
	};
#undef F
	const uint32_t faults = 1U << MTD_S_MIN_FLT | 1U << MTD_S_MAJ_FLT;

	copy_fields(s->mem, &s->mem_have, mems, MT_ARRAY_SIZE(mems), si, module);
	copy_fields(s->sys, &s->sys_have, sys, MT_ARRAY_SIZE(sys), si, module);
	/*
	 * vmstat's pgfault counts every fault, major ones too; a process's
	 * minflt does not.  Both lines come from one read, summed in one pass.
	 */
	if ((s->sys_have & faults) == faults) {
		uint64_t *min = &s->sys[MTD_S_MIN_FLT], maj = s->sys[MTD_S_MAJ_FLT];

		*min = *min > maj ? *min - maj : 0;
	}
}

/*
 * The source opened the module anew (reloaded under us: libmemtrack's
 * source recovers): say so once, and whether growth alerts survived
 * (joining its records again needs CAP_SYS_ADMIN, dropped by then).
 */
static void note_reopen(struct mtd_source *src)
{
	unsigned int n = mt_source_reopened(src->s);

	if (n == src->reopened)
		return;
	src->reopened = n;
	src->overruns = 0;
	mtn_log(LOG_WARNING, "memtrack.ko reloaded: reconnected%s",
		src->events && !mt_source_subscribed(src->s) ?
		"; no more RSS growth alerts until restarted" : "");
	src->events = mt_source_subscribed(src->s);
}

int mtd_source_sample(struct mtd_source *src, struct mtd_sample *s)
{
	struct memtrack_task *tasks;
	struct mt_sysinfo si;
	size_t n, i;
	int err;

	err = mt_source_sysinfo(src->s, &si);
	if (!err)
		err = mt_source_tasks(src->s, &tasks, &n);
	note_reopen(src);
	if (err)
		return err;
	mt_containers_next(src->containers);
	for (i = 0; i < n; i++) {
		struct mtd_proc *p = mtd_sample_add(s);

		if (!p) {
			free(tasks);
			return -ENOMEM;
		}
		fill_proc(p, &tasks[i], src->module);
		p->kthread = !src->kthreads && mt_task_is_kthread(&tasks[i]);
		if (!p->kthread)
			p->ct = mt_containers_find(src->containers,
						   tasks[i].cgroup_id);
	}
	free(tasks);
	s->ctr_have = 0;
	for (i = 0; i < MTD_NR_CTR; i++)
		if (src->module ||
		    (i < MEMTRACK_NR_COUNTERS && !mt_counter_needs_module(i)))
			s->ctr_have |= 1ULL << i;
	fill_system(s, &si, src->module);
	return 0;
}

int mtd_source_events_fd(struct mtd_source *src)
{
	return mt_source_events_fd(src->s);
}

struct event_ctx {
	struct mt_handle *h;
	struct mtd_state *st;
	struct mtn_buf *records;
};

static int on_record(const struct memtrack_rec_hdr *rec, void *arg)
{
	struct event_ctx *x = arg;
	struct memtrack_task t;

	if (x->records)
		mtn_buf_append(x->records, rec, rec->size);
	if (rec->type != MEMTRACK_REC_RSS_GROWTH)
		return 0;
	/* a process born since the last sample: ask for its comm */
	if (!mt_get_task(x->h, rec->tgid, false, &t)) {
		char comm[MEMTRACK_COMM_LEN];

		memcpy(comm, t.comm, MEMTRACK_COMM_LEN - 1);
		comm[MEMTRACK_COMM_LEN - 1] = 0;
		mtd_state_growth_alert(x->st, rec->tgid, comm);
	} else {
		mtd_state_growth_alert(x->st, rec->tgid, NULL);
	}
	return 0;
}

int mtd_source_read_events(struct mtd_source *src, struct mtd_state *st,
			   struct mtn_buf *records)
{
	struct event_ctx x = { mt_source_handle(src->s), st, records };
	uint64_t ov;
	int n;

	if (!src->events)
		return 0;
	n = mt_source_read_events(src->s, on_record, &x);
	ov = mt_events_overruns(x.h);
	mtd_state_add_overruns(st, ov - src->overruns);
	src->overruns = ov;
	return n < 0 ? n : 0;
}

const char *mtd_source_name(const struct mtd_source *src)
{
	return src->module ? "module" : "proc";
}

void mtd_source_close(struct mtd_source *src)
{
	if (!src)
		return;
	mt_source_close(src->s);
	mt_containers_free(src->containers);
	free(src);
}

static const int source_flags[] = {
	[MTN_SOURCE_AUTO] = MT_SOURCE_NO_CGROUP,
	[MTN_SOURCE_MODULE] = MT_SOURCE_MODULE,
	[MTN_SOURCE_PROC] = MT_SOURCE_PROC | MT_SOURCE_NO_CGROUP,
};

struct mtd_source *mtd_source_open(enum mtn_source_kind kind, bool kthreads,
				   bool containers, const char *rootfs,
				   char *err, size_t errlen)
{
	struct mtd_source *src = calloc(1, sizeof(*src));
	int e;

	if (!src) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	/* /proc mode reads each process's cgroup only for containers */
	src->s = mt_source_open(source_flags[kind] &
				~(containers ? MT_SOURCE_NO_CGROUP : 0));
	if (!src->s) {
		e = errno ? errno : ENOENT;
		snprintf(err, errlen, "memtrack.ko: %s", mt_errmsg());
		free(src);
		errno = e;
		return NULL;
	}
	if (containers) {
		src->containers = mt_containers_new(rootfs[0] ? rootfs : NULL);
		if (!src->containers) {
			snprintf(err, errlen, "out of memory");
			mt_source_close(src->s);
			free(src);
			errno = ENOMEM;
			return NULL;
		}
	}
	src->module = mt_source_is_module(src->s);
	src->kthreads = kthreads;
	/* the module in auto mode: why not, from mt_source_open() */
	if (!src->module && kind == MTN_SOURCE_AUTO)
		mtn_log(LOG_INFO, "memtrack.ko: %s; reading /proc instead",
			mt_errmsg());
	if (src->module) {
		e = mt_source_subscribe(src->s);
		if (e)
			mtn_log(LOG_WARNING, "no RSS growth alerts: %s",
				mt_errmsg());
		src->events = !e;
	}
	return src;
}
