// SPDX-License-Identifier: GPL-2.0
/*
 * Per-program (comm) state across samples.
 *
 * Memory sizes are gauges: the sum over a program's live processes now.
 * Event counts are exported as Prometheus counters, which must never go
 * down, but a program's processes exit and take their counts with them.  So
 * every process is followed from sample to sample (by pid, plus the start
 * time in /proc mode and the module's exited flag) and its counts go into
 * its program's "retired" total when it disappears, or when it execs into
 * another comm (what it did so far stays with the old one).  A program's
 * counter = retired + what its live processes did while under its name.
 * What a process did between its last sample and its exit is lost in /proc
 * mode; the module keeps exited processes for retention_ms, so with a
 * sample interval shorter than that, nothing is lost.  A process first seen
 * at an existing pid with lower counts is a new process (pid reuse).
 *
 * A program is forgotten ttl_ms after its last row (live or, with the
 * module, exited) left the samples, its counters with it: the series
 * disappear, and a process of that comm later starts them again from 0,
 * which Prometheus takes for a counter reset (process-exporter does the
 * same).  At most max_programs are remembered; later ones are counted as
 * MTD_OTHER_COMM, so the series stay bounded.
 *
 * Kernel threads, when the source marks them, are followed like any
 * process (so that a process is judged once, by its first row) but belong
 * to no program.
 *
 * A program is a comm in one place (struct mtd_where): the host, or a
 * container of a pod.  Its place's names are copied in: its series keep
 * their labels after the container is gone, until the program expires.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libmemtrack.h"
#include "grow.h"
#include "frame_io.h"
#include "state.h"

struct mtd_state *mtd_state_new(unsigned int max_programs,
				unsigned int ttl_ms)
{
	struct mtd_state *st = calloc(1, sizeof(*st));

	if (st) {
		st->max_programs = max_programs;
		st->ttl_ms = ttl_ms;
	}
	return st;
}

void mtd_state_free(struct mtd_state *st)
{
	if (!st)
		return;
	mtd_sample_free(&st->cur);
	free(st->progs);
	free(st->order);
	free(st->pids);
	free(st);
}

void mtd_sample_free(struct mtd_sample *s)
{
	free(s->procs);
	memset(s, 0, sizeof(*s));
}

struct mtd_proc *mtd_sample_add(struct mtd_sample *s)
{
	struct mtd_proc *p;

	if (mt_grow((void **)&s->procs, &s->cap, s->nr + 1, sizeof(*p), 1024))
		return NULL;
	p = &s->procs[s->nr++];
	memset(p, 0, sizeof(*p));
	return p;
}

static int cmp_comm(const char *a, const char *b)
{
	return strncmp(a, b, MEMTRACK_COMM_LEN);
}

/* Programs in order of comm, then namespace, pod and container. */
static int cmp_prog(const struct mtd_program *p, const char *comm,
		    const struct mtd_where *w)
{
	int c = cmp_comm(p->comm, comm);

	if (!c)
		c = strcmp(p->where.ns, w->ns);
	if (!c)
		c = strcmp(p->where.pod, w->pod);
	if (!c)
		c = strcmp(p->where.container, w->container);
	return c;
}

/* The names of a process's place: its container's, or none. */
static void where_of(const struct mt_container *ct, struct mtd_where *w)
{
	memset(w, 0, sizeof(*w));
	if (!ct)
		return;
	if (ct->id[0])
		snprintf(w->container, sizeof(w->container), "%s", ct->name);
	snprintf(w->pod, sizeof(w->pod), "%s", ct->pod);
	snprintf(w->ns, sizeof(w->ns), "%s", ct->ns);
}

