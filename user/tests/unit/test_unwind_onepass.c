// SPDX-License-Identifier: GPL-2.0
/*
 * libmemtrack's unwind tables built in one pass over .eh_frame (cfa.c)
 * against the same tables built with libdw's CFI alone, row by row, for
 * each ELF file named: one PASS/FAIL line a file, the number of rows and
 * both builders' times.  usage: test_unwind_onepass FILE...
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "libmemtrack.h"
#include "internal.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A test's name: the file's last two path components. */
static const char *name_of(const char *path)
{
	const char *p = path + strlen(path);
	int slashes = 0;

	while (p > path && !(p[-1] == '/' && ++slashes == 2))
		p--;
	return p;
}

static const char *diff(const struct mt_unwind_table *a,
			const struct mt_unwind_table *b, size_t *at)
{
	size_t i;

	if (a->vstart != b->vstart || a->vend != b->vend ||
	    a->vaddr_off != b->vaddr_off)
		return "ranges";
	for (i = 0; i < a->nr && i < b->nr; i++) {
		*at = i;
		if (memcmp(&a->rows[i], &b->rows[i], sizeof(a->rows[i])))
			return "row";
	}
	*at = i;
	return a->nr != b->nr ? "row count" : NULL;
}

int main(int argc, char **argv)
{
	int i, failed = 0;

	for (i = 1; i < argc; i++) {
		struct mt_unwind_table one, dw;
		double t0, t1, t2;
		const char *why;
		size_t at = 0;
		int e1, e2;

		t0 = now();
		e1 = mt_unwind_build(argv[i], &one);
		t1 = now();
		e2 = mt_unwind_build_with(argv[i], &dw, MT_CFI_LIBDW);
		t2 = now();
		if (e1 || e2) {
			printf("FAIL %s: build %d / libdw %d: %s\n", name_of(argv[i]), e1,
			       e2, mt_errmsg());
			failed++;
			continue;
		}
		why = diff(&one, &dw, &at);
		if (why) {
			printf("FAIL %s: %s differs at %zu (%zu rows, libdw %zu): addr %#x cfa %u/%d bp %d, libdw addr %#x cfa %u/%d bp %d\n",
			       name_of(argv[i]), why, at, one.nr, dw.nr,
			       at < one.nr ? one.rows[at].addr : 0,
			       at < one.nr ? one.rows[at].cfa : 0,
			       at < one.nr ? one.rows[at].cfa_off : 0,
			       at < one.nr ? one.rows[at].bp_off : 0,
			       at < dw.nr ? dw.rows[at].addr : 0,
			       at < dw.nr ? dw.rows[at].cfa : 0,
			       at < dw.nr ? dw.rows[at].cfa_off : 0,
			       at < dw.nr ? dw.rows[at].bp_off : 0);
			failed++;
		} else {
			printf("PASS %s: %zu rows equal (%.3f s, libdw %.3f s)\n",
			       name_of(argv[i]), one.nr, t1 - t0, t2 - t1);
		}
		mt_unwind_table_free(&one);
		mt_unwind_table_free(&dw);
	}
	return failed ? 1 : 0;
}
