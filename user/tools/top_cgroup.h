/* SPDX-License-Identifier: GPL-2.0 */
/* cgroup v2 ids to paths and memory limits (top_cgroup.c). */
#ifndef MEMTRACK_TOP_CGROUP_H
#define MEMTRACK_TOP_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* the max of a cgroup without a limit ("max") or without memory.max */
#define TOP_NO_LIMIT	UINT64_MAX

struct top_cgroup {
	uint64_t id;			/* the directory's inode */
	char path[256];			/* under the cgroup2 root, "/" for it */
	uint64_t max;			/* memory.max in bytes; 0: none */
};

struct top_cgroups {
	struct top_cgroup *v;
	size_t n, cap;
};

/* Every cgroup under the cgroup2 root (re-read: cgroups come and go). */
int top_cgroups_scan(struct top_cgroups *cg);
const struct top_cgroup *top_cgroup_find(const struct top_cgroups *cg,
					 uint64_t id);
void top_cgroups_free(struct top_cgroups *cg);

#endif
