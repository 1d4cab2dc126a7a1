/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * memtrack: the unwind rules, defined once for every side that unwinds.
 *
 * DWARF call frame information (CFI) says, per code address, how to find a
 * frame's canonical frame address (CFA) and where its caller's registers
 * were saved.  memtrack keeps of it only what a walk up the stack needs,
 * one compact row per address range (struct memtrack_unwind_row): the CFA
 * as the stack or frame pointer plus an offset, where the frame pointer was
 * saved, and the return address at a fixed place below the CFA.  Anything
 * else (a CFA expression, a return address in another place) is UNKNOWN:
 * the walk stops there rather than guess.
 *
 * Three interpreters run CFA programs: libmemtrack's (tables sent to the
 * module with MEMTRACK_CMD_LEAK_UNWIND), the in-process engine's (its own
 * walk) and the module's (tables it reads from the target's .eh_frame).
 * Each ends a row with memtrack_unwind_reduce(), the one reduction; the
 * module checks the rows it is sent with memtrack_unwind_row_ok(), and the
 * walks read the return address where memtrack_unwind_ra_off() says.  What
 * names a register of one architecture is in the block for it below, and
 * nowhere else.
 */
#ifndef _UAPI_LINUX_MEMTRACK_UNWIND_H
#define _UAPI_LINUX_MEMTRACK_UNWIND_H

#include <linux/types.h>

/* ---- the architecture's registers, in DWARF's numbering ------------------ */

#if defined(__x86_64__)
#define MEMTRACK_UNWIND_DW_FP	6	/* rbp */
#define MEMTRACK_UNWIND_DW_SP	7	/* rsp */
#define MEMTRACK_UNWIND_DW_RA	16	/* the return address column */
/* call pushes the return address: it is the word just below the CFA */
#define MEMTRACK_UNWIND_RA_OFF	(-8)
/* a frame record: the caller's FP at [FP], the RA above it, then the CFA */
#define MEMTRACK_UNWIND_FRAME_RA	8
#define MEMTRACK_UNWIND_FRAME_CFA	16
#elif defined(__aarch64__)
#define MEMTRACK_UNWIND_DW_FP	29	/* x29 */
#define MEMTRACK_UNWIND_DW_SP	31	/* sp */
#define MEMTRACK_UNWIND_DW_RA	30	/* x30, the link register */
/*
 * A frame record {x29, x30} saved at the top of the frame puts the return
 * address just below the CFA; stp x29, x30, [sp, #-N]! (N > 16) and code
 * without frame pointers (str x30, [sp, #-16]!) save it lower: the row
 * says where (ra_slot).
 */
#define MEMTRACK_UNWIND_RA_OFF	(-8)
/* a frame record: the caller's x29 at [x29], x30 above it */
#define MEMTRACK_UNWIND_FRAME_RA	8
#define MEMTRACK_UNWIND_FRAME_CFA	16
#else
/*
 * No rules for this architecture yet: every row reduces to UNKNOWN and the
 * walks use frame pointers only (MEMTRACK_UNWIND_DW_* match no register).
 */
#define MEMTRACK_UNWIND_NO_RULES
#define MEMTRACK_UNWIND_DW_FP	(-1)
#define MEMTRACK_UNWIND_DW_SP	(-2)
#define MEMTRACK_UNWIND_DW_RA	(-3)
#define MEMTRACK_UNWIND_RA_OFF	(-8)
#define MEMTRACK_UNWIND_FRAME_RA	8
#define MEMTRACK_UNWIND_FRAME_CFA	16
#endif

/* The saved frame pointer is below the return address, a word or more. */
#define MEMTRACK_UNWIND_FP_OFF_MAX	(MEMTRACK_UNWIND_RA_OFF - 8)
/* Stack words: where a rule saves a register is a multiple of one. */
#define MEMTRACK_UNWIND_WORD	8
/*
 * Where a row can say the return address is: down to RA_OFF_MIN below the
 * CFA (ra_slot -128 to -1), or in the first RA_BASE_MAX words of the frame
 * from its bottom (ra_slot 1 to 127: a large frame's record at its bottom).
 */
#define MEMTRACK_UNWIND_RA_OFF_MIN	(-128 * MEMTRACK_UNWIND_WORD)
#define MEMTRACK_UNWIND_RA_BASE_MAX	126
#define MEMTRACK_UNWIND_FP_OFF_MIN	(-32768)	/* what __s16 holds */
/* A frame larger than 16 MiB is taken for corrupt CFI. */
#define MEMTRACK_UNWIND_CFA_OFF_MAX	(1 << 24)

