// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: hand a traced process's unwind tables to memtrack.ko
 * (LEAK_UNWIND), one per executable file mapping, and again for mappings
 * that appear later (dlopen).  An object's table is built once per tool run,
 * keyed by device and inode, whatever address it is mapped at.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/genl/genl.h>

#include "memtrack.h"
#include "internal.h"

struct object {
	unsigned int dev_major, dev_minor;
	uint64_t ino;
	int err;			/* building its table failed: skip it */
	struct mt_unwind_table t;
};

struct sent {
	uint64_t start, end, ino;
};

struct mt_unwinder {
	pid_t pid;
	struct object *obj;
	size_t nobj;
	struct sent *sent;
	size_t nsent;
};

int mt_leak_unwind(struct mt_handle *h, pid_t pid, uint64_t start,
		   uint64_t end, uint64_t bias,
		   const struct memtrack_unwind_row *rows, size_t n)
{
	size_t first, chunk;
	int err = 0;

	if (!n || n > MEMTRACK_UNWIND_MAX_ROWS)
		return mt_seterr(-E2BIG, "unwind table of %zu rows", n);
	for (first = 0; first < n && !err; first += chunk) {
		struct req r = { 0 };
		struct nl_msg *msg;
		struct nlattr *nest;

		chunk = n - first < MEMTRACK_UNWIND_MAX_CHUNK ?
			n - first : MEMTRACK_UNWIND_MAX_CHUNK;
		msg = req_tgid_msg(h, MEMTRACK_CMD_LEAK_UNWIND, 0, pid,
				   chunk * sizeof(*rows) + 256);
		if (!msg)
			return -ENOMEM;
		nest = NULL;
		if (!(nest = nla_nest_start(msg, MEMTRACK_ATTR_LEAK_UNWIND)) ||
		    nla_put_u64(msg, MEMTRACK_UNWIND_ATTR_START, start) < 0 ||
		    nla_put_u64(msg, MEMTRACK_UNWIND_ATTR_END, end) < 0 ||
		    nla_put_u64(msg, MEMTRACK_UNWIND_ATTR_BIAS, bias) < 0 ||
		    nla_put_u32(msg, MEMTRACK_UNWIND_ATTR_NR_ROWS, (uint32_t)n) < 0 ||
		    nla_put_u32(msg, MEMTRACK_UNWIND_ATTR_FIRST_ROW, (uint32_t)first) < 0 ||
		    nla_put(msg, MEMTRACK_UNWIND_ATTR_ROWS,
			    (int)(chunk * sizeof(*rows)), rows + first) < 0) {
			nlmsg_free(msg);
			return mt_seterr(-EMSGSIZE, "netlink: LEAK_UNWIND message too large");
		}
		nla_nest_end(msg, nest);
		err = req_run(h, msg, &r);
	}
	if (err == -ENOENT)
		return mt_seterr(err, "no leak session for %d", (int)pid);
	if (err == -EPERM)
		return mt_seterr(err, "not permitted: the leak session of %d is another user's",
				 (int)pid);
	return err;
}

struct mt_unwinder *mt_unwinder_new(pid_t pid)
{
	struct mt_unwinder *u = calloc(1, sizeof(*u));

	if (!u) {
		mt_seterr(-ENOMEM, "out of memory");
		return NULL;
	}
	u->pid = pid;
	return u;
}

void mt_unwinder_free(struct mt_unwinder *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nobj; i++)
		mt_unwind_table_free(&u->obj[i].t);
	free(u->obj);
	free(u->sent);
	free(u);
}

static struct object *object_of(struct mt_unwinder *u, const char *path,
				unsigned int maj, unsigned int min, uint64_t ino)
{
	struct object *o;
	size_t i;

	for (i = 0; i < u->nobj; i++) {
		o = &u->obj[i];
		if (o->dev_major == maj && o->dev_minor == min && o->ino == ino)
			return o;
	}
	o = realloc(u->obj, (u->nobj + 1) * sizeof(*o));
	if (!o)
		return NULL;
	u->obj = o;
	o = &u->obj[u->nobj++];
	memset(o, 0, sizeof(*o));
	o->dev_major = maj;
	o->dev_minor = min;
	o->ino = ino;
	o->err = mt_unwind_build(path, &o->t);
	if (!o->err && !o->t.nr)
		o->err = -ENOENT;
	return o;
}

static bool was_sent(const struct mt_unwinder *u, uint64_t start,
		     uint64_t end, uint64_t ino)
{
	size_t i;

	for (i = 0; i < u->nsent; i++)
		if (u->sent[i].start == start && u->sent[i].end == end &&
		    u->sent[i].ino == ino)
			return true;
	return false;
}

const struct mt_unwind_table *mt_unwinder_table(struct mt_unwinder *u,
						const struct mt_procmap *m,
						uint64_t *bias)
{
	struct object *o;

	if (m->path[0] != '/' || m->perms[2] != 'x' || m->deleted)
		return NULL;
	o = object_of(u, m->path, m->dev_major, m->dev_minor, m->inode);
	if (!o || o->err)
		return NULL;
	*bias = m->start - m->offset - o->t.vaddr_off;
	return &o->t;
}

int mt_unwinder_sync(struct mt_unwinder *u, struct mt_handle *h)
{
	struct mt_procmap *maps;
	size_t nmaps, i;
	int err, nr = 0;

	err = mt_procmaps_read(u->pid, &maps, &nmaps);
	if (err)
		return err;
	for (i = 0; i < nmaps && !err; i++) {
		const struct mt_procmap *m = &maps[i];
		struct object *o;
		struct sent *s;

		if (m->path[0] != '/' || m->perms[2] != 'x' || m->deleted ||
		    was_sent(u, m->start, m->end, m->inode))
			continue;
		o = object_of(u, m->path, m->dev_major, m->dev_minor, m->inode);
		if (!o) {
			err = mt_seterr(-ENOMEM, "out of memory");
			break;
		}
		if (!h)
			continue;
		s = realloc(u->sent, (u->nsent + 1) * sizeof(*s));
		if (!s) {
			err = mt_seterr(-ENOMEM, "out of memory");
			break;
		}
		u->sent = s;
		u->sent[u->nsent++] = (struct sent){ m->start, m->end, m->inode };
		/* Not ELF, no CFI: its frames fall back to frame pointers. */
		if (o->err)
			continue;
		err = mt_leak_unwind(h, u->pid, m->start, m->end,
				     m->start - m->offset - o->t.vaddr_off,
				     o->t.rows, o->t.nr);
		if (!err)
			nr++;
	}
	mt_procmaps_free(maps, nmaps);
	return err ? err : nr;
}
