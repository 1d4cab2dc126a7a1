/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * memtrack-leak --scan: leak classes of outstanding blocks, as valgrind
 * memcheck and LeakSanitizer define them, from a snapshot of the target's
 * memory.  scan.c classifies (pure, no I/O); scan_proc.c takes the snapshot
 * of a live process.
 */
#ifndef MEMTRACK_USER_LIB_SCAN_H
#define MEMTRACK_USER_LIB_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum mt_scan_class {
	MT_SCAN_DEFINITE,	/* no pointer to it anywhere it could be found */
	MT_SCAN_INDIRECT,	/* lost, but pointed to by a lost block */
	MT_SCAN_POSSIBLE,	/* reached, but only through an interior pointer */
	MT_SCAN_REACHABLE,	/* a chain of start pointers from a root */
	MT_SCAN_NR_CLASSES
};

struct mt_scan_block {
	uint64_t addr;
	uint64_t size;
	uint32_t stack_id;
	uint32_t api;
	enum mt_scan_class cls;		/* set by mt_scan_classify() */
};

/*
 * A copy of target memory at addr.  Words of a root region are roots,
 * except those inside a known block (the [heap] holds blocks allocated
 * before the tracer attached, which may point to known ones, next to the
 * known blocks themselves); other regions only supply block contents.
 * data need not be aligned; only 8-byte aligned target words are pointers.
 */
struct mt_scan_region {
	uint64_t addr;
	uint64_t len;
	const unsigned char *data;
	bool root;
};

/*
 * Classify blocks[] (any order; sorted by address on return) given the
 * regions (any order, not overlapping).  Bytes of a block no region
 * covers count as holding no pointers.  Returns 0 or -ENOMEM.
 */
int mt_scan_classify(struct mt_scan_block *blocks, size_t nblocks,
		     const struct mt_scan_region *regions, size_t nregions);
const char *mt_scan_class_name(enum mt_scan_class c);

/*
 * A snapshot of pid's memory for the scan: each thread stopped with
 * PTRACE_SEIZE + PTRACE_INTERRUPT, its registers read, then the roots
 * (rw file-backed mappings and the anonymous ones right after them (bss),
 * [heap], each thread's stack from its sp up, the mapping at each thread's
 * fs base (TLS), the registers) and every rw mapping holding one of the
 * blocks copied with process_vm_readv; then the threads are let go.
 */
struct mt_scan_snapshot {
	struct mt_scan_region *regions;
	size_t nregions;
	unsigned int nthreads;
};

int mt_scan_snapshot_take(pid_t pid, const struct mt_scan_block *blocks,
			  size_t nblocks, struct mt_scan_snapshot *snap);
void mt_scan_snapshot_free(struct mt_scan_snapshot *snap);

#endif
