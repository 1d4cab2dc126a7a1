// SPDX-License-Identifier: GPL-2.0
/*
 * The unwind rules of uapi/linux/memtrack_unwind.h, the one reduction the
 * module, libmemtrack and the in-process engine share: rows of a CFA
 * program as the compilers emit them (a prologue without and with a frame
 * pointer, the PLT's expression, the outermost frame, corrupt offsets) and
 * the compact row each must give, and that memtrack_unwind_row_ok()
 * accepts what the reduction gives and refuses what it never would.
 * Prints "PASS name" or "FAIL name: why" per case; exits 1 if any failed.
 */
#include <stdio.h>
#include <string.h>

#include <linux/memtrack_unwind.h>

static int failures;

/* A CFA program's row: CFA = reg + off, RA saved at RA_OFF, FP unchanged. */
static struct memtrack_cfi_row frame(__u64 reg, __s64 off)
{
	struct memtrack_cfi_row s;

	memset(&s, 0, sizeof(s));
	s.cfa_reg = reg;
	s.cfa_off = off;
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_OFFSET,
			 MEMTRACK_UNWIND_RA_OFF);
	return s;
}

/* The row s must reduce to, its return address at ra_off from the CFA. */
static void expect_ra(const char *name, struct memtrack_cfi_row s, __u8 cfa,
		      __s32 cfa_off, __s16 bp_off, __s32 ra_off)
{
	struct memtrack_unwind_row r = memtrack_unwind_reduce(&s);
	int followed = cfa == MEMTRACK_UNWIND_CFA_SP ||
		       cfa == MEMTRACK_UNWIND_CFA_BP;

	if (r.cfa != cfa || r.cfa_off != cfa_off || r.bp_off != bp_off ||
	    r.addr || (followed ? memtrack_unwind_ra_off(&r) != ra_off :
				  r.ra_slot != 0)) {
		printf("FAIL %s: cfa %u off %d bp_off %d ra at %lld, want %u %d %d %d\n",
		       name, r.cfa, r.cfa_off, r.bp_off,
		       (long long)memtrack_unwind_ra_off(&r), cfa, cfa_off,
		       bp_off, ra_off);
		failures++;
	} else if (!memtrack_unwind_row_ok(&r)) {
		printf("FAIL %s: the module would refuse the row\n", name);
		failures++;
	} else {
		printf("PASS %s\n", name);
	}
}

static void expect(const char *name, struct memtrack_cfi_row s, __u8 cfa,
		   __s32 cfa_off, __s16 bp_off)
{
	expect_ra(name, s, cfa, cfa_off, bp_off, MEMTRACK_UNWIND_RA_OFF);
}

static void refused(const char *name, struct memtrack_unwind_row r)
{
	if (memtrack_unwind_row_ok(&r)) {
		printf("FAIL %s: accepted\n", name);
		failures++;
	} else {
		printf("PASS %s\n", name);
	}
}

