// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's process table: one sample of every live process from the
 * data source, with per-second rates from the previous sample and RSS
 * growth over a window of samples kept per process.
 */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "top.h"

/* What we remember of a process between samples. */
struct top_hist {
	pid_t pid;
	uint64_t start_ns;		/* tells a reused pid apart */
	uint64_t min_flt, maj_flt, pg_alloc, kmalloc, cpu_ns;
	bool growing;			/* flagged at that sample */
	unsigned int n;			/* samples in the window */
	double when[TOP_WINDOW];	/* oldest first */
	uint64_t rss[TOP_WINDOW];
};

static double monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void top_table_init(struct top_table *tb, struct mt_source *src)
{
	memset(tb, 0, sizeof(*tb));
	tb->src = src;
}

void top_table_free(struct top_table *tb)
{
	top_cgroups_free(&tb->cgroups);
	free(tb->rows);
	free(tb->hist);
	tb->rows = NULL;
	tb->hist = NULL;
	tb->n = tb->nhist = 0;
}

/* User names change rarely and getpwuid() can be slow: cache the last few. */
static void user_name(uid_t uid, char *buf, size_t len)
{
	static struct { uid_t uid; char name[32]; bool used; } cache[64];
	struct passwd *pw;
	unsigned int slot = uid % 64;

	if (cache[slot].used && cache[slot].uid == uid) {
		snprintf(buf, len, "%s", cache[slot].name);
		return;
	}
	pw = getpwuid(uid);
	if (pw)
		snprintf(cache[slot].name, sizeof(cache[slot].name), "%s",
			 pw->pw_name);
	else
		snprintf(cache[slot].name, sizeof(cache[slot].name), "%u", uid);
	cache[slot].uid = uid;
	cache[slot].used = true;
	snprintf(buf, len, "%s", cache[slot].name);
}

static void cgroup_of(const struct top_cgroups *cg, struct top_row *r)
{
	const struct top_cgroup *c = top_cgroup_find(cg, r->t.cgroup_id);

	snprintf(r->cgroup, sizeof(r->cgroup), "%s", c ? c->path : "-");
	r->cg_max = c ? c->max : 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = ((const struct top_row *)a)->t.pid;
	pid_t y = ((const struct top_row *)b)->t.pid;

	return (x > y) - (x < y);
}

