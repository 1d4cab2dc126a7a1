// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's prompts: a small line editor instead of ncurses'
 * getnstr(), which takes Esc as a character (F4, Esc, Enter filtered on
 * "^["), and blocks: the screen stood still while a prompt was open.
 * Bytes are kept as typed (UTF-8 included); Backspace takes back a whole
 * character.
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

static void show(int y, const char *what, const char *buf)
{
	move(y, 0);
	clrtoeol();
	addstr(what);
	addstr(buf);
	refresh();
}

/* The length of buf (n bytes) less its last UTF-8 character. */
static size_t back_one(const char *buf, size_t n)
{
	while (n && ((unsigned char)buf[--n] & 0xc0) == 0x80)
		;
	return n;
}

volatile sig_atomic_t top_quit_signal;

bool top_prompt(int y, const char *what, char *buf, size_t len,
		const struct top_redraw *rd)
{
	size_t n = 0;
	bool done = false, ok = false;
	int c;

	buf[0] = '\0';
	curs_set(1);
	timeout(rd && rd->frame ? rd->every_ms : -1);
	show(y, what, buf);
	while (!done && !top_quit_signal) {
		c = getch();
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
			n = back_one(buf, n);
			break;
		case CTRL_U:
			n = 0;
			break;
		default:
			/* a byte of text, not a key or a control character */
			if (c >= ' ' && c <= 0xff && c != 127 && n + 1 < len)
				buf[n++] = (char)c;
			break;
		}
		buf[n] = '\0';
		if (!done)
			show(y, what, buf);
	}
	curs_set(0);
	return ok;
}
