/* SPDX-License-Identifier: LGPL-2.1 */
/* PLACEHOLDER until the CFI unwinder lands: the interface the core uses. */
#ifndef MEMTRACK_PRELOAD_CFI_H
#define MEMTRACK_PRELOAD_CFI_H

#include <stdint.h>

struct pl_regs {
	uint64_t pc, sp, bp;
};

#define pl_regs_here(r) do {						\
	uint64_t *fa_ = __builtin_frame_address(0);			\
	(r)->pc = (uint64_t)__builtin_return_address(0);		\
	(r)->sp = (uint64_t)(fa_ + 2);					\
	(r)->bp = fa_[0];						\
} while (0)

int pl_cfi_backtrace(const struct pl_regs *start, uint64_t *pcs, int max)
	__attribute__((visibility("hidden")));
void pl_cfi_set_object_cb(void (*cb)(const char *path, uint64_t base,
				     uint64_t lo, uint64_t hi))
	__attribute__((visibility("hidden")));

#endif
