/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * memtrack's per-thread counters: the one list of them.  Everything that
 * shows a counter is derived from it: the module's columns of
 * /proc/memtrack/tasks, the counters[] arrays of struct memtrack_task and of
 * the records, memtrackd's per-program families on /metrics and
 * memtrack-top's columns.  Adding a counter is a line here, the hook that
 * counts it (kmod/hook_*.c) and the docs; nothing else.
 *
 *   MEMTRACK_COUNTER(ID, name, UNIT, metric, title, help)
 *
 * ID      MEMTRACK_CTR_<ID> (user space), MTR_C_<ID> (the module)
 * name    its column in /proc/memtrack/tasks and its key everywhere else
 * UNIT    enum memtrack_counter_unit without its prefix: COUNT (events),
 *         BYTES, NS (nanoseconds), NET_BYTES (signed: bytes grown net)
 * metric  memtrackd's family, after "memtrack_program_": a name ending in
 *         _total for a counter (_bytes_total, _seconds_total for NS, which
 *         is exported in seconds), in _bytes for a NET_BYTES gauge
 * title   memtrack-top's column: the rate per second over an interval
 *         (KiB/s for bytes, ms/s for NS, net for NET_BYTES)
 * help    the family's HELP text, and the column's in memtrack-top's setup
 *
 * In ABI order, the order of the counter columns and of the counters[]
 * arrays; new counters are only ever appended.  Include with
 * MEMTRACK_COUNTER defined (taking its arguments as `...` past those it
 * uses) to build an enum, a table, or anything else that walks them.
 *
 * Events are counted by the thread that causes them; min_flt and maj_flt are
 * read from task_struct while the thread lives and frozen at its exit (they
 * are the only ones /proc shows too).  No include guard: by design.
 */
MEMTRACK_COUNTER(MIN_FLT, min_flt, COUNT,
	"minor_page_faults_total", "MINFLT/s",
	"Minor page faults of the program's processes.")
MEMTRACK_COUNTER(MAJ_FLT, maj_flt, COUNT,
	"major_page_faults_total", "MAJFLT/s",
	"Major page faults of the program's processes.")
MEMTRACK_COUNTER(PG_ALLOC, pg_alloc, COUNT,
	"pages_allocated_total", "PGALLOC/s",
	"Pages allocated in the context of the program's processes (2^order per allocation).")
MEMTRACK_COUNTER(PG_FREE, pg_free, COUNT,
	"pages_freed_total", "PGFREE/s",
	"Pages freed in the context of the program's processes (2^order per free).")
MEMTRACK_COUNTER(PG_ALLOC_FAIL, pg_alloc_fail, COUNT,
	"page_alloc_failures_total", "PGFAIL/s",
	"Failed page allocations of the program's processes.")
MEMTRACK_COUNTER(KMALLOC_CALLS, kmalloc_calls, COUNT,
	"kmalloc_calls_total", "KMALLOC/s",
	"Kernel heap allocations made on behalf of the program.")
MEMTRACK_COUNTER(KMALLOC_REQ, kmalloc_req, BYTES,
	"kmalloc_requested_bytes_total", "KMREQ_KB/s",
	"Kernel heap bytes requested on behalf of the program.")
MEMTRACK_COUNTER(KMALLOC_ALLOC, kmalloc_alloc, BYTES,
	"kmalloc_bytes_total", "KMALLOC_KB/s",
	"Kernel heap bytes allocated on behalf of the program.")
MEMTRACK_COUNTER(KFREE_CALLS, kfree_calls, COUNT,
	"kfree_calls_total", "KFREE/s",
	"Kernel heap frees made on behalf of the program.")
MEMTRACK_COUNTER(MMAP_CALLS, mmap_calls, COUNT,
	"mmap_calls_total", "MMAP/s",
	"mmap() calls of the program's processes.")
MEMTRACK_COUNTER(MMAP_BYTES, mmap_bytes, BYTES,
	"mmap_bytes_total", "MMAP_KB/s",
	"Bytes mapped by mmap() calls of the program's processes.")
MEMTRACK_COUNTER(MUNMAP_CALLS, munmap_calls, COUNT,
	"munmap_calls_total", "MUNMAP/s",
	"munmap() calls of the program's processes.")
MEMTRACK_COUNTER(MUNMAP_BYTES, munmap_bytes, BYTES,
	"munmap_bytes_total", "MUNMAP_KB/s",
	"Bytes unmapped by munmap() calls of the program's processes.")
MEMTRACK_COUNTER(MREMAP_CALLS, mremap_calls, COUNT,
	"mremap_calls_total", "MREMAP/s",
	"mremap() calls of the program's processes.")
MEMTRACK_COUNTER(MREMAP_BYTES, mremap_bytes, NET_BYTES,
	"mremap_growth_bytes", "MREMAP_KB/s",
	"Bytes mappings grew by (net, shrinking subtracts) through mremap() calls of the program's processes.")
MEMTRACK_COUNTER(BRK_CALLS, brk_calls, COUNT,
	"brk_calls_total", "BRK/s",
	"brk() calls of the program's processes.")
MEMTRACK_COUNTER(BRK_BYTES, brk_bytes, NET_BYTES,
	"brk_growth_bytes", "BRK_KB/s",
	"Bytes the heap grew by (net, shrinking subtracts) through brk() calls of the program's processes.")
MEMTRACK_COUNTER(SHMGET_CALLS, shmget_calls, COUNT,
	"shmget_calls_total", "SHMGET/s",
	"shmget() calls of the program's processes.")
MEMTRACK_COUNTER(SHMAT_CALLS, shmat_calls, COUNT,
	"shmat_calls_total", "SHMAT/s",
	"shmat() calls of the program's processes.")
MEMTRACK_COUNTER(SHMDT_CALLS, shmdt_calls, COUNT,
	"shmdt_calls_total", "SHMDT/s",
	"shmdt() calls of the program's processes.")
MEMTRACK_COUNTER(RECLAIM_STALLS, reclaim_stalls, COUNT,
	"reclaim_stalls_total", "STALLS/s",
	"Direct-reclaim stalls of the program's processes.")
MEMTRACK_COUNTER(RECLAIM_NS, reclaim_ns, NS,
	"reclaim_stall_seconds_total", "RECLAIM_ms/s",
	"Time the program's processes spent in direct reclaim.")
MEMTRACK_COUNTER(THP_ALLOC, thp_alloc, COUNT,
	"thp_allocated_total", "THP/s",
	"Transparent huge pages (PMD-sized) allocated in the context of the program's processes: their THP faults, and huge page-cache folios.")