/* ---- the compact row ------------------------------------------------------ */

/* How a row finds the CFA (the return address: memtrack_unwind_ra_off()). */
enum memtrack_unwind_cfa {
	MEMTRACK_UNWIND_NONE,		/* no CFI here: frame pointers if any */
	MEMTRACK_UNWIND_CFA_SP,		/* CFA = SP + cfa_off */
	MEMTRACK_UNWIND_CFA_BP,		/* CFA = FP + cfa_off */
	MEMTRACK_UNWIND_OUTERMOST,	/* return address undefined: stop */
	MEMTRACK_UNWIND_UNKNOWN,	/* a rule the walks do not follow: stop */
	__MEMTRACK_UNWIND_MAX
};

/*
 * Applies from addr (ELF vaddr) up to the next row's addr, so rows are
 * strictly increasing; the last row ends the table (usually NONE).
 */
struct memtrack_unwind_row {
	__u32 addr;
	__s32 cfa_off;
	__s16 bp_off;			/* FP saved at CFA + bp_off; 0: unchanged */
	__u8 cfa;			/* enum memtrack_unwind_cfa */
	/*
	 * Where the return address was saved: 0 at RA_OFF; -128 to -1 at
	 * CFA + ra_slot words; 1 to 127 at the frame's bottom (CFA - cfa_off)
	 * + ra_slot - 1 words
	 */
	__s8 ra_slot;
};

/* The place of a return address ra_slot says, from the CFA. */
static inline __s64 memtrack_unwind_ra_at(__s8 ra_slot, __s64 cfa_off)
{
	if (!ra_slot)
		return MEMTRACK_UNWIND_RA_OFF;
	if (ra_slot < 0)
		return (__s64)ra_slot * MEMTRACK_UNWIND_WORD;
	return (__s64)(ra_slot - 1) * MEMTRACK_UNWIND_WORD - cfa_off;
}

/* Where a row's return address was saved, from the CFA. */
static inline __s64 memtrack_unwind_ra_off(const struct memtrack_unwind_row *r)
{
	return memtrack_unwind_ra_at(r->ra_slot, r->cfa_off);
}

/* ---- from a CFA program's row to the compact row -------------------------- */

/* A register's rule, as far as memtrack tells them apart. */
enum memtrack_cfi_rule {
	MEMTRACK_CFI_SAME,		/* unchanged, or never said */
	MEMTRACK_CFI_UNDEF,		/* DW_CFA_undefined */
	MEMTRACK_CFI_OFFSET,		/* saved at CFA + off */
	MEMTRACK_CFI_OTHER,		/* any other rule */
};

/* One row of a CFA program, as an interpreter keeps it while it runs. */
struct memtrack_cfi_row {
	__u64 cfa_reg;
	__s64 cfa_off;
	__u8 cfa_expr;			/* DW_CFA_def_cfa_expression */
	__u8 fp;			/* enum memtrack_cfi_rule */
	__u8 ra;			/* enum memtrack_cfi_rule */
	__s64 fp_off;			/* saved at CFA + fp_off */
	__s64 ra_off;			/* saved at CFA + ra_off */
};

/* Set register reg's rule; the registers memtrack does not track are ignored. */
static inline void memtrack_cfi_set(struct memtrack_cfi_row *s, __u64 reg,
				    __u8 rule, __s64 off)
{
	if (reg == MEMTRACK_UNWIND_DW_FP) {
		s->fp = rule;
		s->fp_off = off;
	} else if (reg == MEMTRACK_UNWIND_DW_RA) {
		s->ra = rule;
		s->ra_off = off;
	}
}

/* DW_CFA_restore: register reg's rule as the CIE (init) left it. */
static inline void memtrack_cfi_restore(struct memtrack_cfi_row *s, __u64 reg,
					const struct memtrack_cfi_row *init)
{
	if (reg == MEMTRACK_UNWIND_DW_FP)
		memtrack_cfi_set(s, reg, init->fp, init->fp_off);
	else if (reg == MEMTRACK_UNWIND_DW_RA)
		memtrack_cfi_set(s, reg, init->ra, init->ra_off);
}

