/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-thread counters, one MTR_COUNTER(ID, column name) each; included with
 * MTR_COUNTER defined to build the enum, the names and anything else that
 * walks them.  Events are counted by the thread that causes them; min_flt
 * and maj_flt are read from task_struct while the thread lives and frozen at
 * its exit.  Signed quantities (mremap_bytes, brk_bytes: net growth) are
 * stored two's complement and printed signed.  No include guard: by design.
 */
MTR_COUNTER(MIN_FLT, min_flt)
MTR_COUNTER(MAJ_FLT, maj_flt)
MTR_COUNTER(PG_ALLOC, pg_alloc)
MTR_COUNTER(PG_FREE, pg_free)
MTR_COUNTER(PG_ALLOC_FAIL, pg_alloc_fail)
MTR_COUNTER(KMALLOC_CALLS, kmalloc_calls)
MTR_COUNTER(KMALLOC_REQ, kmalloc_req)
MTR_COUNTER(KMALLOC_ALLOC, kmalloc_alloc)
MTR_COUNTER(KFREE_CALLS, kfree_calls)
MTR_COUNTER(MMAP_CALLS, mmap_calls)
MTR_COUNTER(MMAP_BYTES, mmap_bytes)
MTR_COUNTER(MUNMAP_CALLS, munmap_calls)
MTR_COUNTER(MUNMAP_BYTES, munmap_bytes)
MTR_COUNTER(MREMAP_CALLS, mremap_calls)
MTR_COUNTER(MREMAP_BYTES, mremap_bytes)
MTR_COUNTER(BRK_CALLS, brk_calls)
MTR_COUNTER(BRK_BYTES, brk_bytes)
MTR_COUNTER(SHMGET_CALLS, shmget_calls)
MTR_COUNTER(SHMAT_CALLS, shmat_calls)
MTR_COUNTER(SHMDT_CALLS, shmdt_calls)
MTR_COUNTER(RECLAIM_STALLS, reclaim_stalls)
MTR_COUNTER(RECLAIM_NS, reclaim_ns)
