// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: compact unwind tables for the leak tracer (LEAK_UNWIND), so
 * that memtrack.ko can walk stacks through code built without frame
 * pointers.
 *
 * The CFI comes from libdw: the object's .eh_frame, and .debug_frame where
 * there is one (in the file or in its separate debuginfo, found by libdwfl).
 * Each CFI row is reduced by memtrack_unwind.h's rules, as the module's and
 * the in-process engine's rows are: the CFA as the stack or frame pointer
 * plus an offset, where the frame pointer was saved, the return address at
 * its fixed place below the CFA (else the row says "unknown") or undefined
 * (the outermost frame).  Rows are relative to the object's ELF vaddrs, so
 * one table serves every process that maps the object.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <gelf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "libmemtrack.h"
#include "internal.h"
#include "cfa.h"
#include "grow.h"

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* A CFI source and how its addresses relate to the object's vaddrs. */
struct cfi_src {
	Dwarf_CFI *cfi;
	Dwarf_Addr shift;		/* cfi address = vaddr + shift */
};

/*
 * A register's rule as memtrack_unwind.h tells them apart: libdw gives
 * "undefined" as no operations with ops == mem, "same value" as none with
 * ops != mem, "at CFA + off" as DW_OP_call_frame_cfa [DW_OP_plus_uconst].
 */
static int reg_rule(Dwarf_Frame *f, int reg, __u8 *rule, __s64 *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	*off = 0;
	if (dwarf_frame_register(f, reg, mem, &ops, &n))
		return -1;
	if (!n) {
		*rule = ops == mem ? MEMTRACK_CFI_UNDEF : MEMTRACK_CFI_SAME;
	} else if (ops[0].atom != DW_OP_call_frame_cfa || n > 2 ||
		   (n == 2 && ops[1].atom != DW_OP_plus_uconst)) {
		*rule = MEMTRACK_CFI_OTHER;
	} else {
		*rule = MEMTRACK_CFI_OFFSET;
		*off = n == 2 ? (int64_t)ops[1].number : 0;
	}
	return 0;
}

/* The compact form of one CFI row: memtrack_unwind.h's reduction. */
static struct memtrack_unwind_row classify(Dwarf_Frame *f)
{
	struct memtrack_unwind_row unknown = { .cfa = MEMTRACK_UNWIND_UNKNOWN };
	struct memtrack_cfi_row s = { 0 };
	Dwarf_Op *ops;
	size_t n;

	if (reg_rule(f, MEMTRACK_UNWIND_DW_RA, &s.ra, &s.ra_off) ||
	    reg_rule(f, MEMTRACK_UNWIND_DW_FP, &s.fp, &s.fp_off))
		return unknown;
	/*
	 * DW_CFA_def_cfa reg, off is one DW_OP_bregx; anything else (the
	 * PLT's expression) is an expression to memtrack.
	 */
	if (dwarf_frame_cfa(f, &ops, &n))
		return unknown;
	if (n == 1 && ops[0].atom == DW_OP_bregx) {
		s.cfa_reg = ops[0].number;
		s.cfa_off = (int64_t)ops[0].number2;
	} else {
		s.cfa_expr = 1;
	}
	return memtrack_unwind_reduce(&s);
}

static bool same_rule(const struct memtrack_unwind_row *a,
		      const struct memtrack_unwind_row *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off &&
	       a->bp_off == b->bp_off && a->ra_slot == b->ra_slot;
}

struct builder {
	struct mt_unwind_table *t;
	size_t cap;
};

/* Append the rule for [addr, ...) unless it continues the previous row. */
static int emit(struct builder *b, uint64_t addr,
		const struct memtrack_unwind_row *rule)
{
	struct mt_unwind_table *t = b->t;
	struct memtrack_unwind_row *r;

	/* Segments back to back: the next one's first row replaces the end. */
	if (t->nr && t->rows[t->nr - 1].addr == addr)
		t->nr--;
	if (t->nr && same_rule(&t->rows[t->nr - 1], rule))
		return 0;
	if (mt_grow((void **)&t->rows, &b->cap, t->nr + 1, sizeof(*t->rows),
		    1024))
		return mt_seterr(-ENOMEM, "out of memory");
	r = &t->rows[t->nr++];
	*r = *rule;
	r->addr = (uint32_t)addr;
	return 0;
}