static struct top_hist *find_hist(struct top_table *tb, pid_t pid)
{
	size_t lo = 0, hi = tb->nhist, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (tb->hist[mid].pid == pid)
			return &tb->hist[mid];
		if (tb->hist[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static double rate(uint64_t now, uint64_t before, double dt)
{
	return dt > 0 && now >= before ? (now - before) / dt : 0;
}

/* Rates against old (NULL: first sample of this process), then h = now. */
static void update_row(struct top_row *r, const struct top_hist *old,
		       struct top_hist *h, double now)
{
	const struct memtrack_task *t = &r->t;
	double dt = old && old->n ? now - old->when[old->n - 1] : 0;
	unsigned int i;

	memset(h, 0, sizeof(*h));
	h->pid = t->pid;
	h->start_ns = t->start_ns;
	h->min_flt = t->counters[MEMTRACK_CTR_MIN_FLT];
	h->maj_flt = t->counters[MEMTRACK_CTR_MAJ_FLT];
	h->pg_alloc = t->counters[MEMTRACK_CTR_PG_ALLOC];
	h->kmalloc = t->counters[MEMTRACK_CTR_KMALLOC_CALLS];
	h->cpu_ns = t->utime_ns + t->stime_ns;
	if (old) {
		r->cpu_pct = rate(h->cpu_ns, old->cpu_ns, dt) / 1e7;
		r->minflt_rate = rate(h->min_flt, old->min_flt, dt);
		r->majflt_rate = rate(h->maj_flt, old->maj_flt, dt);
		r->pgalloc_rate = rate(h->pg_alloc, old->pg_alloc, dt);
		r->kmalloc_rate = rate(h->kmalloc, old->kmalloc, dt);
		/* Slide the window: drop the oldest when full. */
		i = old->n == TOP_WINDOW ? 1 : 0;
		h->n = old->n - i;
		memcpy(h->when, old->when + i, h->n * sizeof(h->when[0]));
		memcpy(h->rss, old->rss + i, h->n * sizeof(h->rss[0]));
	}
	h->when[h->n] = now;
	h->rss[h->n++] = top_rss(t);
	r->rss_growth = (int64_t)(h->rss[h->n - 1] - h->rss[0]);
	if (h->n > 1)
		r->growth_rate = r->rss_growth / (h->when[h->n - 1] - h->when[0]);
	r->growing = h->n > TOP_GROWTH_MIN;
	for (i = 1; i < h->n && r->growing; i++)
		r->growing = h->rss[i] > h->rss[i - 1];
	r->growth_new = r->growing && !(old && old->growing);
	h->growing = r->growing;
}

int top_table_refresh(struct top_table *tb)
{
	struct memtrack_task *tasks;
	struct top_hist *hist, *old;
	struct top_row *rows;
	size_t n, i, k = 0;
	double now;
	int err;

	err = mt_source_sysinfo(tb->src, &tb->si);
	if (err)
		return err;
	err = mt_source_tasks(tb->src, &tasks, &n);
	if (err)
		return err;
	err = top_cgroups_scan(&tb->cgroups);
	if (err) {
		free(tasks);
		return err;
	}
	now = monotonic();
	rows = calloc(n ? n : 1, sizeof(*rows));
	hist = calloc(n ? n : 1, sizeof(*hist));
	if (!rows || !hist) {
		free(tasks);
		free(rows);
		free(hist);
		return -ENOMEM;
	}
	/* Live processes only, as top shows them. */
	for (i = 0; i < n; i++)
		if (!tasks[i].exited)
			rows[k++].t = tasks[i];
	free(tasks);
	qsort(rows, k, sizeof(*rows), cmp_pid);
	for (i = 0; i < k; i++) {
		old = find_hist(tb, rows[i].t.pid);
		if (old && old->start_ns != rows[i].t.start_ns)
			old = NULL;
		update_row(&rows[i], old, &hist[i], now);
		user_name(rows[i].t.uid, rows[i].user, sizeof(rows[i].user));
		cgroup_of(&tb->cgroups, &rows[i]);
	}
	tb->interval = tb->nhist || tb->n ? now - tb->now : 0;
	free(tb->rows);
	free(tb->hist);
	tb->rows = rows;
	tb->n = k;
	tb->hist = hist;
	tb->nhist = k;
	tb->now = now;
	return 0;
}

static enum top_sort sort_by;

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int cmp_dbl(double a, double b)
{
	return (a > b) - (a < b);
}

/* Largest first, then by pid so that the order is stable. */
static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	const struct memtrack_task *s = &x->t, *t = &y->t;
	int c = 0;

	switch (sort_by) {
	case TOP_SORT_RSS:
		c = cmp_u64(top_rss(t), top_rss(s));
		break;
	case TOP_SORT_CPU:
		c = cmp_dbl(y->cpu_pct, x->cpu_pct);
		break;
	case TOP_SORT_TIME:
		c = cmp_u64(t->utime_ns + t->stime_ns, s->utime_ns + s->stime_ns);
		break;
	case TOP_SORT_GROWTH:
		c = (y->rss_growth > x->rss_growth) -
		    (y->rss_growth < x->rss_growth);
		break;
	case TOP_SORT_ANON:
		c = cmp_u64(t->mm.rss_anon, s->mm.rss_anon);
		break;
	case TOP_SORT_FILE:
		c = cmp_u64(t->mm.rss_file, s->mm.rss_file);
		break;
	case TOP_SORT_SHMEM:
		c = cmp_u64(t->mm.rss_shmem, s->mm.rss_shmem);
		break;
	case TOP_SORT_SWAP:
		c = cmp_u64(t->mm.swap, s->mm.swap);
		break;
	case TOP_SORT_VIRT:
		c = cmp_u64(t->mm.vm_total, s->mm.vm_total);
		break;
	case TOP_SORT_MINFLT:
		c = cmp_dbl(y->minflt_rate, x->minflt_rate);
		break;
	case TOP_SORT_MAJFLT:
		c = cmp_dbl(y->majflt_rate, x->majflt_rate);
		break;
	case TOP_SORT_PGALLOC:
		c = cmp_dbl(y->pgalloc_rate, x->pgalloc_rate);
		break;
	case TOP_SORT_KMALLOC:
		c = cmp_dbl(y->kmalloc_rate, x->kmalloc_rate);
		break;
	case TOP_SORT_PID:
	case TOP_SORT_NONE:
		break;
	}
	return c ? c : (s->pid > t->pid) - (s->pid < t->pid);
}

void top_rows_sort(struct top_row *rows, size_t n, enum top_sort by,
		   bool reverse)
{
	struct top_row tmp;
	size_t i;

	sort_by = by;
	qsort(rows, n, sizeof(*rows), cmp_rows);
	for (i = 0; reverse && i < n / 2; i++) {
		tmp = rows[i];
		rows[i] = rows[n - 1 - i];
		rows[n - 1 - i] = tmp;
	}
}

void top_table_sort(struct top_table *tb, enum top_sort by, bool reverse)
{
	top_rows_sort(tb->rows, tb->n, by, reverse);
}