/* Index in st->order where (comm, w) is, or would go. */
static size_t order_pos(const struct mtd_state *st, const char *comm,
			const struct mtd_where *w, bool *found)
{
	size_t lo = 0, hi = st->nprogs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp_prog(&st->progs[st->order[mid]], comm, w);

		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* The program of this comm in w (NULL: the host), created if new; -ENOMEM. */
static int program_of(struct mtd_state *st, const char *comm,
		      const struct mtd_where *w)
{
	static const struct mtd_where host;
	bool found;
	size_t pos;

	if (!w)
		w = &host;
	pos = order_pos(st, comm, w, &found);
	if (found)
		return st->order[pos];
	if (st->nprogs >= st->max_programs &&
	    (cmp_comm(comm, MTD_OTHER_COMM) || w != &host))
		return program_of(st, MTD_OTHER_COMM, NULL);
	if (st->nprogs == st->progs_cap) {
		/* two arrays of one capacity: the smaller if one grew alone */
		size_t pc = st->progs_cap, oc = st->progs_cap;

		if (mt_grow((void **)&st->progs, &pc, st->nprogs + 1,
			    sizeof(*st->progs), 256) ||
		    mt_grow((void **)&st->order, &oc, st->nprogs + 1,
			    sizeof(*st->order), 256))
			return -ENOMEM;
		st->progs_cap = pc < oc ? pc : oc;
	}
	memset(&st->progs[st->nprogs], 0, sizeof(st->progs[0]));
	strncpy(st->progs[st->nprogs].comm, comm, MEMTRACK_COMM_LEN - 1);
	st->progs[st->nprogs].where = *w;
	st->progs[st->nprogs].seen_ms = mt_mono_ms();
	memmove(&st->order[pos + 1], &st->order[pos],
		(st->nprogs - pos) * sizeof(*st->order));
	st->order[pos] = st->nprogs;
	return st->nprogs++;
}

static void retire(struct mtd_state *st, const struct mtd_pid *e)
{
	struct mtd_program *pr;
	int i;

	if (e->prog == MTD_NO_PROG)
		return;
	pr = &st->progs[e->prog];
	for (i = 0; i < MTD_NR_CTR; i++)
		pr->retired[i] += e->last[i] - e->base[i];
}

/* Pid order; within a pid, exited rows (the older process) first. */
static int cmp_proc(const void *a, const void *b)
{
	const struct mtd_proc *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (int)y->exited - (int)x->exited;
}

/* Can row p be the same process as entry e, seen a sample ago? */
static bool same_process(const struct mtd_state *st, const struct mtd_pid *e,
			 const struct mtd_proc *p, uint64_t have)
{
	int i;

	(void)st;
	if (e->start != p->start || (e->exited && !p->exited))
		return false;
	/* a count that went down is another process's; a net size may */
	for (i = 0; i < MTD_NR_CTR; i++)
		if ((have & (1ULL << i)) && p->ctr[i] < e->last[i] &&
		    !mt_counter_signed(i))
			return false;
	return true;
}

/*
 * Forget the programs no row has named for ttl_ms; the rest keep their
 * order, and the followed processes their programs' new indices.
 */
static void expire(struct mtd_state *st, int64_t now)
{
	size_t i, n = 0, k = 0;
	uint32_t *map;

	if (!st->ttl_ms)
		return;
	for (i = 0; i < st->nprogs; i++)
		if (now - st->progs[i].seen_ms > st->ttl_ms)
			break;
	if (i == st->nprogs)
		return;
	map = malloc(st->nprogs * sizeof(*map));
	if (!map)
		return;		/* the next sample tries again */
	for (i = 0; i < st->nprogs; i++) {
		if (now - st->progs[i].seen_ms > st->ttl_ms) {
			map[i] = MTD_NO_PROG;
			continue;
		}
		map[i] = n;
		st->progs[n++] = st->progs[i];
	}
	for (i = 0; i < st->nprogs; i++)
		if (map[st->order[i]] != MTD_NO_PROG)
			st->order[k++] = map[st->order[i]];
	/* every followed process is in this sample: its program is not gone */
	for (i = 0; i < st->npids; i++)
		if (st->pids[i].prog != MTD_NO_PROG)
			st->pids[i].prog = map[st->pids[i].prog];
	st->nprogs = n;
	free(map);
}

int mtd_state_update(struct mtd_state *st, struct mtd_sample *s)
{
	struct mtd_pid *old = st->pids, *new;
	size_t nold = st->npids, i = 0, k, n = 0;
	int64_t now = mt_mono_ms();
	int c;

	qsort(s->procs, s->nr, sizeof(*s->procs), cmp_proc);
	new = calloc(s->nr ? s->nr : 1, sizeof(*new));
	if (!new)
		return -ENOMEM;
	for (k = 0; k < s->nr; k++) {
		struct mtd_proc *p = &s->procs[k];
		struct mtd_pid *e = &new[n], *match = NULL;
		uint32_t prog = MTD_NO_PROG;
		size_t j;

		/* Old entries of lower pids are gone. */
		for (; i < nold && old[i].pid < p->pid; i++)
			if (!old[i].consumed)
				retire(st, &old[i]);
		for (j = i; j < nold && old[j].pid == p->pid; j++)
			if (!old[j].consumed &&
			    same_process(st, &old[j], p, s->ctr_have)) {
				match = &old[j];
				break;
			}
		/* a kernel thread or not, as the process's first row said */
		if (match)
			p->kthread = match->kthread;
		if (!p->kthread && match && match->prog != MTD_NO_PROG &&
		    match->ct == p->ct &&
		    !cmp_comm(st->progs[match->prog].comm, p->comm)) {
			prog = match->prog;
		} else if (!p->kthread) {
			struct mtd_where w;
			int r;

			where_of(p->ct, &w);
			r = program_of(st, p->comm, &w);

			if (r < 0) {
				free(new);
				return r;
			}
			prog = r;
		}
		if (match) {
			match->consumed = true;
			*e = *match;
			e->consumed = false;
			if (prog != e->prog) {
				/* exec: what it did so far stays behind */
				retire(st, e);
				memcpy(e->base, e->last, sizeof(e->base));
				e->prog = prog;
			}
		} else {
			memset(e, 0, sizeof(*e));
			e->pid = p->pid;
			e->start = p->start;
			e->prog = prog;
			e->kthread = p->kthread;
		}
		e->exited = p->exited;
		e->ct = p->ct;
		memcpy(e->last, p->ctr, sizeof(e->last));
		n++;
	}
	for (; i < nold; i++)
		if (!old[i].consumed)
			retire(st, &old[i]);
	free(old);
	st->pids = new;
	st->npids = n;

	/* Live sums: gauges, and counts not yet retired. */
	for (k = 0; k < st->nprogs; k++) {
		struct mtd_program *pr = &st->progs[k];

		memset(pr->live, 0, sizeof(pr->live));
		pr->rss_anon = pr->rss_file = pr->rss_shmem = pr->swap = 0;
		pr->nproc = 0;
	}
	for (k = 0; k < n; k++) {
		const struct mtd_proc *p = &s->procs[k];
		struct mtd_program *pr;

		if (new[k].prog == MTD_NO_PROG)
			continue;
		pr = &st->progs[new[k].prog];
		pr->seen_ms = now;
		for (c = 0; c < MTD_NR_CTR; c++)
			pr->live[c] += new[k].last[c] - new[k].base[c];
		if (p->exited)
			continue;
		pr->rss_anon += p->rss_anon;
		pr->rss_file += p->rss_file;
		pr->rss_shmem += p->rss_shmem;
		pr->swap += p->swap;
		pr->nproc++;
	}
	expire(st, now);
	mtd_sample_free(&st->cur);
	st->cur = *s;
	memset(s, 0, sizeof(*s));
	st->have_sample = true;
	return 0;
}

static const struct mtd_pid *find_pid(const struct mtd_state *st, int32_t pid)
{
	size_t lo = 0, hi = st->npids;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (st->pids[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* exited rows come first: prefer the live process */
	for (; lo < st->npids && st->pids[lo].pid == pid; lo++)
		if (!st->pids[lo].exited ||
		    lo + 1 == st->npids || st->pids[lo + 1].pid != pid)
			return &st->pids[lo];
	return NULL;
}

void mtd_state_growth_alert(struct mtd_state *st, int32_t tgid,
			    const char *comm)
{
	const struct mtd_pid *e;
	int prog;

	st->growth_alerts++;
	/* the process's program when it is followed (in its container);
	 * one born since the last sample: its comm on the host's */
	e = find_pid(st, tgid);
	if (e && e->prog != MTD_NO_PROG)
		prog = e->prog;
	else
		prog = program_of(st, comm ? comm : MTD_UNKNOWN_COMM, NULL);
	if (prog >= 0) {
		st->progs[prog].growth_alerts++;
		st->progs[prog].seen_ms = mt_mono_ms();
	}
}

void mtd_state_add_overruns(struct mtd_state *st, uint64_t n)
{
	st->overruns += n;
}
