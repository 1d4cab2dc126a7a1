// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak: what a report ranks its stacks by (bytes, or with --fds
 * descriptors), which stacks it keeps, and each stack's growth since the
 * previous report (that report's figures, kept by stack id).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "leak.h"

static int cmp_prev(const void *a, const void *b)
{
	const struct prev *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* What a report ranks and grows by: bytes, or with --fds descriptors. */
uint64_t stack_metric(const struct report *r, const struct mt_leak_stack *s)
{
	return r->fds ? s->blocks : s->bytes;
}

/* By the metric, largest first; then by stack id. */
static int cmp_metric(const void *a, const void *b, void *arg)
{
	const struct mt_leak_stack *x = a, *y = b;
	const struct report *r = arg;

	if (stack_metric(r, x) != stack_metric(r, y))
		return stack_metric(r, x) < stack_metric(r, y) ? 1 : -1;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

void rank_stacks(const struct report *r, struct mt_leak_stack *v, size_t n)
{
	qsort_r(v, n, sizeof(*v), cmp_metric, (void *)r);
}

/* Since the previous report: its metric, or none if it had no such stack. */
int64_t stack_growth(const struct report *r, const struct mt_leak_stack *s)
{
	struct prev key = { .id = s->stack_id };
	const struct prev *f = r->prev ? bsearch(&key, r->prev, r->nprev,
						 sizeof(*r->prev), cmp_prev) :
					 NULL;

	return (int64_t)stack_metric(r, s) - (f ? (int64_t)f->bytes : 0);
}

/* Stacks holding blocks first, in dump order; returns how many. */
size_t split_leaks(struct mt_leak_stack *v, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (v[i].blocks) {
			struct mt_leak_stack t;

			if (i != k) {
				t = v[i];
				memmove(&v[k + 1], &v[k], (i - k) * sizeof(*v));
				v[k] = t;
			}
			k++;
		}
	return k;
}

/* One kind per report: memory or descriptors.  Returns how many are left. */
size_t keep_kind(const struct report *r, struct mt_leak_stack *v, size_t n)
{
	size_t i, j;

	for (i = 0, j = 0; i < n; i++)
		if (mt_leak_api_is_fd(v[i].api) == r->fds)
			v[j++] = v[i];
	return j;
}

/* The metric per stack of v[0..n), for the next report's growth. */
void keep_growth(struct report *r, const struct mt_leak_stack *v, size_t n)
{
	struct prev *np = malloc((n ? n : 1) * sizeof(*np));
	size_t i;

	if (!np)
		return;
	for (i = 0; i < n; i++) {
		np[i].id = v[i].stack_id;
		np[i].bytes = stack_metric(r, &v[i]);
	}
	qsort(np, n, sizeof(*np), cmp_prev);
	free(r->prev);
	r->prev = np;
	r->nprev = n;
}
