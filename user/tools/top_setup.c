// SPDX-License-Identifier: GPL-2.0
/*
 * The setup screen (top_setup.h).  Every column is listed, the shown ones
 * first in their order with [x], then the others: Up/Down choose, Space
 * shows or hides, [ and ] move a shown column up or down (left or right
 * on screen), s sorts by it, d asks for the delay.
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

struct setup {
	uint8_t order[TOP_MAX_COLUMNS];	/* every column, shown first */
	bool on[TOP_MAX_COLUMNS];	/* by column index */
	size_t n, nshown, cur;
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
	s->nshown = s->n;
	for (i = 0; i < top_nr_columns; i++)
		if (!(mask & (1ULL << i)))
			s->order[s->n++] = (uint8_t)i;
}

static void layout_from(const struct setup *s, struct top_layout *l)
{
	size_t i;

	l->n = 0;
	for (i = 0; i < s->nshown; i++)
		l->col[l->n++] = s->order[i];
}

static void swap(struct setup *s, size_t a, size_t b)
{
	uint8_t t = s->order[a];

	s->order[a] = s->order[b];
	s->order[b] = t;
}

/* Space: a shown column goes to the end of the shown ones' list, hidden. */
static void toggle(struct setup *s)
{
	size_t i = s->cur;
	uint8_t c = s->order[i];

	if (s->on[c]) {
		if (s->nshown == 1)
			return;		/* one column at least */
		for (; i + 1 < s->nshown; i++)
			swap(s, i, i + 1);
		s->nshown--;
	} else {
		for (; i > s->nshown; i--)
			swap(s, i, i - 1);
		s->nshown++;
	}
	s->on[c] = !s->on[c];
	s->cur = i;
}

static void draw(const struct setup *s, const struct top_toprc *rc,
		 const char *path)
{
	const char *sort = top_sort_title(rc->sort);
	size_t i;

	erase();
	attron(A_REVERSE);
	mvprintw(0, 0, "memtrack-top setup: Up/Down choose, Space show/hide, [ ] move, s sort by it, d delay; q F2 F10 Esc: save and return");
	attroff(A_REVERSE);
	mvprintw(1, 0, "sort: %s   delay: %gs   file: %s", sort ? sort : "-",
		 rc->delay, path ? path : "(none: no HOME)");
	for (i = 0; i < s->n && (int)i + 3 < LINES; i++) {
		const struct top_column *c = &top_columns[s->order[i]];

		if (i == s->cur)
			attron(A_REVERSE);
		mvprintw((int)i + 3, 2, "[%c] %-10s%s", s->on[s->order[i]] ? 'x' : ' ',
			 c->title, c->sort == rc->sort && c->sort != TOP_SORT_NONE ?
			 "  (sort)" : "");
		if (i == s->cur)
			attroff(A_REVERSE);
	}
	refresh();
}

/* The delay typed (Esc or nothing: as it was); nothing to refresh here. */
static void ask_delay(struct top_toprc *rc)
{
	char buf[32], *end;
	double d;

	if (!top_prompt(1, "delay (seconds): ", buf, sizeof(buf), NULL))
		return;
	d = strtod(buf, &end);
	if (!*end && end != buf && isfinite(d) && d >= 0.1 && d <= 3600)
		rc->delay = d;
}

void top_setup_run(struct top_toprc *rc, const char *path, char *msg,
		   size_t len)
{
	struct setup s;
	int c, err;

	setup_from(&s, &rc->layout);
	timeout(-1);
	for (;;) {
		draw(&s, rc, path);
		c = getch();
		if (c == 'q' || c == 27 || c == KEY_F(2) || c == KEY_F(10))
			break;
		switch (c) {
		case KEY_UP:
			if (s.cur)
				s.cur--;
			break;
		case KEY_DOWN:
			if (s.cur + 1 < s.n)
				s.cur++;
			break;
		case ' ':
			toggle(&s);
			break;
		case '[':
			if (s.cur && s.cur < s.nshown) {
				swap(&s, s.cur, s.cur - 1);
				s.cur--;
			}
			break;
		case ']':
			if (s.cur + 1 < s.nshown) {
				swap(&s, s.cur, s.cur + 1);
				s.cur++;
			}
			break;
		case 's':
			if (top_columns[s.order[s.cur]].sort != TOP_SORT_NONE)
				rc->sort = top_columns[s.order[s.cur]].sort;
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
		return;
	}
	err = top_toprc_save(path, rc);
	if (err)
		snprintf(msg, len, "setup not saved: %s: %s", path, strerror(-err));
	else
		snprintf(msg, len, "setup saved to %s", path);
}