/*
 * Rows for the vaddrs [lo, hi): each address is looked up in the sources in
 * turn, and the row found (or NONE) holds up to the end of its CFI row.
 */
static int build_range(struct builder *b, const struct cfi_src *src,
		       size_t nsrc, uint64_t lo, uint64_t hi)
{
	static const struct memtrack_unwind_row none = { .cfa = MEMTRACK_UNWIND_NONE };
	uint64_t addr = lo;
	int err;

	while (addr < hi) {
		struct memtrack_unwind_row rule = none;
		uint64_t end = addr + 1;
		size_t i;

		for (i = 0; i < nsrc; i++) {
			Dwarf_Addr start, stop;
			Dwarf_Frame *f;
			bool signal;

			if (dwarf_cfi_addrframe(src[i].cfi, addr + src[i].shift, &f))
				continue;
			if (dwarf_frame_info(f, &start, &stop, &signal) >= 0 &&
			    stop - src[i].shift > addr) {
				rule = classify(f);
				end = stop - src[i].shift;
			}
			free(f);
			break;
		}
		err = emit(b, addr, &rule);
		if (err)
			return err;
		addr = end < hi ? end : hi;
	}
	return emit(b, hi, &none);
}

/* ---- one pass over .eh_frame ------------------------------------------------ */

/*
 * Asking libdw for each row (dwarf_cfi_addrframe) finds the FDE anew every
 * time and steps through code without CFI byte by byte: seconds for
 * libLLVM's million rows.  An object's .eh_frame read once, every FDE's
 * program run once (cfa.c, the in-process engine's interpreter), gives
 * the same rows; libdw remains for what that does not cover (.debug_frame,
 * an FDE it cannot read).
 */
struct span {
	uint64_t lo, hi;
	struct cfa_rule r;
};

struct spans {
	struct span *v;
	size_t n, cap;
	int err;
};

static void add_span(void *arg, uint64_t lo, uint64_t hi, struct cfa_rule r)
{
	struct spans *sp = arg;

	if (sp->err)
		return;
	if (mt_grow((void **)&sp->v, &sp->cap, sp->n + 1, sizeof(*sp->v),
		    4096)) {
		sp->err = mt_seterr(-ENOMEM, "out of memory");
		return;
	}
	sp->v[sp->n++] = (struct span){ lo, hi, r };
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The .eh_frame section of elf, or NULL. */
static Elf_Data *eh_frame(Elf *elf, GElf_Addr *addr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".eh_frame")) {
			*addr = sh.sh_addr;
			return elf_getdata(scn, NULL);
		}
	}
	return NULL;
}

/* Every FDE's rows, sorted: 0, or -ENOENT / -EINVAL (use libdw instead). */
static int eh_spans(Elf *elf, struct spans *sp)
{
	const uint8_t *p, *end;
	struct cfa_fde f;
	GElf_Addr addr = 0;
	Elf_Data *d = eh_frame(elf, &addr);
	uint32_t len, id;
	int64_t bias;

	if (!d || !d->d_buf || !d->d_size)
		return -ENOENT;
	p = d->d_buf;
	end = p + d->d_size;
	bias = (int64_t)addr - (int64_t)(uintptr_t)d->d_buf;
	while (p + 8 <= end) {
		memcpy(&len, p, 4);
		if (!len)
			break;		/* the terminator */
		if (len == 0xffffffff || len > (size_t)(end - p) - 4)
			return -EINVAL;
		memcpy(&id, p + 4, 4);
		if (id && (!cfa_parse_fde(p, bias, &f) ||
			   (f.end > f.start && !cfa_rows(&f, add_span, sp))))
			return -EINVAL;
		p += 4 + len;
	}
	if (sp->err)
		return sp->err;
	qsort(sp->v, sp->n, sizeof(*sp->v), cmp_span);
	return 0;
}

static struct memtrack_unwind_row row_of(struct cfa_rule r)
{
	struct memtrack_unwind_row row = {
		.cfa = r.kind, .cfa_off = r.cfa_off, .bp_off = r.bp_off,
		.ra_slot = r.ra_slot,
	};

