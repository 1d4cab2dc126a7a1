// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: a user-space walk of a stopped thread's stack over the
 * unwind tables the unwinder built for the module (unwind_maps.c), by the
 * rules the module's walker follows (kmod/leak_unwind.c, memtrack_unwind.h):
 * a row's CFA is the stack or frame pointer plus an offset, the return
 * address where memtrack_unwind_ra_off() says, the frame pointer saved at
 * CFA + bp_off; a pc no table covers goes by frame pointers.  Apart from
 * the tables, because it reads a thread ptrace holds (its registers, its
 * memory through /proc/PID/mem) where the module reads the current one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>

#include "libmemtrack.h"
#include "internal.h"

struct mt_walker {
	struct mt_unwinder *u;
	struct mt_procmap *maps;
	size_t nmaps;
	int mem;
};

static bool read_word(const struct mt_walker *w, uint64_t addr, uint64_t *val)
{
	return pread(w->mem, val, sizeof(*val), (off_t)addr) == sizeof(*val);
}

/* The row covering pc; NULL: no table, or no CFI there (NONE). */
static const struct memtrack_unwind_row *row_of(const struct mt_walker *w,
						uint64_t pc)
{
	const struct mt_unwind_table *t = NULL;
	uint64_t bias = 0, vaddr;
	size_t i, lo, hi, mid;

	for (i = 0; i < w->nmaps; i++)
		if (w->maps[i].start <= pc && pc < w->maps[i].end) {
			t = mt_unwinder_table(w->u, &w->maps[i], &bias);
			break;
		}
	if (!t || pc < bias)
		return NULL;
	vaddr = pc - bias;
	lo = 0;
	hi = t->nr;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->rows[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || t->rows[lo - 1].cfa == MEMTRACK_UNWIND_NONE)
		return NULL;
	return &t->rows[lo - 1];
}

/* One frame up: *sp, *bp and the return address; false where it ends. */
static bool step(const struct mt_walker *w, uint64_t pc, uint64_t *sp,
		 uint64_t *bp, uint64_t *ra)
{
	const struct memtrack_unwind_row *row = row_of(w, pc);
	uint64_t cfa;

	if (!row) {
		/* frame pointers: [bp] the caller's bp, the frame record above */
		if (!*bp || *bp & 7 || *bp < *sp ||
		    !read_word(w, *bp + MEMTRACK_UNWIND_FRAME_RA, ra))
			return false;
		cfa = *bp + MEMTRACK_UNWIND_FRAME_CFA;
		if (!read_word(w, *bp, bp))
			return false;
	} else if (row->cfa == MEMTRACK_UNWIND_CFA_SP ||
		   row->cfa == MEMTRACK_UNWIND_CFA_BP) {
		cfa = (row->cfa == MEMTRACK_UNWIND_CFA_SP ? *sp : *bp) +
		      (int64_t)row->cfa_off;
		if (!read_word(w, cfa + memtrack_unwind_ra_off(row), ra) ||
		    (row->bp_off && !read_word(w, cfa + row->bp_off, bp)))
			return false;
	} else {
		return false;		/* outermost, or a rule not followed */
	}
	if (cfa <= *sp || !*ra)
		return false;
	*sp = cfa;
	return true;
}

int mt_walker_open(struct mt_unwinder *u, pid_t pid, struct mt_walker **out)
{
	struct mt_walker *w = calloc(1, sizeof(*w));
	uint64_t bias;
	char path[64];
	size_t i;
	int err;

	if (!w)
		return mt_seterr(-ENOMEM, "out of memory");
	w->u = u;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	w->mem = open(path, O_RDONLY | O_CLOEXEC);
	if (w->mem < 0) {
		err = mt_seterr(-errno, "%s: %s", path, strerror(errno));
		free(w);
		return err;
	}
	err = mt_procmaps_read(pid, &w->maps, &w->nmaps);
	if (err) {
		close(w->mem);
		free(w);
		return err;
	}
	/* every table built now, not while the walks' threads are stopped */
	for (i = 0; i < w->nmaps; i++)
		mt_unwinder_table(u, &w->maps[i], &bias);
	*out = w;
	return 0;
}

void mt_walker_close(struct mt_walker *w)
{
	if (!w)
		return;
	mt_procmaps_free(w->maps, w->nmaps);
	close(w->mem);
	free(w);
}

int mt_walker_stack(struct mt_walker *w, const mt_regs_t *regs,
		    uint64_t *pcs, uint64_t *sps, size_t max)
{
	uint64_t pc = MT_REG_PC(regs), sp = MT_REG_SP(regs);
	uint64_t bp = MT_REG_FP(regs), ra;
	size_t n = 0;

	if (!max)
		return 0;
	pcs[n] = pc;
	sps[n++] = sp;
	/* a return address may be just past a noreturn call's end: pc - 1 */
	while (n < max && step(w, n > 1 ? pc - 1 : pc, &sp, &bp, &ra)) {
		pc = ra;
		pcs[n] = pc;
		sps[n++] = sp;
	}
	return (int)n;
}

int mt_unwinder_walk(struct mt_unwinder *u, pid_t tid, uint64_t *pcs,
		     uint64_t *sps, size_t max)
{
	struct mt_walker *w;
	mt_regs_t regs;
	int n;

	if (!max)
		return 0;
	if (mt_regs_get(tid, &regs) < 0)
		return mt_seterr(-errno, "ptrace(GETREGS, %d): %s", (int)tid,
				 strerror(errno));
	n = mt_walker_open(u, tid, &w);
	if (n)
		return n;
	n = mt_walker_stack(w, &regs, pcs, sps, max);
	mt_walker_close(w);
	return n;
}
