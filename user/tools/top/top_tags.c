// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's tagged processes (Space, c; U untags): their pids,
 * sorted, in the view's state; k and F9 signal them instead of the
 * selected one, and a process gone from the table loses its tag.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "top_ui_int.h"
#include "grow.h"

#define MESSAGE_S	3

/* The index of pid in the tags, or where it would go. */
static size_t tag_index(const struct ui *u, pid_t pid)
{
	size_t lo = 0, hi = u->ntags, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (u->tags[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool top_is_tagged(const struct ui *u, pid_t pid)
{
	size_t i = tag_index(u, pid);

	return i < u->ntags && u->tags[i] == pid;
}

/* Tags or untags pid: -ENOMEM, or 0. */
int top_tag_set(struct ui *u, pid_t pid, bool on)
{
	size_t i = tag_index(u, pid);
	bool there = i < u->ntags && u->tags[i] == pid;

	if (on == there)
		return 0;
	if (!on) {
		memmove(&u->tags[i], &u->tags[i + 1],
			(u->ntags - i - 1) * sizeof(*u->tags));
		u->ntags--;
		return 0;
	}
	if (mt_grow((void **)&u->tags, &u->tags_cap, u->ntags + 1,
		    sizeof(*u->tags), 16))
		return -ENOMEM;
	memmove(&u->tags[i + 1], &u->tags[i],
		(u->ntags - i) * sizeof(*u->tags));
	u->tags[i] = pid;
	u->ntags++;
	return 0;
}

/* After a sample: the tags of processes that are gone dropped. */
void top_tags_prune(struct ui *u)
{
	size_t i, j, k = 0;
	bool *live;

	if (!u->ntags)
		return;
	live = calloc(u->ntags, sizeof(*live));
	if (!live)
		return;
	for (j = 0; j < u->tb.n; j++) {
		i = tag_index(u, u->tb.rows[j].t.pid);
		if (i < u->ntags && u->tags[i] == u->tb.rows[j].t.pid)
			live[i] = true;
	}
	for (i = 0; i < u->ntags; i++)
		if (live[i])
			u->tags[k++] = u->tags[i];
	u->ntags = k;
	free(live);
}
