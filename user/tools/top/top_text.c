// SPDX-License-Identifier: GPL-2.0
/*
 * Screen cells of UTF-8 text (top_text.h): mbrtowc() and wcwidth() in the
 * terminal's locale (memtrack-top sets LC_CTYPE from the environment, -b
 * too).  A byte mbrtowc() refuses, or a character wcwidth() has no width
 * for, counts one cell: the terminal shows it as one (or a replacement).
 */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <limits.h>
#include <string.h>
#include <wchar.h>
#include "top_text.h"

/* The next character of s (at most n bytes): its bytes and cells. */
static size_t next_char(const char *s, size_t n, size_t *cells)
{
	mbstate_t st;
	wchar_t wc;
	size_t len;
	int w;

	if ((unsigned char)*s < 0x80) {
		*cells = 1;		/* ASCII: the usual case */
		return 1;
	}
	memset(&st, 0, sizeof(st));
	len = mbrtowc(&wc, s, n, &st);
	if (len == (size_t)-1 || len == (size_t)-2 || !len) {
		*cells = 1;
		return 1;
	}
	w = wcwidth(wc);
	*cells = w < 0 ? 1 : (size_t)w;
	return len;
}

size_t top_text_cells(const char *s, size_t n)
{
	size_t i = 0, cells = 0, c;

	while (i < n && s[i]) {
		i += next_char(s + i, n - i, &c);
		cells += c;
	}
	return cells;
}

size_t top_text_fit(const char *s, size_t cells, size_t *used)
{
	size_t i = 0, have = 0, len, c;

	/* only what fits is looked at: no strlen() of the rest */
	while (s[i]) {
		if (!((unsigned char)s[i] & 0x80)) {
			if (have == cells)
				break;
			have++;		/* ASCII: one cell, nothing to decode */
			i++;
			continue;
		}
		len = next_char(s + i, strnlen(s + i, MB_LEN_MAX), &c);
		if (have + c > cells)
			break;
		have += c;
		i += len;
	}
	*used = have;
	return i;
}
