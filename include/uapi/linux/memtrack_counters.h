/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * memtrack's per-thread counters, one MEMTRACK_COUNTER(ID, name) each, in
 * ABI order: the order of the counter columns of /proc/memtrack/tasks and of
 * the counters[] arrays in records and netlink messages.  New counters are
 * only ever appended.  Include with MEMTRACK_COUNTER defined to build an
 * enum, a table of names, or anything else that walks them.
 *
 * Events are counted by the thread that causes them; min_flt and maj_flt are
 * read from task_struct while the thread lives and frozen at its exit.  Signed quantities (mremap_bytes, brk_bytes: net growth) are
 * stored two's complement and printed signed.  No include guard: by design.
 */
MEMTRACK_COUNTER(MIN_FLT, min_flt)
MEMTRACK_COUNTER(MAJ_FLT, maj_flt)
MEMTRACK_COUNTER(PG_ALLOC, pg_alloc)
MEMTRACK_COUNTER(PG_FREE, pg_free)
MEMTRACK_COUNTER(PG_ALLOC_FAIL, pg_alloc_fail)
MEMTRACK_COUNTER(KMALLOC_CALLS, kmalloc_calls)
MEMTRACK_COUNTER(KMALLOC_REQ, kmalloc_req)
MEMTRACK_COUNTER(KMALLOC_ALLOC, kmalloc_alloc)
MEMTRACK_COUNTER(KFREE_CALLS, kfree_calls)
MEMTRACK_COUNTER(MMAP_CALLS, mmap_calls)
MEMTRACK_COUNTER(MMAP_BYTES, mmap_bytes)
MEMTRACK_COUNTER(MUNMAP_CALLS, munmap_calls)
MEMTRACK_COUNTER(MUNMAP_BYTES, munmap_bytes)
MEMTRACK_COUNTER(MREMAP_CALLS, mremap_calls)
MEMTRACK_COUNTER(MREMAP_BYTES, mremap_bytes)
MEMTRACK_COUNTER(BRK_CALLS, brk_calls)
MEMTRACK_COUNTER(BRK_BYTES, brk_bytes)
MEMTRACK_COUNTER(SHMGET_CALLS, shmget_calls)
MEMTRACK_COUNTER(SHMAT_CALLS, shmat_calls)
MEMTRACK_COUNTER(SHMDT_CALLS, shmdt_calls)
MEMTRACK_COUNTER(RECLAIM_STALLS, reclaim_stalls)
MEMTRACK_COUNTER(RECLAIM_NS, reclaim_ns)
