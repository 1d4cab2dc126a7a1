// SPDX-License-Identifier: LGPL-2.1
/*
 * The memory snapshot --scan classifies: the target's threads are stopped
 * (stop_world.c), their registers read, the root mappings and those
 * holding blocks copied, then the threads are detached and run on.  A
 * thread the caller has stopped already (the launched program at its exit
 * stop) is read as it is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "libmemtrack.h"
#include "internal.h"
#include "memtrack_preload.h"
#include "grow.h"

/*
 * Roots, as memcheck has them (every readable and writable mapping of the
 * program, words of blocks aside): file-backed rw mappings (data, shared
 * files), anonymous ones (bss, [heap], arenas, the program's own mmaps,
 * TLS), with two kinds cut short.  A live thread's stack holds the
 * program's words only from its sp up: below lie dead frames.  A stack
 * glibc keeps for reuse after its thread ended (it is no live thread's)
 * holds the thread descriptor and TLS at its top, which memcheck scans,
 * and the thread's dead frames below, which it does not: a root from the
 * lowest TLS block up.
 */
struct map {
	uint64_t lo, hi;
	uint64_t from;			/* roots start here (a stack's sp) */
	bool rw, anon, root, wanted;
	bool live;			/* holds a live thread's sp */
};

static int read_maps(pid_t pid, struct map **out, size_t *n)
{
	static const char state_map[] = "/memfd:" MTP_MEMFD_NAME;
	struct mt_procmap *pm;
	struct map *v;
	size_t npm, i;
	int err;

	err = mt_procmaps_read(pid, &pm, &npm);
	if (err)
		return err;
	v = calloc(npm ? npm : 1, sizeof(*v));
	if (!v) {
		mt_procmaps_free(pm, npm);
		return mt_seterr(-ENOMEM, "out of memory");
	}
	for (i = 0; i < npm; i++) {
		struct map *m = &v[i];

		m->lo = pm[i].start;
		m->hi = pm[i].end;
		m->from = m->lo;
		m->rw = pm[i].perms[0] == 'r' && pm[i].perms[1] == 'w';
		m->anon = !pm[i].inode && (!pm[i].path[0] ||
					   !strcmp(pm[i].path, "[heap]"));
		m->root = m->rw;
		/*
		 * The in-process engine's state holds the address of every
		 * block: it is the tool's, not the program's, and no root.
		 */
		if (!strcmp(pm[i].path, state_map))
			m->root = false;
		m->wanted = m->root;
	}
	mt_procmaps_free(pm, npm);
	*out = v;
	*n = npm;
	return 0;
}

static struct map *map_of(struct map *v, size_t n, uint64_t addr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].lo <= addr && addr < v[i].hi)
			return &v[i];
	return NULL;
}

/* Copy [addr, addr+len) of pid; unreadable parts read as zeros. */
static void copy_mem(pid_t pid, int memfd, uint64_t addr, unsigned char *buf,
		     uint64_t len)
{
	uint64_t done = 0;

	while (done < len) {
		size_t chunk = len - done > (64u << 20) ? 64u << 20 : len - done;
		struct iovec l = { buf + done, chunk };
		struct iovec r = { (void *)(uintptr_t)(addr + done), chunk };
		ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);

		if (got <= 0 && memfd >= 0)
			got = pread(memfd, buf + done, chunk, (off_t)(addr + done));
		if (got <= 0) {
			/* a page that cannot be read: skip it */
			uint64_t skip = 4096 - ((addr + done) & 4095);

			if (skip > len - done)
				skip = len - done;
			memset(buf + done, 0, skip);
			got = (ssize_t)skip;
		}
		done += (uint64_t)got;
	}
}

static int add_region(struct mt_scan_snapshot *snap, size_t *cap,
		      uint64_t addr, uint64_t len, const void *src, bool root,
		      unsigned char **buf)
{
	struct mt_scan_region *r;

	if (mt_grow((void **)&snap->regions, cap, snap->nregions + 1,
		    sizeof(*snap->regions), 32))
		return mt_seterr(-ENOMEM, "out of memory");
	*buf = malloc(len ? len : 1);
	if (!*buf)
		return mt_seterr(-ENOMEM, "out of memory (%" PRIu64 " bytes)", len);
	if (src)
		memcpy(*buf, src, len);
	r = &snap->regions[snap->nregions++];
	r->addr = addr;
	r->len = len;
	r->data = *buf;
	r->root = root;
	return 0;
}

