// SPDX-License-Identifier: LGPL-2.1
/*
 * Leak classes over a memory snapshot, by memcheck's rules:
 *  - roots point at blocks; a start pointer reaches a block as reachable,
 *    an interior one as possibly lost; what a block points to inherits the
 *    weaker of the two (a chain with any interior pointer is "possibly");
 *  - of the blocks never reached, those another unreached block points to
 *    are indirectly lost, the others definitely lost.  A group of lost
 *    blocks pointing at each other in a cycle has one leader (the first by
 *    address from which the others are reached), definitely lost: memcheck's
 *    "clique", so a 3-block cycle is 1 definitely + 2 indirectly lost.
 *
 * memcheck replaces malloc; natively glibc's own pointers are there too.
 * Those to blocks' chunks are harmless (a chunk's header lies 16 bytes
 * before its block), but a chunk of a 24-, 40-, 56-... byte request lends
 * its last 8 bytes to the next chunk's header: the arena's pointer to its
 * top chunk, or a bin's to a free chunk, lands inside the block before.
 * So a word pointing exactly where a block's chunk ends, at a chunk that
 * is the top one (it ends where its mapping does) or free (the chunk
 * after it says so), is malloc's, not a pointer into the block.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libmemtrack.h"

enum { UNREACHED = -1 };

struct scan {
	struct mt_scan_block *b;
	size_t n;
	const struct mt_scan_region *r;
	size_t nr;
	int *state;			/* UNREACHED or enum mt_scan_class */
	size_t *stack;			/* work list */
	size_t depth;
};

const char *mt_scan_class_name(enum mt_scan_class c)
{
	static const char *const names[] = {
		[MT_SCAN_DEFINITE] = "definitely lost",
		[MT_SCAN_INDIRECT] = "indirectly lost",
		[MT_SCAN_POSSIBLE] = "possibly lost",
		[MT_SCAN_REACHABLE] = "still reachable",
	};

	return (unsigned int)c < MT_SCAN_NR_CLASSES ? names[c] : "unknown";
}

static int cmp_addr(const void *a, const void *b)
{
	const struct mt_scan_block *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The block holding p (its last byte included), or -1; *start: p is its start. */
static long find_block(const struct scan *s, uint64_t p, bool *start)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->b[mid].addr <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo: first block above p; the one before may hold it */
	while (lo-- > 0) {
		const struct mt_scan_block *b = &s->b[lo];

		if (p == b->addr) {
			*start = true;
			return (long)lo;
		}
		if (p - b->addr < b->size) {
			*start = false;
			return (long)lo;
		}
		/* a 0-byte block at p's address hides no larger one before it */
		if (b->size)
			break;
	}
	return -1;
}

