// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's help screen (h, ?, F1): the keys, then the growth
 * flag's settings; it scrolls, and q, Esc or h close it.
 */
#include <stdio.h>
#include "top_ui_int.h"

static const char *const help_text[] = {
	"memtrack-top keys",
	"",
	"  q F10      quit",
	"  M          sort by RSS       P  by %CPU       N  by PID",
	"  T          by TIME, only where a TIME column can show it",
	"  < >        sort by the column left / right of the current one",
	"  F6         sort by: a menu of the columns (Up Down, Enter, Esc)",
	"  I          reverse the order",
	"  / F3       search: the selection to the first command holding the text",
	"             as it is typed (any case); F3 the next, Shift-F3 the previous",
	"  \\ F4       filter as it is typed: commands holding the text (any case);",
	"             pod=, namespace=, container=TEXT: by that name; Esc clears",
	"  u          only one user's processes; empty clears",
	"  H          threads under their process",
	"  K          kernel threads too (hidden at start)",
	"  Enter      the selected process's memory: split, counters, maps, RSS history",
	"  l          the selected process's open files",
	"  t F5       process tree",
	"  p          one row per program (all its processes summed)",
	"  W          the full command line of each process, after the columns",
	"  A          cluster view: all nodes' processes, from the aggregator",
	"             (--cluster HOST:PORT, else memtrackd.conf's); p: per program",
	"  g          one row per cgroup (its processes summed; LIMIT: memory.max)",
	"  G          one row per container, then per pod, then per process",
	"  e          events pane: OOM kills, reclaim stalls, RSS and growth alerts",
	"  X          PSS and USS columns (smaps_rollup of the rows on screen)",
	"  Z          pause / resume",
	"  space      tag / untag the selected process (and move down one)",
	"  c          tag the selected process and every process under it",
	"  U          untag all",
	"  d          refresh interval (0.1..3600 s)",
	"  s          memtrack-leak on the selected process: its top stacks in the pane",
	"  Up Down PgUp PgDn Home End  move the selection bar",
	"  Left Right scroll sideways through every column",
	"  F2 S C     setup: columns, their order, sort key, delay (F10 saves, Esc cancels)",
	"  k F9       a signal to the tagged processes, else the selected one (a menu, y)",
	"  F7 F8      nice - / + of the selected process;  r  renice to a value",
	"  h ? F1     this help: Up Down PgUp PgDn Home End scroll, q Esc h close",
	"",
};

/* The help's lines: the keys, then the flag's two with their settings. */
#define HELP_LINES	(MT_ARRAY_SIZE(help_text) + 2)

static void help_line(const struct top_table *tb, size_t i, char *buf,
		      size_t len)
{
	if (i < MT_ARRAY_SIZE(help_text))
		snprintf(buf, len, "%s", help_text[i]);
	else if (i == MT_ARRAY_SIZE(help_text))
		snprintf(buf, len,
			 "FLAG LEAK?+RATE/s: RSS's low point rose in each quarter of the last %.0f s,",
			 tb->growth.window);
	else
		snprintf(buf, len,
			 "  by %.0f bytes/s or more (--growth-window, --growth-min-rate)",
			 tb->growth.min_rate);
}

/* The lines the help can show: all but the last row, which says where. */
static size_t help_rows(void)
{
	return LINES > 1 ? (size_t)LINES - 1 : 1;
}

/* Scrolls the help by d lines, kept within it. */
static void help_scroll(struct ui *u, long d)
{
	size_t max = HELP_LINES > help_rows() ? HELP_LINES - help_rows() : 0;

	if (d < 0)
		u->help_top = (size_t)-d > u->help_top ? 0 : u->help_top + d;
	else
		u->help_top += (size_t)d;
	if (u->help_top > max)
		u->help_top = max;
}

void top_help_draw(struct ui *u)
{
	size_t rows = help_rows(), i;
	char line[160];

	help_scroll(u, 0);
	erase();
	for (i = 0; i < rows && u->help_top + i < HELP_LINES; i++) {
		help_line(&u->tb, u->help_top + i, line, sizeof(line));
		move((int)i, 0);
		top_add_cells(line, COLS);
	}
	snprintf(line, sizeof(line),
		 "help: lines %zu-%zu of %zu; Up Down PgUp PgDn Home End scroll, q Esc h close",
		 u->help_top + 1, u->help_top + i, (size_t)HELP_LINES);
	top_titles_on();
	move(LINES - 1, 0);
	top_add_cells(line, COLS);
	top_pad_row(LINES - 1);
	top_titles_off();
}

/* A key while the help is open: true if it closes it. */
bool top_help_key(struct ui *u, int c)
{
	long page = (long)help_rows();

	switch (c) {
	case 'q': case 27: case 'h': case '?': case KEY_F(1): case KEY_F(10):
		return true;
	case KEY_UP: help_scroll(u, -1); break;
	case KEY_DOWN: help_scroll(u, 1); break;
	case KEY_PPAGE: help_scroll(u, -page); break;
	case KEY_NPAGE: case ' ': help_scroll(u, page); break;
	case KEY_HOME: u->help_top = 0; break;
	case KEY_END: help_scroll(u, (long)HELP_LINES); break;
	default: break;
	}
	return false;
}