int main(void)
{
	const __u64 sp = MEMTRACK_UNWIND_DW_SP, fp = MEMTRACK_UNWIND_DW_FP;
	struct memtrack_cfi_row s, init;

	/* x86-64's call: the CFA is the caller's sp, the RA just below */
	expect("unwind-rules-function-entry", frame(sp, 8),
	       MEMTRACK_UNWIND_CFA_SP, 8, 0);
	/* push %rbp: CFA = rsp + 16, rbp at CFA - 16 */
	s = frame(sp, 16);
	memtrack_cfi_set(&s, fp, MEMTRACK_CFI_OFFSET, -16);
	expect("unwind-rules-push-fp", s, MEMTRACK_UNWIND_CFA_SP, 16, -16);
	/* mov %rsp, %rbp: DW_CFA_def_cfa_register rbp */
	s.cfa_reg = fp;
	expect("unwind-rules-frame-pointer-set", s, MEMTRACK_UNWIND_CFA_BP, 16,
	       -16);
	/* DW_CFA_restore rbp after the pop: as the CIE had it (unchanged) */
	init = frame(sp, 8);
	memtrack_cfi_restore(&s, fp, &init);
	s.cfa_reg = sp;
	s.cfa_off = 8;
	expect("unwind-rules-restored-after-pop", s, MEMTRACK_UNWIND_CFA_SP, 8,
	       0);
	/* registers memtrack does not track change nothing */
	memtrack_cfi_set(&s, 3 /* rbx */, MEMTRACK_CFI_OTHER, 0);
	memtrack_cfi_set(&s, 12 /* r12 */, MEMTRACK_CFI_OFFSET, -24);
	expect("unwind-rules-other-registers-ignored", s,
	       MEMTRACK_UNWIND_CFA_SP, 8, 0);
	/* a large frame: sub $0x10000, %rsp */
	expect("unwind-rules-large-frame", frame(sp, 0x10008),
	       MEMTRACK_UNWIND_CFA_SP, 0x10008, 0);
	expect("unwind-rules-largest-frame", frame(sp, 1 << 24),
	       MEMTRACK_UNWIND_CFA_SP, 1 << 24, 0);

	/* _start: DW_CFA_undefined rip */
	s = frame(sp, 8);
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_UNDEF, 0);
	expect("unwind-rules-outermost", s, MEMTRACK_UNWIND_OUTERMOST, 0, 0);
	/* the PLT: DW_CFA_def_cfa_expression */
	s = frame(sp, 8);
	s.cfa_expr = 1;
	expect("unwind-rules-cfa-expression", s, MEMTRACK_UNWIND_UNKNOWN, 0, 0);
	/*
	 * The return address saved lower: arm64's str x30, [sp, #-16]! (code
	 * without frame pointers) and stp x29, x30, [sp, #-48]! (a frame
	 * record at the bottom of its frame); the row carries where.
	 */
	s = frame(sp, 16);
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_OFFSET, -16);
	expect_ra("unwind-rules-ra-lower", s, MEMTRACK_UNWIND_CFA_SP, 16, 0,
		  -16);
	s = frame(sp, 48);
	memtrack_cfi_set(&s, fp, MEMTRACK_CFI_OFFSET, -48);
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_OFFSET, -40);
	expect_ra("unwind-rules-frame-record-at-the-bottom", s,
		  MEMTRACK_UNWIND_CFA_SP, 48, -48, -40);
	s.cfa_reg = fp;
	expect_ra("unwind-rules-frame-record-at-the-bottom-on-fp", s,
		  MEMTRACK_UNWIND_CFA_BP, 48, -48, -40);
	s = frame(sp, 1024);
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_OFFSET,
			 MEMTRACK_UNWIND_RA_OFF_MIN);
	expect_ra("unwind-rules-ra-lowest", s, MEMTRACK_UNWIND_CFA_SP, 1024,
		  0, MEMTRACK_UNWIND_RA_OFF_MIN);
	/*
	 * A large frame's record at its bottom (arm64's sub sp, sp, #8256;
	 * stp x29, x30, [sp]): from the frame's bottom, where a row says.
	 */
	s = frame(sp, 8256);
	memtrack_cfi_set(&s, fp, MEMTRACK_CFI_OFFSET, -8256);
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_OFFSET,
			 -8248);
	expect_ra("unwind-rules-large-frame-record-at-the-bottom", s,
		  MEMTRACK_UNWIND_CFA_SP, 8256, -8256, -8248);
	s.cfa_reg = fp;
	expect_ra("unwind-rules-large-frame-record-on-fp", s,
		  MEMTRACK_UNWIND_CFA_BP, 8256, -8256, -8248);
	s = frame(sp, 8256);
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_OFFSET,
			 -8256 + MEMTRACK_UNWIND_RA_BASE_MAX * 8);
	expect_ra("unwind-rules-ra-highest-from-the-bottom", s,
		  MEMTRACK_UNWIND_CFA_SP, 8256, 0,
		  -8256 + MEMTRACK_UNWIND_RA_BASE_MAX * 8);
	/* ... but not between the two, below the frame, off a word, above
	 * the CFA, over the saved frame pointer, or in a register */
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_OFFSET,
			 -8256 + (MEMTRACK_UNWIND_RA_BASE_MAX + 1) * 8);
	expect("unwind-rules-ra-mid-frame", s, MEMTRACK_UNWIND_UNKNOWN, 0, 0);
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_OFFSET,
			 -8264);
	expect("unwind-rules-ra-below-the-frame", s, MEMTRACK_UNWIND_UNKNOWN,
	       0, 0);
	s = frame(sp, 1024);
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_OFFSET,
			 MEMTRACK_UNWIND_RA_OFF_MIN - 8);
	expect("unwind-rules-ra-too-low", s, MEMTRACK_UNWIND_UNKNOWN, 0, 0);
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_OFFSET, -12);
	expect("unwind-rules-ra-off-a-word", s, MEMTRACK_UNWIND_UNKNOWN, 0, 0);
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_OFFSET, 8);
	expect("unwind-rules-ra-above-cfa", s, MEMTRACK_UNWIND_UNKNOWN, 0, 0);
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_OFFSET, -32);
	memtrack_cfi_set(&s, fp, MEMTRACK_CFI_OFFSET, -32);
	expect("unwind-rules-ra-over-fp", s, MEMTRACK_UNWIND_UNKNOWN, 0, 0);
	s = frame(sp, 16);
	memtrack_cfi_set(&s, MEMTRACK_UNWIND_DW_RA, MEMTRACK_CFI_SAME, 0);
	expect("unwind-rules-ra-in-register", s, MEMTRACK_UNWIND_UNKNOWN, 0, 0);
	/* a CFA on another register (rbx), or too small or large an offset */
	expect("unwind-rules-cfa-on-other-register", frame(3, 16),
	       MEMTRACK_UNWIND_UNKNOWN, 0, 0);
	expect("unwind-rules-cfa-below-ra", frame(sp, 4),
	       MEMTRACK_UNWIND_UNKNOWN, 0, 0);
	expect("unwind-rules-frame-too-large", frame(sp, (1 << 24) + 8),
	       MEMTRACK_UNWIND_UNKNOWN, 0, 0);
	/* the frame pointer saved over the RA, far below, or by expression */
	s = frame(sp, 16);
	memtrack_cfi_set(&s, fp, MEMTRACK_CFI_OFFSET, -8);
	expect("unwind-rules-fp-over-ra", s, MEMTRACK_UNWIND_UNKNOWN, 0, 0);
	memtrack_cfi_set(&s, fp, MEMTRACK_CFI_OFFSET, -32776);
	expect("unwind-rules-fp-too-far", s, MEMTRACK_UNWIND_UNKNOWN, 0, 0);
	memtrack_cfi_set(&s, fp, MEMTRACK_CFI_OFFSET, -32768);
	expect("unwind-rules-fp-farthest", s, MEMTRACK_UNWIND_CFA_SP, 16,
	       -32768);
	memtrack_cfi_set(&s, fp, MEMTRACK_CFI_OTHER, 0);
	expect("unwind-rules-fp-by-expression", s, MEMTRACK_UNWIND_UNKNOWN, 0,
	       0);
	/* undefined frame pointer: nothing in the caller uses it */
	memtrack_cfi_set(&s, fp, MEMTRACK_CFI_UNDEF, 0);
	expect("unwind-rules-fp-undefined", s, MEMTRACK_UNWIND_CFA_SP, 16, 0);

	/* what user space may not send the module */
	refused("unwind-rules-refuse-ra-above-cfa",
		(struct memtrack_unwind_row){ .cfa = MEMTRACK_UNWIND_CFA_SP,
					      .cfa_off = 8, .ra_slot = 1 });
	/* the default place is said by 0, never by its slot */
	refused("unwind-rules-refuse-ra-default-by-slot",
		(struct memtrack_unwind_row){ .cfa = MEMTRACK_UNWIND_CFA_SP,
					      .cfa_off = 8, .ra_slot =
					      MEMTRACK_UNWIND_RA_OFF /
					      MEMTRACK_UNWIND_WORD });
	/* a slot from the bottom for a place a slot from the CFA says */
	refused("unwind-rules-refuse-ra-near-cfa-from-the-bottom",
		(struct memtrack_unwind_row){ .cfa = MEMTRACK_UNWIND_CFA_SP,
					      .cfa_off = 32, .ra_slot = 2 });
	refused("unwind-rules-refuse-ra-without-rule",
		(struct memtrack_unwind_row){ .cfa = MEMTRACK_UNWIND_OUTERMOST,
					      .ra_slot = -2 });
	refused("unwind-rules-refuse-ra-over-fp",
		(struct memtrack_unwind_row){ .cfa = MEMTRACK_UNWIND_CFA_SP,
					      .cfa_off = 32, .bp_off = -32,
					      .ra_slot = -4 });
	refused("unwind-rules-refuse-kind",
		(struct memtrack_unwind_row){ .cfa = __MEMTRACK_UNWIND_MAX });
	refused("unwind-rules-refuse-offset-without-rule",
		(struct memtrack_unwind_row){ .cfa = MEMTRACK_UNWIND_NONE,
					      .cfa_off = 8 });
	refused("unwind-rules-refuse-small-cfa",
		(struct memtrack_unwind_row){ .cfa = MEMTRACK_UNWIND_CFA_BP,
					      .cfa_off = 0 });
	refused("unwind-rules-refuse-huge-cfa",
		(struct memtrack_unwind_row){ .cfa = MEMTRACK_UNWIND_CFA_SP,
					      .cfa_off = (1 << 24) + 8 });
	refused("unwind-rules-refuse-fp-over-ra",
		(struct memtrack_unwind_row){ .cfa = MEMTRACK_UNWIND_CFA_SP,
					      .cfa_off = 16, .bp_off = -8 });
	refused("unwind-rules-refuse-fp-above-cfa",
		(struct memtrack_unwind_row){ .cfa = MEMTRACK_UNWIND_CFA_SP,
					      .cfa_off = 16, .bp_off = 8 });
	return failures ? 1 : 0;
}
