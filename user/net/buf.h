/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A growable byte buffer (buf.c): /metrics text, snapshots, records to
 * relay, query results.  Appending never fails on its own: when memory runs
 * out, oom is set and every later append does nothing; check oom at the end.
 * Start from { 0 }; free(p) when done.
 */
#ifndef MEMTRACK_NET_BUF_H
#define MEMTRACK_NET_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct mtn_buf {
	char *p;
	size_t len, cap;
	bool oom;
};

void mtn_buf_printf(struct mtn_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void mtn_buf_append_slow(struct mtn_buf *b, const void *data, size_t len);
/* Memory ran out (here or in the caller): no append does anything more. */
void mtn_buf_oom(struct mtn_buf *b);

/*
 * Inline while the room is there: a scrape of a node of pods appends a few
 * times per series, thousands of series, and the calls were a part of it.
 */
static inline void mtn_buf_append(struct mtn_buf *b, const void *data,
				  size_t len)
{
	if (b->cap - b->len > len) {	/* an oom buffer has cap == len */
		memcpy(b->p + b->len, data, len);
		b->len += len;
		return;
	}
	mtn_buf_append_slow(b, data, len);
}

#endif /* MEMTRACK_NET_BUF_H */
