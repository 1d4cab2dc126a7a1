// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of --scan's classifier (user/lib/scan.c) on synthetic memory:
 * a "heap" region of blocks whose words point at each other, and root
 * regions.  Each case states memcheck's answer.  Prints "PASS name" or
 * "FAIL name: why" per test; exits 1 if any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libmemtrack.h"

#define HEAP	0x10000ull	/* blocks: HEAP + i * 64, 64 bytes each */
#define DATA	0x80000ull	/* a root region of 8 words */
#define NB	8

static int failures;
static uint64_t heap[NB * 8], data[8];

static uint64_t blk(int i)
{
	return HEAP + (uint64_t)i * 64;
}

static void reset(void)
{
	memset(heap, 0, sizeof(heap));
	memset(data, 0, sizeof(data));
}

/* Word w of block i points at p. */
static void link_to(int i, int w, uint64_t p)
{
	heap[i * 8 + w] = p;
}

/*
 * Classify nb blocks (sizes 64, or 48 for the last if short) with the
 * data region as root; heap_root: the heap region is a root too.
 * want: one letter per block: D, I, P, R.
 */
static void run(const char *name, int nb, bool heap_root, const char *want)
{
	struct mt_scan_region r[2] = {
		{ .addr = HEAP, .len = sizeof(heap),
		  .data = (const unsigned char *)heap, .root = heap_root },
		{ .addr = DATA, .len = sizeof(data),
		  .data = (const unsigned char *)data, .root = true },
	};
	static const char letter[] = "DIPR";
	struct mt_scan_block b[NB];
	char got[NB + 1];
	int i;

	/* reversed order: the classifier must sort */
	for (i = 0; i < nb; i++) {
		b[i].addr = blk(nb - 1 - i);
		b[i].size = 64;
		b[i].stack_id = (uint32_t)(nb - i);
	}
	if (mt_scan_classify(b, (size_t)nb, r, 2)) {
		printf("FAIL %s: classify failed\n", name);
		failures++;
		return;
	}
	for (i = 0; i < nb; i++)
		got[i] = letter[b[i].cls];
	got[nb] = '\0';
	if (strcmp(got, want)) {
		printf("FAIL %s: got %s, expected %s\n", name, got, want);
		failures++;
	} else {
		printf("PASS %s\n", name);
	}
}

/*
 * glibc's chunks (malloc.c): a block's chunk starts 16 bytes before it with
 * its size (| PREV_INUSE), and a 40-byte request's 48-byte chunk lends its
 * last 8 bytes to the next chunk's prev_size.  heap2: block A (40 bytes)
 * at CH + 16, then a chunk at CH + 48 of next_size bytes, then one whose
 * size says whether the one before is in use.  The root word is ptr.
 * want: A's class.
 */
#define CH	0x200000ull
static uint64_t heap2[40], root2[1];

static void run_chunks(const char *name, uint64_t next_size, bool next_free,
		       uint64_t len, uint64_t ptr, char want)
{
	struct mt_scan_region r[2] = {
		{ .addr = CH, .len = len, .data = (const unsigned char *)heap2 },
		{ .addr = DATA, .len = sizeof(root2),
		  .data = (const unsigned char *)root2, .root = true },
	};
	struct mt_scan_block b = { .addr = CH + 16, .size = 40 };
	static const char letter[] = "DIPR";

	memset(heap2, 0, sizeof(heap2));
	heap2[1] = 48 | 1;			/* A's chunk */
	heap2[7] = next_size | 1;		/* the next chunk's size */
	if (48 + next_size + 16 <= sizeof(heap2))
		heap2[(48 + next_size) / 8 + 1] = 32 | !next_free;
	root2[0] = ptr;
	if (mt_scan_classify(&b, 1, r, 2)) {
		printf("FAIL %s: classify failed\n", name);
		failures++;
	} else if (letter[b.cls] != want) {
		printf("FAIL %s: got %c, expected %c\n", name, letter[b.cls], want);
		failures++;
	} else {
		printf("PASS %s\n", name);
	}
}

int main(void)
{
	/* 0 <- root; 0 -> 1, 2; 1 -> 3: a reachable tree */
	reset();
	data[0] = blk(0);
	link_to(0, 0, blk(1));
	link_to(0, 1, blk(2));
	link_to(1, 0, blk(3));
	run("reachable-tree", 4, false, "RRRR");

	/* the same tree, nothing points at its root: 1 D + 3 I */
	data[0] = 0;
	run("lost-tree", 4, false, "DIII");

	/* a lost tree whose leaf comes first by address: still one leader */
	reset();
	link_to(3, 0, blk(0));
	link_to(3, 1, blk(1));
	link_to(1, 0, blk(2));
	run("lost-tree-root-last", 4, false, "IIID");

	/* 3-block cycle, no pointer from outside: 1 D + 2 I (a clique) */
	reset();
	link_to(0, 2, blk(1));
	link_to(1, 2, blk(2));
	link_to(2, 2, blk(0));
	run("lost-cycle", 3, false, "DII");

	/* the cycle with a root pointer at one member: all reachable */
	data[3] = blk(1);
	run("reachable-cycle", 3, false, "RRR");

	/* interior pointer from a root: possibly lost; a start pointer from
	 * that block: possibly lost too (the chain holds an interior pointer) */
	reset();
	data[1] = blk(0) + 16;
	link_to(0, 0, blk(1));
	run("interior-chain", 2, false, "PP");

	/* a pointer one past the end is not into the block */
	reset();
	data[1] = blk(0) + 64;
	run("one-past-end", 1, false, "D");

	/* unaligned words are not pointers */
	reset();
	memcpy((char *)data + 4, &(uint64_t){ blk(0) }, 8);
	run("unaligned", 1, false, "D");

	/* a lost block pointing into a reachable one changes nothing;
	 * a reachable block pointing at a lost one reaches it */
	reset();
	data[0] = blk(0);
	link_to(1, 0, blk(0));
	link_to(2, 0, blk(3));
	link_to(0, 1, blk(3) + 8);
	run("lost-to-reached", 4, false, "RDDP");

	/* heap as a root (blocks from before the attach): words outside the
	 * known blocks are roots, words inside them are not */
	reset();
	link_to(7, 0, blk(0));	/* block 7 is unknown: a root word */
	link_to(1, 0, blk(2));	/* block 1 is known and lost */
	run("heap-root-outside-blocks", 3, true, "RDI");

	/* two lost blocks pointing at each other through interiors: 1 D 1 I */
	reset();
	link_to(0, 0, blk(1) + 8);
	link_to(1, 0, blk(0) + 24);
	run("lost-interior-pair", 2, false, "DI");

	/* an arena's pointer to its top chunk (ending where the heap does),
	 * inside A's last 8 bytes: malloc's, not A's: definitely lost */
	run_chunks("top-chunk-pointer", 256 - 48, false, 256, CH + 48, 'D');
	/* a bin's pointer to a free chunk after A: malloc's too */
	run_chunks("free-chunk-pointer", 64, true, 256, CH + 48, 'D');
	/* the same word where the chunk after is in use: into A, possibly */
	run_chunks("used-chunk-pointer", 64, false, 256, CH + 48, 'P');
	/* a chunk ending short of the region is not the top */
	run_chunks("not-top-chunk", 256 - 48, false, 264, CH + 48, 'P');
	/* any other interior pointer into A: possibly lost */
	run_chunks("interior-not-chunk", 64, true, 256, CH + 40, 'P');

	return failures ? 1 : 0;
}