static bool snap_word(const struct mt_scan_snapshot *snap, uint64_t addr,
		      uint64_t *w)
{
	size_t i;

	for (i = 0; i < snap->nregions; i++) {
		const struct mt_scan_region *r = &snap->regions[i];

		if (r->len >= 8 && addr >= r->addr && addr - r->addr <= r->len - 8) {
			memcpy(w, r->data + (addr - r->addr), 8);
			return true;
		}
	}
	return false;
}

#if !MT_TLS_TCB_AT_TP
/*
 * TLS variant I (arm64): the thread pointer is past the thread descriptor,
 * the TLS blocks above it and the stack below, so the descriptor is the
 * lowest of what a cached stack keeps.  It is found by its link on glibc's
 * stack cache, a doubly linked list_t after the descriptor's 24 words of
 * padding (nptl/descr.h, since 2.x): the link whose next's prev and prev's
 * next are itself.  0 if there is none.
 */
#define PD_LIST_OFF	(24 * 8)
#define PD_ALIGN	16

static uint64_t dead_stack_from(const struct mt_scan_snapshot *snap,
				const struct mt_scan_region *r,
				const struct mt_world *t)
{
	uint64_t pd, self, next, prev, back;

	(void)t;			/* a dead stack is no live thread's */
	for (pd = (r->addr + PD_ALIGN - 1) & ~(uint64_t)(PD_ALIGN - 1);
	     pd + PD_LIST_OFF + 16 <= r->addr + r->len; pd += PD_ALIGN) {
		self = pd + PD_LIST_OFF;
		memcpy(&next, r->data + (self - r->addr), 8);
		memcpy(&prev, r->data + (self - r->addr) + 8, 8);
		if (!next || !prev || (next & 7) || (prev & 7))
			continue;
		if (snap_word(snap, next + 8, &back) && back == self &&
		    snap_word(snap, prev, &back) && back == self)
			return pd;
	}
	return 0;
}
#else
/*
 * A stack glibc cached: the lowest thread control block in the mapping
 * that is no live thread's (x86_64's TLS ABI: the thread pointer's first
 * word is the thread pointer itself; glibc's tcbhead_t repeats it two
 * words on, after the DTV pointer), and the lowest static TLS block its
 * DTV (dtv[-1]: length, then one 16-byte slot per module) points to in the
 * mapping: the dead frames lie below it.  The lowest: a stack begins just
 * above its guard page, but its end may merge with an anonymous mapping
 * above it (the main thread's TLS, say), which keeps its own words.
 * 0 if there is none.
 */
#define TCB_ALIGN	64
#define DTV_MAX		4096

static bool live_tp(const struct mt_world *t, uint64_t tp)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].stopped && MT_REG_TP(&t->v[i].regs) == tp)
			return true;
	return false;
}

static uint64_t dead_stack_from(const struct mt_scan_snapshot *snap,
				const struct mt_scan_region *r,
				const struct mt_world *t)
{
	uint64_t tp, dtv, len, i, val, from = 0;

	for (tp = (r->addr + TCB_ALIGN - 1) & ~(uint64_t)(TCB_ALIGN - 1);
	     tp + 24 <= r->addr + r->len; tp += TCB_ALIGN) {
		uint64_t self, self2;

		memcpy(&self, r->data + (tp - r->addr), 8);
		memcpy(&self2, r->data + (tp - r->addr) + 16, 8);
		if (self == tp && self2 == tp && !live_tp(t, tp)) {
			from = tp;
			break;
		}
	}
	if (!from)
		return 0;
	memcpy(&dtv, r->data + (tp - r->addr) + 8, 8);
	if (!snap_word(snap, dtv - 16, &len) || len > DTV_MAX)
		return from;
	for (i = 1; i <= len; i++)
		if (snap_word(snap, dtv + 16 * i, &val) && val >= r->addr &&
		    val < from)
			from = val;
	return from & ~7ull;
}
#endif

