/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libmemtrack-preload's unwinder (cfi.c): the stack of a hook's caller,
 * from the loaded objects' DWARF CFI, without frame pointers.
 */
#ifndef MEMTRACK_PRELOAD_CFI_H
#define MEMTRACK_PRELOAD_CFI_H

#include <stdbool.h>
#include <stdint.h>

/* Where a walk starts: a return address, the stack pointer and RBP there. */
struct pl_regs {
	uint64_t pc, sp, bp;
};

/*
 * In a hook built with frame pointers: its return address into its
 * caller, and the caller's RSP (after the return) and RBP (saved by the
 * hook's prologue), so the walk starts at the caller.
 */
#define pl_regs_here(r) do {						\
	uint64_t *fa_ = __builtin_frame_address(0);			\
	(r)->pc = (uint64_t)__builtin_return_address(0);		\
	(r)->sp = (uint64_t)(fa_ + 2);					\
	(r)->bp = fa_[0];						\
} while (0)

#define PL_MAX_FRAMES	64

/*
 * What a walk depended on: its start and every stack word it read.  A
 * walk is a function of these alone (the rules depend on the pc only), so
 * a walk from the same start over the same words is the same walk: a
 * thread allocating again from where it did has its stack for a compare
 * per word, without a rule.  RBP counts only if a rule read it before a
 * frame restored it (without frame pointers it is any register).
 */
struct pl_walk {
	bool valid;			/* ended by its rules, not a bound */
	bool bp_used;
	int nr;				/* words read */
	uint64_t pc, sp, bp;
	uint64_t at[2 * PL_MAX_FRAMES], val[2 * PL_MAX_FRAMES];
	uint64_t sps[PL_MAX_FRAMES];	/* each frame's stack pointer */
};

/*
 * pcs[0] = start->pc, then its callers; returns how many (<= max, at most
 * PL_MAX_FRAMES).  w (or NULL): what the walk depended on.
 */
int pl_cfi_backtrace(const struct pl_regs *start, uint64_t *pcs, int max,
		     struct pl_walk *w)
	__attribute__((visibility("hidden")));
/* Would a walk from start be the one w recorded? */
bool pl_cfi_same_walk(const struct pl_regs *start, const struct pl_walk *w)
	__attribute__((visibility("hidden")));
/* cb is told of each executable segment the unwinder learns of. */
void pl_cfi_set_object_cb(void (*cb)(const char *path, uint64_t base,
				     uint64_t lo, uint64_t hi))
	__attribute__((visibility("hidden")));

#endif
