// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: tell memtrack.ko how to unwind a traced process's code
 * (LEAK_UNWIND), per executable file mapping, and again for mappings that
 * appear later (dlopen).
 *
 * An object with an .eh_frame_hdr (PT_GNU_EH_FRAME: every object GNU ld or
 * lld links with .eh_frame) is given by that address alone, found in the
 * ELF and program headers the target has mapped: nothing is read from the
 * file and the module reads the rules of the frames it walks in place.
 * Only the others get a table of rows, derived from the file (.debug_frame),
 * built once per tool run, keyed by device and inode, whatever address it
 * is mapped at; so do all with MEMTRACK_UNWIND=rows (tests compare both).
 */
#define _GNU_SOURCE			/* process_vm_readv */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/genl/genl.h>

#include "libmemtrack.h"
#include "internal.h"

struct object {
	unsigned int dev_major, dev_minor;
	uint64_t ino;
	bool built;			/* t (or err) is there */
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
	bool rows;			/* MEMTRACK_UNWIND=rows: tables for all */
	bool eh_only;			/* tables from .eh_frame alone */
};

/* A LEAK_UNWIND message for one mapping, room bytes more to put in it. */
static int unwind_msg(struct mt_handle *h, pid_t pid, uint64_t start,
		      uint64_t end, uint64_t bias, size_t room,
		      struct nl_msg **out, struct nlattr **nest)
{
	struct nl_msg *msg;

	msg = req_tgid_msg(h, MEMTRACK_CMD_LEAK_UNWIND, 0, pid, room + 256);
	if (!msg)
		return -ENOMEM;
	if (!(*nest = nla_nest_start(msg, MEMTRACK_ATTR_LEAK_UNWIND)) ||
	    nla_put_u64(msg, MEMTRACK_UNWIND_ATTR_START, start) < 0 ||
	    nla_put_u64(msg, MEMTRACK_UNWIND_ATTR_END, end) < 0 ||
	    nla_put_u64(msg, MEMTRACK_UNWIND_ATTR_BIAS, bias) < 0) {
		nlmsg_free(msg);
		return mt_seterr(-EMSGSIZE, "netlink: LEAK_UNWIND message too large");
	}
	*out = msg;
	return 0;
}

static int unwind_err(int err, pid_t pid)
{
	if (err == -ENOENT)
		return mt_seterr(err, "no leak session for %d", (int)pid);
	if (err == -EPERM)
		return mt_seterr(err, "not permitted: the leak session of %d is another user's",
				 (int)pid);
	return err;
}

/* The address of a mapping's .eh_frame_hdr, in the target (below). */
int mt_leak_unwind_hdr(struct mt_handle *h, pid_t pid, uint64_t start,
		       uint64_t end, uint64_t bias, uint64_t hdr)
{
	struct req r = { 0 };
	struct nl_msg *msg;
	struct nlattr *nest;
	int err;

	err = unwind_msg(h, pid, start, end, bias, 16, &msg, &nest);
	if (err)
		return err;
	if (nla_put_u64(msg, MEMTRACK_UNWIND_ATTR_EH_FRAME_HDR, hdr) < 0) {
		nlmsg_free(msg);
		return mt_seterr(-EMSGSIZE, "netlink: LEAK_UNWIND message too large");
	}
	nla_nest_end(msg, nest);
	return unwind_err(req_run(h, msg, &r), pid);
}

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
		err = unwind_msg(h, pid, start, end, bias, chunk * sizeof(*rows),
				 &msg, &nest);
		if (err)
			return err;
		if (nla_put_u32(msg, MEMTRACK_UNWIND_ATTR_NR_ROWS, (uint32_t)n) < 0 ||
		    nla_put_u32(msg, MEMTRACK_UNWIND_ATTR_FIRST_ROW, (uint32_t)first) < 0 ||
		    nla_put(msg, MEMTRACK_UNWIND_ATTR_ROWS,
			    (int)(chunk * sizeof(*rows)), rows + first) < 0) {
			nlmsg_free(msg);
			return mt_seterr(-EMSGSIZE, "netlink: LEAK_UNWIND message too large");
		}
		nla_nest_end(msg, nest);
		err = req_run(h, msg, &r);
	}
	return unwind_err(err, pid);
}

struct mt_unwinder *mt_unwinder_new(pid_t pid)
{
	struct mt_unwinder *u = calloc(1, sizeof(*u));

