// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak --scan: every outstanding block (the module's LEAK_BLOCKS,
 * or the in-process engine's) classified
 * by a pointer scan of the briefly stopped target (libmemtrack's scan.c,
 * scan_proc.c), summed like memcheck's LEAK SUMMARY and per stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "mismatch.h"
#include "modes.h"
#include "libmemtrack.h"

static const char *const json_names[] = {
	[MT_SCAN_DEFINITE] = "definitely_lost",
	[MT_SCAN_INDIRECT] = "indirectly_lost",
	[MT_SCAN_POSSIBLE] = "possibly_lost",
	[MT_SCAN_REACHABLE] = "still_reachable",
};

struct sum {
	uint64_t bytes[MT_SCAN_NR_CLASSES], blocks[MT_SCAN_NR_CLASSES];
};

static void sum_add(struct sum *s, const struct mt_scan_block *b)
{
	s->bytes[b->cls] += b->size;
	s->blocks[b->cls]++;
}

static void print_classes(struct mode_out *m, const struct sum *s,
			  const char *indent)
{
	int c;

	for (c = 0; c < MT_SCAN_NR_CLASSES; c++) {
		if (m->json)
			fprintf(m->o, "%s\"%s\":{\"bytes\":%llu,\"blocks\":%llu}",
				c ? "," : "", json_names[c],
				(unsigned long long)s->bytes[c],
				(unsigned long long)s->blocks[c]);
		else
			fprintf(m->o, "%s%15s: %llu bytes in %llu blocks\n",
				indent, mt_scan_class_name(c),
				(unsigned long long)s->bytes[c],
				(unsigned long long)s->blocks[c]);
	}
}

static int cmp_stack_id(const void *a, const void *b)
{
	const struct mt_scan_block *x = a, *y = b;

	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

static void print_stacks(struct mode_out *m, struct mt_scan_block *b,
			 size_t nb, const struct mt_leak_stack *v, size_t n)
{
	size_t i = 0, j, k = 0;

	qsort(b, nb, sizeof(*b), cmp_stack_id);
	for (i = 0; i < nb; i = j) {
		const struct mt_leak_stack *s = stack_by_id(v, n, b[i].stack_id);
		struct sum sum = { 0 };
		uint64_t bytes = 0;

		for (j = i; j < nb && b[j].stack_id == b[i].stack_id; j++) {
			sum_add(&sum, &b[j]);
			bytes += b[j].size;
		}
		if (m->json) {
			fprintf(m->o, "%s{\"stack_id\":%u,\"api\":", k++ ? "," : "",
				b[i].stack_id);
			mt_json_print(m->o, mt_leak_api_name(b[i].api));
			fprintf(m->o, ",\"bytes\":%llu,\"blocks\":%zu,",
				(unsigned long long)bytes, j - i);
			print_classes(m, &sum, "");
			fputs(",\"frames\":[", m->o);
			if (s)
				stack_frames(m->o, m->json, m->sym, s);
			fputs("]}", m->o);
			continue;
		}
		fprintf(m->o, "  stack %u (%s): %llu bytes in %zu blocks\n",
			b[i].stack_id, mt_leak_api_name(b[i].api),
			(unsigned long long)bytes, j - i);
		print_classes(m, &sum, "    ");
		if (s)
			stack_frames(m->o, m->json, m->sym, s);
	}
}

int scan_report(struct mode_out *m, const struct memtrack_leak_block *kb,
		size_t nb, const struct mt_leak_stack *v, size_t n)
{
	struct mt_scan_snapshot snap;
	struct mt_scan_block *b;
	uint64_t t0;
	struct sum total = { 0 };
	double stopped;
	size_t i;
	int err;

	b = calloc(nb ? nb : 1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (i = 0; i < nb; i++) {
		b[i].addr = kb[i].addr;
		b[i].size = kb[i].size;
		b[i].stack_id = kb[i].stack_id;
		b[i].api = kb[i].api;
	}
	t0 = mt_mono_ns();
	err = mt_scan_snapshot_take(m->pid, b, nb, m->from, &snap);
	stopped = (mt_mono_ns() - t0) / 1e6;
	if (!err)
		err = mt_scan_classify(b, nb, snap.regions, snap.nregions);
	if (err) {
		mt_scan_snapshot_free(&snap);
		free(b);
		return err;
	}
	for (i = 0; i < nb; i++)
		sum_add(&total, &b[i]);
	m->nr++;
	if (m->json) {
		fprintf(m->o, "{\"pid\":%d,\"report\":%u,\"scan\":{\"threads\":%u,"
			"\"blocks\":%zu,\"stopped_ms\":%.3f,",
			(int)m->pid, m->nr, snap.nthreads, nb, stopped);
		print_classes(m, &total, "");
		fputs("},\"stacks\":[", m->o);
	} else {
		fprintf(m->o, "pid %d scan %u: %zu blocks, %u threads stopped for %.1f ms\n"
			"LEAK SUMMARY:\n", (int)m->pid, m->nr, nb, snap.nthreads,
			stopped);
		print_classes(m, &total, "  ");
		fputs("by stack:\n", m->o);
	}
	print_stacks(m, b, nb, v, n);
	fputs(m->json ? "]" : "", m->o);
	print_mismatches(m->o, m->json, m->sym, v, n);
	fputs(m->json ? "}\n" : "\n", m->o);
	fflush(m->o);
	mt_scan_snapshot_free(&snap);
	free(b);
	return 0;
}