	return row;
}

/* Rows for the vaddrs [lo, hi) from the spans: NONE where none covers. */
static int build_spans(struct builder *b, const struct spans *sp, uint64_t lo,
		       uint64_t hi)
{
	static const struct memtrack_unwind_row none = { .cfa = MEMTRACK_UNWIND_NONE };
	struct memtrack_unwind_row row;
	uint64_t addr = lo;
	size_t i = 0;
	int err = 0;

	while (!err && addr < hi) {
		while (i < sp->n && sp->v[i].hi <= addr)
			i++;
		if (i == sp->n || sp->v[i].lo >= hi)
			break;
		if (sp->v[i].lo > addr) {
			err = emit(b, addr, &none);
			addr = sp->v[i].lo;
			continue;
		}
		row = row_of(sp->v[i].r);
		err = emit(b, addr, &row);
		addr = sp->v[i].hi < hi ? sp->v[i].hi : hi;
	}
	if (!err && addr < hi)
		err = emit(b, addr, &none);
	return err ? err : emit(b, hi, &none);
}

void mt_unwind_table_free(struct mt_unwind_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/* Tests compare the two builders: with force_libdw, libdw alone. */
int mt_unwind_build_with(const char *path, struct mt_unwind_table *t,
			 enum mt_cfi_src from)
{
	struct spans sp = { 0 };
	bool fast = false;
	struct builder b = { .t = t };
	struct cfi_src src[2];
	Dwarf_Addr mod_bias, bias;
	Dwfl_Module *mod;
	size_t nsrc = 0, i, nph;
	Dwarf_CFI *cfi;
	Dwfl *dwfl;
	Elf *elf;
	int err = 0;

	memset(t, 0, sizeof(*t));
	dwfl = dwfl_begin(&offline_callbacks);
	if (!dwfl)
		return mt_seterr(-ENOMEM, "libdwfl: %s", dwfl_errmsg(-1));
	mod = dwfl_report_offline(dwfl, path, path, -1);
	if (!mod || dwfl_report_end(dwfl, NULL, NULL)) {
		err = mt_seterr(-ENOEXEC, "%s: %s", path, dwfl_errmsg(-1));
		goto out;
	}
	elf = dwfl_module_getelf(mod, &mod_bias);
	if (!elf || elf_getphdrnum(elf, &nph)) {
		err = mt_seterr(-ENOEXEC, "%s: not an ELF object", path);
		goto out;
	}
	/* .eh_frame first: it is what the code was built to unwind with. */
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (cfi)
		src[nsrc++] = (struct cfi_src){ cfi, mod_bias - bias };
	/* (MT_CFI_EH: not even looked for, nor the debug file it is in) */
	cfi = from == MT_CFI_EH ? NULL : dwfl_module_dwarf_cfi(mod, &bias);
	if (cfi)
		src[nsrc++] = (struct cfi_src){ cfi, mod_bias - bias };
	/* .eh_frame alone, read by us: one pass */
	if (!cfi && from != MT_CFI_LIBDW && eh_spans(elf, &sp) == 0)
		fast = true;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_memsz)
			continue;
		if (ph.p_vaddr + ph.p_memsz > UINT32_MAX) {
			err = mt_seterr(-E2BIG, "%s: code above 4 GiB", path);
			goto out;
		}
		if (!t->vend) {
			t->vstart = ph.p_vaddr;
			t->vaddr_off = ph.p_vaddr - ph.p_offset;
		} else if (ph.p_vaddr < t->vend) {
			err = mt_seterr(-ENOEXEC, "%s: unsorted program headers", path);
			goto out;
		}
		t->vend = ph.p_vaddr + ph.p_memsz;
		err = fast ? build_spans(&b, &sp, ph.p_vaddr, t->vend) :
			     build_range(&b, src, nsrc, ph.p_vaddr, t->vend);
		if (err)
			goto out;
	}
out:
	free(sp.v);
	dwfl_end(dwfl);
	if (err)
		mt_unwind_table_free(t);
	return err;
}

int mt_unwind_build(const char *path, struct mt_unwind_table *t)
{
	return mt_unwind_build_with(path, t, MT_CFI_AUTO);
}
