// SPDX-License-Identifier: LGPL-2.1
/*
 * memtrack-leak --by-lib: the stacks' figures summed per calling object
 * (the ELF object holding frames[0], the allocator's caller) and API.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libmemtrack.h"
#include "internal.h"

/*
 * The mappings of pid, a deleted file's named "PATH (deleted)" as maps
 * names it: the report says so of a library replaced since it was loaded.
 */
static int read_segs(pid_t pid, struct mt_procmap **out, size_t *n)
{
	struct mt_procmap *v;
	size_t i;
	int err;

	err = mt_procmaps_read(pid, out, n);
	if (err)
		return err;
	v = *out;
	for (i = 0; i < *n; i++) {
		char *name;

		if (!v[i].deleted)
			continue;
		if (asprintf(&name, "%s (deleted)", v[i].path) < 0) {
			mt_procmaps_free(v, *n);
			*out = NULL;
			return mt_seterr(-ENOMEM, "out of memory");
		}
		free(v[i].path);
		v[i].path = name;
	}
	return 0;
}

/* The file mapped at addr. */
static const char *object_of(const struct mt_procmap *v, size_t n,
			     uint64_t addr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].path[0] == '/' && v[i].start <= addr && addr < v[i].end)
			return v[i].path;
	return "[unknown]";
}

static int cmp_rows(const void *a, const void *b)
{
	const struct mt_bylib_row *x = a, *y = b;
	int c;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	c = strcmp(x->object, y->object);
	return c ? c : (x->api > y->api) - (x->api < y->api);
}

int mt_by_lib_segs(const struct mt_procmap *segs, size_t nsegs,
		   const struct mt_leak_stack *v, size_t n,
		   struct mt_bylib_row **out, size_t *nrows)
{
	struct mt_bylib_row *rows = NULL;
	size_t i, j, nr = 0;

	*out = NULL;
	*nrows = 0;
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows)
		return mt_seterr(-ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		const char *obj;

		/* A freeing call's stack (of a mismatched free) allocated nothing. */
		if (!v[i].total_allocs && !v[i].blocks)
			continue;
		obj = v[i].nr_frames ?
		      object_of(segs, nsegs, v[i].frames[0]) : "[unknown]";

		for (j = 0; j < nr; j++)
			if (rows[j].api == v[i].api && !strcmp(rows[j].object, obj))
				break;
		if (j == nr) {
			rows[nr].object = strdup(obj);
			if (!rows[nr].object) {
				mt_bylib_free(rows, nr);
				return mt_seterr(-ENOMEM, "out of memory");
			}
			rows[nr++].api = v[i].api;
		}
		rows[j].bytes += v[i].bytes;
		rows[j].blocks += v[i].blocks;
		rows[j].calls += v[i].total_allocs;
		rows[j].call_bytes += v[i].total_bytes;
		rows[j].stacks++;
	}
	qsort(rows, nr, sizeof(*rows), cmp_rows);
	*out = rows;
	*nrows = nr;
	return 0;
}

int mt_leak_by_lib(pid_t pid, const struct mt_leak_stack *v, size_t n,
		   struct mt_bylib_row **out, size_t *nrows)
{
	struct mt_procmap *segs;
	size_t nsegs;
	int err;

	*out = NULL;
	*nrows = 0;
	err = read_segs(pid, &segs, &nsegs);
	if (err)
		return err;
	err = mt_by_lib_segs(segs, nsegs, v, n, out, nrows);
	mt_procmaps_free(segs, nsegs);
	return err;
}

int mt_sym_by_lib(struct mt_symbolizer *sym, const struct mt_leak_stack *v,
		  size_t n, struct mt_bylib_row **out, size_t *nrows)
{
	struct mt_procmap *objs;
	size_t nobjs;
	int err;

	*out = NULL;
	*nrows = 0;
	err = mt_sym_objects(sym, &objs, &nobjs);
	if (err)
		return err;
	err = mt_by_lib_segs(objs, nobjs, v, n, out, nrows);
	mt_procmaps_free(objs, nobjs);
	return err;
}

void mt_bylib_free(struct mt_bylib_row *rows, size_t n)
{
	while (rows && n--)
		free(rows[n].object);
	free(rows);
}