/* The compact form of one row (addr left 0). */
static inline struct memtrack_unwind_row
memtrack_unwind_reduce(const struct memtrack_cfi_row *s)
{
	struct memtrack_unwind_row r = { 0 };

	r.cfa = MEMTRACK_UNWIND_UNKNOWN;
#ifdef MEMTRACK_UNWIND_NO_RULES
	(void)s;
	return r;
#else
	if (s->ra == MEMTRACK_CFI_UNDEF) {
		r.cfa = MEMTRACK_UNWIND_OUTERMOST;
		return r;
	}
	if (s->ra != MEMTRACK_CFI_OFFSET || s->ra_off >= 0 ||
	    s->ra_off % MEMTRACK_UNWIND_WORD || s->cfa_expr ||
	    (s->cfa_reg != MEMTRACK_UNWIND_DW_SP &&
	     s->cfa_reg != MEMTRACK_UNWIND_DW_FP) ||
	    s->cfa_off < -MEMTRACK_UNWIND_RA_OFF ||
	    s->cfa_off > MEMTRACK_UNWIND_CFA_OFF_MAX)
		return r;
	/* unchanged, or undefined (then nothing in the caller uses it) */
	if (s->fp == MEMTRACK_CFI_OFFSET) {
		if (s->fp_off > MEMTRACK_UNWIND_FP_OFF_MAX ||
		    s->fp_off < MEMTRACK_UNWIND_FP_OFF_MIN ||
		    s->fp_off == s->ra_off)
			return r;
		r.bp_off = (__s16)s->fp_off;
	} else if (s->fp == MEMTRACK_CFI_OTHER) {
		return r;
	}
	r.cfa = s->cfa_reg == MEMTRACK_UNWIND_DW_SP ? MEMTRACK_UNWIND_CFA_SP :
						      MEMTRACK_UNWIND_CFA_BP;
	r.cfa_off = (__s32)s->cfa_off;
	if (s->ra_off == MEMTRACK_UNWIND_RA_OFF) {
		r.ra_slot = 0;
	} else if (s->ra_off >= MEMTRACK_UNWIND_RA_OFF_MIN) {
		r.ra_slot = (__s8)(s->ra_off / MEMTRACK_UNWIND_WORD);
	} else if (s->ra_off + s->cfa_off >= 0 &&
		   !(s->cfa_off % MEMTRACK_UNWIND_WORD) &&
		   (s->ra_off + s->cfa_off) / MEMTRACK_UNWIND_WORD <=
		   MEMTRACK_UNWIND_RA_BASE_MAX) {
		r.ra_slot = (__s8)((s->ra_off + s->cfa_off) /
				   MEMTRACK_UNWIND_WORD + 1);
	} else {
		/* below the frame, or where no slot says */
		r = (struct memtrack_unwind_row){ .cfa = MEMTRACK_UNWIND_UNKNOWN };
	}
	return r;
#endif
}

/*
 * Whether a row (from user space) is one memtrack_unwind_reduce() can
 * give: a rule the walk follows has its offsets in range, any other none.
 */
static inline int memtrack_unwind_row_ok(const struct memtrack_unwind_row *r)
{
	if (r->cfa >= __MEMTRACK_UNWIND_MAX)
		return 0;
	if (r->cfa != MEMTRACK_UNWIND_CFA_SP && r->cfa != MEMTRACK_UNWIND_CFA_BP)
		return !r->cfa_off && !r->bp_off && !r->ra_slot;
	/* one way to say each place: the reduction's */
	if (r->ra_slot < 0 ? (__s64)r->ra_slot * MEMTRACK_UNWIND_WORD ==
			     MEMTRACK_UNWIND_RA_OFF :
	    r->ra_slot > 0 && (r->cfa_off % MEMTRACK_UNWIND_WORD ||
			       memtrack_unwind_ra_off(r) >= 0 ||
			       memtrack_unwind_ra_off(r) >=
			       MEMTRACK_UNWIND_RA_OFF_MIN))
		return 0;
	return r->cfa_off >= -MEMTRACK_UNWIND_RA_OFF &&
	       r->cfa_off <= MEMTRACK_UNWIND_CFA_OFF_MAX &&
	       (!r->bp_off || (r->bp_off <= MEMTRACK_UNWIND_FP_OFF_MAX &&
			       r->bp_off != memtrack_unwind_ra_off(r)));
}

#endif /* _UAPI_LINUX_MEMTRACK_UNWIND_H */
