/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * DWARF call frame information as memtrack unwinds with it (cfa.c): shared
 * by the in-process engine's walk and libmemtrack's unwind tables.
 */
#ifndef MEMTRACK_PRELOAD_CFA_H
#define MEMTRACK_PRELOAD_CFA_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/memtrack_unwind.h>

/*
 * A row's rule, struct memtrack_unwind_row's without the address: how to
 * find the CFA, where the frame pointer (0: unchanged) and the return
 * address (0: MEMTRACK_UNWIND_RA_OFF) were saved.  The rows are reduced by
 * memtrack_unwind.h, as the module's.  8 bytes: cfi.c's memo holds many.
 */
struct cfa_rule {
	int32_t cfa_off;
	int16_t bp_off;
	uint8_t kind : 4;		/* enum memtrack_unwind_cfa */
	uint8_t gen : 4;		/* free for the caller (cfi.c's memo) */
	int8_t ra_slot;			/* in words, as the row's */
};

/* Where rule r's return address was saved, from the CFA. */
static inline int64_t cfa_rule_ra_off(struct cfa_rule r)
{
	return memtrack_unwind_ra_at(r.ra_slot, r.cfa_off);
}

struct cfa_cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool aug_z;
	const uint8_t *insns, *end;
};

/* An FDE: the addresses [start, end) it covers, its program, its CIE. */
struct cfa_fde {
	uint64_t start, end;
	const uint8_t *insns, *insns_end;
	struct cfa_cie cie;
};

typedef void (*cfa_row_fn)(void *arg, uint64_t lo, uint64_t hi,
			   struct cfa_rule rule);

uint64_t cfa_uleb(const uint8_t **p);
int64_t cfa_sleb(const uint8_t **p);
/*
 * A pointer in encoding enc (DW_EH_PE_*) at *p, advanced past it; data:
 * the base of datarel.  false for what x86-64 objects do not use
 * (indirect, aligned, funcrel).
 */
bool cfa_encoded(const uint8_t **p, uint8_t enc, int64_t bias, uint64_t data,
		 uint64_t *out);
/* The FDE at fde (its length word) and its CIE.  false if malformed. */
bool cfa_parse_fde(const uint8_t *fde, int64_t bias, struct cfa_fde *f);
/* The rule at pc (in [f->start, f->end)). */
struct cfa_rule cfa_rule_at(const struct cfa_fde *f, uint64_t pc);
/*
 * Every row of f, in address order: emit(arg, lo, hi, rule).  false (rows
 * passed so far) on an instruction it does not know.
 */
bool cfa_rows(const struct cfa_fde *f, cfa_row_fn emit, void *arg);

#endif
