// SPDX-License-Identifier: GPL-2.0
/*
 * Unwind rules found by the module itself in a mapping's .eh_frame_hdr and
 * .eh_frame, read in the traced process's own memory.  An attach then hands
 * over one address per object instead of the rows of all its code (clangd's
 * objects have three million), and only the frames stacks go through are
 * ever read: the same lookup the program's own unwinder makes for an
 * exception (and memtrack's in-process engine for every allocation).
 *
 * Everything read is the target's and trusted in nothing: each read is a
 * guarded user access, each length is bounded, the CFA program runs over a
 * copy.  Bad data gives a wrong or short stack, never a fault or a loop.
 * Page faults are disabled (the walk runs with preemption off), so a page
 * of CFI the target never touched is not there yet: its address goes back
 * to the caller, which has it faulted in where that may sleep (leak_probe.c)
 * and walks again.
 *
 * The CFA program's reading mirrors user/preload/cfa.c (it reads the
 * target's memory through guarded copies, cfa.c its own directly); both end
 * a row with memtrack_unwind_reduce(), the one definition of the rules.
 */
#include <linux/percpu.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "leak.h"

/* The longest FDE and CIE read: libLLVM-14's longest FDE is 2,388 bytes. */
#define MTR_EH_MAX_FDE		8192
#define MTR_EH_MAX_CIE		512
#define MTR_EH_MAX_STATES	8	/* DW_CFA_remember_state depth */

struct mtr_eh_buf {
	u8 fde[MTR_EH_MAX_FDE];
	u8 cie[MTR_EH_MAX_CIE];
};

/* Per CPU: the walk runs with preemption disabled. */
static struct mtr_eh_buf __percpu *mtr_eh_buf;

int mtr_leak_ehframe_init(void)
{
	mtr_eh_buf = alloc_percpu(struct mtr_eh_buf);
	return mtr_eh_buf ? 0 : -ENOMEM;
}

void mtr_leak_ehframe_exit(void)
{
	free_percpu(mtr_eh_buf);
}

/* ---- guarded reads of the target's memory ---------------------------------- */

/*
 * Copy [src, src + n) of the target: 0, or -EFAULT with *fault the first
 * address of the page that is not there (or not readable).
 */
static int mtr_eh_copy(void *dst, unsigned long src, size_t n,
		       unsigned long *fault)
{
	size_t chunk;

	while (n) {
		chunk = min_t(size_t, n, PAGE_SIZE - offset_in_page(src));
		if (copy_from_user_nofault(dst, (const void __user *)src,
					   chunk)) {
			*fault = src;
			return -EFAULT;
		}
		dst += chunk;
		src += chunk;
		n -= chunk;
	}
	return 0;
}

/* ---- reading a copied CIE/FDE: a cursor that never passes its end ---------- */

struct mtr_eh_cur {
	const u8 *p, *end;
	unsigned long at;		/* the target's address of p[0] */
	bool bad;			/* read past the end or malformed */
};

