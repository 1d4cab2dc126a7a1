// SPDX-License-Identifier: GPL-2.0
/*
 * What memtrack-top asks on its status line: the delay, a user, and
 * htop's incremental filter (\\, F4) and search (/, F3), the screen
 * refreshed behind the prompt.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include "top_cluster.h"
#include "top_prompt.h"
#include "top_ui_int.h"

/*
 * A line typed on the status line, the screen refreshed behind it: true
 * on Enter (buf may be empty), false on Esc.
 */
static bool prompt(struct ui *u, const char *what, char *buf, size_t len)
{
	return top_prompt(5, what, buf, len, &u->redraw);
}

void top_ask_delay(struct ui *u)
{
	char buf[32], *end;
	double d;

	if (!prompt(u, "delay (seconds): ", buf, sizeof(buf)) || !buf[0])
		return;
	d = strtod(buf, &end);
	if (*end || end == buf || !isfinite(d) || d < 0.1 || d > 3600)
		snprintf(u->message, sizeof(u->message),
			 "not a delay from 0.1 to 3600 s: %s", buf);
	else
		u->delay = d;
}

void top_ask_user(struct ui *u)
{
	char buf[32];
	struct passwd *pw;

	if (!prompt(u, "user (empty: all): ", buf, sizeof(buf)))
		return;
	if (!buf[0]) {
		u->vo.by_user = false;
		return;
	}
	pw = getpwnam(buf);
	if (!pw) {
		snprintf(u->message, sizeof(u->message), "no such user: %s", buf);
		return;
	}
	u->vo.by_user = true;
	u->vo.uid = pw->pw_uid;
	snprintf(u->user_name, sizeof(u->user_name), "%s", buf);
}

/*
 * F4 and \: htop's incremental filter.  The list narrows as the text is
 * typed (in the command, any case; pod=, namespace=, container=: in that
 * name); it starts from the filter there is, Enter keeps it and Esc
 * clears it, as htop's.
 */
static void filter_changed(void *arg, const char *buf)
{
	struct ui *u = arg;

	snprintf(u->vo.filter, sizeof(u->vo.filter), "%s", buf);
	u->scroll = 0;
}

void top_ask_filter(struct ui *u)
{
	const struct top_live live = { .changed = filter_changed, .arg = u };
	char buf[sizeof(u->vo.filter)];

	memcpy(buf, u->vo.filter, sizeof(buf));
	if (!top_prompt_live(5, "Filter: ", buf, sizeof(buf), &u->redraw,
			     &live))
		filter_changed(u, "");
}

/*
 * F3 and /: htop's incremental search.  As the text is typed the selection
 * goes to the first row whose command holds it (any case); F3 to the next
 * one, Shift-F3 to the one before (round the list); Enter and Esc leave
 * the selection where it is.
 */
struct search {
	struct ui *u;
	char text[64];
	bool found;
};

/*
 * The selection to the first match from row from on, by step (+1, -1),
 * round the list: false if none.
 */
static bool search_from(struct ui *u, const char *text, size_t from,
			int step)
{
	long n = (long)u->view.n, i, k;

	for (k = 0; k < n; k++) {
		i = ((long)from + step * k) % n;
		if (i < 0)
			i += n;
		if (strcasestr(u->view.rows[i].t.comm, text)) {
			u->sel = (size_t)i;
			u->sel_pid = u->view.rows[i].t.pid;
			return true;
		}
	}
	return false;
}

static void search_changed(void *arg, const char *buf)
{
	struct search *s = arg;

	snprintf(s->text, sizeof(s->text), "%s", buf);
	s->found = !buf[0] || search_from(s->u, buf, 0, 1);
}

static bool search_key(void *arg, int c)
{
	struct search *s = arg;
	size_t n = s->u->view.n;

	if (c != KEY_F(3) && c != KEY_F(15))	/* F3, Shift-F3 */
		return false;
	if (s->text[0] && n)
		s->found = search_from(s->u, s->text, c == KEY_F(3) ?
				       s->u->sel + 1 : s->u->sel + n - 1,
				       c == KEY_F(3) ? 1 : -1);
	return true;
}

static const char *search_note(void *arg)
{
	const struct search *s = arg;

	return s->found ? NULL : "  (not found)";
}

void top_ask_search(struct ui *u)
{
	struct search s = { .u = u, .found = true };
	const struct top_live live = {
		.changed = search_changed, .key = search_key,
		.note = search_note, .arg = &s,
	};
	char buf[sizeof(s.text)] = "";

	if (u->cluster_view) {
		snprintf(u->message, sizeof(u->message),
			 "the cluster view has no selection: \\ or F4 filters it");
		return;
	}
	top_prompt_live(5, "Search: ", buf, sizeof(buf), &u->redraw, &live);
}
