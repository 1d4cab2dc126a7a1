// SPDX-License-Identifier: GPL-2.0
/*
 * What memtrackd exports on /metrics (and remote writes): the families of
 * the state, per program, per process, per container and the system's,
 * with the node's build and identity.  Families a source cannot give (the
 * /proc source has no kmalloc counts) are left out rather than shown as
 * zero.
 *
 * Apart from the exposition writer (expo.c), which knows the text format
 * and the sink and nothing of the state: a family is added here, the
 * format changed there, and the relay and remote write, which write their
 * own figures with the writer, need none of this.
 *
 * Names follow Prometheus's rules and node_exporter's and
 * process-exporter's habits: base units in the name (_bytes, _seconds),
 * _total on counters only, one family per quantity, so that the sum of a
 * family over any label means something (a system memory field each, not
 * one family with a type label summing to three times the RAM).  The same
 * quantity has the same name at each level: memtrack_X (the system),
 * memtrack_program_X (per comm), memtrack_process_X (per pid).  No node
 * label unless asked for (node_label): Prometheus adds the target's.
 *
 * A program or process in a container has container, pod and namespace
 * labels, cAdvisor's and kube-state-metrics' names for them, so that a
 * query joins ours with theirs; the host's have none.  Per container,
 * memtrack_container_X with those and container_id as kube-state-metrics
 * writes it (RUNTIME://ID).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libmemtrack.h"
#include "metrics.h"
#include "state.h"

static void comm_label(struct mtd_series *s, const char *comm)
{
	mtd_series_label(s, "comm", comm, strnlen(comm, MEMTRACK_COMM_LEN));
}

/* The labels of a place that has the name: none for the host's. */
static void where_labels(struct mtd_series *s, const char *container,
			 const char *pod, const char *ns)
{
	if (container[0])
		mtd_series_label(s, "container", container, strlen(container));
	if (pod[0])
		mtd_series_label(s, "pod", pod, strlen(pod));
	if (ns[0])
		mtd_series_label(s, "namespace", ns, strlen(ns));
}

static void prog_labels(struct mtd_series *s, const struct mtd_program *pr)
{
	comm_label(s, pr->comm);
	where_labels(s, pr->where.container, pr->where.pod, pr->where.ns);
}

/* Every program's labels, once (struct mtd_label_texts). */
static void prog_texts(struct mtd_label_texts *lt, const struct mtd_state *st,
		       const struct mtd_expo_opts *o)
{
	struct mtd_series s;
	size_t i;

	if (!mtd_texts_begin(lt, st->nprogs, o, &s))
		return;
	for (i = 0; i < st->nprogs; i++) {
		lt->off[i] = lt->text.len;
		prog_labels(&s, &st->progs[i]);
	}
	mtd_texts_end(lt, st->nprogs);
}

/* The labels of program i into s. */
static void prog_series(struct mtd_series *s, const struct mtd_state *st,
			const struct mtd_label_texts *lt, uint32_t i)
{
	if (lt->off)
		mtd_series_texts(s, lt, i);
	else
		prog_labels(s, &st->progs[i]);
}

static void proc_labels(struct mtd_series *s, const struct mtd_proc *p)
{
	const struct mt_container *c = p->ct;

	comm_label(s, p->comm);
	if (c)
		where_labels(s, c->id[0] ? c->name : "", c->pod, c->ns);
}

/* A series with no label but the node's. */
static void plain(struct mtn_buf *b, const char *name,
		  const struct mtd_expo_opts *o, uint64_t v, bool ns)
{
	struct mtd_series s;

	mtd_series_begin(&s, b, name, o);
	mtd_series_value(&s, v, ns);
}

/*
 * Memory of a program's live processes and of one process, the same
 * families under memtrack_program_ and memtrack_process_.
 */
enum size { Z_ANON, Z_FILE, Z_SHMEM, Z_SWAP, NR_SIZES };

static const struct {
	const char *name, *what;
} sizes[NR_SIZES] = {
	[Z_ANON] = { "rss_anon_bytes", "Resident anonymous memory (RssAnon)" },
	[Z_FILE] = { "rss_file_bytes", "Resident file-backed memory (RssFile)" },
	[Z_SHMEM] = { "rss_shmem_bytes", "Resident shared memory (RssShmem)" },
	[Z_SWAP] = { "swap_bytes", "Swapped-out memory (VmSwap)" },
};

