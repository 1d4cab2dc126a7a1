// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload's unwinder: call stacks of code built without frame
 * pointers, from the DWARF CFI the loaded objects carry in memory.
 *
 * For a pc, the object's .eh_frame_hdr table (PT_GNU_EH_FRAME) finds its
 * FDE by binary search; the CIE's and FDE's CFA programs are run up to the
 * pc and reduced to the compact rule memtrack's uprobe engine uses
 * (struct memtrack_unwind_row): the CFA as RSP or RBP plus an offset,
 * where RBP was saved, the return address at CFA - 8, or "stop" (the
 * outermost frame, or a rule this walk does not follow, such as the PLT's
 * expression).  That is the slow path, a few microseconds; each thread
 * keeps the rules it found by pc, so a frame seen before costs a compare.
 *
 * It runs inside malloc: no allocation (the object table is static), no
 * system call and no lock on a hit; the object table is refreshed with
 * dl_iterate_phdr under a spinlock of its own when a pc falls in no known
 * object.  Objects are never dropped (a dlclose'd range keeps its entry; a
 * generation number retires the rules cached before a refresh), and stack
 * words are read only where a rule says a frame saved them, the CFA going
 * up at every step, so a stale rule gives a short stack, not a fault.
 */
#define _GNU_SOURCE
#include <link.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "cfi.h"

#define MAX_OBJECTS	512
#define MEMO_BITS	10
#define STACK_SPAN	(64ULL << 20)	/* how far above the start a frame may be */

enum rule_kind { R_NONE, R_SP, R_BP, R_STOP };

/* A compact rule; gen: the object table it was found in (memo only). */
struct rule {
	int32_t cfa_off;
	int16_t bp_off;			/* 0: RBP unchanged */
	uint8_t kind;
	uint8_t gen;
};

struct object {
	uint64_t lo, hi;		/* an executable segment */
	const uint8_t *hdr;		/* its .eh_frame_hdr, or NULL */
};

static struct object objects[MAX_OBJECTS];
static unsigned int nr_objects;		/* published with release */
static uint32_t table_lock;
static uint8_t table_gen;
static void (*object_cb)(const char *, uint64_t, uint64_t, uint64_t);

static __thread struct {
	uint64_t pc;
	struct rule r;
} memo[1 << MEMO_BITS] __attribute__((tls_model("initial-exec")));

void pl_cfi_set_object_cb(void (*cb)(const char *path, uint64_t base,
				     uint64_t lo, uint64_t hi))
{
	object_cb = cb;
}

/* ---- the object table -------------------------------------------------------- */

static bool known(uint64_t lo, uint64_t hi)
{
	unsigned int i;

	for (i = 0; i < nr_objects; i++)
		if (objects[i].lo == lo && objects[i].hi == hi)
			return true;
	return false;
}

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	const uint8_t *hdr = NULL;
	int i;

	(void)size;
	(void)arg;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)(info->dlpi_addr +
						info->dlpi_phdr[i].p_vaddr);
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;
		uint64_t hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    known(lo, hi) || nr_objects == MAX_OBJECTS)
			continue;
		objects[nr_objects] = (struct object){ lo, hi, hdr };
		__atomic_store_n(&nr_objects, nr_objects + 1, __ATOMIC_RELEASE);
		if (object_cb)
			object_cb(info->dlpi_name, info->dlpi_addr, lo, hi);
	}
	return 0;
}

/*
 * The rules cached before are retired only if objects came: a pc in none
 * (JIT code, garbage past the outermost frame) is cached as "none" and
 * costs no second look.
 */
static void refresh(void)
{
	unsigned int before;

	while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();		/* rare: a holder may be preempted */
	before = nr_objects;
	dl_iterate_phdr(add_object, NULL);
	if (nr_objects != before)
		__atomic_store_n(&table_gen, (uint8_t)(table_gen + 1),
				 __ATOMIC_RELEASE);
	__atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE);
}

