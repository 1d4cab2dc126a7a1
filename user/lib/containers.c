// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: containers by cgroup id, kept across a tool's samples.
 *
 * Task rows carry the cgroup's id (its directory's inode), not its path.
 * A lookup of an id not seen before walks the cgroup tree once for the
 * sample, learning every directory's path; a container's names are then
 * read once, when it is first looked up.  So a sample reads nothing when
 * no new cgroup appeared, and one walk plus one container's state files
 * per new container otherwise.
 *
 * Entries live in an open-addressed table keyed by id.  Each remembers the
 * sample that last asked for it: mt_containers_next() forgets what two
 * samples did not ask for (a cgroup whose processes are gone, and the
 * walk's directories no row is in), so the table holds the cgroups in use.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libmemtrack.h"

struct entry {
	uint64_t id;			/* 0: a free slot, all of it zero */
	uint32_t used;			/* the sample that last asked */
	uint32_t missing;		/* not in the tree at this sample's walk */
	bool named_tried;
	struct mt_container *c;		/* NULL: not a container */
};

/* Samples between two walks for a cgroup the last one did not find. */
#define MISSING_RETRY	16

struct mt_containers {
	char rootfs[1024];
	char cgroot[1100];		/* the cgroup2 tree to walk */
	struct entry *slots;
	size_t cap, n;			/* cap a power of 2 */
	uint32_t sample;		/* starts at 1 */
	uint32_t walked;		/* the sample of the last walk */
	struct mt_containers_stats st;
};

static size_t hash(uint64_t id, size_t cap)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdULL;
	id ^= id >> 33;
	return id & (cap - 1);
}

static struct entry *slot_of(const struct mt_containers *cs, uint64_t id)
{
	size_t i = hash(id, cs->cap);

	while (cs->slots[i].id && cs->slots[i].id != id)
		i = (i + 1) & (cs->cap - 1);
	return &cs->slots[i];
}

static int grow(struct mt_containers *cs)
{
	struct entry *old = cs->slots;
	size_t i, cap = cs->cap;

	cs->slots = calloc(cap * 2, sizeof(*cs->slots));
	if (!cs->slots) {
		cs->slots = old;
		return -ENOMEM;
	}
	cs->cap = cap * 2;
	for (i = 0; i < cap; i++)
		if (old[i].id)
			*slot_of(cs, old[i].id) = old[i];
	free(old);
	return 0;
}

/* The entry of id, added (not a container) if new; NULL past the bound. */
static struct entry *insert(struct mt_containers *cs, uint64_t id)
{
	struct entry *e = slot_of(cs, id);

	if (e->id)
		return e;
	if (cs->n >= MT_CONTAINERS_MAX)
		return NULL;
	if ((cs->n + 1) * 2 > cs->cap) {
		if (grow(cs))
			return NULL;
		e = slot_of(cs, id);
	}
	e->id = id;
	e->used = cs->sample;
	cs->n++;
	return e;
}

static int visit(void *arg, const char *path, const char *rel, uint64_t id)
{
	struct mt_containers *cs = arg;
	struct mt_container c;
	struct entry *e;

	(void)path;
	if (!id)
		return 0;
	e = slot_of(cs, id);
	if (e->id && !e->missing)
		return 0;		/* known */
	if (!e->id)
		e = insert(cs, id);
	if (!e)
		return 1;		/* the bound: stop walking */
	e->missing = 0;
	if (!mt_container_from_cgroup(rel, &c))
		return 0;
	e->c = malloc(sizeof(*e->c));
	if (e->c) {
		*e->c = c;
		cs->st.containers++;
	}
	return 0;
}

const char *mt_containers_tree(const struct mt_containers *cs)
{
	return cs->cgroot;
}

int mt_containers_saw(struct mt_containers *cs, const char *rel, uint64_t id)
{
	return visit(cs, NULL, rel, id);
}

void mt_containers_walked(struct mt_containers *cs)
{
	cs->walked = cs->sample;
	cs->st.walks++;
}

/* Learn the paths of the directories not known yet. */
static void walk(struct mt_containers *cs)
{
	mt_containers_walked(cs);
	mt_cgroup_walk(cs->cgroot, visit, cs);
}

