// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: JSON strings, the one writer behind every tool's JSON.
 *
 * Written here rather than taken from json-c or jansson: the tools stream
 * their documents straight to a FILE * and mt_format_json() fills a
 * caller's buffer snprintf-style, so a DOM would only be built to be thrown
 * away, and the strings are often not UTF-8 (a comm is 15 bytes of
 * whatever was exec'd or set, maybe cut inside a character) where jansson
 * refuses the string and json-c copies it out unchecked.  Here valid UTF-8
 * passes through unchanged, '"', '\' and control characters are escaped as
 * RFC 8259 says, and each maximal ill-formed subsequence (the Unicode
 * Standard's "substitution of maximal subparts", 3.9; what Python's
 * errors="replace" does) becomes one U+FFFD: the output is always valid
 * UTF-8 and valid JSON.
 */
#include <stdio.h>
#include <string.h>

#include "libmemtrack.h"

/* Where a string goes: a stream, or a buffer filled snprintf-style. */
struct sink {
	FILE *f;
	char *buf;
	size_t len;		/* of buf */
	size_t pos;		/* what the string needs so far */
};

static void put(struct sink *k, const char *p, size_t n)
{
	if (k->f) {
		fwrite(p, 1, n, k->f);
	} else if (k->pos + 1 < k->len) {
		size_t room = k->len - 1 - k->pos;

		memcpy(k->buf + k->pos, p, n < room ? n : room);
	}
	k->pos += n;
}

int mt_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2)
		return -1;
	if (s[0] < 0xe0) {
		len = 2;
	} else if (s[0] < 0xf0) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;
		else if (s[0] == 0xed)
			hi = 0x9f;
	} else if (s[0] < 0xf5) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
	} else {
		return -1;
	}
	for (i = 1; i < len; i++, lo = 0x80, hi = 0xbf)
		if (i == n || s[i] < lo || s[i] > hi)
			return -(int)i;
	return len;
}

/* The characters RFC 8259 escapes with a letter; the other controls \u00XX. */
static const char short_escape[] = {
	['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't',
	['"'] = '"', ['\\'] = '\\',
};

static void put_escaped(struct sink *k, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char e[] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

	if (c < sizeof(short_escape) && short_escape[c]) {
		e[1] = short_escape[c];
		put(k, e, 2);
	} else {
		put(k, e, sizeof(e));
	}
}

/* Runs that need nothing are put as they are, the rest one by one. */
static void put_string(struct sink *k, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0;
	int len;

	if (!s) {
		put(k, "null", 4);
		return;
	}
	put(k, "\"", 1);
	while (i < n) {
		len = mt_utf8_seq(u + i, n - i);
		if (len > 0 && u[i] >= 0x20 && u[i] != '"' && u[i] != '\\') {
			i += len;
			continue;
		}
		put(k, s + run, i - run);
		if (len < 0) {
			put(k, "\xef\xbf\xbd", 3);
			i += -len;
		} else {
			put_escaped(k, u[i++]);
		}
		run = i;
	}
	put(k, s + run, i - run);
	put(k, "\"", 1);
}

void mt_json_print(FILE *f, const char *s)
{
	struct sink k = { .f = f };

	put_string(&k, s, s ? strlen(s) : 0);
}

size_t mt_json_snprint(char *buf, size_t len, const char *s, size_t n)
{
	struct sink k = { .buf = buf, .len = len };

	put_string(&k, s, n);
	if (len)
		buf[k.pos < len ? k.pos : len - 1] = '\0';
	return k.pos;
}
