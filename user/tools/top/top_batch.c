// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top -b: one sample as plain text, like top -b (header lines,
 * then a line per process), or as JSON lines: a "summary" object, then one
 * "task" object per process, sizes in bytes, each column by its name.
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include "top.h"
#include "top_columns.h"
#include "top_view.h"

#define KIB(x)	((uint64_t)(x) >> 10)

/* What top calls buff/cache: page cache (with buffers) and reclaimable slab. */
static uint64_t cache_bytes(const struct memtrack_summary *s)
{
	return s->file_pages + s->slab_reclaimable;
}

static uint64_t used_bytes(const struct memtrack_summary *s)
{
	uint64_t free_cache = s->mem_free + cache_bytes(s);

	return s->mem_total > free_cache ? s->mem_total - free_cache : 0;
}

void top_batch_text(FILE *f, const struct top_table *tb, const char *source,
		    uint64_t cols, const struct top_layout *order,
		    size_t listed, size_t nrows)
{
	const struct memtrack_summary *s = &tb->si.sum;
	char line[2048], when[16];
	time_t now = time(NULL);
	size_t i;
	int len;

	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	fprintf(f, "memtrack-top - %s, source: %s, processes: %zu\n", when,
		source, listed);
	fprintf(f, "KiB Mem : %" PRIu64 " total, %" PRIu64 " free, %" PRIu64
		" used, %" PRIu64 " cache\n", KIB(s->mem_total),
		KIB(s->mem_free), KIB(used_bytes(s)), KIB(cache_bytes(s)));
	fprintf(f, "KiB Use : %" PRIu64 " anon, %" PRIu64 " file, %" PRIu64
		" shmem, %" PRIu64 " slab, %" PRIu64 " dirty, %" PRIu64
		" writeback\n", KIB(s->anon_pages), KIB(s->file_pages),
		KIB(s->shmem), KIB(s->slab_reclaimable + s->slab_unreclaimable),
		KIB(s->dirty), KIB(s->writeback));
	fprintf(f, "KiB Swap: %" PRIu64 " total, %" PRIu64 " free, %" PRIu64
		" used\n", KIB(tb->si.swap_total), KIB(s->swap_free),
		KIB(tb->si.swap_total - s->swap_free));
	if (tb->si.module)
		fprintf(f, "Since load: %" PRIu64 " reclaim stalls, %" PRIu64
			" allocation failures, %" PRIu64 " OOM kills\n",
			(uint64_t)s->direct_reclaim_stalls,
			(uint64_t)s->page_alloc_failures,
			(uint64_t)s->oom_kills);
	else
		fprintf(f, "Since boot: %" PRIu64 " reclaim stalls, %" PRIu64
			" OOM kills (allocation failures: module only)\n",
			(uint64_t)s->direct_reclaim_stalls,
			(uint64_t)s->oom_kills);
	fputc('\n', f);
	top_format_header(line, sizeof(line), cols, order);
	fprintf(f, "%s\n", line);
	for (i = 0; i < listed && i < nrows; i++) {
		len = top_format_row(&tb->rows[i], line, sizeof(line), cols,
				     order);
		line[len++] = '\n';
		fwrite(line, 1, len, f);
	}
	fputc('\n', f);
}

/*
 * A process: what it is (ids, counts, totals), then each column of cols
 * by its name (top_columns.h), and every TOP_COL_JSON_ANY one.
 */
static void json_row(FILE *f, const struct top_row *r, uint64_t cols)
{
	const struct memtrack_task *t = &r->t;
	const struct top_column *c;
	size_t i;

	fprintf(f, "{\"type\":\"task\",\"ppid\":%d,\"uid\":%u", t->ppid,
		t->uid);
	/* a summed row (--group): how many processes */
	if (r->group)
		fprintf(f, ",\"processes\":%u", r->group);
	fprintf(f, ",\"threads\":%u,\"cgroup_id\":%llu,\"cpu_ns\":%llu,"
		"\"start_ns\":%llu,\"min_flt\":%llu,\"maj_flt\":%llu,"
		"\"growth_rate\":%.1f,\"growing\":%s",
		t->threads, (unsigned long long)t->cgroup_id,
		(unsigned long long)(t->utime_ns + t->stime_ns),
		(unsigned long long)t->start_ns,
		(unsigned long long)t->counters[MEMTRACK_CTR_MIN_FLT],
		(unsigned long long)t->counters[MEMTRACK_CTR_MAJ_FLT],
		r->growth_rate, r->growing ? "true" : "false");
	for (i = 0; i < top_nr_columns; i++) {
		c = &top_columns[i];
		if (!(cols & (1ULL << i)) && !(c->flags & TOP_COL_JSON_ANY))
			continue;
		fprintf(f, ",\"%s\":", c->name);
		c->json(f, c, r);
	}
	fputs("}\n", f);
}

void top_batch_json(FILE *f, const struct top_table *tb, const char *source,
		    uint64_t cols, size_t listed, size_t nrows)
{
	const struct memtrack_summary *s = &tb->si.sum;
	size_t i;

	fprintf(f, "{\"type\":\"summary\",\"source\":");
	mt_json_print(f, source);
	fprintf(f, ",\"module\":%s,\"processes\":%zu,\"time\":%.6f,"
		"\"timestamp\":%.3f,\"interval\":%.6f,"
		"\"growth_window\":%.1f,\"growth_min_rate\":%.1f,"
		"\"mem_total\":%llu,\"mem_free\":%llu,\"used\":%" PRIu64
		",\"cache\":%" PRIu64 ",\"anon\":%llu,\"file\":%llu,"
		"\"shmem\":%llu,\"slab\":%llu,\"dirty\":%llu,"
		"\"writeback\":%llu,\"swap_total\":%llu,\"swap_free\":%llu,"
		"\"reclaim_stalls\":%llu,\"oom_kills\":%llu",
		tb->si.module ? "true" : "false", listed, tb->now, tb->wall,
		tb->interval, tb->growth.window, tb->growth.min_rate,
		(unsigned long long)s->mem_total,
		(unsigned long long)s->mem_free, used_bytes(s),
		cache_bytes(s), (unsigned long long)s->anon_pages,
		(unsigned long long)s->file_pages,
		(unsigned long long)s->shmem,
		(unsigned long long)(s->slab_reclaimable +
				     s->slab_unreclaimable),
		(unsigned long long)s->dirty,
		(unsigned long long)s->writeback,
		(unsigned long long)tb->si.swap_total,
		(unsigned long long)s->swap_free,
		(unsigned long long)s->direct_reclaim_stalls,
		(unsigned long long)s->oom_kills);
	if (tb->si.module)
		fprintf(f, ",\"alloc_failures\":%llu",
			(unsigned long long)s->page_alloc_failures);
	fprintf(f, "}\n");
	for (i = 0; i < listed && i < nrows; i++)
		json_row(f, &tb->rows[i], cols);
}
