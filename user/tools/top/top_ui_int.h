/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interactive view's state and the files that draw and change it,
 * private to them: top_ui.c (the loop, the keys), top_term.c (the
 * terminal), top_draw.c (the screen), top_help.c, top_ask.c (the status
 * line's prompts), top_sortkeys.c, top_select.c (the selection bar and
 * what acts on it), top_tags.c.
 */
#ifndef MEMTRACK_TOP_UI_INT_H
#define MEMTRACK_TOP_UI_INT_H

#include <ncurses.h>
#include "top.h"
#include "top_columns.h"
#include "top_detail.h"
#include "top_events.h"
#include "top_leak.h"
#include "top_prompt.h"
#include "top_cluster.h"
#include "top_ui.h"
#include "top_view.h"

#define HEADER_LINES	6		/* above the column titles */
#define EVENT_LINES	6		/* the events pane: title and 5 events */
#define DETAIL_LINES	10		/* the detail pane (Enter, l) */
/* Processes asked of the aggregator for the cluster view (largest RSS). */
#define TOP_CLUSTER_ROWS	1000

/*
 * Colours as htop's: the memory meter's used (green), buffers (blue) and
 * cache (yellow), swap (red), column titles black on green, the growth
 * flag red.  Off with -C, NO_COLOR, or a terminal without colours: then
 * the meters draw used as '|' and buffers and cache as '#', and the
 * titles and the selection are in reverse video.
 */
enum {
	PAIR_USED = 1, PAIR_BUFFERS, PAIR_CACHE, PAIR_SWAP, PAIR_TITLES,
	PAIR_FLAG, PAIR_TAGGED,
};

struct ui {
	struct top_table tb;
	struct top_view view;
	struct top_view_opts vo;
	struct top_events ev;
	double delay;
	bool paused, help, events;
	size_t help_top;		/* the help's first line on screen */
	bool smaps;			/* PSS and USS of the rows on screen */
	size_t scroll;
	/* the selection bar: a row of the view, which follows its process
	 * (by pid) from refresh to refresh, as htop's does */
	size_t sel;
	pid_t sel_pid;			/* 0: none yet */
	/* Left/Right: characters scrolled sideways through every column;
	 * 0: the columns that fit the terminal */
	size_t hscroll;
	bool cmdline;			/* c: the command line after the columns */
	struct top_detail detail;	/* Enter, l: in place of the events */
	struct top_leak leak;		/* s: memtrack-leak on a process */
	struct top_layout layout;	/* the columns and their order (F2) */
	struct top_layout order;	/* as drawn: with the sort's column */
	const char *toprc;		/* F2 saves there */
	char user_name[32];
	char message[128];		/* on the status line: see show_message */
	double message_until;		/* 0: not drawn yet */
	/* the cluster view (A): NULL until first shown */
	struct top_cluster *cluster;
	const char *cluster_server;	/* --cluster; NULL: the config's */
	bool cluster_view;
	struct top_cluster_snap cs;	/* the latest answer, a copy */
	double next;			/* when the next sample is due */
	int err;			/* a refresh's failure: the end */
	struct top_redraw redraw;	/* a prompt's: the screen goes on */
	/*
	 * tagged processes (Space, c; U untags), by pid, sorted: k and F9
	 * signal them instead of the selected one; a process gone from the
	 * table loses its tag
	 */
	pid_t *tags;
	size_t ntags, tags_cap;
};

#define MESSAGE_S	3

/* The aggregator is asked as often as the screen is refreshed. */
static inline int cluster_interval_ms(const struct ui *u)
{
	return u->delay < 0.5 ? 500 : u->delay > 5 ? 5000 :
	       (int)(u->delay * 1000);
}

/* memtrack-leak's interval: the refresh delay, a second at least. */
static inline double leak_interval(const struct ui *u)
{
	return u->delay < 1 ? 1 : u->delay;
}

/* top_term.c */
extern bool top_colour;			/* colours are on */
void top_term_signals(void);
void top_term_colours(bool mono);
attr_t top_tagged_attr(void);
void top_titles_on(void);
void top_titles_off(void);
void top_pad_row(int y);
void top_add_cells(const char *s, int cells);

/* top_tags.c */
bool top_is_tagged(const struct ui *u, pid_t pid);
int top_tag_set(struct ui *u, pid_t pid, bool on);
void top_tags_prune(struct ui *u);

/* top_draw.c: the whole screen, the help's when it is open */
void top_ui_draw(struct ui *u);

/* top_help.c */
void top_help_draw(struct ui *u);
/* A key while the help is open: true if it closes it. */
bool top_help_key(struct ui *u, int c);

/* top_ask.c */
void top_ask_delay(struct ui *u);
void top_ask_user(struct ui *u);
void top_ask_filter(struct ui *u);
void top_ask_search(struct ui *u);

/* top_sortkeys.c */
void top_sort_if_shown(struct ui *u, const char *name);
void top_next_sort(struct ui *u, int dir);
void top_sort_menu(struct ui *u);

/* top_select.c */
void top_follow_selection(struct ui *u);
void top_move_selection(struct ui *u, long by);
void top_signal_selected(struct ui *u);
void top_tag_selected(struct ui *u, bool children);
void top_renice_selected(struct ui *u, int delta);
void top_leak_selected(struct ui *u);
void top_detail_show(struct ui *u, enum top_detail_kind kind);

#endif
