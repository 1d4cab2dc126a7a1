// SPDX-License-Identifier: GPL-2.0
/*
 * The setup screen (top_setup.h).  Every column is listed, the shown ones
 * first in their order, then the others, each with its box: Up/Down (and
 * PgUp/PgDn, Home/End) choose, Space shows or hides it where it is, [ and
 * ] move it up or down (left or right on screen), s sorts by it, d asks
 * for the delay; q, F2 or F10 save and return, Esc returns as it was.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ncurses.h>
#include "top_setup.h"
#include "top_prompt.h"

/* The lines above the list: title, keys, settings, a blank. */
#define SETUP_HEAD	4

struct setup {
	uint8_t order[TOP_MAX_COLUMNS];	/* every column, in the list's order */
	bool on[TOP_MAX_COLUMNS];	/* by column index */
	size_t n, cur, top;		/* top: the first line shown */
};

static void setup_from(struct setup *s, const struct top_layout *l)
{
	uint64_t mask = top_layout_mask(l);
	size_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < l->n; i++) {
		s->order[s->n++] = l->col[i];
		s->on[l->col[i]] = true;
	}
	for (i = 0; i < top_nr_columns; i++)
		if (!(mask & (1ULL << i)) &&
		    !(top_columns[i].needs & TOP_SHOW_NEVER))
			s->order[s->n++] = (uint8_t)i;
}

/* The shown columns, in the list's order. */
static void layout_from(const struct setup *s, struct top_layout *l)
{
	size_t i;

	l->n = 0;
	for (i = 0; i < s->n; i++)
		if (s->on[s->order[i]])
			l->col[l->n++] = s->order[i];
}

static void swap(struct setup *s, size_t a, size_t b)
{
	uint8_t t = s->order[a];

	s->order[a] = s->order[b];
	s->order[b] = t;
}

/* Space: shown or hidden where it is; one column stays shown at least. */
static void toggle(struct setup *s)
{
	uint8_t c = s->order[s->cur];
	size_t i, shown = 0;

	for (i = 0; i < s->n; i++)
		shown += s->on[s->order[i]];
	if (s->on[c] && shown == 1)
		return;
	s->on[c] = !s->on[c];
}

/* The list's lines on screen. */
static size_t page(void)
{
	return LINES > SETUP_HEAD + 1 ? (size_t)(LINES - SETUP_HEAD) : 1;
}

/* The selection moved by d lines, kept on the list and on screen. */
static void move_cur(struct setup *s, long d)
{
	long c = (long)s->cur + d;

	s->cur = c < 0 ? 0 : (size_t)c >= s->n ? s->n - 1 : (size_t)c;
	if (s->cur < s->top)
		s->top = s->cur;
	if (s->cur >= s->top + page())
		s->top = s->cur - page() + 1;
}

/* A line cut at the screen's edge, in reverse video across it if bar. */
static void line(int y, bool bar, const char *text)
{
	int x;

	if (bar)
		attron(A_REVERSE);
	mvaddnstr(y, 0, text, COLS);
	for (x = getcurx(stdscr); bar && x < COLS && getcury(stdscr) == y; x++)
		addch(' ');
	if (bar)
		attroff(A_REVERSE);
}

/* A counter's column: what it counts (its help, after two spaces). */
static const char *help_of(const struct top_column *c)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "  %s", mt_counters[c->ctr].help);
	return buf;
}

static void draw(const struct setup *s, const struct top_toprc *rc,
		 const char *path)
{
	const char *sort = top_sort_title(rc->sort);
	char buf[512];
	size_t i;

	erase();
	line(0, true, "memtrack-top setup: the columns, their order, the sort key, the delay");
	line(1, false, "Up Down PgUp PgDn Home End choose  Space show/hide  [ ] move  s sort  d delay");
	snprintf(buf, sizeof(buf), "F10 q F2: save  Esc: cancel   sort: %s  delay: %gs  file: %s",
		 sort ? sort : "-", rc->delay, path ? path : "(none: no HOME)");
	line(2, false, buf);
	for (i = s->top; i < s->n && i < s->top + page(); i++) {
		const struct top_column *c = &top_columns[s->order[i]];

		snprintf(buf, sizeof(buf), "  [%c] %-12s%s",
			 s->on[s->order[i]] ? 'x' : ' ', c->title,
			 s->order[i] == rc->sort ? "  (sort)" :
			 c->ctr >= 0 ? help_of(c) : "");
		line((int)(i - s->top) + SETUP_HEAD, i == s->cur, buf);
	}
	refresh();
}

/* The delay typed (Esc or nothing: as it was); nothing to refresh here. */
static void ask_delay(struct top_toprc *rc)
{
	char buf[32], *end;
	double d;

	if (!top_prompt(2, "delay (seconds): ", buf, sizeof(buf), NULL))
		return;
	d = strtod(buf, &end);
	if (!*end && end != buf && isfinite(d) && d >= 0.1 && d <= 3600)
		rc->delay = d;
}

bool top_setup_run(struct top_toprc *rc, const char *path, char *msg,
		   size_t len)
{
	struct top_toprc was = *rc;
	struct setup s;
	int c, err;

	setup_from(&s, &rc->layout);
	timeout(-1);
	for (;;) {
		draw(&s, rc, path);
		c = getch();
		if (c == 'q' || c == KEY_F(2) || c == KEY_F(10))
			break;
		/* Esc: as it was, nothing saved; so too when the terminal is
		 * gone (no key will come: ERR without a timeout) or a quit
		 * signal came */
		if (c == 27 || c == ERR || top_quit_signal) {
			*rc = was;
			erase();
			snprintf(msg, len, "setup cancelled");
			return false;
		}
		switch (c) {
		case KEY_UP: move_cur(&s, -1); break;
		case KEY_DOWN: move_cur(&s, 1); break;
		case KEY_PPAGE: move_cur(&s, -(long)page()); break;
		case KEY_NPAGE: move_cur(&s, (long)page()); break;
		case KEY_HOME: move_cur(&s, -(long)s.n); break;
		case KEY_END: move_cur(&s, (long)s.n); break;
		case ' ':
			toggle(&s);
			break;
		case '[':
			if (s.cur) {
				swap(&s, s.cur, s.cur - 1);
				move_cur(&s, -1);
			}
			break;
		case ']':
			if (s.cur + 1 < s.n) {
				swap(&s, s.cur, s.cur + 1);
				move_cur(&s, 1);
			}
			break;
		case 's':
			if (top_columns[s.order[s.cur]].sort)
				rc->sort = s.order[s.cur];
			break;
		case 'd':
			ask_delay(rc);
			break;
		default:
			break;
		}
	}
	layout_from(&s, &rc->layout);
	erase();
	if (!path) {
		snprintf(msg, len, "setup not saved: no HOME");
		return true;
	}
	err = top_toprc_save(path, rc);
	if (err)
		snprintf(msg, len, "setup not saved: %s: %s", path, strerror(-err));
	else
		snprintf(msg, len, "setup saved to %s", path);
	return true;
}
