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
#include "grow.h"

void mtn_buf_oom(struct mtn_buf *b)
{
	b->oom = true;
	b->cap = b->len;
}

/* Room for len more bytes; false (and b->oom) if there is none. */
static bool reserve(struct mtn_buf *b, size_t len)
{
	if (b->oom)
		return false;
	if (mt_grow((void **)&b->p, &b->cap, b->len + len + 1, 1, 65536)) {
		mtn_buf_oom(b);
		return false;
	}
	return true;
}

/*
 * Formatted straight into the room there is; only what does not fit is
 * formatted again once the buffer grew (a scrape formats thousands of
 * short series: measuring each first cost a second vsnprintf every time).
 */
void mtn_buf_printf(struct mtn_buf *b, const char *fmt, ...)
{
	size_t room = b->oom ? 0 : b->cap - b->len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		mtn_buf_oom(b);
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

void mtn_buf_append_slow(struct mtn_buf *b, const void *data, size_t len)
{
	if (!reserve(b, len))
		return;
	memcpy(b->p + b->len, data, len);
	b->len += len;
}
