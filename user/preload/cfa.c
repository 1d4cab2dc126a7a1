// SPDX-License-Identifier: LGPL-2.1
/*
 * DWARF call frame information, read the way memtrack unwinds: a CIE and
 * FDE from .eh_frame, the FDE's CFA program run and each row reduced to
 * memtrack's compact rule (struct memtrack_unwind_row's: the CFA as RSP or
 * RBP plus an offset, where RBP was saved, the return address at CFA - 8,
 * or the outermost frame, or a rule the walk does not follow).
 *
 * One interpreter for both sides: the in-process engine runs it on the
 * loaded objects' .eh_frame for one pc at a time (cfi.c), libmemtrack on an
 * object file's .eh_frame for all its rows in one pass (unwind.c), so the
 * tables the module walks and the walk in the traced program agree.  Pure:
 * no allocation, no system call; bias is the address the data is read at
 * less the address it has in the object (pcrel pointers).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cfa.h"

/* ---- DWARF encodings ------------------------------------------------------------- */

uint64_t cfa_uleb(const uint8_t **p)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return v;
}

int64_t cfa_sleb(const uint8_t **p)
{
	int64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		b = *(*p)++;
		if (shift < 64)
			v |= (int64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= -(1LL << shift);
	return v;
}

bool cfa_encoded(const uint8_t **p, uint8_t enc, int64_t bias, uint64_t data,
		 uint64_t *out)
{
	uint64_t base = 0, v;
	const uint8_t *at = *p;

	if (enc == 0xff) {		/* omit */
		*out = 0;
		return true;
	}
	switch (enc & 0x0f) {
	case 0x00: memcpy(&v, at, 8); *p += 8; break;		/* absptr */
	case 0x01: v = cfa_uleb(p); break;
	case 0x02: { uint16_t x; memcpy(&x, at, 2); v = x; *p += 2; break; }
	case 0x03: { uint32_t x; memcpy(&x, at, 4); v = x; *p += 4; break; }
	case 0x04: memcpy(&v, at, 8); *p += 8; break;
	case 0x09: v = (uint64_t)cfa_sleb(p); break;
	case 0x0a: { int16_t x; memcpy(&x, at, 2); v = (uint64_t)(int64_t)x; *p += 2; break; }
	case 0x0b: { int32_t x; memcpy(&x, at, 4); v = (uint64_t)(int64_t)x; *p += 4; break; }
	case 0x0c: memcpy(&v, at, 8); *p += 8; break;
	default:
		return false;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: base = (uint64_t)at + bias; break;		/* pcrel */
	case 0x30: base = data; break;				/* datarel */
	default:
		return false;
	}
	if (enc & 0x80)			/* indirect */
		return false;
	*out = v + base;
	return true;
}

/* ---- CFA programs ------------------------------------------------------------------ */

static bool parse_cie(const uint8_t *p, int64_t bias, struct cfa_cie *c)
{
	uint32_t len, id;
	const char *aug;
	uint8_t version;

	memcpy(&len, p, 4);
	if (len == 0xffffffff)
		return false;
	c->end = p + 4 + len;
	memcpy(&id, p + 4, 4);
	if (id)
		return false;
	version = p[8];
	aug = (const char *)p + 9;
	p = (const uint8_t *)aug + strlen(aug) + 1;
	if (version == 4)
		p += 2;			/* address and segment size */
	c->code_align = cfa_uleb(&p);
	c->data_align = cfa_sleb(&p);
	c->ra_reg = version == 1 ? *p++ : cfa_uleb(&p);
	c->fde_enc = 0;
	c->aug_z = aug[0] == 'z';
	if (c->aug_z) {
		const uint8_t *data;
		uint64_t alen = cfa_uleb(&p), ignored;

		data = p;
		for (aug++; *aug; aug++) {
			if (*aug == 'R')
				c->fde_enc = *data++;
			else if (*aug == 'L')
				data++;
			else if (*aug == 'P') {
				uint8_t enc = *data++;

				if (!cfa_encoded(&data, enc & 0x7f, bias, 0, &ignored))
					return false;
			} else if (*aug != 'S' && *aug != 'B') {
				return false;
			}
		}
		p += alen;
	}
	c->insns = p;
	return true;
}

/* What one row of the program says, in memtrack's compact form. */
static struct cfa_rule reduce(const struct memtrack_cfi_row *s)
{
	struct memtrack_unwind_row r = memtrack_unwind_reduce(s);

	return (struct cfa_rule){ .cfa_off = r.cfa_off, .bp_off = r.bp_off,
				  .kind = r.cfa, .ra_slot = r.ra_slot };
}

/*
 * Run the instructions [p, end) from loc until the row holding pc is
 * complete; init: the CIE's state, for DW_CFA_restore.  With emit, each
 * row [loc, next loc) of the program is passed to it on the way.  false
 * on an instruction it does not know.
 */
static bool run(const uint8_t *p, const uint8_t *end, const struct cfa_cie *c,
		uint64_t loc, uint64_t pc, struct memtrack_cfi_row *s,
		const struct memtrack_cfi_row *init, cfa_row_fn emit, void *arg)
{
	struct memtrack_cfi_row saved[8];
	unsigned int depth = 0;
	uint64_t reg, delta;
	uint8_t op;

	while (p < end) {
		op = *p++;
		delta = 0;
		switch (op >> 6) {
		case 1:
			delta = (op & 0x3f) * c->code_align;
			break;
		case 2:
			memtrack_cfi_set(s, op & 0x3f, MEMTRACK_CFI_OFFSET,
				(int64_t)cfa_uleb(&p) * c->data_align);
			continue;
		case 3:
			if (init)
				memtrack_cfi_restore(s, op & 0x3f, init);
			continue;
		}
		switch (op) {
		case 0x40 ... 0x7f:
			break;
		case 0x00:
			continue;
		case 0x02: delta = *p++ * c->code_align; break;
		case 0x03: { uint16_t x; memcpy(&x, p, 2); p += 2; delta = x * c->code_align; break; }
		case 0x04: { uint32_t x; memcpy(&x, p, 4); p += 4; delta = x * c->code_align; break; }
		case 0x05:
			reg = cfa_uleb(&p);
			memtrack_cfi_set(s, reg, MEMTRACK_CFI_OFFSET,
					 (int64_t)cfa_uleb(&p) * c->data_align);
			continue;
		case 0x06:
			reg = cfa_uleb(&p);
			if (init)
				memtrack_cfi_restore(s, reg, init);
			continue;
		case 0x07:
			memtrack_cfi_set(s, cfa_uleb(&p), MEMTRACK_CFI_UNDEF, 0);
			continue;
		case 0x08:
			memtrack_cfi_set(s, cfa_uleb(&p), MEMTRACK_CFI_SAME, 0);
			continue;
		case 0x09:
			reg = cfa_uleb(&p);
			cfa_uleb(&p);
			memtrack_cfi_set(s, reg, MEMTRACK_CFI_OTHER, 0);
			continue;
		case 0x0a:
			if (depth == 8)
				return false;
			saved[depth++] = *s;
			continue;
		case 0x0b:
			if (!depth)
				return false;
			*s = saved[--depth];
			continue;
		case 0x0c:
			s->cfa_reg = cfa_uleb(&p);
			s->cfa_off = (int64_t)cfa_uleb(&p);
			s->cfa_expr = false;
			continue;
		case 0x0d: s->cfa_reg = cfa_uleb(&p); s->cfa_expr = false; continue;
		case 0x0e: s->cfa_off = (int64_t)cfa_uleb(&p); continue;
		case 0x0f: s->cfa_expr = true; p += cfa_uleb(&p); continue;
		case 0x10: case 0x16:
			reg = cfa_uleb(&p);
			memtrack_cfi_set(s, reg, MEMTRACK_CFI_OTHER, 0);
			p += cfa_uleb(&p);
			continue;
		case 0x11:
			reg = cfa_uleb(&p);
			memtrack_cfi_set(s, reg, MEMTRACK_CFI_OFFSET,
					 cfa_sleb(&p) * c->data_align);
			continue;
		case 0x12:
			s->cfa_reg = cfa_uleb(&p);
			s->cfa_off = cfa_sleb(&p) * c->data_align;
			s->cfa_expr = false;
			continue;
		case 0x13: s->cfa_off = cfa_sleb(&p) * c->data_align; continue;
		case 0x14: case 0x15:
			reg = cfa_uleb(&p);
			cfa_uleb(&p);
			memtrack_cfi_set(s, reg, MEMTRACK_CFI_OTHER, 0);
			continue;
		case 0x2e: cfa_uleb(&p); continue;
		case 0x2f:
			reg = cfa_uleb(&p);
			memtrack_cfi_set(s, reg, MEMTRACK_CFI_OFFSET,
					 -(int64_t)cfa_uleb(&p) * c->data_align);
			continue;
		default:
			return false;
		}
		if (emit && delta)
			emit(arg, loc, loc + delta, reduce(s));
		if (loc + delta > pc)
			return true;
		loc += delta;
	}
	return true;
}


bool cfa_parse_fde(const uint8_t *fde, int64_t bias, struct cfa_fde *f)
{
	const uint8_t *p;
	uint32_t len, cie_off;
	uint64_t range;

	memcpy(&len, fde, 4);
	memcpy(&cie_off, fde + 4, 4);
	if (len == 0xffffffff || !cie_off ||
	    !parse_cie(fde + 4 - cie_off, bias, &f->cie))
		return false;
	p = fde + 8;
	if (!cfa_encoded(&p, f->cie.fde_enc, bias, 0, &f->start) ||
	    !cfa_encoded(&p, f->cie.fde_enc & 0x0f, bias, 0, &range))
		return false;
	f->end = f->start + range;
	if (f->cie.aug_z)
		p += cfa_uleb(&p);
	f->insns = p;
	f->insns_end = fde + 4 + len;
	return true;
}

/* The state after the CIE's initial instructions. */
static bool initial(const struct cfa_fde *f, struct memtrack_cfi_row *s)
{
	memset(s, 0, sizeof(*s));
	s->ra = MEMTRACK_CFI_SAME;
	s->fp = MEMTRACK_CFI_SAME;
	return run(f->cie.insns, f->cie.end, &f->cie, f->start, ~0ULL, s, NULL,
		   NULL, NULL);
}

struct cfa_rule cfa_rule_at(const struct cfa_fde *f, uint64_t pc)
{
	struct cfa_rule unknown = { .kind = MEMTRACK_UNWIND_UNKNOWN };
	struct memtrack_cfi_row s, init;

	if (!initial(f, &s))
		return unknown;
	init = s;
	if (!run(f->insns, f->insns_end, &f->cie, f->start, pc, &s, &init,
		 NULL, NULL))
		return unknown;
	return reduce(&s);
}

struct rows {
	cfa_row_fn emit;
	void *arg;
	uint64_t next;			/* where the next row starts */
};

static void row(void *arg, uint64_t lo, uint64_t hi, struct cfa_rule r)
{
	struct rows *c = arg;

	c->emit(c->arg, lo, hi, r);
	c->next = hi;
}

bool cfa_rows(const struct cfa_fde *f, cfa_row_fn emit, void *arg)
{
	struct rows c = { emit, arg, f->start };
	struct memtrack_cfi_row s, init;

	if (!initial(f, &s))
		return false;
	init = s;
	if (!run(f->insns, f->insns_end, &f->cie, f->start, ~0ULL, &s, &init,
		 row, &c))
		return false;
	/* the last row holds to the end of the FDE */
	if (c.next < f->end)
		emit(arg, c.next, f->end, reduce(&s));
	return true;
}
