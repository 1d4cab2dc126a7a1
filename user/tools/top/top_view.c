// SPDX-License-Identifier: GPL-2.0
/*
 * The interactive view's rows: the table filtered by command and user,
 * sorted, then laid out as a list, a process tree or one row per program,
 * with each process's threads under it on request.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "top_view.h"
#include "grow.h"

static int push(struct top_view *v, const struct top_row *r)
{
	if (mt_grow((void **)&v->rows, &v->cap, v->n + 1, sizeof(*v->rows), 256))
		return -ENOMEM;
	v->rows[v->n++] = *r;
	return 0;
}

/* A filter's key: the name it looks in (the command without one). */
static const struct {
	const char *key;
	enum top_group what;
} filter_keys[] = {
	{ "pod=", TOP_GROUP_POD },
	{ "namespace=", TOP_GROUP_NAMESPACE },
	{ "ns=", TOP_GROUP_NAMESPACE },
	{ "container=", TOP_GROUP_CONTAINER },
};

static enum top_group filter_key(const char *filter, const char **text)
{
	size_t i, n;

	for (i = 0; i < MT_ARRAY_SIZE(filter_keys); i++) {
		n = strlen(filter_keys[i].key);
		if (!strncasecmp(filter, filter_keys[i].key, n)) {
			*text = filter + n;
			return filter_keys[i].what;
		}
	}
	*text = filter;
	return TOP_GROUP_NONE;
}

const char *top_filter_text(const char *filter)
{
	const char *text;

	filter_key(filter, &text);
	return text;
}