	if (!u) {
		mt_seterr(-ENOMEM, "out of memory");
		return NULL;
	}
	u->pid = pid;
	u->rows = getenv("MEMTRACK_UNWIND") &&
		  !strcmp(getenv("MEMTRACK_UNWIND"), "rows");
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

static struct object *object_of(struct mt_unwinder *u,
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
	return o;
}

void mt_unwinder_eh_only(struct mt_unwinder *u)
{
	u->eh_only = true;
}

/* Its table of rows, built at the first need. */
static int object_rows(struct mt_unwinder *u, struct object *o,
		       const char *path)
{
	if (!o->built) {
		o->err = mt_unwind_build_with(path, &o->t, u->eh_only ?
					      MT_CFI_EH : MT_CFI_AUTO);
		if (!o->err && !o->t.nr)
			o->err = -ENOENT;
		o->built = true;
	}
	return o->err;
}

static bool peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len;
}

/*
 * Where the object mapped at maps[i] has its .eh_frame_hdr (*hdr) and its
 * load bias (*bias), from the headers its mapping at file offset 0 holds
 * (the loader read them: they are in memory).  -ENOENT: it has none.
 */
static int eh_frame_hdr_of(pid_t pid, const struct mt_procmap *maps,
			   size_t i, uint64_t *hdr, uint64_t *bias)
{
	const struct mt_procmap *m = &maps[i], *base = NULL;
	Elf64_Phdr ph[64];
	Elf64_Ehdr eh;
	bool have_bias = false, have_hdr = false;
	size_t j;

	for (j = 0; j <= i; j++)
		if (maps[j].inode == m->inode &&
		    maps[j].dev_major == m->dev_major &&
		    maps[j].dev_minor == m->dev_minor && !maps[j].offset)
			base = &maps[j];
	if (!base || !peek(pid, base->start, &eh, sizeof(eh)) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum ||
	    eh.e_phnum > 64 ||
	    eh.e_phoff + eh.e_phnum * sizeof(Elf64_Phdr) >
	    base->end - base->start ||
	    !peek(pid, base->start + eh.e_phoff, ph,
		  eh.e_phnum * sizeof(Elf64_Phdr)))
		return -ENOENT;
	for (j = 0; j < eh.e_phnum; j++)
		if (ph[j].p_type == PT_LOAD && !ph[j].p_offset && !have_bias) {
			*bias = base->start - ph[j].p_vaddr;
			have_bias = true;
		}
	for (j = 0; j < eh.e_phnum && have_bias; j++)
		if (ph[j].p_type == PT_GNU_EH_FRAME && ph[j].p_memsz >= 12) {
			*hdr = *bias + ph[j].p_vaddr;
			have_hdr = true;
		}
	return have_hdr ? 0 : -ENOENT;
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
	o = object_of(u, m->dev_major, m->dev_minor, m->inode);
	if (!o || object_rows(u, o, m->path))
		return NULL;
	*bias = m->start - m->offset - o->t.vaddr_off;
	return &o->t;
}

int mt_unwinder_sync(struct mt_unwinder *u, struct mt_handle *h)
{
	struct mt_procmap *maps;
	size_t nmaps, i;
	uint64_t hdr, bias;
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
		o = object_of(u, m->dev_major, m->dev_minor, m->inode);
		if (!o) {
			err = mt_seterr(-ENOMEM, "out of memory");
			break;
		}
		if (!h) {
			/* What needs rows is built before the attach. */
			if (u->rows || eh_frame_hdr_of(u->pid, maps, i, &hdr, &bias))
				object_rows(u, o, m->path);
			continue;
		}
		s = realloc(u->sent, (u->nsent + 1) * sizeof(*s));
		if (!s) {
			err = mt_seterr(-ENOMEM, "out of memory");
			break;
		}
		u->sent = s;
		u->sent[u->nsent++] = (struct sent){ m->start, m->end, m->inode };
		if (!u->rows &&
		    !eh_frame_hdr_of(u->pid, maps, i, &hdr, &bias)) {
			err = mt_leak_unwind_hdr(h, u->pid, m->start, m->end,
						 bias, hdr);
			if (!err)
				nr++;
			continue;
		}
		/* Not ELF, no CFI: its frames fall back to frame pointers. */
		if (object_rows(u, o, m->path))
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
