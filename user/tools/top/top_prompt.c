// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's prompts: a small line editor instead of ncurses'
 * getnstr(), which takes Esc as a character (F4, Esc, Enter filtered on
 * "^["), and blocks: the screen stood still while a prompt was open.
 * Bytes are kept as typed (UTF-8 included); Backspace takes back a whole
 * character.  The live form is htop's search and filter: each edit is
 * told at once, and the screen drawn again, before Enter.
 */
#include <curses.h>
#include <string.h>

#include "top_prompt.h"

#define ESC_MS		25	/* Esc alone, not a key's sequence */
#define CTRL_U		('U' & 0x1f)

void top_prompt_init(void)
{
	set_escdelay(ESC_MS);
}

/* The length of buf (n bytes) less its last UTF-8 character. */
static size_t back_one(const char *buf, size_t n)
{
	while (n && ((unsigned char)buf[--n] & 0xc0) == 0x80)
		;
	return n;
}

volatile sig_atomic_t top_quit_signal;

static void show_live(int y, const char *what, const char *buf,
		      const struct top_live *live)
{
	const char *note = live && live->note ? live->note(live->arg) : NULL;

	move(y, 0);
	clrtoeol();
	addstr(what);
	addstr(buf);
	if (note) {
		/* the cursor stays after the text, where the next goes */
		int cy, cx;

		getyx(stdscr, cy, cx);
		addstr(note);
		move(cy, cx);
	}
	refresh();
}

bool top_prompt_live(int y, const char *what, char *buf, size_t len,
		     const struct top_redraw *rd, const struct top_live *live)
{
	size_t n = strlen(buf);
	bool done = false, ok = false, changed;
	int c;

	curs_set(1);
	timeout(rd && rd->frame ? rd->every_ms : -1);
	show_live(y, what, buf, live);
	while (!done && !top_quit_signal) {
		c = getch();
		changed = false;
		switch (c) {
		case ERR:
		case KEY_RESIZE:
			if (rd && rd->frame)
				rd->frame(rd->arg);
			break;
		case 27:
			done = true;
			break;
		case '\n':
		case '\r':
		case KEY_ENTER:
			done = ok = true;
			break;
		case KEY_BACKSPACE:
		case 127:
		case '\b':
			changed = n > 0;
			n = back_one(buf, n);
			break;
		case CTRL_U:
			changed = n > 0;
			n = 0;
			break;
		default:
			/* a byte of text, not a key or a control character */
			if (c >= ' ' && c <= 0xff && c != 127) {
				if (n + 1 < len) {
					buf[n++] = (char)c;
					changed = true;
				}
			} else if (live && live->key && live->key(live->arg, c) &&
				   rd && rd->frame) {
				rd->frame(rd->arg);
			}
			break;
		}
		buf[n] = '\0';
		if (changed && live && live->changed) {
			live->changed(live->arg, buf);
			if (rd && rd->frame)
				rd->frame(rd->arg);
		}
		if (!done)
			show_live(y, what, buf, live);
	}
	curs_set(0);
	return ok;
}

bool top_prompt(int y, const char *what, char *buf, size_t len,
		const struct top_redraw *rd)
{
	buf[0] = '\0';
	return top_prompt_live(y, what, buf, len, rd, NULL);
}
