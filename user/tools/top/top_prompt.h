/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrack-top's prompts (top_prompt.c): a line typed on one row of the
 * screen, as htop's are: Enter takes it, Esc cancels at once, Backspace
 * and Ctrl-U edit it, and the screen behind it goes on refreshing.
 */
#ifndef MEMTRACK_TOP_PROMPT_H
#define MEMTRACK_TOP_PROMPT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The quit signal caught (SIGINT, SIGTERM, SIGHUP: the terminal gone),
 * 0 none: every loop that waits for keys ends on it, not only the main
 * one, or a screen left open when the terminal closed spins for ever on
 * getch()'s errors.
 */
extern volatile sig_atomic_t top_quit_signal;

/* What a prompt calls while it waits for a key: the screen as it is now. */
struct top_redraw {
	void (*frame)(void *arg);	/* draws (and refreshes) the screen */
	void *arg;
	int every_ms;			/* how often, at most */
};

/*
 * Once, after initscr(): Esc is a key of its own 25 ms after it came, not
 * the start of a sequence a second later (ncurses' default ESCDELAY).
 */
void top_prompt_init(void);

/*
 * Reads a line into buf (len bytes with its NUL) at row y after what:
 * true on Enter (buf may be empty), false on Esc (buf as it was typed).
 * rd may be NULL: the screen then waits.
 */
bool top_prompt(int y, const char *what, char *buf, size_t len,
		const struct top_redraw *rd);

/*
 * What a live prompt tells as it is edited (htop's search and filter: the
 * list follows the text as it is typed).  Any may be NULL.
 */
struct top_live {
	void (*changed)(void *arg, const char *buf);	/* after each edit */
	/*
	 * a key the line does not take (F3): true if it was taken, and the
	 * screen is then drawn again
	 */
	bool (*key)(void *arg, int c);
	/* shown after the text (" not found"), NULL none */
	const char *(*note)(void *arg);
	void *arg;
};

/*
 * As top_prompt(), but buf's text (NUL-terminated) is where the line
 * starts, and each edit goes to live->changed, the screen drawn again
 * after it: true on Enter, false on Esc (buf as it was last edited).
 */
bool top_prompt_live(int y, const char *what, char *buf, size_t len,
		     const struct top_redraw *rd, const struct top_live *live);

#endif
