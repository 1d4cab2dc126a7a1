/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrackd: one sample, the processes and the system's figures at one
 * moment, and where samples come from (source.c: libmemtrack's data source,
 * the module or /proc).  Rows are added with mtd_sample_add() (programs.c,
 * which takes the samples in).
 */
#ifndef MEMTRACKD_SAMPLE_H
#define MEMTRACKD_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/memtrack.h>

#include "config.h"

struct mt_container;

/*
 * Per-process counters: the ABI's per-task counters by their index
 * (MEMTRACK_CTR_*, linux/memtrack_counters.h), then one of memtrackd's own;
 * those a source cannot give stay unset in `have`.
 */
#define MTD_C_OOM_KILLS	MEMTRACK_NR_COUNTERS	/* 1 once chosen by the OOM killer */
#define MTD_NR_CTR	(MEMTRACK_NR_COUNTERS + 1)
_Static_assert(MTD_NR_CTR <= 64, "ctr_have is a 64-bit mask");

struct mtd_proc {
	int32_t pid;
	bool exited;			/* module: kept after exit, counters only */
	bool kthread;			/* a kernel thread's, to be left out */
	uint64_t start;			/* /proc: start time; identifies the pid */
	char comm[MEMTRACK_COMM_LEN];
	/* its container and pod (NULL: the host's), the source's own until
	 * the sample after the next (libmemtrack's mt_containers) */
	const struct mt_container *ct;
	uint64_t rss_anon, rss_file, rss_shmem, swap;	/* bytes */
	uint64_t ctr[MTD_NR_CTR];
};

/* System memory gauges (bytes) and counters; `have` bits say which exist. */
enum mtd_mem {
	MTD_M_TOTAL, MTD_M_FREE, MTD_M_AVAILABLE, MTD_M_FILE, MTD_M_ANON,
	MTD_M_SHMEM, MTD_M_MAPPED, MTD_M_DIRTY, MTD_M_WRITEBACK,
	MTD_M_SLAB_RECLAIMABLE, MTD_M_SLAB_UNRECLAIMABLE, MTD_M_PAGE_TABLES,
	MTD_M_SWAP_TOTAL, MTD_M_SWAP_FREE,
	MTD_NR_MEM
};

/*
 * The module's summary counts page allocations and frees (calls, of any
 * order), /proc/vmstat the pages: two pairs, each source giving one.
 */
enum mtd_sysctr {
	MTD_S_PG_ALLOC, MTD_S_PG_FREE, MTD_S_PG_ALLOC_CALLS,
	MTD_S_PG_FREE_CALLS, MTD_S_KMALLOC, MTD_S_KFREE,
	MTD_S_PG_ALLOC_FAIL, MTD_S_RECLAIM_STALLS, MTD_S_RECLAIM_NS,
	MTD_S_OOM_KILLS, MTD_S_MIN_FLT, MTD_S_MAJ_FLT,
	MTD_NR_SYSCTR
};

struct mtd_sample {
	struct mtd_proc *procs;
	size_t nr, cap;
	uint64_t ctr_have;		/* 1 << a counter's index */
	uint64_t mem[MTD_NR_MEM];
	uint32_t mem_have;
	uint64_t sys[MTD_NR_SYSCTR];
	uint32_t sys_have;
};

void mtd_sample_free(struct mtd_sample *s);
/* A zeroed row at the end of s->procs, NULL when out of memory. */
struct mtd_proc *mtd_sample_add(struct mtd_sample *s);

/* ---- source.c ---- */
struct mtd_source;
struct mtd_state;
struct mtn_buf;

/*
 * Opens what it needs now, before privileges are dropped; NULL, err set.
 * Kernel threads are left out of its samples unless kthreads.  containers:
 * every row's container and pod, the runtimes' state read under rootfs
 * ("": $MEMTRACK_ROOTFS or /).
 */
struct mtd_source *mtd_source_open(enum mtn_source_kind kind, bool kthreads,
				   bool containers, const char *rootfs,
				   char *err, size_t errlen);
void mtd_source_close(struct mtd_source *src);
/* "module" or "proc". */
const char *mtd_source_name(const struct mtd_source *src);
int mtd_source_sample(struct mtd_source *src, struct mtd_sample *out);
/*
 * Event socket to poll, -1 if none; handle what is waiting, and append the
 * raw records to *records if not NULL (for the relay).
 */
int mtd_source_events_fd(struct mtd_source *src);
int mtd_source_read_events(struct mtd_source *src, struct mtd_state *st,
			   struct mtn_buf *records);

#endif /* MEMTRACKD_SAMPLE_H */
