// SPDX-License-Identifier: GPL-2.0
/*
 * kmem:kmalloc passes the NUMA node (6.1+); before, kmalloc_node() calls had
 * a tracepoint of their own, kmem:kmalloc_node.
 */
#include <linux/slab.h>
#include <trace/events/kmem.h>

static void probe(void *data, unsigned long call_site, const void *ptr,
		  size_t bytes_req, size_t bytes_alloc, gfp_t gfp, int node)
{
}

static void __used check(void)
{
	check_trace_callback_type_kmalloc(probe);
}