struct mt_containers *mt_containers_new(const char *rootfs)
{
	struct mt_containers *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	if (!rootfs)
		rootfs = getenv("MEMTRACK_ROOTFS");
	if (rootfs && *rootfs && strcmp(rootfs, "/")) {
		snprintf(cs->rootfs, sizeof(cs->rootfs), "%s", rootfs);
		snprintf(cs->cgroot, sizeof(cs->cgroot), "%s/sys/fs/cgroup",
			 cs->rootfs);
	} else {
		snprintf(cs->rootfs, sizeof(cs->rootfs), "/");
		mt_cgroup_tree(cs->cgroot, sizeof(cs->cgroot));
	}
	cs->cap = 256;
	cs->slots = calloc(cs->cap, sizeof(*cs->slots));
	if (!cs->slots) {
		free(cs);
		return NULL;
	}
	cs->sample = 1;
	return cs;
}

void mt_containers_free(struct mt_containers *cs)
{
	size_t i;

	if (!cs)
		return;
	for (i = 0; i < cs->cap; i++)
		free(cs->slots[i].c);
	free(cs->slots);
	free(cs);
}

const struct mt_container *mt_containers_find(struct mt_containers *cs,
					      uint64_t cgroup_id)
{
	struct entry *e;

	if (!cs || !cgroup_id)
		return NULL;
	e = slot_of(cs, cgroup_id);
	/* a cgroup not in the last walk is looked for again now and then:
	 * made after that walk began, or outside the tree for good */
	if ((!e->id || (e->missing &&
			cs->sample - e->missing >= MISSING_RETRY)) &&
	    cs->walked != cs->sample) {
		walk(cs);
		e = slot_of(cs, cgroup_id);
	}
	if (!e->id) {
		e = insert(cs, cgroup_id);
		if (!e)
			return NULL;
		e->missing = cs->sample;
	} else if (e->missing && cs->walked == cs->sample) {
		e->missing = cs->sample;
	}
	e->used = cs->sample;
	if (e->c && !e->named_tried) {
		e->named_tried = true;
		cs->st.name_reads++;
		mt_container_names(cs->rootfs, e->c);
	}
	return e->c;
}

void mt_containers_next(struct mt_containers *cs)
{
	size_t i, j, k;

	if (!cs)
		return;
	/* deletion from linear probing: re-place the run after each hole */
	for (i = 0; i < cs->cap; i++) {
		struct entry *e = &cs->slots[i];

		if (!e->id || cs->sample - e->used < 2)
			continue;
		if (e->c)
			cs->st.containers--;
		free(e->c);
		memset(e, 0, sizeof(*e));
		cs->n--;
		for (j = (i + 1) & (cs->cap - 1); cs->slots[j].id;
		     j = (j + 1) & (cs->cap - 1)) {
			struct entry moved = cs->slots[j];

			/* all of it: a slot left with its container would
			 * share it with the one it moved to */
			memset(&cs->slots[j], 0, sizeof(cs->slots[j]));
			k = hash(moved.id, cs->cap);
			while (cs->slots[k].id)
				k = (k + 1) & (cs->cap - 1);
			cs->slots[k] = moved;
		}
	}
	cs->sample++;
}

int mt_container_of_pid(pid_t pid, const char *rootfs,
			struct mt_container *c)
{
	char path[64], buf[4096], *line, *save = NULL;
	ssize_t n;
	int fd;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (!rootfs)
		rootfs = getenv("MEMTRACK_ROOTFS");
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::", 3))
			continue;
		if (!mt_container_from_cgroup(line + 3, c))
			return 0;
		mt_container_names(rootfs && *rootfs ? rootfs : "/", c);
		return 1;
	}
	return 0;
}

void mt_container_describe(const struct mt_container *c, char *buf,
			   size_t len)
{
	char pod[400] = "";

	if (c->pod[0])
		snprintf(pod, sizeof(pod), "%s pod %s/%s",
			 c->id[0] ? " in" : "", c->ns, c->pod);
	else if (c->pod_uid[0])
		snprintf(pod, sizeof(pod), "%s pod %s", c->id[0] ? " in" : "",
			 c->pod_uid);
	if (c->id[0])
		snprintf(buf, len, "container %s (%s %.12s)%s", c->name,
			 mt_runtime_name(c->runtime), c->id, pod);
	else
		snprintf(buf, len, "%s", pod + 1);
}

void mt_containers_get_stats(const struct mt_containers *cs,
			     struct mt_containers_stats *st)
{
	*st = cs->st;
	st->cgroups = cs->n;
}
