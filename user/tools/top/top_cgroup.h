/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 ids to paths and memory limits (top_cgroup.c): the tree walked
 * when a row's cgroup is not known yet (not at every refresh: a node has
 * hundreds of cgroups), memory.max read once per refresh for the cgroups
 * rows are in only.
 */
#ifndef MEMTRACK_TOP_CGROUP_H
#define MEMTRACK_TOP_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_containers;

/* the max of a cgroup without a limit ("max") or without memory.max */
#define TOP_NO_LIMIT	UINT64_MAX

struct top_cgroup {
	uint64_t id;			/* the directory's inode */
	char path[256];			/* under the cgroup2 root, "/" for it */
	uint64_t max;			/* memory.max in bytes; TOP_NO_LIMIT */
	unsigned int max_sample;	/* the refresh max was read at */
};

struct top_cgroups {
	struct top_cgroup *v;
	size_t n, cap;
	unsigned int sample;		/* the refresh, counted from 1 */
	bool walked;			/* the tree walked this refresh */
	int walk_err;			/* the last walk's: -ENOMEM */
	char root[256];			/* the tree: mt_cgroup_tree(), once */
	/* told of each walk's directories: one walk a refresh, not two */
	struct mt_containers *share;
	bool share_now;			/* this walk is of share's tree */
};

/* A new refresh: limits are read again, the tree walked if need be. */
void top_cgroups_next(struct top_cgroups *cg);
/*
 * The cgroup of id with its memory.max as of this refresh; the tree walked
 * (once a refresh) if id is not known.  NULL: not found.
 */
const struct top_cgroup *top_cgroup_get(struct top_cgroups *cg, uint64_t id);
void top_cgroups_free(struct top_cgroups *cg);

#endif