static const struct object *object_of(uint64_t pc)
{
	unsigned int n = __atomic_load_n(&nr_objects, __ATOMIC_ACQUIRE), i;

	for (i = 0; i < n; i++)
		if (pc >= objects[i].lo && pc < objects[i].hi)
			return &objects[i];
	return NULL;
}

/* ---- DWARF encodings ------------------------------------------------------------- */

static uint64_t uleb(const uint8_t **p)
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

static int64_t sleb(const uint8_t **p)
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

/*
 * A pointer in encoding enc (DW_EH_PE_*) at *p; data: the base of datarel.
 * false for what x86-64 objects do not use (indirect, aligned, funcrel).
 */
static bool encoded(const uint8_t **p, uint8_t enc, uint64_t data,
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
	case 0x01: v = uleb(p); break;
	case 0x02: { uint16_t x; memcpy(&x, at, 2); v = x; *p += 2; break; }
	case 0x03: { uint32_t x; memcpy(&x, at, 4); v = x; *p += 4; break; }
	case 0x04: memcpy(&v, at, 8); *p += 8; break;
	case 0x09: v = (uint64_t)sleb(p); break;
	case 0x0a: { int16_t x; memcpy(&x, at, 2); v = (uint64_t)(int64_t)x; *p += 2; break; }
	case 0x0b: { int32_t x; memcpy(&x, at, 4); v = (uint64_t)(int64_t)x; *p += 4; break; }
	case 0x0c: memcpy(&v, at, 8); *p += 8; break;
	default:
		return false;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: base = (uint64_t)at; break;			/* pcrel */
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

#define REG_RBP		6
#define REG_RSP		7
#define REG_RA		16

enum reg_rule { SAME, UNDEF, OFFSET, OTHER };

struct state {
	uint64_t cfa_reg;
	int64_t cfa_off;
	bool cfa_expr;
	uint8_t bp, ra;			/* enum reg_rule */
	int64_t bp_off, ra_off;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool aug_z;
	const uint8_t *insns, *end;
};

static bool parse_cie(const uint8_t *p, struct cie *c)
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
	c->code_align = uleb(&p);
	c->data_align = sleb(&p);
	c->ra_reg = version == 1 ? *p++ : uleb(&p);
	c->fde_enc = 0;
	c->aug_z = aug[0] == 'z';
	if (c->aug_z) {
		const uint8_t *data;
		uint64_t alen = uleb(&p), ignored;

		data = p;
		for (aug++; *aug; aug++) {
			if (*aug == 'R')
				c->fde_enc = *data++;
			else if (*aug == 'L')
				data++;
			else if (*aug == 'P') {
				uint8_t enc = *data++;

				if (!encoded(&data, enc & 0x7f, 0, &ignored))
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

static void set_reg(struct state *s, uint64_t reg, uint8_t rule, int64_t off)
{
	if (reg == REG_RBP) {
		s->bp = rule;
		s->bp_off = off;
	} else if (reg == REG_RA) {
		s->ra = rule;
		s->ra_off = off;
	}
}

/*
 * Run the instructions [p, end) from loc until the row holding pc is
 * complete; init: the CIE's state, for DW_CFA_restore.  false on an
 * instruction it does not know (the rule is then "stop").
 */
static bool run(const uint8_t *p, const uint8_t *end, const struct cie *c,
		uint64_t loc, uint64_t pc, struct state *s,
		const struct state *init)
{
	struct state saved[8];
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
			set_reg(s, op & 0x3f, OFFSET,
				(int64_t)uleb(&p) * c->data_align);
			continue;
		case 3:
			if (init)
				set_reg(s, op & 0x3f,
					(op & 0x3f) == REG_RBP ? init->bp : init->ra,
					(op & 0x3f) == REG_RBP ? init->bp_off :
								 init->ra_off);
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
			reg = uleb(&p);
			set_reg(s, reg, OFFSET, (int64_t)uleb(&p) * c->data_align);
			continue;
		case 0x06:
			reg = uleb(&p);
			if (init)
				set_reg(s, reg, reg == REG_RBP ? init->bp : init->ra,
					reg == REG_RBP ? init->bp_off : init->ra_off);
			continue;
		case 0x07: set_reg(s, uleb(&p), UNDEF, 0); continue;
		case 0x08: set_reg(s, uleb(&p), SAME, 0); continue;
		case 0x09: reg = uleb(&p); uleb(&p); set_reg(s, reg, OTHER, 0); continue;
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
			s->cfa_reg = uleb(&p);
			s->cfa_off = (int64_t)uleb(&p);
			s->cfa_expr = false;
			continue;
		case 0x0d: s->cfa_reg = uleb(&p); s->cfa_expr = false; continue;
		case 0x0e: s->cfa_off = (int64_t)uleb(&p); continue;
		case 0x0f: s->cfa_expr = true; p += uleb(&p); continue;
		case 0x10: reg = uleb(&p); set_reg(s, reg, OTHER, 0); p += uleb(&p); continue;
		case 0x11:
			reg = uleb(&p);
			set_reg(s, reg, OFFSET, sleb(&p) * c->data_align);
			continue;
		case 0x12:
			s->cfa_reg = uleb(&p);
			s->cfa_off = sleb(&p) * c->data_align;
			s->cfa_expr = false;
			continue;
		case 0x13: s->cfa_off = sleb(&p) * c->data_align; continue;
		case 0x14: case 0x15:
			reg = uleb(&p);
			uleb(&p);
			set_reg(s, reg, OTHER, 0);
			continue;
		case 0x16: reg = uleb(&p); set_reg(s, reg, OTHER, 0); p += uleb(&p); continue;
		case 0x2e: uleb(&p); continue;
		case 0x2f:
			reg = uleb(&p);
			set_reg(s, reg, OFFSET, -(int64_t)uleb(&p) * c->data_align);
			continue;
		default:
			return false;
		}
		if (loc + delta > pc)
			return true;
		loc += delta;
	}
	return true;
}

static struct rule reduce(const struct state *s)
{
	struct rule r = { .kind = R_STOP };

	if (s->ra != OFFSET || s->ra_off != -8 || s->cfa_expr ||
	    (s->cfa_reg != REG_RSP && s->cfa_reg != REG_RBP))
		return r;
	if (s->bp == OFFSET)
		r.bp_off = (int16_t)s->bp_off;
	else if (s->bp != SAME)
		return r;
	r.kind = s->cfa_reg == REG_RSP ? R_SP : R_BP;
	r.cfa_off = (int32_t)s->cfa_off;
	return r;
}

/* The FDE of pc in the object's .eh_frame_hdr search table, or NULL. */
static const uint8_t *find_fde(const uint8_t *hdr, uint64_t pc)
{
	const uint8_t *p = hdr + 4;
	const int32_t *t;
	uint64_t ignored, count;
	size_t lo, hi, mid;

	/* version 1, table of (sdata4 datarel) pairs, as every linker writes */
	if (hdr[0] != 1 || hdr[3] != 0x3b ||
	    !encoded(&p, hdr[1], (uint64_t)hdr, &ignored) ||
	    !encoded(&p, hdr[2], (uint64_t)hdr, &count) || !count)
		return NULL;
	t = (const int32_t *)p;
	if ((uint64_t)hdr + t[0] > pc)
		return NULL;
	for (lo = 0, hi = count; hi - lo > 1;) {
		mid = (lo + hi) / 2;
		if ((uint64_t)hdr + t[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return hdr + t[2 * lo + 1];
}

/* The rule at pc (a return address less 1, or an exact pc), slowly. */
static struct rule lookup(uint64_t pc)
{
	struct rule none = { .kind = R_NONE };
	const struct object *o = object_of(pc);
	struct state s = { 0 }, init;
	const uint8_t *fde, *p, *cie_p;
	uint64_t start, range;
	uint32_t len, cie_off;
	struct cie c;

	if (!o) {
		refresh();
		o = object_of(pc);
	}
	if (!o || !o->hdr || !(fde = find_fde(o->hdr, pc)))
		return none;
	memcpy(&len, fde, 4);
	memcpy(&cie_off, fde + 4, 4);
	if (len == 0xffffffff || !cie_off)
		return none;
	cie_p = fde + 4 - cie_off;
	if (!parse_cie(cie_p, &c))
		return (struct rule){ .kind = R_STOP };
	p = fde + 8;
	if (!encoded(&p, c.fde_enc, 0, &start) ||
	    !encoded(&p, c.fde_enc & 0x0f, 0, &range))
		return none;
	if (pc < start || pc >= start + range)
		return none;
	if (c.aug_z)
		p += uleb(&p);
	s.ra = SAME;
	s.bp = SAME;
	if (!run(c.insns, c.end, &c, start, ~0ULL, &s, NULL))
		return (struct rule){ .kind = R_STOP };
	init = s;
	if (!run(p, fde + 4 + len, &c, start, pc, &s, &init))
		return (struct rule){ .kind = R_STOP };
	return reduce(&s);
}

static inline struct rule rule_at(uint64_t pc)
{
	unsigned int i = (unsigned int)((pc * 0x9e3779b97f4a7c15ULL) >> (64 - MEMO_BITS));
	uint8_t gen = __atomic_load_n(&table_gen, __ATOMIC_RELAXED);
	struct rule r;

	if (memo[i].pc == pc && memo[i].r.gen == gen)
		return memo[i].r;
	r = lookup(pc);
	r.gen = __atomic_load_n(&table_gen, __ATOMIC_RELAXED);
	memo[i].pc = pc;
	memo[i].r = r;
	return r;
}

/* One word the walk read, if it is recording. */
#define READ(w, addr) ({						\
	uint64_t a_ = (addr), v_ = *(const uint64_t *)a_;		\
	if (w) {							\
		(w)->at[(w)->nr] = a_;					\
		(w)->val[(w)->nr++] = v_;				\
	}								\
	v_;								\
})

int pl_cfi_backtrace(const struct pl_regs *start, uint64_t *pcs, int max,
		     struct pl_walk *w)
{
	uint64_t pc = start->pc, sp = start->sp, bp = start->bp, cfa;
	uint64_t top = start->sp + STACK_SPAN;
	bool bp_restored = false, bp_used = false;
	struct rule r;
	int n = 0;

	if (w) {
		w->valid = false;
		w->nr = 0;
	}
	while (n < max && pc) {
		if (w)
			w->sps[n] = sp;
		pcs[n++] = pc;
		r = rule_at(pc - 1);
		if (r.kind == R_STOP)
			break;
		if (r.kind != R_SP && !bp_restored)
			bp_used = true;
		if (r.kind == R_NONE) {
			/* no CFI here: frame pointers, if RBP looks like one */
			if (bp < sp || bp >= top - 16 || (bp & 7))
				break;
			cfa = bp + 16;
		} else {
			cfa = (r.kind == R_SP ? sp : bp) + (int64_t)r.cfa_off;
		}
		if (cfa <= sp || cfa >= top || (cfa & 7))
			return n;	/* ended by a bound: not a walk to reuse */
		pc = READ(w, cfa - 8);
		if (r.kind == R_NONE || r.bp_off) {
			bp = READ(w, r.kind == R_NONE ? cfa - 16 : cfa + r.bp_off);
			bp_restored = true;
		}
		sp = cfa;
	}
	if (w) {
		w->valid = n < max || !pc;
		w->bp_used = bp_used;
		w->pc = start->pc;
		w->sp = start->sp;
		w->bp = start->bp;
	}
	return n;
}

bool pl_cfi_same_walk(const struct pl_regs *start, const struct pl_walk *w)
{
	int i;

	if (!w->valid || w->pc != start->pc || w->sp != start->sp ||
	    (w->bp_used && w->bp != start->bp))
		return false;
	for (i = 0; i < w->nr; i++)
		if (*(const uint64_t *)w->at[i] != w->val[i])
			return false;
	return true;
}
