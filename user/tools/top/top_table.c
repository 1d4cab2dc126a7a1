// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's process table: one sample of every live process from the
 * data source, with per-second rates from the previous sample and RSS
 * growth over the growth window (top.h), kept per process as the low
 * point of each quarter of it.
 */
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "top.h"
#include "top_columns.h"
#include "grow.h"

/* What we remember of a process between samples. */
struct top_hist {
	pid_t pid;
	uint64_t start_ns;		/* tells a reused pid apart */
	uint64_t ctr[MEMTRACK_NR_COUNTERS], cpu_ns;
	bool growing;			/* flagged at that sample */
	bool kthread;			/* the process's kind, judged once */
	double when;			/* the last sample */
	/*
	 * The quarters of the window seen, oldest first; the last is being
	 * filled.  O(1) a process whatever the delay against the window.
	 */
	unsigned int nq;
	struct top_quarter {
		double start;		/* aligned to the first quarter's */
		double first_when;	/* its first sample */
		uint64_t first_rss, min_rss;
	} q[TOP_QUARTERS + 1];
};

static double wall_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void top_table_init(struct top_table *tb, struct mt_source *src,
		    const struct top_growth *growth)
{
	unsigned int i;

	memset(tb, 0, sizeof(*tb));
	tb->src = src;
	tb->containers = mt_containers_new(NULL);
	tb->cgroups.share = tb->containers;
	tb->growth = growth ? *growth : (struct top_growth){
		TOP_GROWTH_WINDOW, TOP_GROWTH_MIN_RATE };
	/* looked up once, not for each counter of each row of each sample */
	for (i = 0; i < MEMTRACK_NR_COUNTERS; i++)
		if (mt_counter_signed(i))
			tb->ctr_signed |= 1ULL << i;
}

void top_table_free(struct top_table *tb)
{
	top_cgroups_free(&tb->cgroups);
	mt_containers_free(tb->containers);
	tb->containers = NULL;
	free(tb->rows);
	free(tb->hist);
	free(tb->hist_next);
	tb->rows = NULL;
	tb->hist = tb->hist_next = NULL;
	tb->n = tb->nhist = tb->cap = 0;
}

/* Once per row: snprintf(buf, len, "%s", s) costs several times more. */
static void copy_str(char *buf, size_t len, const char *s)
{
	size_t n = strnlen(s, len - 1);

	memcpy(buf, s, n);
	buf[n] = '\0';
}

