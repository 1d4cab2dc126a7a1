// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's sort keys: M P N T (a column by its name), < and > (the
 * one beside), and F6's menu of the columns that sort; the columns'
 * table (top_columns.h) says which do.
 */
#include <ncurses.h>
#include "top_prompt.h"
#include "top_ui_int.h"

/* Column i is one the screen can show now. */
static bool can_show(const struct ui *u, size_t i)
{
	return top_columns_all(top_table_show(&u->tb, u->smaps)) & (1ULL << i);
}

/*
 * T: by TIME, as htop's, only where a column shows it (a sort by what the
 * screen cannot show leaves the rows in an order no one can check).
 */
void top_sort_if_shown(struct ui *u, const char *name)
{
	int i = top_column_index(name);

	if (i >= 0 && top_columns[i].sort && can_show(u, i)) {
		u->vo.sort = i;
		return;
	}
	snprintf(u->message, sizeof(u->message),
		 "no %s column to sort by (F6: the columns that sort)",
		 i >= 0 ? top_columns[i].title : name);
}

/* < and >: the sortable column left or right of the current one. */
void top_next_sort(struct ui *u, int dir)
{
	int i, cur = -1, n = (int)u->layout.n;
	size_t k;

	for (i = 0; i < n; i++)
		if (u->layout.col[i] == u->vo.sort)
			cur = i;
	if (cur < 0)
		cur = dir > 0 ? -1 : n;
	for (i = cur + dir; i >= 0 && i < n; i += dir) {
		k = u->layout.col[i];
		if (!top_columns[k].sort || !can_show(u, k))
			continue;
		u->vo.sort = (int)k;
		return;
	}
}

/*
 * F6: htop's sort-by menu, in a box at the top left: every column shown
 * (the layout's and the sort's) that sorts, in the table's order, the
 * current one chosen; Up Down Home End choose, Enter sorts by it, Esc
 * cancels.  A list longer than the screen scrolls.
 */
void top_sort_menu(struct ui *u)
{
	uint64_t cols = top_columns_shown(&u->layout,
					  top_table_show(&u->tb, u->smaps),
					  u->vo.sort);
	int idx[TOP_MAX_COLUMNS], n = 0, sel = 0, first = 0, h, i, c;
	WINDOW *win;

	for (i = 0; i < (int)top_nr_columns; i++) {
		if (!top_columns[i].sort || !(cols & (1ULL << i)))
			continue;
		if (i == u->vo.sort)
			sel = n;
		idx[n++] = i;
	}
	h = LINES - 4 < n ? LINES - 4 : n;
	if (h < 1)
		return;
	win = newwin(h + 3, 26, 1, 1);
	if (!win)
		return;
	keypad(win, TRUE);
	wtimeout(win, -1);
	for (;;) {
		if (sel < first)
			first = sel;
		if (sel >= first + h)
			first = sel - h + 1;
		werase(win);
		box(win, 0, 0);
		mvwprintw(win, 0, 2, " Sort by ");
		for (i = 0; i < h; i++) {
			if (first + i == sel)
				wattron(win, A_REVERSE);
			mvwprintw(win, 1 + i, 2, "%-22s",
				  top_columns[idx[first + i]].title);
			if (first + i == sel)
				wattroff(win, A_REVERSE);
		}
		mvwprintw(win, h + 1, 2, "Enter: sort  Esc: back");
		wrefresh(win);
		c = wgetch(win);
		if (c == KEY_UP && sel > 0)
			sel--;
		else if (c == KEY_DOWN && sel < n - 1)
			sel++;
		else if (c == KEY_HOME || c == KEY_PPAGE)
			sel = 0;
		else if (c == KEY_END || c == KEY_NPAGE)
			sel = n - 1;
		else if (c == '\n' || c == '\r' || c == KEY_ENTER)
			break;
		else if (c == 27 || c == 'q' || c == KEY_F(10) || c == ERR ||
			 top_quit_signal)
			sel = -1;
		if (sel < 0)
			break;
	}
	delwin(win);
	touchwin(stdscr);
	if (sel >= 0)
		u->vo.sort = idx[sel];
}