/* Cut each dead stack's region to its descriptor and TLS. */
static void cut_dead_stacks(struct mt_scan_snapshot *snap, const bool *dead,
			    const struct mt_world *t)
{
	size_t i;

	for (i = 0; i < snap->nregions; i++) {
		struct mt_scan_region *r = &snap->regions[i];
		uint64_t from;

		if (!dead[i])
			continue;
		from = dead_stack_from(snap, r, t);
		if (!from)
			continue;
		memmove((void *)r->data, r->data + (from - r->addr),
			r->addr + r->len - from);
		r->len -= from - r->addr;
		r->addr = from;
	}
}

static int copy_all(pid_t pid, const struct mt_world *t,
		    const struct mt_scan_block *blocks, size_t nblocks,
		    const struct mt_scan_stack *from, struct mt_scan_snapshot *snap)
{
	struct map *maps = NULL, *m;
	size_t nmaps = 0, cap = 0, i;
	unsigned char *buf;
	bool *dead = NULL;
	char path[64];
	int memfd, err;

	err = read_maps(pid, &maps, &nmaps);
	if (err)
		return err;
	for (i = 0; i < t->n; i++) {
		const struct mt_thread *th = &t->v[i];
		struct map *sm;

		if (!th->stopped)
			continue;
		/* registers: a root of their own, at a made-up address 0 */
		err = add_region(snap, &cap, 0, sizeof(th->regs), &th->regs,
				 true, &buf);
		if (err)
			goto out;
		sm = map_of(maps, nmaps, MT_REG_SP(&th->regs));
		if (sm && sm->rw) {
			uint64_t sp = MT_REG_SP(&th->regs);

			/* what lies below sp is dead; so may more be (from) */
			if (from && from->tid == th->tid && from->sp > sp &&
			    from->sp < sm->hi)
				sp = from->sp;
			sm->from = sp & ~7ull;
			sm->root = sm->wanted = sm->live = true;
		}
	}
	for (i = 0; i < nblocks; i++) {
		m = map_of(maps, nmaps, blocks[i].addr);
		if (m && m->rw)
			m->wanted = true;
	}
	dead = calloc(nmaps ? nmaps : 1, sizeof(*dead));
	if (!dead) {
		err = mt_seterr(-ENOMEM, "out of memory");
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	memfd = open(path, O_RDONLY | O_CLOEXEC);
	for (i = 0; i < nmaps; i++) {
		m = &maps[i];
		if (!m->wanted)
			continue;
		dead[snap->nregions] = m->anon && m->root && !m->live;
		err = add_region(snap, &cap, m->from, m->hi - m->from, NULL,
				 m->root, &buf);
		if (err)
			break;
		copy_mem(pid, memfd, m->from, buf, m->hi - m->from);
	}
	if (memfd >= 0)
		close(memfd);
	if (!err)
		cut_dead_stacks(snap, dead, t);
out:
	free(dead);
	free(maps);
	return err;
}

int mt_scan_snapshot_take(pid_t pid, const struct mt_scan_block *blocks,
			  size_t nblocks, const struct mt_scan_stack *from,
			  struct mt_scan_snapshot *snap)
{
	struct mt_world t;
	int err;

	memset(snap, 0, sizeof(*snap));
	err = mt_world_stop(pid, from && from->traced ? from->tid : 0, 0, &t);
	if (!err)
		err = copy_all(pid, &t, blocks, nblocks, from, snap);
	snap->nthreads = (unsigned int)t.n;
	mt_world_release(&t);
	if (err)
		mt_scan_snapshot_free(snap);
	return err;
}

void mt_scan_snapshot_free(struct mt_scan_snapshot *snap)
{
	size_t i;

	for (i = 0; i < snap->nregions; i++)
		free((void *)snap->regions[i].data);
	free(snap->regions);
	memset(snap, 0, sizeof(*snap));
}
