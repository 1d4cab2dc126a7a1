// SPDX-License-Identifier: GPL-2.0
/*
 * A growable byte buffer (buf.h) that remembers running out of memory, so
 * that a long formatting run checks once, at its end.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void mtd_buf_oom(struct mtd_buf *b)
{
	b->oom = true;
	b->cap = b->len;
}

/* Room for len more bytes; false (and b->oom) if there is none. */
static bool reserve(struct mtd_buf *b, size_t len)
{
	size_t cap = b->cap ? b->cap : 65536;
	char *p;

	if (b->oom)
		return false;
	if (b->cap - b->len > len)
		return true;
	while (cap - b->len <= len)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		mtd_buf_oom(b);
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

/*
 * Formatted straight into the room there is; only what does not fit is
 * formatted again once the buffer grew (a scrape formats thousands of
 * short series: measuring each first cost a second vsnprintf every time).
 */
void mtd_buf_printf(struct mtd_buf *b, const char *fmt, ...)
{
	size_t room = b->oom ? 0 : b->cap - b->len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		mtd_buf_oom(b);
		return;
	}
	if ((size_t)n >= room) {
		if (!reserve(b, n))
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += n;
}

void mtd_buf_append_slow(struct mtd_buf *b, const void *data, size_t len)
{
	if (!reserve(b, len))
		return;
	memcpy(b->p + b->len, data, len);
	b->len += len;
}
