// SPDX-License-Identifier: GPL-2.0
/*
 * The per-program snapshot the relay sends (kind MTD_RELAY_SNAPSHOT), text:
 *
 *   snapshot SOURCE PROGRAMS
 *   p NPROC RSS_ANON RSS_FILE RSS_SHMEM SWAP COMM
 *
 * one "p" line per program with live processes, bytes; COMM last, with
 * backslash, bytes below 0x21 and from 0x7f escaped as \ooo (as in
 * /proc/memtrack/tasks).
 */
#include <string.h>

#include "relay.h"
#include "state.h"

int mtd_snapshot_format(const struct mtd_state *st, const char *source,
			struct mtd_buf *b)
{
	size_t i, n = 0;

	for (i = 0; i < st->nprogs; i++)
		n += st->progs[i].nproc > 0;
	mtd_buf_printf(b, "snapshot %s %zu\n", source, n);
	for (i = 0; i < st->nprogs; i++) {
		const struct mtd_program *pr = &st->progs[st->order[i]];
		const unsigned char *c = (const unsigned char *)pr->comm;
		size_t k, len = strnlen(pr->comm, MTD_COMM_LEN);

		if (!pr->nproc)
			continue;
		mtd_buf_printf(b, "p %u %llu %llu %llu %llu ", pr->nproc,
			       (unsigned long long)pr->rss_anon,
			       (unsigned long long)pr->rss_file,
			       (unsigned long long)pr->rss_shmem,
			       (unsigned long long)pr->swap);
		for (k = 0; k < len; k++) {
			if (c[k] <= 0x20 || c[k] >= 0x7f || c[k] == '\\')
				mtd_buf_printf(b, "\\%03o", c[k]);
			else
				mtd_buf_printf(b, "%c", c[k]);
		}
		mtd_buf_printf(b, "\n");
	}
	return b->oom ? -1 : 0;
}
