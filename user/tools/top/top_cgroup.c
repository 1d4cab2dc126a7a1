// SPDX-License-Identifier: GPL-2.0
/*
 * The task rows carry a cgroup id (the inode of the cgroup's directory);
 * a walk of the cgroup2 tree turns it into a path, when an id is not known
 * (a cgroup made since the last walk); memory.max is read for the cgroups
 * in use, once per refresh.  A node of pods has hundreds of cgroups: a
 * walk and a file each at every refresh cost more than the rows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libmemtrack.h"
#include "top_cgroup.h"
#include "grow.h"

/* memory.max in bytes; TOP_NO_LIMIT for "max" or none to read */
static uint64_t read_max(const char *dir)
{
	char path[4200], buf[32], *end;
	unsigned long long v;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/memory.max", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return TOP_NO_LIMIT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return TOP_NO_LIMIT;
	buf[n] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return TOP_NO_LIMIT;	/* "max\n" */
	return v;
}

static int visit(void *arg, const char *path, const char *rel, uint64_t id)
{
	struct top_cgroups *cg = arg;
	struct top_cgroup *c;

	(void)path;
	if (cg->share_now && mt_containers_saw(cg->share, rel, id))
		cg->share_now = false;	/* its bound is reached */
	if (mt_grow((void **)&cg->v, &cg->cap, cg->n + 1, sizeof(*cg->v), 64)) {
		cg->walk_err = -ENOMEM;
		return 1;
	}
	c = &cg->v[cg->n++];
	c->id = id;
	snprintf(c->path, sizeof(c->path), "%s", rel[0] ? rel : "/");
	c->max = TOP_NO_LIMIT;
	c->max_sample = 0;		/* read when a row is in it */
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct top_cgroup *)a)->id;
	uint64_t y = ((const struct top_cgroup *)b)->id;

	return (x > y) - (x < y);
}

/* Every cgroup under the cgroup2 root, afresh: cgroups come and go. */
static int scan(struct top_cgroups *cg)
{
	cg->n = 0;
	cg->walk_err = 0;
	cg->share_now = cg->share &&
			!strcmp(cg->root, mt_containers_tree(cg->share));
	/* Unreadable parts are skipped: a missing name is not an error. */
	mt_cgroup_walk(cg->root, visit, cg);
	if (cg->share_now && !cg->walk_err)
		mt_containers_walked(cg->share);
	qsort(cg->v, cg->n, sizeof(*cg->v), cmp_id);
	return cg->walk_err;
}

static struct top_cgroup *find(struct top_cgroups *cg, uint64_t id)
{
	struct top_cgroup key = { .id = id };

	return cg->n ? bsearch(&key, cg->v, cg->n, sizeof(*cg->v), cmp_id) :
		       NULL;
}

void top_cgroups_next(struct top_cgroups *cg)
{
	/* the host's, when a node agent mounts it ($MEMTRACK_ROOTFS) */
	if (!cg->root[0])
		mt_cgroup_tree(cg->root, sizeof(cg->root));
	cg->sample++;
	cg->walked = false;
}

const struct top_cgroup *top_cgroup_get(struct top_cgroups *cg, uint64_t id)
{
	char dir[1024];
	struct top_cgroup *c = id ? find(cg, id) : NULL;

	/* a row whose cgroup could not be read (id 0) is no reason to walk */
	if (!c && id && !cg->walked) {
		cg->walked = true;
		scan(cg);
		c = find(cg, id);
	}
	if (!c || c->max_sample == cg->sample)
		return c;
	snprintf(dir, sizeof(dir), "%s%s", cg->root,
		 strcmp(c->path, "/") ? c->path : "");
	c->max = read_max(dir);
	c->max_sample = cg->sample;
	return c;
}

void top_cgroups_free(struct top_cgroups *cg)
{
	free(cg->v);
	memset(cg, 0, sizeof(*cg));
}
