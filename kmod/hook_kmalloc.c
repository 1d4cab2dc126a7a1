// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel heap attributed to the task that asked for it: kmalloc bytes
 * requested and actually allocated, and kfree calls.  The probes are
 * notrace: no patchable entry to step over on each of these events.
 */
#include <linux/slab.h>
#include <trace/events/kmem.h>
#include "mtr.h"
#include "compat.h"

static __always_inline void mtr_kmalloc(unsigned long call_site,
					const void *ptr, size_t bytes_req,
					size_t bytes_alloc, gfp_t gfp)
{
	struct mtr_thread *t;

	t = mtr_event_thread(kmalloc_events);
	if (!t || !ptr)
		return;
	mtr_count(t, MTR_C_KMALLOC_CALLS, 1);
	mtr_count(t, MTR_C_KMALLOC_REQ, bytes_req);
	mtr_count(t, MTR_C_KMALLOC_ALLOC, bytes_alloc);
	if (mtr_ev_wanted())
		mtr_ev_kmalloc(MEMTRACK_REC_KMALLOC, call_site, ptr, bytes_req,
			       bytes_alloc, gfp);
}

MTR_TP_PROBE(kmalloc, (MTR_KMALLOC_PROTO),
	     (call_site, ptr, bytes_req, bytes_alloc, gfp))

#ifdef MTR_HAVE_KMALLOC_NODE_TP
/* 5.10's kmalloc_node() calls: the same, and the node. */
#define mtr_kmalloc_node(call_site, ptr, bytes_req, bytes_alloc, gfp) \
	mtr_kmalloc(call_site, ptr, bytes_req, bytes_alloc, gfp)
MTR_TP_PROBE(kmalloc_node, (unsigned long call_site, const void *ptr,
			    size_t bytes_req, size_t bytes_alloc, gfp_t gfp,
			    int node),
	     (call_site, ptr, bytes_req, bytes_alloc, gfp))
#endif

/* kfree(NULL) fires the tracepoint too; it frees nothing. */
static __always_inline void mtr_kfree(unsigned long call_site, const void *ptr)
{
	struct mtr_thread *t;

	if (ZERO_OR_NULL_PTR(ptr))
		return;
	t = mtr_event_thread(kfree_events);
	if (!t)
		return;
	mtr_count(t, MTR_C_KFREE_CALLS, 1);
	if (mtr_ev_wanted())
		mtr_ev_kmalloc(MEMTRACK_REC_KFREE, call_site, ptr, 0, 0, 0);
}

MTR_TP_PROBE(kfree, (unsigned long call_site, const void *ptr),
	     (call_site, ptr))

static void __used mtr_kmalloc_check_types(void)
{
	check_trace_callback_type_kmalloc(mtr_probe_kmalloc);
	check_trace_callback_type_kfree(mtr_probe_kfree);
#ifdef MTR_HAVE_KMALLOC_NODE_TP
	check_trace_callback_type_kmalloc_node(mtr_probe_kmalloc_node);
#endif
}

static struct mtr_tracepoint mtr_kmalloc_tps[] = {
	{ .name = "kmalloc", .probe = mtr_probe_kmalloc },
	{ .name = "kfree", .probe = mtr_probe_kfree },
#ifdef MTR_HAVE_KMALLOC_NODE_TP
	{ .name = "kmalloc_node", .probe = mtr_probe_kmalloc_node },
#endif
};

struct mtr_hook_group mtr_group_kmalloc = {
	.name = "kmalloc",
	.tps = mtr_kmalloc_tps,
	.nr_tps = ARRAY_SIZE(mtr_kmalloc_tps),
};
