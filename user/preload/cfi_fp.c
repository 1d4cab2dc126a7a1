// SPDX-License-Identifier: LGPL-2.1
/* PLACEHOLDER: frame-pointer walk until the CFI unwinder lands. */
#define _GNU_SOURCE
#include <link.h>
#include <stddef.h>
#include "cfi.h"

static void (*obj_cb)(const char *, uint64_t, uint64_t, uint64_t);
static int seen;

void pl_cfi_set_object_cb(void (*cb)(const char *, uint64_t, uint64_t, uint64_t))
{
	obj_cb = cb;
}

static int each(struct dl_phdr_info *i, size_t sz, void *arg)
{
	int k;

	(void)sz; (void)arg;
	for (k = 0; k < i->dlpi_phnum; k++)
		if (i->dlpi_phdr[k].p_type == PT_LOAD && (i->dlpi_phdr[k].p_flags & PF_X))
			obj_cb(i->dlpi_name, i->dlpi_addr, i->dlpi_addr + i->dlpi_phdr[k].p_vaddr,
			       i->dlpi_addr + i->dlpi_phdr[k].p_vaddr + i->dlpi_phdr[k].p_memsz);
	return 0;
}

int pl_cfi_backtrace(const struct pl_regs *r, uint64_t *pcs, int max)
{
	uint64_t pc = r->pc, bp = r->bp, sp = r->sp;
	int n = 0;

	if (!seen && obj_cb) {
		seen = 1;
		dl_iterate_phdr(each, NULL);
	}
	while (n < max && pc) {
		pcs[n++] = pc;
		if (bp < sp || bp > sp + (64 << 20) || (bp & 7))
			break;
		pc = ((uint64_t *)bp)[1];
		sp = bp + 16;
		bp = ((uint64_t *)bp)[0];
	}
	return n;
}