static uint64_t word_at(const unsigned char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/* The word at addr from the regions; false if none holds it whole. */
static bool read_word(const struct scan *s, uint64_t addr, uint64_t *w,
		      uint64_t *region_end)
{
	size_t i;

	for (i = 0; i < s->nr; i++) {
		const struct mt_scan_region *r = &s->r[i];

		if (addr >= r->addr && addr + 8 <= r->addr + r->len) {
			*w = word_at(r->data + (addr - r->addr));
			*region_end = r->addr + r->len;
			return true;
		}
	}
	return false;
}

#define CHUNK_PREV_INUSE	1ull
#define CHUNK_IS_MMAPPED	2ull
#define CHUNK_FLAGS		7ull

/* p (inside block k) points at the header of a top or free chunk. */
static bool malloc_own(const struct scan *s, long k, uint64_t p)
{
	const struct mt_scan_block *b = &s->b[k];
	uint64_t size, next, after, end;

	if (p & 15 || !read_word(s, b->addr - 8, &size, &end) ||
	    size & CHUNK_IS_MMAPPED ||
	    b->addr - 16 + (size & ~CHUNK_FLAGS) != p ||
	    !read_word(s, p + 8, &next, &end))
		return false;
	next &= ~CHUNK_FLAGS;
	if (next < 32)
		return false;
	if (p + next == end)
		return true;		/* the top chunk */
	return read_word(s, p + next + 8, &after, &end) &&
	       !(after & CHUNK_PREV_INUSE);
}

/* The block p points into (*start: at its start), malloc's words left out. */
static long pointee(const struct scan *s, uint64_t p, bool *start)
{
	long k = find_block(s, p, start);

	if (k >= 0 && !*start && malloc_own(s, k, p))
		return -1;
	return k;
}

/* Calls fn(s, block index, start pointer) for each pointer in [addr, addr+len). */
static void scan_range(struct scan *s, uint64_t addr, uint64_t len,
		       void (*fn)(struct scan *, long, bool, void *), void *arg)
{
	uint64_t end = addr + len;
	size_t i;

	for (i = 0; i < s->nr; i++) {
		const struct mt_scan_region *r = &s->r[i];
		uint64_t lo = addr > r->addr ? addr : r->addr;
		uint64_t hi = end < r->addr + r->len ? end : r->addr + r->len;
		uint64_t a;

		lo = (lo + 7) & ~7ull;
		for (a = lo; a + 8 <= hi; a += 8) {
			bool start;
			long k = pointee(s, word_at(r->data + (a - r->addr)),
					 &start);

			if (k >= 0)
				fn(s, k, start, arg);
		}
	}
}

static void push(struct scan *s, long k)
{
	s->stack[s->depth++] = (size_t)k;
}

/* From a reached block (arg: its class) or a root (arg: NULL). */
static void reach(struct scan *s, long k, bool start, void *arg)
{
	int from = arg ? *(int *)arg : MT_SCAN_REACHABLE;
	int cls = start && from == MT_SCAN_REACHABLE ? MT_SCAN_REACHABLE :
						       MT_SCAN_POSSIBLE;

	/* each block is pushed at most twice: possible, then reachable */
	if (s->state[k] == UNREACHED ||
	    (s->state[k] == MT_SCAN_POSSIBLE && cls == MT_SCAN_REACHABLE)) {
		s->state[k] = cls;
		push(s, k);
	}
}

static void drain_reached(struct scan *s)
{
	while (s->depth) {
		size_t k = s->stack[--s->depth];
		int cls = s->state[k];

		scan_range(s, s->b[k].addr, s->b[k].size, reach, &cls);
	}
}

/* From a lost block: arg is the clique leader's index. */
static void lose(struct scan *s, long k, bool start, void *arg)
{
	(void)start;
	if (k == *(long *)arg || s->state[k] != UNREACHED)
		return;
	/* an earlier leader (or a block of its clique) joins this clique */
	s->state[k] = MT_SCAN_INDIRECT;
	push(s, k);
}

/* Root regions' words, skipping known blocks (reached only through roots). */
static void scan_roots(struct scan *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++) {
		const struct mt_scan_region *r = &s->r[i];
		uint64_t a = (r->addr + 7) & ~7ull, end = r->addr + r->len;

		if (!r->root)
			continue;
		while (a + 8 <= end) {
			bool start;
			long k = find_block(s, a, &start);

			if (k >= 0 && s->b[k].size) {
				a = (s->b[k].addr + s->b[k].size + 7) & ~7ull;
				continue;
			}
			k = pointee(s, word_at(r->data + (a - r->addr)), &start);
			if (k >= 0)
				reach(s, k, start, NULL);
			a += 8;
		}
	}
}

int mt_scan_classify(struct mt_scan_block *blocks, size_t nblocks,
		     const struct mt_scan_region *regions, size_t nregions)
{
	struct scan s = { .b = blocks, .n = nblocks, .r = regions,
			  .nr = nregions };
	size_t i;

	qsort(blocks, nblocks, sizeof(*blocks), cmp_addr);
	s.state = malloc((nblocks ? nblocks : 1) * sizeof(*s.state));
	s.stack = malloc((2 * nblocks + 1) * sizeof(*s.stack));
	if (!s.state || !s.stack) {
		free(s.state);
		free(s.stack);
		return -ENOMEM;
	}
	for (i = 0; i < nblocks; i++)
		s.state[i] = UNREACHED;
	scan_roots(&s);
	drain_reached(&s);
	for (i = 0; i < nblocks; i++) {
		long leader = (long)i;

		if (s.state[i] != UNREACHED)
			continue;
		push(&s, leader);
		while (s.depth) {
			size_t k = s.stack[--s.depth];

			scan_range(&s, s.b[k].addr, s.b[k].size, lose, &leader);
		}
	}
	for (i = 0; i < nblocks; i++)
		blocks[i].cls = s.state[i] == UNREACHED ? MT_SCAN_DEFINITE :
			(enum mt_scan_class)s.state[i];
	free(s.state);
	free(s.stack);
	return 0;
}
