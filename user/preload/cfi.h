/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libmemtrack-preload's unwinder (cfi.c): the stack of a hook's caller,
 * from the loaded objects' DWARF CFI, without frame pointers.
 */
#ifndef MEMTRACK_PRELOAD_CFI_H
#define MEMTRACK_PRELOAD_CFI_H

#include <stdbool.h>
#include <stdint.h>

#include "cfa.h"

/* Where a walk starts: a return address, the stack pointer and RBP there. */
struct pl_regs {
	uint64_t pc, sp, bp;
};

/*
 * In a hook built with frame pointers: its return address into its
 * caller, and the caller's stack pointer (after the return: the hook's
 * CFA) and frame pointer (saved by the hook's prologue, its frame record:
 * memtrack_unwind.h), so the walk starts at the caller.  The CFA is the
 * compiler's: arm64 puts the frame record at the bottom of the frame, not
 * a fixed distance below the CFA as x86-64 does.
 */
#define pl_regs_here(r) do {						\
	uint64_t *fa_ = __builtin_frame_address(0);			\
	(r)->pc = (uint64_t)__builtin_return_address(0);		\
	(r)->sp = (uint64_t)__builtin_dwarf_cfa();			\
	(r)->bp = fa_[0];						\
} while (0)

/*
 * A hook's frame while it runs (PL_FRAME_HERE), for a walk that is rarely
 * needed, made only then by pl_regs_of(): its frame record's address and
 * its CFA.
 */
struct pl_frame {
	const void *record, *cfa;
};

#define PL_FRAME_HERE \
	((struct pl_frame){ __builtin_frame_address(0), __builtin_dwarf_cfa() })

#define pl_regs_of(r, frame) do {					\
	const uint64_t *fa_ = (const uint64_t *)(frame)->record;	\
	(r)->pc = fa_[MEMTRACK_UNWIND_FRAME_RA / sizeof(*fa_)];	\
	(r)->sp = (uint64_t)(frame)->cfa;				\
	(r)->bp = fa_[0];						\
} while (0)

#define PL_MAX_FRAMES	64

/*
 * What a walk depended on: its start and every stack word it read.  A
 * walk is a function of these alone (the rules depend on the pc only), so
 * a walk from the same start over the same words is the same walk: a
 * thread allocating again from where it did has its stack for a compare
 * per word, without a rule.  RBP counts only if a rule read it before a
 * frame restored it (without frame pointers it is any register), and a
 * saved RBP a frame restored only if a rule read it before the next.
 */
#define PL_BP_WORDS	16		/* saved RBPs a recorded walk may use */
/*
 * Kept in the thread's TLS, which a leak scan (--scan, memcheck) reads as
 * it reads any memory: nothing here may look like a pointer to a block.
 * The values are kept complemented (a heap or stack address's complement
 * is not canonical) and the words' addresses as offsets from the start's
 * stack pointer; a compare costs no more.
 */
struct pl_walk {
	bool valid;			/* ended by its rules, not a bound */
	bool bp_used;
	int nr;				/* words read */
	uint64_t npc, nsp, nbp;		/* the start, complemented */
	/* a return address a frame, and the saved RBPs a rule used */
	struct {
		int64_t off;		/* its address - the start's RSP */
		uint64_t nval;		/* ~its value */
	} word[PL_MAX_FRAMES + PL_BP_WORDS];
};

/*
 * A thread's rules by return address, direct-mapped: a hit is a compare
 * and the rule read in place.  It holds the rules of one generation of the
 * object table; a walk that finds the table refreshed since (new objects:
 * a pc cached as in none may now have CFI) starts it afresh.  The caller
 * keeps it (state.h's struct pl_cache), not the TLS: see there.
 */
#define PL_MEMO_BITS	10
struct pl_cfi_memo {
	uint32_t gen;
	struct pl_memo_rule {
		uint64_t pc;		/* a return address; 0: empty */
		struct cfa_rule r;
	} e[1 << PL_MEMO_BITS];
};

/*
 * pcs[0] = start->pc, then its callers; returns how many (<= max, at most
 * PL_MAX_FRAMES), with the thread's memo.  w (or NULL): what the walk
 * depended on; sps (or NULL): each frame's stack pointer.  *hash: the pcs'
 * hash, h = (h ^ pc) * 0x9e3779b97f4a7c15 from 0, made on the way (a
 * second pass over the pcs cost as much as the walk's own frames).
 */
int pl_cfi_backtrace(const struct pl_regs *start, struct pl_cfi_memo *memo,
		     uint64_t *pcs, int max, struct pl_walk *w, uint64_t *sps,
		     uint64_t *hash)
	__attribute__((visibility("hidden")));
/*
 * Would a walk from start be the one w recorded?  Inline in the hooks'
 * hot path: the words are compared without a branch each.
 */
static inline bool pl_cfi_same_walk(const struct pl_regs *start,
				    const struct pl_walk *w)
{
	uint64_t same = ~0ULL;
	int i;

	if (!w->valid || w->npc != ~start->pc || w->nsp != ~start->sp ||
	    (w->bp_used && w->nbp != ~start->bp))
		return false;
	/* a word and the complement of its value: all ones if equal */
	for (i = 0; i < w->nr; i++)
		same &= *(const uint64_t *)(start->sp + w->word[i].off) ^
			w->word[i].nval;
	return same == ~0ULL;
}
/* cb is told of each executable segment the unwinder learns of. */
void pl_cfi_set_object_cb(void (*cb)(const char *path, uint64_t base,
				     uint64_t lo, uint64_t hi))
	__attribute__((visibility("hidden")));

#endif