static uint64_t prog_size(const struct mtd_program *pr, enum size z)
{
	switch (z) {
	case Z_ANON:	return pr->rss_anon;
	case Z_FILE:	return pr->rss_file;
	case Z_SHMEM:	return pr->rss_shmem;
	default:	return pr->swap;
	}
}

static uint64_t proc_size(const struct mtd_proc *p, enum size z)
{
	switch (z) {
	case Z_ANON:	return p->rss_anon;
	case Z_FILE:	return p->rss_file;
	case Z_SHMEM:	return p->rss_shmem;
	default:	return p->swap;
	}
}

/*
 * A family per per-task counter, built from the ABI's list
 * (linux/memtrack_counters.h: the family's name after "memtrack_program_",
 * its help and unit), then memtrackd's own.
 */
static const struct {
	const char *name, *help;
	enum memtrack_counter_unit unit;
} prog_ctrs[MTD_NR_CTR] = {
#define MEMTRACK_COUNTER(id, name, unit, metric, title, help)		\
	[MEMTRACK_CTR_##id] = { "memtrack_program_" metric, help,	\
				MEMTRACK_UNIT_##unit },
#include <linux/memtrack_counters.h>
#undef MEMTRACK_COUNTER
	[MTD_C_OOM_KILLS] = { "memtrack_program_oom_kills_total",
			      "Processes of the program chosen by the OOM killer.",
			      MEMTRACK_UNIT_COUNT },
};

/* The system's memory, a family per /proc/meminfo field. */
static const struct {
	const char *name, *help;
} mems[MTD_NR_MEM] = {
	[MTD_M_TOTAL] = { "memtrack_memory_total_bytes",
			  "Usable RAM (MemTotal)." },
	[MTD_M_FREE] = { "memtrack_memory_free_bytes",
			 "Unused RAM (MemFree)." },
	[MTD_M_AVAILABLE] = { "memtrack_memory_available_bytes",
			      "RAM available for new work without swapping (MemAvailable)." },
	[MTD_M_FILE] = { "memtrack_memory_file_bytes",
			 "Page cache (Cached + Buffers + SwapCached)." },
	[MTD_M_ANON] = { "memtrack_memory_anon_bytes",
			 "Anonymous memory mapped into user page tables (AnonPages)." },
	[MTD_M_SHMEM] = { "memtrack_memory_shmem_bytes",
			  "Shared memory and tmpfs (Shmem)." },
	[MTD_M_MAPPED] = { "memtrack_memory_mapped_bytes",
			   "Files mapped into memory (Mapped)." },
	[MTD_M_DIRTY] = { "memtrack_memory_dirty_bytes",
			  "Memory waiting to be written back (Dirty)." },
	[MTD_M_WRITEBACK] = { "memtrack_memory_writeback_bytes",
			      "Memory being written back (Writeback)." },
	[MTD_M_SLAB_RECLAIMABLE] = { "memtrack_memory_slab_reclaimable_bytes",
				     "Kernel slab memory that can be reclaimed (SReclaimable)." },
	[MTD_M_SLAB_UNRECLAIMABLE] = { "memtrack_memory_slab_unreclaimable_bytes",
				       "Kernel slab memory that cannot be reclaimed (SUnreclaim)." },
	[MTD_M_PAGE_TABLES] = { "memtrack_memory_page_tables_bytes",
				"Page tables (PageTables)." },
	[MTD_M_SWAP_TOTAL] = { "memtrack_memory_swap_total_bytes",
			       "Swap space (SwapTotal)." },
	[MTD_M_SWAP_FREE] = { "memtrack_memory_swap_free_bytes",
			      "Unused swap space (SwapFree)." },
};

static const struct {
	const char *name, *help;
	bool ns;
} sys_ctrs[MTD_NR_SYSCTR] = {
	[MTD_S_PG_ALLOC] = { "memtrack_pages_allocated_total",
			     "Pages allocated (vmstat pgalloc_*, 2^order per allocation)." },
	[MTD_S_PG_FREE] = { "memtrack_pages_freed_total",
			    "Pages freed (vmstat pgfree)." },
	[MTD_S_PG_ALLOC_CALLS] = { "memtrack_page_alloc_calls_total",
				   "Page allocations, of any order." },
	[MTD_S_PG_FREE_CALLS] = { "memtrack_page_free_calls_total",
				  "Page frees, of any order." },
	[MTD_S_KMALLOC] = { "memtrack_kmalloc_calls_total",
			    "Kernel heap allocations." },
	[MTD_S_KFREE] = { "memtrack_kfree_calls_total", "Kernel heap frees." },
	[MTD_S_PG_ALLOC_FAIL] = { "memtrack_page_alloc_failures_total",
				  "Failed page allocations." },
	[MTD_S_RECLAIM_STALLS] = { "memtrack_reclaim_stalls_total",
				   "Direct-reclaim stalls." },
	[MTD_S_RECLAIM_NS] = { "memtrack_reclaim_stall_seconds_total",
			       "Time spent in direct reclaim.", true },
	[MTD_S_OOM_KILLS] = { "memtrack_oom_kills_total", "OOM killer victims." },
	[MTD_S_MIN_FLT] = { "memtrack_minor_page_faults_total",
			    "Minor page faults (vmstat pgfault - pgmajfault)." },
	[MTD_S_MAJ_FLT] = { "memtrack_major_page_faults_total",
			    "Major page faults (vmstat pgmajfault)." },
};

static void programs(const struct mtd_state *st, const struct mtd_expo_opts *o,
		     const struct mtd_label_texts *lt, struct mtn_buf *b)
{
	struct mtd_series s;
	char name[64], help[160];
	size_t i;
	int z, c;

	/* gauges: only programs with live processes */
	mtd_family(b, "memtrack_program_processes", "gauge",
		   "Live processes of the program (comm).");
	for (i = 0; i < st->nprogs; i++) {
		uint32_t k = st->order[i];

		if (!st->progs[k].nproc)
			continue;
		mtd_series_begin(&s, b, "memtrack_program_processes", o);
		prog_series(&s, st, lt, k);
		mtd_series_value(&s, st->progs[k].nproc, false);
	}
	for (z = 0; z < NR_SIZES; z++) {
		snprintf(name, sizeof(name), "memtrack_program_%s",
			 sizes[z].name);
		snprintf(help, sizeof(help), "%s of the program's live processes.",
			 sizes[z].what);
		mtd_family(b, name, "gauge", help);
		for (i = 0; i < st->nprogs; i++) {
			uint32_t k = st->order[i];

			if (!st->progs[k].nproc)
				continue;
			mtd_series_begin(&s, b, name, o);
			prog_series(&s, st, lt, k);
			mtd_series_value(&s, prog_size(&st->progs[k], z), false);
		}
	}
	/* counters: every program remembered, processes or not */
	for (c = 0; c < MTD_NR_CTR; c++) {
		enum memtrack_counter_unit unit = prog_ctrs[c].unit;

		if (!(st->cur.ctr_have & (1ULL << c)))
			continue;
		mtd_family(b, prog_ctrs[c].name,
			   unit == MEMTRACK_UNIT_NET_BYTES ? "gauge" : "counter",
			   prog_ctrs[c].help);
		for (i = 0; i < st->nprogs; i++) {
			const struct mtd_program *pr = &st->progs[st->order[i]];
			uint64_t v = pr->retired[c] + pr->live[c];

			mtd_series_begin(&s, b, prog_ctrs[c].name, o);
			prog_series(&s, st, lt, st->order[i]);
			if (unit == MEMTRACK_UNIT_NET_BYTES)
				mtd_series_signed(&s, (int64_t)v);
			else
				mtd_series_value(&s, v, unit == MEMTRACK_UNIT_NS);
		}
	}
}

static int cmp_rss_desc(const void *a, const void *b)
{
	const struct mtd_proc *x = *(const struct mtd_proc *const *)a;
	const struct mtd_proc *y = *(const struct mtd_proc *const *)b;
	uint64_t rx = x->rss_anon + x->rss_file + x->rss_shmem;
	uint64_t ry = y->rss_anon + y->rss_file + y->rss_shmem;

	if (rx != ry)
		return rx > ry ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The top-N processes by RSS, one series each: bounded by N. */
static int top_pids(const struct mtd_state *st, const struct mtd_expo_opts *o,
		    struct mtn_buf *b)
{
	const struct mtd_proc **v;
	struct mtd_series s;
	char name[64], help[160], pid[16];
	size_t i, n = 0;
	int z;

	v = malloc((st->cur.nr ? st->cur.nr : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < st->cur.nr; i++)
		if (!st->cur.procs[i].exited && !st->cur.procs[i].kthread)
			v[n++] = &st->cur.procs[i];
	qsort(v, n, sizeof(*v), cmp_rss_desc);
	if (n > o->top_pids)
		n = o->top_pids;
	for (z = 0; z < NR_SIZES; z++) {
		snprintf(name, sizeof(name), "memtrack_process_%s",
			 sizes[z].name);
		snprintf(help, sizeof(help),
			 "%s of the process; the top_pids largest by RSS.",
			 sizes[z].what);
		mtd_family(b, name, "gauge", help);
		for (i = 0; i < n; i++) {
			mtd_series_begin(&s, b, name, o);
			snprintf(pid, sizeof(pid), "%d", v[i]->pid);
			mtd_series_label(&s, "pid", pid, strlen(pid));
			proc_labels(&s, v[i]);
			mtd_series_value(&s, proc_size(v[i], z), false);
		}
	}
	free(v);
	return 0;
}

/* A live container's sums: processes, then each size. */
struct ct_sum {
	const struct mt_container *c;
	uint64_t v[NR_SIZES + 1];
};

static int cmp_container(const void *a, const void *b)
{
	const struct mt_container *x = ((const struct ct_sum *)a)->c;
	const struct mt_container *y = ((const struct ct_sum *)b)->c;

	if (x->runtime != y->runtime)
		return (int)x->runtime - (int)y->runtime;
	return strcmp(x->id, y->id);
}

/*
 * The live containers' sums, in one pass over the processes: a
 * container's processes share its cache entry, so its address is the key
 * (an open-addressed table, kept at most half full).  Sorted by runtime
 * and ID, as the series go out.  *out NULL and 0 without memory.
 */
static size_t container_sums(const struct mtd_state *st, struct ct_sum **out)
{
	struct ct_sum *t = NULL, *nt, *v;
	size_t cap = 0, n = 0, i, j, h;

	*out = NULL;
	for (i = 0; i < st->cur.nr; i++) {
		const struct mtd_proc *p = &st->cur.procs[i];

		if (p->exited || p->kthread || !p->ct || !p->ct->id[0])
			continue;
		if (2 * (n + 1) > cap) {
			size_t ncap = cap ? 2 * cap : 64;

			nt = calloc(ncap, sizeof(*nt));
			if (!nt) {
				free(t);
				return 0;
			}
			for (j = 0; j < cap; j++) {
				if (!t[j].c)
					continue;
				h = ((uintptr_t)t[j].c >> 4) & (ncap - 1);
				while (nt[h].c)
					h = (h + 1) & (ncap - 1);
				nt[h] = t[j];
			}
			free(t);
			t = nt;
			cap = ncap;
		}
		h = ((uintptr_t)p->ct >> 4) & (cap - 1);
		while (t[h].c && t[h].c != p->ct)
			h = (h + 1) & (cap - 1);
		if (!t[h].c) {
			t[h].c = p->ct;
			n++;
		}
		t[h].v[NR_SIZES]++;
		t[h].v[Z_ANON] += p->rss_anon;
		t[h].v[Z_FILE] += p->rss_file;
		t[h].v[Z_SHMEM] += p->rss_shmem;
		t[h].v[Z_SWAP] += p->swap;
	}
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v) {
		free(t);
		return 0;
	}
	for (i = 0, j = 0; i < cap; i++)
		if (t[i].c)
			v[j++] = t[i];
	free(t);
	qsort(v, n, sizeof(*v), cmp_container);
	*out = v;
	return n;
}

/* A container's labels: its names and container_id (RUNTIME://ID). */
static void container_labels(struct mtd_series *s, const struct mt_container *c)
{
	char cid[128];

	where_labels(s, c->name, c->pod, c->ns);
	snprintf(cid, sizeof(cid), "%s://%s", mt_runtime_name(c->runtime),
		 c->id);
	mtd_series_label(s, "container_id", cid, strlen(cid));
}

/* memtrack_container_processes and sizes: bounded by the live containers. */
static int containers(const struct mtd_state *st,
		      const struct mtd_expo_opts *o, struct mtn_buf *b)
{
	struct mtd_label_texts lt;
	struct mtd_series s;
	struct ct_sum *v;
	char name[64], help[160];
	size_t i, n;
	int z;

	n = container_sums(st, &v);
	if (!v)
		return -ENOMEM;
	if (mtd_texts_begin(&lt, n, o, &s)) {
		for (i = 0; i < n; i++) {
			lt.off[i] = lt.text.len;
			container_labels(&s, v[i].c);
		}
		mtd_texts_end(&lt, n);
	}
	/* the families even without a container: a dashboard's queries of
	 * them stay valid on any node */
	for (z = -1; z < NR_SIZES; z++) {
		int k = z < 0 ? NR_SIZES : z;

		if (z < 0) {
			snprintf(name, sizeof(name),
				 "memtrack_container_processes");
			snprintf(help, sizeof(help),
				 "Live processes of the container.");
		} else {
			snprintf(name, sizeof(name), "memtrack_container_%s",
				 sizes[z].name);
			snprintf(help, sizeof(help),
				 "%s of the container's live processes.",
				 sizes[z].what);
		}
		mtd_family(b, name, "gauge", help);
		for (i = 0; i < n; i++) {
			mtd_series_begin(&s, b, name, o);
			if (lt.off)
				mtd_series_texts(&s, &lt, i);
			else
				container_labels(&s, v[i].c);
			mtd_series_value(&s, v[i].v[k], false);
		}
	}
	mtd_texts_free(&lt);
	free(v);
	return 0;
}

/*
 * The node's identity, as node_exporter's node_uname_info gives it: a
 * scraped node's series carry only instance and job, so a dashboard or a
 * query joins this on instance to name the node; a remote-written one's
 * node label has the same name as nodename.  Where the figures come from
 * is the running daemon's state, not its build's.
 */
static void node_info(struct mtn_buf *b, const struct mtd_expo_opts *o)
{
	const struct mtd_label l[] = {
		{ "nodename", o->nodename }, { "machine", o->machine },
		{ "release", o->release }, { "source", o->source },
	};
	struct mtd_series s;
	size_t i;

	mtd_family(b, "memtrack_node_info", "gauge",
		   "Always 1: the node's name, machine and kernel release (uname), and where the figures come from (module or proc).");
	mtd_series_begin(&s, b, "memtrack_node_info", o);
	for (i = 0; i < MT_ARRAY_SIZE(l); i++)
		mtd_series_label(&s, l[i].name, l[i].value ? l[i].value : "",
				 l[i].value ? strlen(l[i].value) : 0);
	mtd_series_value(&s, 1, false);
}

int mtd_metrics_format(const struct mtd_state *st,
		       const struct mtd_expo_opts *o, struct mtn_buf *b)
{
	const struct mtd_sample *smp = &st->cur;
	struct mtd_label_texts lt;
	struct mtd_series s;
	size_t i;
	int k;

	mtd_family(b, "memtrack_build_info", "gauge",
		   "Always 1: the build of memtrackd (its version).");
	mtd_series_begin(&s, b, "memtrack_build_info", o);
	mtd_series_label(&s, "version", MEMTRACK_VERSION,
			 strlen(MEMTRACK_VERSION));
	mtd_series_value(&s, 1, false);
	node_info(b, o);

	prog_texts(&lt, st, o);
	programs(st, o, &lt, b);
	if (o->containers && containers(st, o, b)) {
		mtd_texts_free(&lt);
		return -ENOMEM;
	}

	for (k = 0; k < MTD_NR_MEM; k++) {
		if (!(smp->mem_have & (1U << k)))
			continue;
		mtd_family(b, mems[k].name, "gauge", mems[k].help);
		plain(b, mems[k].name, o, smp->mem[k], false);
	}
	for (k = 0; k < MTD_NR_SYSCTR; k++) {
		if (!(smp->sys_have & (1U << k)))
			continue;
		mtd_family(b, sys_ctrs[k].name, "counter", sys_ctrs[k].help);
		plain(b, sys_ctrs[k].name, o, smp->sys[k], sys_ctrs[k].ns);
	}
	if (st->events) {
		mtd_family(b, "memtrack_rss_growth_alerts_total", "counter",
			   "RSS growth alerts of the module (rss_alert_kb, rss_growth_kbps).");
		plain(b, "memtrack_rss_growth_alerts_total", o,
		      st->growth_alerts, false);
		mtd_family(b, "memtrack_program_rss_growth_alerts_total",
			   "counter", "RSS growth alerts of the program's processes.");
		for (i = 0; i < st->nprogs; i++) {
			uint32_t n = st->order[i];

			mtd_series_begin(&s, b,
					 "memtrack_program_rss_growth_alerts_total",
					 o);
			prog_series(&s, st, &lt, n);
			mtd_series_value(&s, st->progs[n].growth_alerts, false);
		}
		mtd_family(b, "memtrack_event_overruns_total", "counter",
			   "Times the daemon's event socket overflowed (records lost, number unknown).");
		plain(b, "memtrack_event_overruns_total", o, st->overruns,
		      false);
	}
	mtd_texts_free(&lt);
	if (o->top_pids && top_pids(st, o, b))
		return -ENOMEM;
	return b->oom ? -ENOMEM : 0;
}