/* User names change rarely and getpwuid() can be slow: cache the last few. */
static void user_name(uid_t uid, char *buf, size_t len)
{
	static struct { uid_t uid; char name[32]; bool used; } cache[64];
	struct passwd *pw;
	unsigned int slot = uid % 64;

	if (cache[slot].used && cache[slot].uid == uid) {
		copy_str(buf, len, cache[slot].name);
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
	copy_str(buf, len, cache[slot].name);
}

static void cgroup_of(struct top_cgroups *cg, struct top_row *r)
{
	const struct top_cgroup *c = top_cgroup_get(cg, r->t.cgroup_id);

	copy_str(r->cgroup, sizeof(r->cgroup), c ? c->path : "-");
	r->cg_max = c ? c->max : TOP_NO_LIMIT;
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

/*
 * The counters' rates, per second over dt (> 0): those in is_signed net
 * growth, two's complement, that may go down; the others 0 where a
 * counter went back (a pid reused).  One division a row, not one a
 * counter: 23 a row, 10,000 rows a refresh.
 */
static void counter_rates(double *out, const uint64_t *now,
			  const uint64_t *before, double dt, uint64_t is_signed)
{
	double per_s = 1 / dt;
	unsigned int i;

	for (i = 0; i < MEMTRACK_NR_COUNTERS; i++) {
		uint64_t d = now[i] - before[i];

		if (is_signed & (1ULL << i))
			out[i] = (double)(int64_t)d * per_s;
		else
			out[i] = now[i] >= before[i] ? (double)d * per_s : 0;
	}
}

/* The sample rss at now into the quarters of h (quarter: window / 4). */
static void add_to_quarters(struct top_hist *h, double now, uint64_t rss,
			    double quarter)
{
	struct top_quarter *cur = h->nq ? &h->q[h->nq - 1] : NULL;
	double start = now;

	if (cur && now - cur->start < quarter) {
		if (rss < cur->min_rss)
			cur->min_rss = rss;
		return;
	}
	/* A new quarter, on the first one's grid (a long delay skips some). */
	if (cur)
		start = cur->start + quarter * floor((now - cur->start) / quarter);
	if (h->nq == TOP_QUARTERS + 1) {
		memmove(h->q, h->q + 1, TOP_QUARTERS * sizeof(h->q[0]));
		h->nq--;
	}
	h->q[h->nq++] = (struct top_quarter){
		.start = start, .first_when = now,
		.first_rss = rss, .min_rss = rss,
	};
}

/*
 * A leak suspect: the window seen whole (four quarters and the one being
 * filled), each quarter's low point above the one before, and RSS risen
 * over it at the minimum rate or more.
 */
static bool suspect(const struct top_hist *h, const struct top_row *r,
		    double min_rate)
{
	unsigned int i;

	if (h->nq < TOP_QUARTERS + 1 || r->growth_rate < min_rate)
		return false;
	for (i = 1; i < h->nq; i++)
		if (h->q[i].min_rss <= h->q[i - 1].min_rss)
			return false;
	return true;
}

/* Rates against old (NULL: first sample of this process), then h = now. */
static void update_row(const struct top_table *tb, struct top_row *r,
		       const struct top_hist *old, struct top_hist *h,
		       double now)
{
	const struct memtrack_task *t = &r->t;
	double dt = old ? now - old->when : 0;
	uint64_t rss = top_rss(t);

	memset(h, 0, sizeof(*h));
	h->pid = t->pid;
	h->start_ns = t->start_ns;
	memcpy(h->ctr, t->counters, sizeof(h->ctr));
	h->cpu_ns = t->utime_ns + t->stime_ns;
	h->when = now;
	if (old) {
		r->cpu_pct = rate(h->cpu_ns, old->cpu_ns, dt) / 1e7;
		if (dt > 0)
			counter_rates(r->rate, h->ctr, old->ctr, dt,
				      tb->ctr_signed);
		h->nq = old->nq;
		memcpy(h->q, old->q, sizeof(h->q));
	}
	add_to_quarters(h, now, rss, tb->growth.window / TOP_QUARTERS);
	r->rss_growth = (int64_t)(rss - h->q[0].first_rss);
	if (now > h->q[0].first_when)
		r->growth_rate = r->rss_growth / (now - h->q[0].first_when);
	r->growing = suspect(h, r, tb->growth.min_rate);
	r->growth_new = r->growing && !(old && old->growing);
	h->growing = r->growing;
}

/* The arrays of rows and of history, grown to n; kept between samples. */
static int reserve(struct top_table *tb, size_t n)
{
	/* three arrays of one capacity: the smallest if one grew alone */
	size_t rc = tb->cap, hc = tb->cap, nc = tb->cap;
	int err;

	err = mt_grow((void **)&tb->rows, &rc, n, sizeof(*tb->rows), 256);
	if (!err)
		err = mt_grow((void **)&tb->hist, &hc, n, sizeof(*tb->hist), 256);
	if (!err)
		err = mt_grow((void **)&tb->hist_next, &nc, n,
			      sizeof(*tb->hist_next), 256);
	if (err)
		return err;
	tb->cap = rc < hc ? (rc < nc ? rc : nc) : (hc < nc ? hc : nc);
	return 0;
}

static bool pid_sorted(const struct top_row *rows, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (rows[i - 1].t.pid > rows[i].t.pid)
			return false;
	return true;
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
	top_cgroups_next(&tb->cgroups);
	err = reserve(tb, n);
	if (err) {
		free(tasks);
		return err;
	}
	now = mt_mono_s();
	tb->wall = wall_clock();
	rows = tb->rows;
	hist = tb->hist_next;
	mt_containers_next(tb->containers);
	tb->any_container = false;
	/* Live processes only, as top shows them. */
	for (i = 0; i < n; i++) {
		if (tasks[i].exited)
			continue;
		memset(&rows[k], 0, sizeof(rows[k]));
		rows[k++].t = tasks[i];
	}
	free(tasks);
	/* The module lists processes mostly by pid already. */
	if (!pid_sorted(rows, k))
		top_rows_sort(rows, k, -1, false);
	for (i = 0; i < k; i++) {
		old = find_hist(tb, rows[i].t.pid);
		if (old && old->start_ns != rows[i].t.start_ns)
			old = NULL;
		update_row(tb, &rows[i], old, &hist[i], now);
		/* a /proc read for a row without memory, once a process */
		rows[i].kthread = old ? old->kthread :
				  mt_task_is_kthread(&rows[i].t);
		hist[i].kthread = rows[i].kthread;
		user_name(rows[i].t.uid, rows[i].user, sizeof(rows[i].user));
		cgroup_of(&tb->cgroups, &rows[i]);
		rows[i].ct = mt_containers_find(tb->containers,
						rows[i].t.cgroup_id);
		tb->any_container |= rows[i].ct != NULL;
	}
	tb->interval = tb->nhist || tb->n ? now - tb->now : 0;
	tb->hist_next = tb->hist;
	tb->hist = hist;
	tb->n = k;
	tb->nhist = k;
	tb->now = now;
	return 0;
}

/*
 * Sorting moves keys, not rows: a row is most of a KiB, and qsort() of
 * 10,000 of them copied far more than it compared.  The key: the sort
 * column's value (a byte count stays exact below 2^53).
 */
struct sort_key {
	double v;
	pid_t pid;
	uint32_t idx;
};

/* Largest first, then by pid so that the order is stable. */
static int cmp_keys(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;
	int c = (y->v > x->v) - (y->v < x->v);

	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

/* Row order[i] goes to position i: follow each cycle with one spare row. */
static void permute(struct top_row *rows, struct sort_key *order, size_t n)
{
	struct top_row tmp;
	size_t s, j, k;

	for (s = 0; s < n; s++) {
		if (order[s].idx == s)
			continue;
		tmp = rows[s];
		j = s;
		for (;;) {
			k = order[j].idx;
			order[j].idx = j;
			if (k == s) {
				rows[j] = tmp;
				break;
			}
			rows[j] = rows[k];
			j = k;
		}
	}
}

void top_rows_sort(struct top_row *rows, size_t n, int col, bool reverse)
{
	struct sort_key *keys = malloc((n ? n : 1) * sizeof(*keys)), t;
	const struct top_column *c = col >= 0 && (size_t)col < top_nr_columns &&
				     top_columns[col].sort ?
				     &top_columns[col] : NULL;
	size_t i;

	/* Out of memory: the rows stay in the order they were. */
	if (!keys)
		return;
	for (i = 0; i < n; i++) {
		keys[i].v = c ? c->sort(c, &rows[i]) : 0;
		keys[i].pid = rows[i].t.pid;
		keys[i].idx = i;
	}
	qsort(keys, n, sizeof(*keys), cmp_keys);
	for (i = 0; reverse && i < n / 2; i++) {
		t = keys[i];
		keys[i] = keys[n - 1 - i];
		keys[n - 1 - i] = t;
	}
	permute(rows, keys, n);
	free(keys);
}

void top_table_sort(struct top_table *tb, int col, bool reverse)
{
	top_rows_sort(tb->rows, tb->n, col, reverse);
}

size_t top_table_kthreads_last(struct top_table *tb)
{
	struct top_row *tmp = malloc(tb->n * sizeof(*tmp) + 1);
	size_t i, n = 0, k;

	if (!tmp)
		return tb->n;
	for (i = 0; i < tb->n; i++)
		if (!tb->rows[i].kthread)
			tmp[n++] = tb->rows[i];
	k = n;
	for (i = 0; i < tb->n; i++)
		if (tb->rows[i].kthread)
			tmp[k++] = tb->rows[i];
	memcpy(tb->rows, tmp, tb->n * sizeof(*tmp));
	free(tmp);
	return n;
}
