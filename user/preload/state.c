// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload's core: the state shared with memtrack-leak
 * (memtrack_preload.h) and the two tables in it.
 *
 * Stacks: interned by hash in one open-addressing table that threads fill
 * with a compare-and-swap, never a lock; a stack is written before it is
 * published and never moves, so a reader needs no lock either.  Blocks: a
 * table per shard of the address space, each under its own spinlock, so
 * two threads meet on a lock only when their blocks hash to one shard
 * (1/256) and never in the common case of one thread; a shard grows or
 * drops its tombstones by rehashing into a table of its own from the
 * state's arena.  Nothing here calls the allocator, takes a lock of libc
 * or makes a system call, except starting (once) and the rare paths.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <linux/memtrack.h>

#include "arch.h"
#include "real.h"
#include "state.h"

int pl_on;
struct mtp_header *pl_hdr;
static int pl_tgid;		/* getpid(), once per process */
static int pl_fd = -1;		/* the state's memfd, kept for an exec */
static uint32_t pl_flags;

#define GOLDEN	0x9e3779b97f4a7c15ULL

static inline void *at(uint64_t off)
{
	return (char *)pl_hdr + off;
}

/*
 * A lock held for a few dozen instructions, almost never contended: one
 * exchange.  If it is held, a short spin, then the CPU is given up: the
 * holder may be a thread the scheduler preempted, and spinning on its
 * lock would burn the whole time slice (on one CPU, every time).
 */
static __attribute__((noinline)) void spin_lock_wait(uint32_t *l)
{
	int i;

	do {
		for (i = 0; i < 100 && __atomic_load_n(l, __ATOMIC_RELAXED); i++)
			mt_cpu_relax();
		if (__atomic_load_n(l, __ATOMIC_RELAXED))
			sched_yield();
	} while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE));
}

/* the exchange inline, the wait out of line */
static inline void spin_lock(uint32_t *l)
{
	if (unlikely(__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)))
		spin_lock_wait(l);
}