static u8 mtr_eh_u8(struct mtr_eh_cur *c)
{
	if (c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	c->at++;
	return *c->p++;
}

static u64 mtr_eh_fixed(struct mtr_eh_cur *c, unsigned int n)
{
	u64 v = 0;
	unsigned int i;

	if (c->end - c->p < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	for (i = 0; i < n; i++)		/* little-endian */
		v |= (u64)c->p[i] << (8 * i);
	c->p += n;
	c->at += n;
	return v;
}

static u64 mtr_eh_uleb(struct mtr_eh_cur *c)
{
	unsigned int shift = 0;
	u64 v = 0;
	u8 b;

	do {
		b = mtr_eh_u8(c);
		if (shift < 64)
			v |= (u64)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	return v;
}

static s64 mtr_eh_sleb(struct mtr_eh_cur *c)
{
	unsigned int shift = 0;
	s64 v = 0;
	u8 b;

	do {
		b = mtr_eh_u8(c);
		if (shift < 64)
			v |= (s64)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (shift < 64 && (b & 0x40))
		v |= -(1LL << shift);
	return v;
}

/* A pointer in DW_EH_PE encoding @enc; false for what x86-64 does not use. */
static bool mtr_eh_ptr(struct mtr_eh_cur *c, u8 enc, u64 *out)
{
	unsigned long at = c->at;
	u64 v;

	if (enc == 0xff) {			/* omit */
		*out = 0;
		return true;
	}
	switch (enc & 0x0f) {
	case 0x00:				/* absptr */
	case 0x04:				/* udata8 */
	case 0x0c:				/* sdata8 */
		v = mtr_eh_fixed(c, 8);
		break;
	case 0x01:
		v = mtr_eh_uleb(c);
		break;
	case 0x02:
		v = mtr_eh_fixed(c, 2);
		break;
	case 0x03:
		v = mtr_eh_fixed(c, 4);
		break;
	case 0x09:
		v = mtr_eh_sleb(c);
		break;
	case 0x0a:
		v = (s64)(s16)mtr_eh_fixed(c, 2);
		break;
	case 0x0b:
		v = (s64)(s32)mtr_eh_fixed(c, 4);
		break;
	default:
		return false;
	}
	switch (enc & 0xf0) {
	case 0x00:
		break;
	case 0x10:				/* pcrel */
		v += at;
		break;
	default:				/* datarel, indirect, ...: not here */
		return false;
	}
	*out = v;
	return !c->bad;
}

/* ---- CIE, FDE and the CFA program --------------------------------------------- */

/* A row while the program runs, and its reduction: memtrack_unwind.h. */

struct mtr_eh_cie {
	u64 code_align;
	s64 data_align;
	u8 fde_enc;
	bool aug_z;
	struct mtr_eh_cur insns;
};

static bool mtr_eh_parse_cie(struct mtr_eh_cur c, struct mtr_eh_cie *cie)
{
	u8 version, enc;
	const u8 *aug;
	u64 alen, ignored;
	struct mtr_eh_cur data;

	if (mtr_eh_fixed(&c, 4))		/* CIE id: 0 in .eh_frame */
		return false;
	version = mtr_eh_u8(&c);
	if (version != 1 && version != 3)
		return false;
	aug = c.p;
	while (mtr_eh_u8(&c) && !c.bad)
		;
	if (c.bad)
		return false;
	cie->code_align = mtr_eh_uleb(&c);
	cie->data_align = mtr_eh_sleb(&c);
	if (version == 1)
		mtr_eh_u8(&c);			/* return address register */
	else
		mtr_eh_uleb(&c);
	cie->fde_enc = 0;
	cie->aug_z = aug[0] == 'z';
	if (cie->aug_z) {
		alen = mtr_eh_uleb(&c);
		if (c.bad || alen > c.end - c.p)
			return false;
		data = c;
		data.end = c.p + alen;
		for (aug++; *aug; aug++) {
			if (*aug == 'R') {
				cie->fde_enc = mtr_eh_u8(&data);
			} else if (*aug == 'L') {
				mtr_eh_u8(&data);
			} else if (*aug == 'P') {
				enc = mtr_eh_u8(&data);
				if (!mtr_eh_ptr(&data, enc & 0x7f, &ignored))
					return false;
			} else if (*aug != 'S' && *aug != 'B') {
				return false;
			}
		}
		if (data.bad)
			return false;
		c.p += alen;
		c.at += alen;
	}
	cie->insns = c;
	return !c.bad;
}

/* DW_CFA_restore, nothing while the CIE's own program runs (no @init). */
static void mtr_eh_restore(struct memtrack_cfi_row *s, u64 reg,
			   const struct memtrack_cfi_row *init)
{
	if (init)
		memtrack_cfi_restore(s, reg, init);
}

/*
 * Run the program @c from @loc until the row holding @pc is complete;
 * @init: the CIE's state, for DW_CFA_restore (NULL while running the CIE).
 * false on an instruction it does not know or malformed data.
 */
static bool mtr_eh_run(struct mtr_eh_cur c, const struct mtr_eh_cie *cie,
		       u64 loc, u64 pc, struct memtrack_cfi_row *s,
		       const struct memtrack_cfi_row *init)
{
	struct memtrack_cfi_row saved[MTR_EH_MAX_STATES];
	unsigned int depth = 0;
	u64 reg, delta;
	u8 op;

	while (c.p < c.end && !c.bad) {
		op = mtr_eh_u8(&c);
		delta = 0;
		switch (op >> 6) {
		case 1:
			delta = (op & 0x3f) * cie->code_align;
			break;
		case 2:
			memtrack_cfi_set(s, op & 0x3f, MEMTRACK_CFI_OFFSET,
					 (s64)mtr_eh_uleb(&c) * cie->data_align);
			continue;
		case 3:
			mtr_eh_restore(s, op & 0x3f, init);
			continue;
		}
		switch (op) {
		case 0x40 ... 0x7f:
			break;
		case 0x00:			/* nop */
			continue;
		case 0x02:			/* advance_loc1 */
			delta = mtr_eh_fixed(&c, 1) * cie->code_align;
			break;
		case 0x03:
			delta = mtr_eh_fixed(&c, 2) * cie->code_align;
			break;
		case 0x04:
			delta = mtr_eh_fixed(&c, 4) * cie->code_align;
			break;
		case 0x05:			/* offset_extended */
			reg = mtr_eh_uleb(&c);
			memtrack_cfi_set(s, reg, MEMTRACK_CFI_OFFSET,
					 (s64)mtr_eh_uleb(&c) * cie->data_align);
			continue;
		case 0x06:			/* restore_extended */
			mtr_eh_restore(s, mtr_eh_uleb(&c), init);
			continue;
		case 0x07:			/* undefined */
			memtrack_cfi_set(s, mtr_eh_uleb(&c), MEMTRACK_CFI_UNDEF, 0);
			continue;
		case 0x08:			/* same_value */
			memtrack_cfi_set(s, mtr_eh_uleb(&c), MEMTRACK_CFI_SAME, 0);
			continue;
		case 0x09:			/* register */
			reg = mtr_eh_uleb(&c);
			mtr_eh_uleb(&c);
			memtrack_cfi_set(s, reg, MEMTRACK_CFI_OTHER, 0);
			continue;
		case 0x0a:			/* remember_state */
			if (depth == MTR_EH_MAX_STATES)
				return false;
			saved[depth++] = *s;
			continue;
		case 0x0b:			/* restore_state */
			if (!depth)
				return false;
			*s = saved[--depth];
			continue;
		case 0x0c:			/* def_cfa */
			s->cfa_reg = mtr_eh_uleb(&c);
			s->cfa_off = mtr_eh_uleb(&c);
			s->cfa_expr = false;
			continue;
		case 0x0d:			/* def_cfa_register */
			s->cfa_reg = mtr_eh_uleb(&c);
			s->cfa_expr = false;
			continue;
		case 0x0e:			/* def_cfa_offset */
			s->cfa_off = mtr_eh_uleb(&c);
			continue;
		case 0x0f:			/* def_cfa_expression */
			s->cfa_expr = true;
			reg = mtr_eh_uleb(&c);
			if (reg > c.end - c.p)
				return false;
			c.p += reg;
			c.at += reg;
			continue;
		case 0x10:			/* expression */
		case 0x16:			/* val_expression */
			memtrack_cfi_set(s, mtr_eh_uleb(&c), MEMTRACK_CFI_OTHER, 0);
			reg = mtr_eh_uleb(&c);
			if (reg > c.end - c.p)
				return false;
			c.p += reg;
			c.at += reg;
			continue;
		case 0x11:			/* offset_extended_sf */
			reg = mtr_eh_uleb(&c);
			memtrack_cfi_set(s, reg, MEMTRACK_CFI_OFFSET,
					 mtr_eh_sleb(&c) * cie->data_align);
			continue;
		case 0x12:			/* def_cfa_sf */
			s->cfa_reg = mtr_eh_uleb(&c);
			s->cfa_off = mtr_eh_sleb(&c) * cie->data_align;
			s->cfa_expr = false;
			continue;
		case 0x13:			/* def_cfa_offset_sf */
			s->cfa_off = mtr_eh_sleb(&c) * cie->data_align;
			continue;
		case 0x14:			/* val_offset */
		case 0x15:			/* val_offset_sf */
			reg = mtr_eh_uleb(&c);
			mtr_eh_uleb(&c);
			memtrack_cfi_set(s, reg, MEMTRACK_CFI_OTHER, 0);
			continue;
		case 0x2e:			/* GNU_args_size */
			mtr_eh_uleb(&c);
			continue;
		case 0x2f:			/* GNU_negative_offset_extended */
			reg = mtr_eh_uleb(&c);
			memtrack_cfi_set(s, reg, MEMTRACK_CFI_OFFSET,
					 -(s64)mtr_eh_uleb(&c) * cie->data_align);
			continue;
		default:
			return false;
		}
		if (loc + delta > pc)
			return !c.bad;
		loc += delta;
	}
	return !c.bad;
}

/* ---- .eh_frame_hdr ------------------------------------------------------------ */

/*
 * Its header, once per mapping: version 1, the FDE count as udata4 and the
 * table as datarel sdata4 pairs, what GNU ld and lld write.  Anything else
 * marks the mapping broken: frame pointers then.
 */
static int mtr_eh_hdr(struct mtr_ehframe *eh, unsigned long *fault)
{
	u8 h[12];
	u32 count;

	/* Pairs with the release below: a table seen has its count set. */
	if (smp_load_acquire(&eh->table))
		return 0;
	if (mtr_eh_copy(h, eh->hdr, sizeof(h), fault))
		return -EFAULT;
	/* eh_frame_ptr: 4 bytes in every encoding accepted here */
	if (h[0] != 1 || (h[1] & 0x07) != 0x03 || h[2] != 0x03 ||
	    h[3] != 0x3b) {
		WRITE_ONCE(eh->broken, true);
		return -EINVAL;
	}
	memcpy(&count, h + 8, sizeof(count));
	WRITE_ONCE(eh->count, count);
	/* Pairs with the acquire above: count is set before table. */
	smp_store_release(&eh->table, eh->hdr + 12);
	return 0;
}

/*
 * The row for @pc from @eh: 1 and *row, 0 if no FDE covers @pc (or the data
 * is unusable), -EFAULT with *fault the address of a page to fault in.
 */
int mtr_leak_ehframe_row(struct mtr_ehframe *eh, unsigned long pc,
			 struct memtrack_unwind_row *row, unsigned long *fault)
{
	struct mtr_eh_buf *buf = this_cpu_ptr(mtr_eh_buf);
	struct memtrack_cfi_row s = { 0 }, init;
	struct mtr_eh_cur fc, cc;
	struct mtr_eh_cie cie;
	unsigned long table, fde, cie_at;
	u32 lo, hi, mid, count, len, cie_off;
	u64 start, range;
	s32 pair[2];
	int err;

	if (READ_ONCE(eh->broken))
		return 0;
	err = mtr_eh_hdr(eh, fault);
	if (err)
		return err == -EFAULT ? err : 0;
	table = eh->table;
	count = READ_ONCE(eh->count);

	/* The last entry whose initial location is at or below pc. */
	lo = 0;
	hi = count;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (mtr_eh_copy(pair, table + 8UL * mid, sizeof(pair), fault))
			return -EFAULT;
		if (eh->hdr + (long)pair[0] <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	if (mtr_eh_copy(pair, table + 8UL * (lo - 1), sizeof(pair), fault))
		return -EFAULT;
	fde = eh->hdr + (long)pair[1];

	/* The FDE: length, CIE pointer, then the rest, copied whole. */
	if (mtr_eh_copy(&len, fde, sizeof(len), fault))
		return -EFAULT;
	if (len < 8 || len > MTR_EH_MAX_FDE - 4)
		return 0;
	if (mtr_eh_copy(buf->fde, fde, len + 4, fault))
		return -EFAULT;
	memcpy(&cie_off, buf->fde + 4, sizeof(cie_off));
	if (!cie_off)
		return 0;			/* a CIE, not an FDE */
	cie_at = fde + 4 - cie_off;
	if (mtr_eh_copy(&len, cie_at, sizeof(len), fault))
		return -EFAULT;
	if (len < 8 || len > MTR_EH_MAX_CIE - 4)
		return 0;
	if (mtr_eh_copy(buf->cie, cie_at, len + 4, fault))
		return -EFAULT;
	cc = (struct mtr_eh_cur){ buf->cie + 4, buf->cie + 4 + len, cie_at + 4 };
	if (!mtr_eh_parse_cie(cc, &cie))
		return 0;

	memcpy(&len, buf->fde, sizeof(len));
	fc = (struct mtr_eh_cur){ buf->fde + 8, buf->fde + 4 + len, fde + 8 };
	if (!mtr_eh_ptr(&fc, cie.fde_enc, &start) ||
	    !mtr_eh_ptr(&fc, cie.fde_enc & 0x0f, &range))
		return 0;
	if (pc < start || pc - start >= range)
		return 0;
	if (cie.aug_z) {
		range = mtr_eh_uleb(&fc);
		if (fc.bad || range > fc.end - fc.p)
			return 0;
		fc.p += range;
		fc.at += range;
	}

	/* pc has CFI: a program it cannot follow stops the walk here. */
	s.ra = MEMTRACK_CFI_SAME;
	s.fp = MEMTRACK_CFI_SAME;
	if (!mtr_eh_run(cie.insns, &cie, start, U64_MAX, &s, NULL))
		goto unknown;
	init = s;
	if (!mtr_eh_run(fc, &cie, start, pc, &s, &init))
		goto unknown;
	*row = memtrack_unwind_reduce(&s);
	return 1;
unknown:
	memset(row, 0, sizeof(*row));
	row->cfa = MEMTRACK_UNWIND_UNKNOWN;
	return 1;
}