bool top_filter_match(const struct top_row *r, const char *filter)
{
	const struct mt_container *c = r->ct;
	const char *text;

	if (!filter[0])
		return true;
	switch (filter_key(filter, &text)) {
	case TOP_GROUP_POD:
		return c && c->pod[0] && strcasestr(c->pod, text);
	case TOP_GROUP_NAMESPACE:
		return c && c->ns[0] && strcasestr(c->ns, text);
	case TOP_GROUP_CONTAINER:
		return c && c->id[0] && strcasestr(c->name, text);
	default:
		return strcasestr(r->t.comm, text);
	}
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static bool selected(const struct top_row *r, const struct top_view_opts *o)
{
	if (o->by_user && r->t.uid != o->uid)
		return false;
	if (o->npids)
		return bsearch(&r->t.pid, o->pids, o->npids, sizeof(*o->pids),
			       cmp_pid) && top_filter_match(r, o->filter);
	if (r->kthread && !o->kthreads)
		return false;
	return top_filter_match(r, o->filter);
}

/* Adds b's figures into a, a per-program row. */
static void add_row(struct top_row *a, const struct top_row *b)
{
	unsigned int i;

	a->t.threads += b->t.threads;
	a->t.mm.rss_anon += b->t.mm.rss_anon;
	a->t.mm.rss_file += b->t.mm.rss_file;
	a->t.mm.rss_shmem += b->t.mm.rss_shmem;
	a->t.mm.swap += b->t.mm.swap;
	a->t.mm.vm_total += b->t.mm.vm_total;
	a->t.utime_ns += b->t.utime_ns;
	a->t.stime_ns += b->t.stime_ns;
	for (i = 0; i < MEMTRACK_NR_COUNTERS; i++)
		a->t.counters[i] += b->t.counters[i];
	a->cpu_pct += b->cpu_pct;
	for (i = 0; i < MEMTRACK_NR_COUNTERS; i++)
		a->rate[i] += b->rate[i];
	a->rss_growth += b->rss_growth;
	a->growth_rate += b->growth_rate;
	a->growing |= b->growing;
	/* a sum with a hidden part would look complete: unknown */
	a->t.detailed &= b->t.detailed;
	a->group++;
}

static int by_comm(const void *a, const void *b)
{
	return strcmp(((const struct top_row *)a)->t.comm,
		      ((const struct top_row *)b)->t.comm);
}

static int by_cgroup(const void *a, const void *b)
{
	uint64_t x = ((const struct top_row *)a)->t.cgroup_id;
	uint64_t y = ((const struct top_row *)b)->t.cgroup_id;

	return (x > y) - (x < y);
}

/* The host's processes (no container) first, then by runtime and ID. */
static int by_container(const void *a, const void *b)
{
	const struct mt_container *x = ((const struct top_row *)a)->ct;
	const struct mt_container *y = ((const struct top_row *)b)->ct;
	bool xc = x && x->id[0], yc = y && y->id[0];

	if (!xc || !yc)
		return (int)xc - (int)yc;
	if (x->runtime != y->runtime)
		return (int)x->runtime - (int)y->runtime;
	return strcmp(x->id, y->id);
}

/* Outside any pod first, then by pod UID (known from the path). */
static int by_pod(const void *a, const void *b)
{
	const struct mt_container *x = ((const struct top_row *)a)->ct;
	const struct mt_container *y = ((const struct top_row *)b)->ct;
	bool xp = x && x->pod_uid[0], yp = y && y->pod_uid[0];

	if (!xp || !yp)
		return (int)xp - (int)yp;
	return strcmp(x->pod_uid, y->pod_uid);
}

/* What a summed row's COMMAND says. */
static void group_title(struct top_row *g, enum top_group what)
{
	const char *title = "(cgroup)";
	bool in = g->ct && (what == TOP_GROUP_POD ? g->ct->pod_uid[0] :
			    g->ct->id[0]);

	if (what == TOP_GROUP_CONTAINER)
		title = in ? "(container)" : "(host)";
	else if (what == TOP_GROUP_POD)
		title = in ? "(pod)" : "(none)";
	snprintf(g->t.comm, sizeof(g->t.comm), "%s", title);
	snprintf(g->user, sizeof(g->user), "-");
}

/* One row per program, cgroup, container or pod: the rows sharing it summed. */
static int groups(struct top_view *v, struct top_row *sel, size_t n,
		  const struct top_view_opts *o)
{
	int (*cmp)(const void *, const void *) =
		o->group == TOP_GROUP_CGROUP ? by_cgroup :
		o->group == TOP_GROUP_CONTAINER ? by_container :
		o->group == TOP_GROUP_POD ? by_pod : by_comm;
	struct top_row g;
	size_t i, k = 0;

	qsort(sel, n, sizeof(*sel), cmp);
	for (i = 0; i < n; i++) {
		if (k && !cmp(&sel[k - 1], &sel[i])) {
			add_row(&sel[k - 1], &sel[i]);
			/* a pod's names from a container that has them */
			if (o->group == TOP_GROUP_POD && sel[i].ct &&
			    sel[i].ct->pod[0] && !sel[k - 1].ct->pod[0])
				sel[k - 1].ct = sel[i].ct;
			continue;
		}
		g = sel[i];
		g.group = 1;
		g.t.pid = 0;
		g.gkind = o->group;
		if (o->group != TOP_GROUP_PROGRAM)
			group_title(&g, o->group);
		sel[k++] = g;
	}
	top_rows_sort(sel, k, o->sort, o->reverse);
	for (i = 0; i < k; i++)
		if (push(v, &sel[i]))
			return -ENOMEM;
	return 0;
}

struct pidx {
	pid_t pid;
	size_t idx;
};

static int cmp_pidx(const void *a, const void *b)
{
	pid_t x = ((const struct pidx *)a)->pid, y = ((const struct pidx *)b)->pid;

	return (x > y) - (x < y);
}

/*
 * Children under their parent, siblings in sort order.  sel is sorted;
 * a process whose parent is not selected is a root.
 */
static int tree(struct top_view *v, struct top_row *sel, size_t n)
{
	const size_t none = (size_t)-1;
	size_t *first, *next, *last, *stack, *depth, i, c, j, kids, sp = 0;
	uint32_t *more;
	struct pidx *map, key, *par;
	int err = 0;

	map = malloc((n ? n : 1) * sizeof(*map));
	first = malloc((n ? n : 1) * 5 * sizeof(size_t));
	more = calloc(n ? n : 1, sizeof(*more));
	if (!map || !first || !more) {
		free(map);
		free(first);
		free(more);
		return -ENOMEM;
	}
	next = first + n;
	last = next + n;
	stack = last + n;
	depth = stack + n;
	for (i = 0; i < n; i++) {
		map[i] = (struct pidx){ sel[i].t.pid, i };
		first[i] = next[i] = last[i] = none;
		depth[i] = 0;
		sel[i].tree_last = false;
	}
	qsort(map, n, sizeof(*map), cmp_pidx);
	/* Children lists in sort order. */
	for (i = 0; i < n; i++) {
		key.pid = sel[i].t.ppid;
		par = bsearch(&key, map, n, sizeof(*map), cmp_pidx);
		if (!par || par->idx == i)
			continue;
		depth[i] = 1;		/* has a parent: not a root */
		if (last[par->idx] == none)
			first[par->idx] = i;
		else
			next[last[par->idx]] = i;
		last[par->idx] = i;
	}
	/* Depth-first, roots in sort order: push them reversed. */
	for (i = n; i-- > 0;)
		if (!depth[i])
			stack[sp++] = i;
	while (sp && !err) {
		i = stack[--sp];
		sel[i].depth = depth[i];
		sel[i].tree_more = more[i];
		err = push(v, &sel[i]);
		for (kids = 0, c = first[i]; c != none; c = next[c])
			kids++;
		for (j = 0, c = first[i]; c != none; c = next[c], j++) {
			depth[c] = depth[i] + 1;
			sel[c].tree_last = next[c] == none;
			/* below a child with siblings after it, a line goes on
			 * down through its level */
			more[c] = more[i];
			if (depth[i] >= 1 && depth[i] < 32 && !sel[i].tree_last)
				more[c] |= 1U << depth[i];
			stack[sp + kids - 1 - j] = c;
		}
		sp += kids;
	}
	free(map);
	free(first);
	free(more);
	return err;
}

static int add_threads(struct top_view *v, struct top_table *tb)
{
	struct memtrack_task *th;
	struct top_view out = { 0 };
	struct top_row r;
	size_t i, k, n, procs = 0;
	int err = 0;

	for (i = 0; i < v->n && !err; i++) {
		err = push(&out, &v->rows[i]);
		if (err || v->rows[i].group || v->rows[i].t.threads < 2 ||
		    procs++ >= TOP_VIEW_MAX_THREAD_PROCS)
			continue;
		if (mt_source_threads(tb->src, v->rows[i].t.pid, &th, &n))
			continue;	/* gone meanwhile */
		for (k = 0; k < n && !err; k++) {
			if (th[k].exited)
				continue;
			memset(&r, 0, sizeof(r));
			r.t = th[k];
			memcpy(r.user, v->rows[i].user, sizeof(r.user));
			r.depth = v->rows[i].depth + 1;
			r.thread = true;
			err = push(&out, &r);
		}
		free(th);
	}
	free(v->rows);
	*v = out;
	return err;
}

void top_view_free(struct top_view *v)
{
	free(v->rows);
	memset(v, 0, sizeof(*v));
}

int top_view_build(struct top_view *v, struct top_table *tb,
		   const struct top_view_opts *o)
{
	struct top_row *sel;
	size_t i, n = 0;
	int err;

	v->n = 0;
	sel = malloc((tb->n ? tb->n : 1) * sizeof(*sel));
	if (!sel)
		return -ENOMEM;
	for (i = 0; i < tb->n; i++)
		if (selected(&tb->rows[i], o))
			sel[n++] = tb->rows[i];
	if (o->group != TOP_GROUP_NONE) {
		err = groups(v, sel, n, o);
	} else {
		top_rows_sort(sel, n, o->sort, o->reverse);
		if (o->tree) {
			err = tree(v, sel, n);
		} else {
			err = 0;
			for (i = 0; i < n && !err; i++)
				err = push(v, &sel[i]);
		}
	}
	free(sel);
	if (!err && o->threads && o->group == TOP_GROUP_NONE)
		err = add_threads(v, tb);
	return err;
}