static void spin_unlock(uint32_t *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static inline void count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* n bytes of the arena, 16-aligned and zero (0: the state is full). */
static uint64_t arena_alloc(uint64_t n)
{
	uint64_t off;

	n = (n + 15) & ~15ULL;
	off = __atomic_fetch_add(&pl_hdr->arena, n, __ATOMIC_RELAXED);
	return off + n <= pl_hdr->size ? off : 0;
}

/* ---- objects, for the tool's symbols --------------------------------------- */

/* From the unwinder, once per object it learns of (rare path). */
static void note_object(const char *path, uint64_t base, uint64_t lo,
			uint64_t hi)
{
	struct mtp_object *o;
	uint32_t n;
	ssize_t len;

	spin_lock(&pl_hdr->objects_lock);
	n = pl_hdr->nr_objects;
	if (n < MTP_MAX_OBJECTS) {
		o = &pl_hdr->objects[n];
		o->base = base;
		o->lo = lo;
		o->hi = hi;
		o->tgid = (uint32_t)pl_tgid;
		if (path[0]) {
			strncpy(o->path, path, sizeof(o->path) - 1);
		} else {
			/* the program itself: dl_iterate_phdr names it "" */
			len = readlink("/proc/self/exe", o->path,
				       sizeof(o->path) - 1);
			o->path[len > 0 ? len : 0] = '\0';
		}
		__atomic_store_n(&pl_hdr->nr_objects, n + 1, __ATOMIC_RELEASE);
	}
	spin_unlock(&pl_hdr->objects_lock);
}

/* ---- stacks -------------------------------------------------------------------- */

static inline struct mtp_stack *stack_at(uint32_t id)
{
	uint64_t off = __atomic_load_n(&pl_hdr->stack_off[id], __ATOMIC_ACQUIRE);

	return off ? at(off) : NULL;
}

static bool same_stack(const struct mtp_stack *s, uint64_t hash, uint32_t api,
		       const uint64_t *pcs, int n)
{
	int i;

	if (s->hash != hash || s->api != api || s->nr_frames != (uint32_t)n)
		return false;
	/* a few words: a loop the compiler inlines beats a call to memcmp */
	for (i = 0; i < n; i++)
		if (s->frames[i] != pcs[i])
			return false;
	return true;
}

/* A new stack record, not yet in the hash: its id (0: no room). */
static uint32_t stack_new(uint64_t hash, uint32_t api, const uint64_t *pcs,
			  int n)
{
	uint32_t id = __atomic_add_fetch(&pl_hdr->nr_stacks, 1, __ATOMIC_RELAXED);
	struct mtp_stack *s;
	uint64_t off;

	if (id > MTP_MAX_STACKS)
		return 0;
	off = arena_alloc(sizeof(*s) + n * sizeof(*pcs));
	if (!off)
		return 0;
	s = at(off);
	s->hash = hash;
	s->api = api;
	s->nr_frames = (uint32_t)n;
	memcpy(s->frames, pcs, n * sizeof(*pcs));
	__atomic_store_n(&pl_hdr->stack_off[id], off, __ATOMIC_RELEASE);
	return id;
}

/* pcs_hash: the walk's hash of the pcs (pl_cfi_backtrace()). */
static uint32_t intern(const uint64_t *pcs, int n, uint64_t pcs_hash,
		       uint32_t api)
{
	uint64_t hash = (pcs_hash ^ api) * GOLDEN;
	uint32_t slot, id, fresh = 0;
	struct mtp_stack *s;
	/* The hot path: a thread allocating from one place again. */
	id = pl_self.last_id;
	if (id && pl_self.last_hash == hash &&
	    same_stack(stack_at(id), hash, api, pcs, n))
		return id;
	for (slot = (uint32_t)(hash >> 40) & (MTP_STACK_SLOTS - 1);;
	     slot = (slot + 1) & (MTP_STACK_SLOTS - 1)) {
		id = __atomic_load_n(&pl_hdr->stack_slot[slot], __ATOMIC_ACQUIRE);
		if (!id) {
			if (!fresh)
				fresh = stack_new(hash, api, pcs, n);
			if (!fresh) {
				count(&pl_hdr->c.dropped_stacks);
				return 0;
			}
			if (__atomic_compare_exchange_n(&pl_hdr->stack_slot[slot],
							&id, fresh, false,
							__ATOMIC_RELEASE,
							__ATOMIC_ACQUIRE)) {
				id = fresh;
				break;
			}
			/* another thread took the slot: see what it put there */
		}
		s = stack_at(id);
		if (s && same_stack(s, hash, api, pcs, n))
			break;	/* a fresh record lost the race: an unused id */
	}
	pl_self.last_id = id;
	pl_self.last_hash = hash;
	return id;
}

static inline struct pl_walked *walked_at(struct pl_cache *c,
					  const struct pl_regs *r)
{
	return &c->walks[((r->pc ^ r->sp) * GOLDEN) >> (64 - PL_WALKS_BITS)];
}

/* A stack not recorded from here: walked (out of line), and recorded. */
static __attribute__((noinline)) uint32_t stack_walk(const struct pl_regs *r,
						     uint32_t api,
						     struct pl_cache *c,
						     struct pl_walked *e)
{
	uint64_t pcs[MTP_MAX_FRAMES], hash;
	int n;

	n = pl_cfi_backtrace(r, &c->memo, pcs, MTP_MAX_FRAMES, &e->w, NULL,
			     &hash);
	e->api = api;
	e->id = intern(pcs, n, hash, api);
	return e->id;
}

static inline __attribute__((always_inline)) uint32_t
stack_of(const struct pl_regs *r, uint32_t api)
{
	struct pl_cache *c = pl_cache();
	struct pl_walked *e;

	if (unlikely(!c))
		return 0;	/* no memory for a walk: a block without stack */
	e = walked_at(c, r);
	/* The hot path: a place seen, the same stack above it. */
	if (e->id && e->api == api && pl_cfi_same_walk(r, &e->w))
		return e->id;
	return stack_walk(r, api, c, e);
}

uint32_t pl_stack(const struct pl_regs *r, uint32_t api)
{
	return stack_of(r, api);
}

/* ---- blocks ---------------------------------------------------------------------- */

static inline uint64_t block_hash(uint64_t addr, uint32_t tgid)
{
	return ((addr >> 4) ^ ((uint64_t)tgid << 44)) * GOLDEN;
}

static inline struct mtp_shard *shard_of(uint64_t hash)
{
	return &pl_hdr->shards[hash >> (64 - __builtin_ctz(MTP_SHARDS))];
}

/* The slot of (addr, tgid), or of where it would go; under the lock. */
static inline __attribute__((always_inline)) struct mtp_block *
find(struct mtp_shard *sh, uint64_t hash, uint64_t addr, uint32_t tgid,
     bool insert)
{
	struct mtp_block *t = at(sh->table), *tomb = NULL;
	uint64_t mask = sh->slots - 1, i;

	for (i = (hash >> 12) & mask;; i = (i + 1) & mask) {
		if (!t[i].addr)
			return insert && tomb ? tomb : insert ? &t[i] : NULL;
		if (t[i].addr == MTP_TOMB) {
			if (!tomb)
				tomb = &t[i];
		} else if (t[i].addr == addr && t[i].tgid == tgid) {
			return &t[i];
		}
	}
}

/* A zeroed table of 2^order blocks: a freed one, or the arena's. */
static uint64_t table_get(unsigned int order)
{
	uint64_t off;

	spin_lock((uint32_t *)&pl_hdr->arena_lock);
	off = pl_hdr->free_tables[order];
	if (off)
		pl_hdr->free_tables[order] = *(uint64_t *)at(off);
	spin_unlock((uint32_t *)&pl_hdr->arena_lock);
	if (off)
		memset(at(off), 0, sizeof(struct mtp_block) << order);
	else
		off = arena_alloc(sizeof(struct mtp_block) << order);
	return off;
}

static void table_put(uint64_t off, unsigned int order)
{
	spin_lock((uint32_t *)&pl_hdr->arena_lock);
	*(uint64_t *)at(off) = pl_hdr->free_tables[order];
	pl_hdr->free_tables[order] = off;
	spin_unlock((uint32_t *)&pl_hdr->arena_lock);
}

/*
 * Room for one more: at half full, a table twice the size if a quarter of
 * it is live, else one of the same size without the tombstones.  false: no
 * room.  Half, not more: an insert probes to the first empty slot, and
 * linear probing's runs grow fast past half (2.5 slots a miss at 1/2, 8.5
 * at 3/4); the slots are 32 bytes of a sparse state.
 */
static __attribute__((noinline)) bool rehash(struct mtp_shard *sh)
{
	unsigned int order = (unsigned int)__builtin_ctzll(sh->slots);
	struct mtp_block *old = at(sh->table), *t;
	uint64_t off, i, j, mask;

	if (sh->live * 4 >= sh->slots)
		order++;
	if (order >= 40)
		return false;
	off = table_get(order);
	if (!off)
		return false;
	t = at(off);
	mask = (1ULL << order) - 1;
	for (i = 0; i < sh->slots; i++) {
		if (old[i].addr <= MTP_TOMB)
			continue;
		j = (block_hash(old[i].addr, old[i].tgid) >> 12) & mask;
		while (t[j].addr)
			j = (j + 1) & mask;
		t[j] = old[i];
	}
	/* A seqcount write (memtrack_preload.h): odd before the old goes. */
	__atomic_store_n(&sh->seq, sh->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	table_put(sh->table, (unsigned int)__builtin_ctzll(sh->slots));
	__atomic_store_n(&sh->table, off, __ATOMIC_RELAXED);
	__atomic_store_n(&sh->slots, 1ULL << order, __ATOMIC_RELAXED);
	sh->used = sh->live;
	__atomic_store_n(&sh->seq, sh->seq + 1, __ATOMIC_RELEASE);
	return true;
}

static inline bool make_room(struct mtp_shard *sh)
{
	return likely((sh->used + 1) * 2 <= sh->slots) || rehash(sh);
}

/* The tool's clock (mtp_header.now_ns): a load, no system call. */
static inline uint64_t now_ns(void)
{
	return __atomic_load_n(&pl_hdr->now_ns, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) void
insert(const struct mtp_block *b)
{
	uint64_t hash = block_hash(b->addr, b->tgid);
	struct mtp_shard *sh = shard_of(hash);
	struct mtp_block *slot;

	spin_lock(&sh->lock);
	if (!make_room(sh)) {
		spin_unlock(&sh->lock);
		count(&pl_hdr->c.dropped_allocs);
		return;
	}
	slot = find(sh, hash, b->addr, b->tgid, true);
	if (slot->addr == b->addr) {
		/* a block we missed the release of: this one replaces it */
		*slot = *b;
	} else {
		if (!slot->addr)
			sh->used++;
		sh->live++;
		*slot = *b;
	}
	spin_unlock(&sh->lock);
}

/* insert() where it is rare: not inline in the hooks' path */
static __attribute__((noinline)) void insert_rare(const struct mtp_block *b)
{
	insert(b);
}

/*
 * A slot freed: a tombstone, unless the next slot is empty.  Then no
 * probe goes through it (a search stops at the first empty slot, an
 * insert takes it), nor through the tombstones right before it: all empty
 * again.  At the low load of short-lived blocks nearly every release is
 * of that kind, so tombstones, and the rehashes that clear them, stay rare.
 */
static inline void drop(struct mtp_shard *sh, struct mtp_block *slot)
{
	struct mtp_block *t = at(sh->table);
	uint64_t mask = sh->slots - 1, i = (uint64_t)(slot - t);

	if (t[(i + 1) & mask].addr) {
		slot->addr = MTP_TOMB;
		return;
	}
	do {
		t[i].addr = 0;
		sh->used--;
		i = (i - 1) & mask;
	} while (t[i].addr == MTP_TOMB);
}

/* ---- young blocks ----------------------------------------------------------- */

static pthread_key_t young_key;

static inline struct mtp_block *young_slot(struct mtp_young *y, uint64_t hash)
{
	return &y->e[(hash >> 20) & (MTP_YOUNG_SLOTS - 1)];
}

static struct mtp_young *young_at(uint32_t i)
{
	uint64_t off = __atomic_load_n(&pl_hdr->young[i], __ATOMIC_ACQUIRE);

	return off ? at(off) : NULL;
}

/*
 * Move a young block to the shared table: in the table first, then out
 * of the buffer, so that a thread freeing it meanwhile finds it in one
 * of them; if that thread took it from the buffer first, the copy in the
 * table goes again.
 */
static __attribute__((noinline)) void young_move(struct mtp_block *e,
						uint64_t addr)
{
	struct mtp_block copy = *e;

	copy.addr = addr;
	insert(&copy);
	if (!__atomic_compare_exchange_n(&e->addr, &addr, 0, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		pl_block_forget(copy.addr);
}

static inline void young_evict(struct mtp_block *e)
{
	uint64_t addr = __atomic_load_n(&e->addr, __ATOMIC_ACQUIRE);

	if (addr > MTP_TOMB)
		young_move(e, addr);
}

/*
 * At the thread's end: its young blocks to the table, the buffer free.
 * Inside a hook's guard: a detach waits for it, and a buffer of a session
 * since ended (in a state since unmapped) is left alone.
 */
static void young_release(void *arg)
{
	struct mtp_young *y = arg;
	unsigned int i;

	if (!pl_enter(PL_MEM | PL_FD))
		return;
	if (pl_self.young == y) {
		for (i = 0; i < MTP_YOUNG_SLOTS; i++)
			young_evict(&y->e[i]);
		pl_flush_calls();
		pl_self.young = NULL;
		__atomic_store_n(&y->owned, 0, __ATOMIC_RELEASE);
	}
	pl_leave();
}

/* The thread's first buffer: a free one of this process, or a new one. */
static __attribute__((noinline)) struct mtp_young *young_get(void)
{
	struct mtp_young *y;
	uint32_t i, n, zero = 0;
	uint64_t off;

	n = __atomic_load_n(&pl_hdr->nr_young, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && i < MTP_MAX_YOUNG; i++) {
		y = young_at(i);
		if (y && y->tgid == (uint32_t)pl_tgid &&
		    __atomic_compare_exchange_n(&y->owned, &zero, 1, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			goto got;
		zero = 0;
	}
	i = __atomic_fetch_add(&pl_hdr->nr_young, 1, __ATOMIC_RELAXED);
	off = i < MTP_MAX_YOUNG ? arena_alloc(sizeof(*y)) : 0;
	if (!off)
		return NULL;
	y = at(off);
	y->tgid = (uint32_t)pl_tgid;
	y->owned = 1;
	__atomic_store_n(&pl_hdr->young[i], off, __ATOMIC_RELEASE);
got:
	pl_self.young = y;
	pthread_setspecific(young_key, y);
	return y;
}

static inline struct mtp_young *young(void)
{
	struct mtp_young *y = pl_self.young;

	return likely(y) ? y : young_get();
}

/* Take addr out of a buffer's slot if it is there: a copy into *out. */
static bool young_take(struct mtp_block *e, uint64_t addr,
		       struct mtp_block *out)
{
	uint64_t cur = __atomic_load_n(&e->addr, __ATOMIC_ACQUIRE);

	if (cur != addr)
		return false;
	*out = *e;
	out->addr = addr;
	return __atomic_compare_exchange_n(&e->addr, &cur, 0, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* addr in another thread's buffer (a young block freed elsewhere). */
static bool young_take_any(uint64_t hash, uint64_t addr,
			   struct mtp_block *out)
{
	uint32_t i, n = __atomic_load_n(&pl_hdr->nr_young, __ATOMIC_ACQUIRE);
	struct mtp_young *y;

	for (i = 0; i < n && i < MTP_MAX_YOUNG; i++) {
		y = young_at(i);
		if (y && y != pl_self.young && y->tgid == (uint32_t)pl_tgid &&
		    young_take(young_slot(y, hash), addr, out))
			return true;
	}
	return false;
}

/* Out of the shared table, if it is there. */
static inline bool table_take(uint64_t hash, uint64_t addr,
			      struct mtp_block *out)
{
	struct mtp_shard *sh = shard_of(hash);
	struct mtp_block *slot;

	spin_lock(&sh->lock);
	slot = sh->table ? find(sh, hash, addr, (uint32_t)pl_tgid, false) : NULL;
	if (slot) {
		*out = *slot;
		sh->live--;
		drop(sh, slot);
	}
	spin_unlock(&sh->lock);
	return slot;
}

/*
 * Wherever it is: the thread's own buffer (the common case, no lock), the
 * table, another thread's buffer, and the table again (it may have moved
 * there meanwhile).
 */
static __attribute__((noinline)) bool take_elsewhere(uint64_t hash,
						    uint64_t addr,
						    struct mtp_block *out)
{
	return table_take(hash, addr, out) ||
	       young_take_any(hash, addr, out) ||
	       table_take(hash, addr, out);
}

static inline __attribute__((always_inline)) bool
take(uint64_t addr, struct mtp_block *out)
{
	uint64_t hash = block_hash(addr, (uint32_t)pl_tgid);
	struct mtp_young *y = pl_self.young;

	return (y && young_take(young_slot(y, hash), addr, out)) ||
	       take_elsewhere(hash, addr, out);
}

static void add_calls(uint32_t stack_id, uint64_t calls, uint64_t bytes)
{
	struct mtp_stack *s = stack_id ? stack_at(stack_id) : NULL;

	if (s) {
		__atomic_fetch_add(&s->total_allocs, calls, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->total_bytes, bytes, __ATOMIC_RELAXED);
	}
}

/* The thread moves to another stack: the last one's counts added. */
static __attribute__((noinline)) void calls_switch(struct mtp_young *y,
						  uint32_t stack_id)
{
	pl_flush_calls();
	__atomic_store_n(&y->calls_id, stack_id, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) void
block_add(uint64_t addr, uint64_t size, uint32_t stack_id)
{
	struct mtp_young *y = young();
	struct mtp_block *e;

	if (unlikely(!y)) {
		struct mtp_block b = {
			.addr = addr, .size = size, .time_ns = now_ns(),
			.stack_id = stack_id, .tgid = (uint32_t)pl_tgid,
		};

		add_calls(stack_id, 1, size);
		insert_rare(&b);
		return;
	}
	/*
	 * A stack's call counts are summed in the thread's young buffer
	 * while it allocates from that stack and added when it moves to
	 * another (or exits): no cache line shared by all threads is written
	 * per call, and the tool, which reads the buffers, sees them at once.
	 */
	if (unlikely(stack_id != y->calls_id))
		calls_switch(y, stack_id);
	__atomic_store_n(&y->calls, y->calls + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&y->call_bytes, y->call_bytes + size, __ATOMIC_RELAXED);
	e = young_slot(y, block_hash(addr, (uint32_t)pl_tgid));
	young_evict(e);
	e->size = size;
	e->time_ns = now_ns();
	e->stack_id = stack_id;
	e->tgid = (uint32_t)pl_tgid;
	__atomic_store_n(&e->addr, addr, __ATOMIC_RELEASE);
}

void pl_block_add(uint64_t addr, uint64_t size, uint32_t stack_id)
{
	block_add(addr, size, stack_id);
}

/*
 * The hooks' path.  What an allocation runs in the common case (the
 * thread's last stack, its own young buffer, no eviction) is inline here,
 * one function; the rest is out of line (stack_walk, young_move, ...):
 * a call with its register saves cost more than that common case's work.
 * pl_block_del() is built the same way (take(), take_elsewhere()).
 */
void pl_record(uint64_t addr, uint64_t size, uint32_t api,
	       const struct pl_regs *r)
{
	block_add(addr, size, stack_of(r, api));
}

void pl_flush_calls(void)
{
	struct mtp_young *y = pl_self.young;
	uint64_t calls, bytes;

	if (!y || !y->calls)
		return;
	/* out of the buffer first: a report counts them once or not at all */
	calls = y->calls;
	bytes = y->call_bytes;
	__atomic_store_n(&y->calls, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&y->call_bytes, 0, __ATOMIC_RELEASE);
	add_calls(y->calls_id, calls, bytes);
}

void pl_block_restore(const struct mtp_block *b)
{
	insert_rare(b);
}

void pl_block_forget(uint64_t addr)
{
	struct mtp_block b;

	take(addr, &b);
}

bool pl_block_del(uint64_t addr, uint32_t api, const struct pl_frame *frame,
		  struct mtp_block *out)
{
	struct mtp_stack *s;
	struct pl_regs r;

	if (!take(addr, out)) {
		count(addr >> 62 ? &pl_hdr->c.unknown_closes :
				   &pl_hdr->c.unknown_frees);
		return false;
	}
	s = out->stack_id ? stack_at(out->stack_id) : NULL;
	if (s && s->api != api && !memtrack_leak_api_matches(s->api, api)) {
		/* rare, and a bug worth both stacks: only now the free's */
		count(&pl_hdr->c.mismatched_frees);
		__atomic_fetch_add(&s->mismatched, 1, __ATOMIC_RELAXED);
		s->free_api = api;
		pl_regs_of(&r, frame);
		s->free_stack_id = pl_stack(&r, api);
	}
	return true;
}

/* ---- start, fork, exit, exec ------------------------------------------------ */

static void after_fork_child(void)
{
	pl_tgid = getpid();
	pl_self.last_id = 0;
	pl_cache_after_fork();
	pl_self.young = NULL;	/* the parent's, in the shared state */
	if (!(pl_flags & MTP_F_FOLLOW))
		__atomic_store_n(&pl_on, -1, __ATOMIC_RELEASE);
}

/* "FD:PID:FLAGS" of MEMTRACK_PRELOAD; false if absent or malformed. */
static bool parse_env(int *fd, int *pid, uint32_t *flags)
{
	const char *s = getenv(MTP_ENV);
	char *end;

	if (!s)
		return false;
	*fd = (int)strtol(s, &end, 10);
	if (*end != ':')
		return false;
	*pid = (int)strtol(end + 1, &end, 10);
	if (*end != ':')
		return false;
	*flags = (uint32_t)strtoul(end + 1, &end, 16);
	return !*end;
}

static void shard_init(struct mtp_shard *sh)
{
	unsigned int order = (unsigned int)__builtin_ctz(MTP_SHARD_MIN);

	sh->table = arena_alloc(sizeof(struct mtp_block) << order);
	sh->slots = sh->table ? MTP_SHARD_MIN : 0;
}

/*
 * fd is the state's memfd, inherited (not a descriptor of the program's).
 * Closed with the system call: this library's close() is a hook.
 */
static bool is_our_fd(int fd)
{
	static const char name[] = "/memfd:" MTP_MEMFD_NAME " (deleted)";
	char path[64], link[sizeof(name) + 1];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	len = readlink(path, link, sizeof(link));
	return len == (ssize_t)sizeof(name) - 1 && !memcmp(link, name, len);
}

int pl_state_map(int fd)
{
	struct mtp_header *h;
	uint32_t state = MTP_STATE_NEW;

	h = mmap(NULL, MTP_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (h == MAP_FAILED)
		return -errno;
	if (h->magic != MTP_MAGIC || h->version != MTP_VERSION ||
	    !__atomic_compare_exchange_n(&h->state, &state,
					 MTP_STATE_RUNNING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		/* the target exec'd: the state is the old program's */
		if (state == MTP_STATE_RUNNING)
			__atomic_store_n(&h->state, MTP_STATE_EXECED,
					 __ATOMIC_RELEASE);
		munmap(h, MTP_SIZE);
		return -EPROTO;
	}
	pl_tgid = getpid();
	pl_flags = h->flags;
	pl_hdr = h;
	pl_fd = fd;
	return 0;
}

int pl_state_start(void)
{
	static int once;
	int i;

	for (i = 0; i < MTP_SHARDS; i++)
		shard_init(&pl_hdr->shards[i]);
	pl_cfi_set_object_cb(note_object);
	if (!once) {
		pthread_atfork(NULL, NULL, after_fork_child);
		pthread_key_create(&young_key, young_release);
	}
	once = 1;
	pl_cache_init();
	pl_threads_reset();
	__atomic_add_fetch(&pl_gen, 1, __ATOMIC_RELEASE);
	return pl_flags & MTP_F_FDS ? PL_FD : PL_MEM;
}

void pl_state_release(void)
{
	struct mtp_header *h = pl_hdr;

	pl_hdr = NULL;
	if (h)
		munmap(h, MTP_SIZE);
	if (pl_fd >= 0)
		syscall(SYS_close, pl_fd);
	pl_fd = -1;
	pl_caches_release();
}

/* Preloaded: map the state MEMTRACK_PRELOAD names; the value for pl_on. */
static int attach_state(void)
{
	uint32_t flags;
	int fd, pid;

	if (!parse_env(&fd, &pid, &flags))
		return -1;
	if (pid != getpid()) {
		/* a program the target started: not traced, nor shown the fd */
		if (is_our_fd(fd))
			syscall(SYS_close, fd);
		return -1;
	}
	if (pl_state_map(fd)) {
		syscall(SYS_close, fd);
		return -1;
	}
	return pl_state_start();
}

int pl_start(void)
{
	static int starting;
	int on;

	/* One thread starts; one that comes meanwhile is not recorded. */
	if (__atomic_exchange_n(&starting, 1, __ATOMIC_ACQ_REL))
		return __atomic_load_n(&pl_on, __ATOMIC_ACQUIRE);
	pl_real_resolve();
	on = attach_state();
	__atomic_store_n(&pl_on, on, __ATOMIC_RELEASE);
	return on;
}

static void futex(uint32_t *word, int op, uint32_t val,
		  const struct timespec *timeout)
{
	syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

/*
 * --fds at the exit: descriptors closed where no hook saw it (the close
 * system call made directly, close_range()) are not open, whatever the
 * table says: a descriptor the process no longer has is dropped.
 */
static void drop_closed_fds(void)
{
	struct mtp_block *t;
	unsigned int i;
	uint64_t j;
	int fd;

	for (i = 0; i < MTP_SHARDS; i++) {
		struct mtp_shard *sh = &pl_hdr->shards[i];

		spin_lock(&sh->lock);
		t = sh->table ? at(sh->table) : NULL;
		for (j = 0; t && j < sh->slots; j++) {
			if (t[j].addr <= MTP_TOMB || !(t[j].addr >> 62) ||
			    t[j].tgid != (uint32_t)pl_tgid)
				continue;
			fd = (int)(uint32_t)t[j].addr;
			if (syscall(SYS_fcntl, fd, F_GETFD) < 0 && errno == EBADF) {
				sh->live--;
				count(&pl_hdr->c.fds_closed_unseen);
				drop(sh, &t[j]);
			}
		}
		spin_unlock(&sh->lock);
	}
	for (i = 0; i < MTP_MAX_YOUNG && i < pl_hdr->nr_young; i++) {
		struct mtp_young *y = young_at(i);
		struct mtp_block b;

		for (j = 0; y && y->tgid == (uint32_t)pl_tgid &&
			    j < MTP_YOUNG_SLOTS; j++) {
			uint64_t addr = y->e[j].addr;

			if (addr >> 62 && addr > MTP_TOMB &&
			    syscall(SYS_fcntl, (int)(uint32_t)addr, F_GETFD) < 0 &&
			    errno == EBADF && young_take(&y->e[j], addr, &b))
				count(&pl_hdr->c.fds_closed_unseen);
		}
	}
}

/*
 * The exiting thread's frames, each with its stack pointer: the tool
 * scans its stack from the frame that called exit() up (exit's own frames
 * hold only what dead frames of the program left there).
 */
static void note_exit_stack(struct mtp_header *h)
{
	uint64_t pcs[MTP_MAX_FRAMES], sps[MTP_MAX_FRAMES], hash;
	struct pl_cache *c = pl_cache();
	struct pl_regs r;
	int n, i;

	pl_regs_here(&r);
	n = c ? pl_cfi_backtrace(&r, &c->memo, pcs, MTP_MAX_FRAMES, NULL, sps,
				 &hash) : 0;
	for (i = 0; i < n; i++) {
		h->exit_pcs[i] = pcs[i];
		h->exit_sps[i] = sps[i];
	}
	h->nr_exit_frames = (uint32_t)n;
}

void pl_exiting(void)
{
	int on = __atomic_load_n(&pl_on, __ATOMIC_ACQUIRE);
	struct timespec ts = { 60, 0 };
	struct mtp_header *h;

	if (!on && !pl_self.busy) {
		/*
		 * Never started: the program allocated nothing.  Its exit is
		 * still one the tool waits for (--scan: an empty report, as
		 * memcheck's all-zero summary).
		 */
		pl_self.busy = 1;
		on = pl_start();
		pl_self.busy = 0;
	}
	if (on <= 0)
		return;
	h = pl_hdr;
	pl_flush_calls();
	if (on & PL_FD)
		drop_closed_fds();
	if (pl_tgid != h->target)
		return;
	h->exit_tid = (int32_t)syscall(SYS_gettid);
	if (pl_flags & MTP_F_EXIT_WAIT)
		note_exit_stack(h);
	__atomic_store_n(&h->state, MTP_STATE_EXITING, __ATOMIC_RELEASE);
	futex(&h->state, FUTEX_WAKE, 1, NULL);
	if (!(pl_flags & MTP_F_EXIT_WAIT))
		return;
	/* The tool scans the memory as it is now; bounded if it died. */
	while (!__atomic_load_n(&h->tool_done, __ATOMIC_ACQUIRE))
		if (syscall(SYS_futex, &h->tool_done, FUTEX_WAIT, 0, &ts,
			    NULL, 0) && errno == ETIMEDOUT)
			break;
}

void pl_execing(bool before)
{
	struct mtp_header *h = pl_hdr;
	uint32_t i;

	if (__atomic_load_n(&pl_on, __ATOMIC_ACQUIRE) <= 0)
		return;
	if (pl_tgid == h->target) {
		__atomic_store_n(&h->state, before ? MTP_STATE_EXECED :
				 MTP_STATE_RUNNING, __ATOMIC_RELEASE);
		return;
	}
	/* a followed child: its slot, taken back if the exec fails */
	if (before) {
		i = __atomic_fetch_add(&h->nr_execed, 1, __ATOMIC_RELAXED);
		if (i < MTP_MAX_EXECED)
			__atomic_store_n(&h->execed[i], pl_tgid, __ATOMIC_RELEASE);
		return;
	}
	for (i = 0; i < MTP_MAX_EXECED; i++)
		if (__atomic_load_n(&h->execed[i], __ATOMIC_RELAXED) == pl_tgid)
			__atomic_store_n(&h->execed[i], 0, __ATOMIC_RELEASE);
}

/*
 * exit() runs the program's handlers and every object's destructors, ours
 * last (linked -z initfirst): what is outstanding now is what memcheck
 * would call leaked.  Blocks freed after this still leave the table.
 */
__attribute__((destructor)) static void pl_fini(void)
{
	pl_exiting();
}
