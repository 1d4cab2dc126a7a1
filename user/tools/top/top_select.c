// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's selection bar and what acts on it: the bar follows its
 * process from sample to sample; signals, nice, tags, the detail pane and
 * memtrack-leak on the selected (or tagged) processes.
 */
#include <stdlib.h>
#include <string.h>
#include "top_actions.h"
#include "top_ui_int.h"

/* After a refresh or a new view: the selected process's row again. */
void top_follow_selection(struct ui *u)
{
	size_t i;

	for (i = 0; u->sel_pid && i < u->view.n; i++)
		if (u->view.rows[i].t.pid == u->sel_pid &&
		    !u->view.rows[i].group) {
			u->sel = i;
			return;
		}
	if (u->sel >= u->view.n)
		u->sel = u->view.n ? u->view.n - 1 : 0;
	u->sel_pid = u->view.n ? u->view.rows[u->sel].t.pid : 0;
}

void top_move_selection(struct ui *u, long by)
{
	long s = (long)u->sel + by;

	/* the cluster view has no selection: its list scrolls */
	if (u->cluster_view) {
		s = (long)u->scroll + by;
		u->scroll = s < 0 ? 0 : (size_t)s;
		return;
	}
	if (s >= (long)u->view.n)
		s = (long)u->view.n - 1;
	if (s < 0)
		s = 0;
	u->sel = (size_t)s;
	u->sel_pid = u->view.n ? u->view.rows[u->sel].t.pid : 0;
}

/* The selected process for k, F7, F8, r: NULL (and why) if none. */
static const struct top_row *selected(struct ui *u)
{
	const struct top_row *r;

	if (u->cluster_view) {
		snprintf(u->message, sizeof(u->message),
			 "the cluster view's processes are other machines'");
		return NULL;
	}
	if (u->sel >= u->view.n)
		return NULL;
	r = &u->view.rows[u->sel];
	if (r->group) {
		snprintf(u->message, sizeof(u->message),
			 "a row of %u processes: select one process", r->group);
		return NULL;
	}
	return r;
}

/* k, F9: a signal to the tagged processes, else to the selected one. */
void top_signal_selected(struct ui *u)
{
	const struct top_row *r;
	const char *comm = "";
	pid_t *pids;
	size_t i;

	if (!u->ntags) {
		r = selected(u);
		if (r)
			top_action_signal(&r->t.pid, 1, r->t.comm, u->message,
					  sizeof(u->message));
		return;
	}
	if (u->cluster_view) {
		selected(u);	/* says why not */
		return;
	}
	/* a copy: the menu and the kills work on the list as it is now */
	pids = malloc(u->ntags * sizeof(*pids));
	if (!pids) {
		snprintf(u->message, sizeof(u->message), "out of memory");
		return;
	}
	memcpy(pids, u->tags, u->ntags * sizeof(*pids));
	for (i = 0; u->ntags == 1 && i < u->tb.n; i++)
		if (u->tb.rows[i].t.pid == pids[0])
			comm = u->tb.rows[i].t.comm;
	top_action_signal(pids, u->ntags, comm, u->message,
			  sizeof(u->message));
	free(pids);
}

/*
 * Space: tags or untags the selected process and moves the bar down one,
 * as htop's; c: tags it and every process under it (children, theirs...).
 */
void top_tag_selected(struct ui *u, bool children)
{
	const struct top_row *r = selected(u);
	pid_t *fam;
	size_t n = 1, cap, i, j;

	if (!r)
		return;
	if (r->thread) {
		snprintf(u->message, sizeof(u->message),
			 "a thread: tag its process");
		return;
	}
	if (!children) {
		if (top_tag_set(u, r->t.pid, !top_is_tagged(u, r->t.pid)))
			snprintf(u->message, sizeof(u->message), "out of memory");
		top_move_selection(u, 1);
		return;
	}
	/*
	 * the processes under it, breadth first, from the whole table (at
	 * most all of it, should a reading of /proc have made a loop)
	 */
	cap = u->tb.n + 1;
	fam = malloc(cap * sizeof(*fam));
	if (!fam) {
		snprintf(u->message, sizeof(u->message), "out of memory");
		return;
	}
	fam[0] = r->t.pid;
	for (i = 0; i < n; i++)
		for (j = 0; j < u->tb.n && n < cap; j++)
			if (u->tb.rows[j].t.ppid == fam[i] &&
			    u->tb.rows[j].t.pid != fam[i])
				fam[n++] = u->tb.rows[j].t.pid;
	for (i = 0; i < n; i++)
		if (top_tag_set(u, fam[i], true)) {
			snprintf(u->message, sizeof(u->message),
				 "out of memory");
			break;
		}
	free(fam);
}

void top_renice_selected(struct ui *u, int delta)
{
	const struct top_row *r = selected(u);

	if (r)
		top_action_renice(r->t.pid, r->t.comm, delta, u->message,
				  sizeof(u->message), &u->redraw);
}

/* s: memtrack-leak on the selected process, or stopped. */
void top_leak_selected(struct ui *u)
{
	const struct top_row *r;
	int err;

	if (u->detail.kind == TOP_DETAIL_LEAK) {
		top_leak_stop(&u->leak);
		u->detail.kind = TOP_DETAIL_NONE;
		return;
	}
	r = selected(u);
	if (!r)
		return;
	err = top_leak_start(&u->leak, r->t.pid, leak_interval(u));
	if (err) {
		snprintf(u->message, sizeof(u->message), "memtrack-leak: %s",
			 strerror(-err));
		return;
	}
	u->detail.kind = TOP_DETAIL_LEAK;
}

/* Another pane in its place stops memtrack-leak. */
void top_detail_show(struct ui *u, enum top_detail_kind kind)
{
	top_leak_stop(&u->leak);
	top_detail_toggle(&u->detail, kind);
}
