// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's terminal (top_ui_int.h): given back on a quit or crash
 * signal, its colours (or none), and the few ways text is put on it: cut
 * to screen cells, padded across a row, in the titles' attributes.
 */
#include <signal.h>
#include <string.h>
#include "top_prompt.h"
#include "top_text.h"
#include "top_ui_int.h"

static void on_quit_signal(int sig)
{
	top_quit_signal = sig;
}

/* A crash must not leave the terminal raw: restore it, then die of it. */
static void on_crash_signal(int sig)
{
	endwin();
	signal(sig, SIG_DFL);
	raise(sig);
}

void top_term_signals(void)
{
	static const int quit_sigs[] = { SIGINT, SIGTERM, SIGHUP };
	static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,
					  SIGABRT };
	struct sigaction sa = { 0 };
	size_t i;

	sa.sa_handler = on_quit_signal;
	for (i = 0; i < sizeof(quit_sigs) / sizeof(quit_sigs[0]); i++)
		sigaction(quit_sigs[i], &sa, NULL);
	sa.sa_handler = on_crash_signal;
	sa.sa_flags = SA_RESETHAND;
	for (i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
		sigaction(crash_sigs[i], &sa, NULL);
}

/* colours are on (top_term_colours()) */
bool top_colour;

void top_term_colours(bool mono)
{
	top_colour = !mono && has_colors() && start_color() == OK;
	if (!top_colour)
		return;
	use_default_colors();
	init_pair(PAIR_USED, COLOR_GREEN, -1);
	init_pair(PAIR_BUFFERS, COLOR_BLUE, -1);
	init_pair(PAIR_CACHE, COLOR_YELLOW, -1);
	init_pair(PAIR_SWAP, COLOR_RED, -1);
	init_pair(PAIR_TITLES, COLOR_BLACK, COLOR_GREEN);
	init_pair(PAIR_FLAG, COLOR_RED, -1);
	init_pair(PAIR_TAGGED, COLOR_YELLOW, -1);
}

/* A tagged row: bold yellow as htop's, bold without colours. */
attr_t top_tagged_attr(void)
{
	return top_colour ? COLOR_PAIR(PAIR_TAGGED) | A_BOLD : A_BOLD;
}

/*
 * Titles: black on green; without colours bold and underlined, since the
 * selection bar is in reverse video and a bar on the first row under
 * reversed titles read as one block.
 */
static attr_t titles_attr(void)
{
	return top_colour ? COLOR_PAIR(PAIR_TITLES) : A_BOLD | A_UNDERLINE;
}

/*
 * Spaces from the cursor to the end of row y, in the attributes on (a
 * title or the bar across the whole width); none past it when the text
 * filled the row and the cursor went on to the next.
 */
void top_pad_row(int y)
{
	int x;

	for (x = getcurx(stdscr); x < COLS && getcury(stdscr) == y; x++)
		addch(' ');
}

/* s at the cursor, cut to cells screen cells (addnstr() counts bytes). */
void top_add_cells(const char *s, int cells)
{
	size_t used;

	if (cells > 0)
		addnstr(s, top_text_fit(s, cells, &used));
}

void top_titles_on(void)
{
	attron(titles_attr());
}

void top_titles_off(void)
{
	attroff(titles_attr());
}
