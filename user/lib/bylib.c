// SPDX-License-Identifier: LGPL-2.1
/*
 * memtrack-leak --by-lib: the stacks' figures summed per calling object
 * (the ELF object holding frames[0], the allocator's caller) and API.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrack.h"
#include "internal.h"

struct seg {
	unsigned long long lo, hi;
	char *path;
};

static void segs_free(struct seg *v, size_t n)
{
	while (n--)
		free(v[n].path);
	free(v);
}

/* The file-backed mappings of pid. */
static int read_segs(pid_t pid, struct seg **out, size_t *n)
{
	char path[64], *line = NULL, name[4096];
	struct seg *v = NULL;
	size_t cap = 0, len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return mt_seterr(-errno, "%s: %s", path, strerror(errno));
	*n = 0;
	while (getline(&line, &len, f) > 0) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx %*s %*s %*s %*u %4095[^\n]",
			   &lo, &hi, name) != 3 || name[0] != '/')
			continue;
		if (*n == cap) {
			struct seg *nv;

			cap = cap ? 2 * cap : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto oom;
			v = nv;
		}
		v[*n].lo = lo;
		v[*n].hi = hi;
		v[*n].path = strdup(name);
		if (!v[*n].path)
			goto oom;
		(*n)++;
	}
	free(line);
	fclose(f);
	*out = v;
	return 0;
oom:
	free(line);
	fclose(f);
	segs_free(v, *n);
	return mt_seterr(-ENOMEM, "out of memory");
}

static const char *object_of(const struct seg *v, size_t n, uint64_t addr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].lo <= addr && addr < v[i].hi)
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

int mt_leak_by_lib(pid_t pid, const struct mt_leak_stack *v, size_t n,
		   struct mt_bylib_row **out, size_t *nrows)
{
	struct mt_bylib_row *rows = NULL;
	struct seg *segs;
	size_t nsegs, i, j, nr = 0;
	int err;

	*out = NULL;
	*nrows = 0;
	err = read_segs(pid, &segs, &nsegs);
	if (err)
		return err;
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		segs_free(segs, nsegs);
		return mt_seterr(-ENOMEM, "out of memory");
	}
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
				segs_free(segs, nsegs);
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
	segs_free(segs, nsegs);
	qsort(rows, nr, sizeof(*rows), cmp_rows);
	*out = rows;
	*nrows = nr;
	return 0;
}

void mt_bylib_free(struct mt_bylib_row *rows, size_t n)
{
	while (rows && n--)
		free(rows[n].object);
	free(rows);
}
