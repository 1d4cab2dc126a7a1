// SPDX-License-Identifier: GPL-2.0
/*
 * Page allocator: pages allocated and freed by each task, the transparent
 * huge pages among them, and failed allocations (mm_page_alloc fires with a
 * NULL page) by order and gfp.
 * mm_page_free fires for every page freed, those freed in a batch too
 * (free_pages_prepare()): mm_page_free_batched, fired for those as well,
 * would count them twice.
 */
#include <linux/mm_types.h>
#include <linux/slab.h>
#include <linux/minmax.h>
#include <trace/events/kmem.h>
#include "mtr.h"
#include "compat.h"

/* A failed allocation: by order, with the gfp flags that failed. */
static noinline void mtr_page_alloc_failed(unsigned int order, gfp_t gfp)
{
	struct mtr_thread *t;

	mtr_total_add(pg_alloc_fail, 1);
	mtr_total_add(pg_alloc_fail_order[min(order, MTR_MAX_ORDER_SLOTS - 1U)], 1);
	t = mtr_current();
	if (!t)
		return;
	mtr_count(t, MTR_C_PG_ALLOC_FAIL, 1);
	WRITE_ONCE(t->fail_gfp, (__force u32)gfp);
	WRITE_ONCE(t->proc->fail_gfp, (__force u32)gfp);
	if (mtr_ev_wanted())
		mtr_ev_page(MEMTRACK_REC_PAGE_ALLOC_FAIL, NULL, order, gfp);
}

/*
 * A transparent huge page: PMD-sized, compound and movable, as THP faults,
 * khugepaged and huge page-cache folios ask for it (GFP_TRANSHUGE*, the
 * mapping's GFP_HIGHUSER_MOVABLE); a large kmalloc or a page table is
 * neither movable nor user memory.  Out of line: order 0 is the rule.
 */
#define MTR_THP_ORDER	(PMD_SHIFT - PAGE_SHIFT)
#define MTR_THP_GFP	(__GFP_COMP | __GFP_MOVABLE)

static noinline void mtr_page_alloc_large(struct mtr_thread *t,
					  unsigned int order, gfp_t gfp)
{
	if (order == MTR_THP_ORDER && (gfp & MTR_THP_GFP) == MTR_THP_GFP)
		mtr_count(t, MTR_C_THP_ALLOC, 1);
}

/*
 * The two probes on every page a fault maps and every page an munmap frees:
 * notrace (no patchable entry to step over), the rare cases out of line.
 */
static __always_inline void mtr_page_alloc(struct page *page,
					   unsigned int order, gfp_t gfp)
{
	struct mtr_thread *t;

	if (unlikely(!page)) {
		mtr_page_alloc_failed(order, gfp);
		return;
	}
	t = mtr_event_thread(pg_alloc_events);
	if (!t)
		return;
	mtr_count(t, MTR_C_PG_ALLOC, 1UL << order);
	if (unlikely(order))
		mtr_page_alloc_large(t, order, gfp);
	if (mtr_ev_wanted())
		mtr_ev_page(MEMTRACK_REC_PAGE_ALLOC, page, order, gfp);
}

static __always_inline void mtr_page_free(struct page *page, unsigned int order)
{
	struct mtr_thread *t = mtr_event_thread(pg_free_events);

	if (!t)
		return;
	mtr_count(t, MTR_C_PG_FREE, 1UL << order);
	if (mtr_ev_wanted())
		mtr_ev_page(MEMTRACK_REC_PAGE_FREE, page, order, 0);
}

MTR_TP_PROBE(page_alloc, (struct page *page, unsigned int order, gfp_t gfp,
			  int migratetype), (page, order, gfp))
MTR_TP_PROBE(page_free, (struct page *page, unsigned int order), (page, order))

static void __used mtr_pages_check_types(void)
{
	check_trace_callback_type_mm_page_alloc(mtr_probe_page_alloc);
	check_trace_callback_type_mm_page_free(mtr_probe_page_free);
}

static struct mtr_tracepoint mtr_pages_tps[] = {
	{ .name = "mm_page_alloc", .probe = mtr_probe_page_alloc },
	{ .name = "mm_page_free", .probe = mtr_probe_page_free },
};

struct mtr_hook_group mtr_group_pages = {
	.name = "pages",
	.tps = mtr_pages_tps,
	.nr_tps = ARRAY_SIZE(mtr_pages_tps),
};
