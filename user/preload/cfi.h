/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libmemtrack-preload's unwinder (cfi.c): the stack of a hook's caller,
 * from the loaded objects' DWARF CFI, without frame pointers.
 */
#ifndef MEMTRACK_PRELOAD_CFI_H
#define MEMTRACK_PRELOAD_CFI_H

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

/* pcs[0] = start->pc, then its callers; returns how many (<= max). */
int pl_cfi_backtrace(const struct pl_regs *start, uint64_t *pcs, int max)
	__attribute__((visibility("hidden")));
/* cb is told of each executable segment the unwinder learns of. */
void pl_cfi_set_object_cb(void (*cb)(const char *path, uint64_t base,
				     uint64_t lo, uint64_t hi))
	__attribute__((visibility("hidden")));

#endif
