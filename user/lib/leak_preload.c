// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: memtrack-leak's in-process engine, the tool's side.
 *
 * The program runs with libmemtrack-preload.so, which records every block
 * and its stack in a memfd made here (user/preload/memtrack_preload.h).
 * This side starts the program, waits for it, and turns the state into
 * the rows the module's engine gives (struct mt_leak_stack, struct
 * memtrack_leak_block), so every report is made by the same code.  The
 * state is read as the program left it and may be garbage if the program
 * scribbled on it: every offset and count is checked before use.
 */
#define _GNU_SOURCE	/* memfd_create, pipe2 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "libmemtrack.h"
#include "internal.h"
#include "memtrack_preload.h"
#include "grow.h"

struct mt_preload {
	int fd;
	uint32_t flags;
	pid_t target;
	bool live_fds;			/* descriptors checked against the target's */
	struct mtp_header *h;
	struct mtp_block *copy;		/* a shard's table, read (shard_copy()) */
	uint64_t copy_slots;
};

struct mt_preload *mt_preload_new(uint32_t flags)
{
	struct mt_preload *p = calloc(1, sizeof(*p));

	if (!p) {
		mt_seterr(-ENOMEM, "out of memory");
		return NULL;
	}
	p->flags = flags;
	p->fd = memfd_create(MTP_MEMFD_NAME, MFD_CLOEXEC);
	if (p->fd < 0 || ftruncate(p->fd, (off_t)MTP_SIZE)) {
		mt_seterr(-errno, "memfd for the traced program's state: %s",
			  strerror(errno));
		goto fail;
	}
	p->h = mmap(NULL, MTP_SIZE, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_NORESERVE, p->fd, 0);
	if (p->h == MAP_FAILED) {
		p->h = NULL;
		mt_seterr(-errno, "mapping the traced program's state: %s",
			  strerror(errno));
		goto fail;
	}
	p->h->magic = MTP_MAGIC;
	p->h->version = MTP_VERSION;
	p->h->size = MTP_SIZE;
	p->h->flags = flags;
	p->h->arena = sizeof(*p->h);
	p->h->now_ns = mt_mono_ns();
	return p;
fail:
	mt_preload_free(p);
	return NULL;
}

struct mt_preload *mt_preload_open_fd(int fd, pid_t target, uint32_t flags)
{
	struct mt_preload *p = calloc(1, sizeof(*p));

	if (!p) {
		mt_seterr(-ENOMEM, "out of memory");
		return NULL;
	}
	p->fd = fd;
	p->flags = flags;
	p->target = target;
	p->h = mmap(NULL, MTP_SIZE, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (p->h == MAP_FAILED || p->h->magic != MTP_MAGIC ||
	    p->h->version != MTP_VERSION) {
		if (p->h == MAP_FAILED)
			mt_seterr(-errno, "mapping %d's state: %s", (int)target,
				  strerror(errno));
		else
			mt_seterr(-EPROTO, "%d's state is not of this version",
				  (int)target);
		if (p->h == MAP_FAILED)
			p->h = NULL;
		mt_preload_free(p);
		return NULL;
	}
	return p;
}

struct mtp_header *mt_preload_header(struct mt_preload *p)
{
	return p->h;
}

void mt_preload_live_fds(struct mt_preload *p, bool on)
{
	p->live_fds = on;
}

void mt_preload_tick(struct mt_preload *p)
{
	__atomic_store_n(&p->h->now_ns, mt_mono_ns(), __ATOMIC_RELAXED);
}

void mt_preload_free(struct mt_preload *p)
{
	if (!p)
		return;
	if (p->h)
		munmap(p->h, MTP_SIZE);
	if (p->fd >= 0)
		close(p->fd);
	free(p->copy);
	free(p);
}

/* LD_PRELOAD with lib first: the program's own preloads still come after. */
static int set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	int err;

	if (!old || !*old)
		return setenv("LD_PRELOAD", lib, 1);
	if (asprintf(&v, "%s:%s", lib, old) < 0)
		return -1;
	err = setenv("LD_PRELOAD", v, 1);
	free(v);
	return err;
}

/*
 * The child: the state's memfd on a descriptor far from the ones the
 * program will open (it keeps it: the library closes it when it is not
 * the target), the environment, then the program.  An exec failure goes
 * to the parent through ep.
 */
static __attribute__((noreturn)) void child(struct mt_preload *p,
					    const char *lib,
					    char *const argv[], int ep)
{
	struct rlimit rl;
	char env[64];
	int fd, min = 1000, err;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur <= 1024)
		min = (int)rl.rlim_cur / 2;
	fd = fcntl(p->fd, F_DUPFD, min);
	p->h->target = getpid();
	snprintf(env, sizeof(env), "%d:%d:%x", fd, (int)getpid(), p->flags);
	if (fd < 0 || setenv(MTP_ENV, env, 1) || set_preload(lib)) {
		err = errno;
	} else {
		execvp(argv[0], argv);
		err = errno;
	}
	warnx("%s: %s", argv[0], strerror(err));
	if (write(ep, &err, sizeof(err)) < 0)
		err = EIO;
	_exit(err == ENOENT ? 127 : 126);
}

int mt_preload_start(struct mt_preload *p, const char *lib,
		     char *const argv[], pid_t *pid, int *status)
{
	int ep[2], err = 0, st;
	pid_t c;

	*status = 0;
	if (access(lib, R_OK))
		return mt_seterr(-errno, "%s: %s", lib, strerror(errno));
	if (pipe2(ep, O_CLOEXEC))
		return mt_seterr(-errno, "pipe: %s", strerror(errno));
	c = fork();
	if (c < 0) {
		err = errno;
		close(ep[0]);
		close(ep[1]);
		return mt_seterr(-err, "fork: %s", strerror(err));
	}
	if (!c)
		child(p, lib, argv, ep[1]);
	close(ep[1]);
	while (read(ep[0], &err, sizeof(err)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (err) {
		while (waitpid(c, &st, 0) < 0 && errno == EINTR)
			;
		*status = st;
		return mt_seterr(-ENOEXEC, "%s did not start", argv[0]);
	}
	p->target = c;
	*pid = c;
	return 0;
}

static void futex_wait(uint32_t *word, uint32_t val, long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	syscall(SYS_futex, word, FUTEX_WAIT, val, &ts, NULL, 0);
}

int mt_preload_wait(struct mt_preload *p, pid_t pid,
		    volatile sig_atomic_t *fwd, int *status)
{
	bool scan = p->flags & MT_PRELOAD_F_EXIT_WAIT;
	uint32_t state;
	pid_t r;

	for (;;) {
		if (fwd && *fwd) {
			kill(pid, *fwd);
			*fwd = 0;
		}
		state = __atomic_load_n(&p->h->state, __ATOMIC_ACQUIRE);
		if (scan && state == MTP_STATE_EXITING &&
		    !__atomic_load_n(&p->h->tool_done, __ATOMIC_ACQUIRE))
			return MT_PRELOAD_AT_EXIT;
		r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return mt_seterr(-errno, "waitpid: %s", strerror(errno));
		/*
		 * The blocks' clock, then a wake at the exit (with a scan),
		 * a signal to pass on, or the next tick.
		 */
		__atomic_store_n(&p->h->now_ns, mt_mono_ns(), __ATOMIC_RELAXED);
		if (!r)
			futex_wait(&p->h->state, state, MTP_CLOCK_MS);
	}
}

void mt_preload_resume(struct mt_preload *p)
{
	__atomic_store_n(&p->h->tool_done, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &p->h->tool_done, FUTEX_WAKE, 1, NULL, NULL, 0);
}

bool mt_preload_execed(struct mt_preload *p)
{
	return __atomic_load_n(&p->h->state, __ATOMIC_ACQUIRE) ==
	       MTP_STATE_EXECED;
}

/* ---- reading the state ------------------------------------------------------ */

/* The object of n bytes at off, or NULL if it is not inside the state. */
static void *at(struct mt_preload *p, uint64_t off, uint64_t n)
{
	if (off < sizeof(*p->h) || off > MTP_SIZE || n > MTP_SIZE - off)
		return NULL;
	return (char *)p->h + off;
}

static const struct mtp_stack *stack_of(struct mt_preload *p, uint32_t id)
{
	const struct mtp_stack *s;

	if (!id || id > MTP_MAX_STACKS)
		return NULL;
	s = at(p, p->h->stack_off[id], sizeof(*s));
	if (!s || s->nr_frames > MTP_MAX_FRAMES ||
	    !at(p, p->h->stack_off[id], sizeof(*s) + s->nr_frames * 8ULL))
		return NULL;
	return s;
}

/* A followed child that exec'd: its blocks went with its old program. */
static bool execed(struct mt_preload *p, uint32_t tgid)
{
	uint32_t i, n = p->h->nr_execed;

	for (i = 0; i < n && i < MTP_MAX_EXECED; i++)
		if ((uint32_t)p->h->execed[i] == tgid)
			return true;
	return false;
}

/*
 * Shard i's table as it was between two of its rehashes (the seqcount in
 * struct mtp_shard), copied into p->copy: read in place, a rehash could
 * hand the table to another shard, which clears it, while it was read.
 * A program that rehashes on every try (or stopped in the middle of one)
 * gets the last copy: rows of that moment, as before the count.
 */
#define SHARD_TRIES	16

static int shard_copy(struct mt_preload *p, unsigned int i,
		      struct mtp_block **out, uint64_t *slots)
{
	const struct mtp_shard *sh = &p->h->shards[i];
	const struct mtp_block *t;
	uint32_t seq;
	uint64_t table, n;
	int tries;

	for (tries = 0;; tries++) {
		seq = __atomic_load_n(&sh->seq, __ATOMIC_ACQUIRE);
		if ((seq & 1) && tries < SHARD_TRIES) {
			sched_yield();
			continue;
		}
		table = __atomic_load_n(&sh->table, __ATOMIC_RELAXED);
		n = __atomic_load_n(&sh->slots, __ATOMIC_RELAXED);
		*slots = 0;
		if (!table)
			return 0;
		t = n && !(n & (n - 1)) ? at(p, table, n * sizeof(*t)) : NULL;
		if (!t && tries < SHARD_TRIES &&
		    __atomic_load_n(&sh->seq, __ATOMIC_ACQUIRE) != seq)
			continue;	/* read during a rehash */
		if (!t)
			return mt_seterr(-EBADMSG, "the traced program's state is corrupt (shard %u)", i);
		if (n > p->copy_slots) {
			void *c = realloc(p->copy, n * sizeof(*t));

			if (!c)
				return mt_seterr(-ENOMEM, "out of memory");
			p->copy = c;
			p->copy_slots = n;
		}
		memcpy(p->copy, t, n * sizeof(*t));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&sh->seq, __ATOMIC_RELAXED) == seq ||
		    tries >= SHARD_TRIES)
			break;
	}
	*out = p->copy;
	*slots = n;
	return 0;
}

/*
 * Calls f on every outstanding block: of every shard, then of every
 * thread's young blocks.  (A block caught between the two when the
 * program ended is in both: the callers count it once.)
 */
static int each_block(struct mt_preload *p,
		      int (*f)(const struct mtp_block *b, void *arg), void *arg)
{
	unsigned int i;
	uint64_t j;
	int err;

	for (i = 0; i < p->h->nr_young && i < MTP_MAX_YOUNG; i++) {
		uint64_t off = __atomic_load_n(&p->h->young[i], __ATOMIC_ACQUIRE);
		const struct mtp_young *y = at(p, off, sizeof(*y));

		/*
		 * 0: a thread's buffer counted in nr_young but not published
		 * yet (young_get() in preload/state.c counts it first), or
		 * never, if the arena was full: nothing in it to report.
		 */
		if (!off)
			continue;
		if (!y)
			return mt_seterr(-EBADMSG, "the traced program's state is corrupt (young %u)", i);
		for (j = 0; j < MTP_YOUNG_SLOTS; j++)
			if (y->e[j].addr > MTP_TOMB && !execed(p, y->e[j].tgid) &&
			    (err = f(&y->e[j], arg)))
				return err;
	}

	for (i = 0; i < MTP_SHARDS; i++) {
		struct mtp_block *t;
		uint64_t slots;

		err = shard_copy(p, i, &t, &slots);
		if (err)
			break;
		for (j = 0; j < slots && !err; j++)
			if (t[j].addr > MTP_TOMB && !execed(p, t[j].tgid))
				err = f(&t[j], arg);
		if (err)
			break;
	}
	return err;
}

/* Rows being built: one per (stack, process). */
struct rows {
	struct mt_preload *p;
	uint64_t min_time;		/* blocks younger: left out */
	struct mt_leak_stack *v;
	size_t n, cap;
	uint32_t *first;		/* by stack id: 1 + index of its first row */
	/* by stack id: calls the threads have not added to its totals yet */
	uint64_t *pend_calls, *pend_bytes;
};

/* The calls each thread still holds (struct mtp_young), by stack id. */
static void pending_calls(struct rows *r, uint32_t nr)
{
	const struct mtp_header *h = r->p->h;
	unsigned int i;

	for (i = 0; i < h->nr_young && i < MTP_MAX_YOUNG; i++) {
		const struct mtp_young *y = at(r->p, h->young[i], sizeof(*y));
		uint32_t id = y ? y->calls_id : 0;

		if (id && id <= nr && y->calls) {
			r->pend_calls[id] += y->calls;
			r->pend_bytes[id] += y->call_bytes;
		}
	}
}

static struct mt_leak_stack *row_get(struct rows *r, uint32_t id, pid_t tgid)
{
	const struct mtp_stack *s = stack_of(r->p, id);
	struct mt_leak_stack *row;
	size_t i;

	if (!s)
		return NULL;
	for (i = r->first[id]; i && i <= r->n; i++) {
		if (r->v[i - 1].stack_id != id)
			break;
		if (r->v[i - 1].tgid == tgid)
			return &r->v[i - 1];
	}
	if (r->first[id] && r->v[r->n - 1].stack_id != id)
		/* rows of a stack are kept together: append is not possible */
		return NULL;
	if (mt_grow((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v), 256))
		return NULL;
	row = &r->v[r->n++];
	memset(row, 0, sizeof(*row));
	row->stack_id = id;
	row->tgid = tgid;
	row->api = s->api;
	row->nr_frames = s->nr_frames;
	memcpy(row->frames, s->frames, s->nr_frames * sizeof(row->frames[0]));
	if (!r->first[id]) {
		/* what is the stack's, not a process's: on its first row */
		r->first[id] = (uint32_t)r->n;
		row->total_allocs = s->total_allocs + r->pend_calls[id];
		row->total_bytes = s->total_bytes + r->pend_bytes[id];
		row->mismatched = s->mismatched;
		row->free_api = s->free_api;
		row->free_stack_id = s->free_stack_id;
	}
	return row;
}

static int add_block(const struct mtp_block *b, void *arg)
{
	struct rows *r = arg;
	struct mt_leak_stack *row;

	if (b->time_ns > r->min_time || !b->stack_id)
		return 0;
	row = row_get(r, b->stack_id, (pid_t)b->tgid);
	if (!row)
		return 0;
	if (!row->blocks || b->time_ns < row->oldest_ns)
		row->oldest_ns = b->time_ns;
	row->blocks++;
	row->bytes += b->size;
	return 0;
}

/* Two keys in order: a1 before a2, b1 before b2. */
static int cmp2(uint64_t a1, uint64_t b1, uint64_t a2, uint64_t b2)
{
	if (a1 != a2)
		return a1 < a2 ? -1 : 1;
	return b1 < b2 ? -1 : b1 > b2;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct mt_leak_stack *x = a, *y = b;

	return cmp2(x->stack_id, (uint32_t)x->tgid, y->stack_id, (uint32_t)y->tgid);
}

/*
 * Blocks grouped by stack: sorted by stack id first, so that each stack's
 * rows are adjacent when row_get() appends them.
 */
static int cmp_block_stack(const void *a, const void *b)
{
	const struct mtp_block *x = a, *y = b;

	return cmp2(x->stack_id, x->tgid, y->stack_id, y->tgid);
}

struct collect {
	struct mtp_block *v;
	size_t n, cap;
};

static int collect_block(const struct mtp_block *b, void *arg)
{
	struct collect *c = arg;

	if (mt_grow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v), 1024))
		return mt_seterr(-ENOMEM, "out of memory");
	c->v[c->n++] = *b;
	return 0;
}

static int cmp_block_addr(const void *a, const void *b)
{
	const struct mtp_block *x = a, *y = b;

	return cmp2(x->tgid, x->addr, y->tgid, y->addr);
}

/* Each (process, address) once. */
static void unique_blocks(struct collect *c)
{
	size_t i, k = 0;

	qsort(c->v, c->n, sizeof(*c->v), cmp_block_addr);
	for (i = 0; i < c->n; i++)
		if (!k || cmp_block_addr(&c->v[k - 1], &c->v[i]))
			c->v[k++] = c->v[i];
	c->n = k;
}

/*
 * A descriptor of the target that a raw close or close_range() took away
 * without a hook seeing it: not open, whatever the state says.
 */
static void drop_closed(struct collect *c)
{
	char path[64];
	size_t i, k = 0;

	for (i = 0; i < c->n; i++) {
		const struct mtp_block *b = &c->v[i];

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)b->tgid,
			 (int)(uint32_t)b->addr);
		if (b->addr >> 62 && access(path, F_OK) && errno == ENOENT)
			continue;
		c->v[k++] = *b;
	}
	c->n = k;
}

int mt_preload_stacks(struct mt_preload *p, uint32_t min_age_ms, bool all,
		      struct mt_leak_stack **out, size_t *n)
{
	uint32_t nr = __atomic_load_n(&p->h->nr_stacks, __ATOMIC_ACQUIRE), id;
	struct rows r = { .p = p, .min_time = mt_mono_ns() - min_age_ms * 1000000ULL };
	struct collect c = { 0 };
	const struct mtp_stack *s;
	size_t i;
	int err;

	if (nr > MTP_MAX_STACKS)
		nr = MTP_MAX_STACKS;
	r.first = calloc(nr + 1, sizeof(*r.first));
	r.pend_calls = calloc(nr + 1, sizeof(*r.pend_calls));
	r.pend_bytes = calloc(nr + 1, sizeof(*r.pend_bytes));
	err = r.first && r.pend_calls && r.pend_bytes ?
	      each_block(p, collect_block, &c) :
	      mt_seterr(-ENOMEM, "out of memory");
	if (err)
		goto out;
	pending_calls(&r, nr);
	unique_blocks(&c);
	if (p->live_fds)
		drop_closed(&c);
	qsort(c.v, c.n, sizeof(*c.v), cmp_block_stack);
	for (i = 0; i < c.n; i++)
		if (c.v[i].stack_id <= nr)
			add_block(&c.v[i], &r);
	/* stacks of no block: mismatched ones, freeing ones, and with all any */
	for (id = 1; id <= nr; id++) {
		s = stack_of(p, id);
		if (!s || r.first[id])
			continue;
		if (all ? s->total_allocs || r.pend_calls[id] || s->mismatched :
			  s->mismatched)
			row_get(&r, id, p->target);
		if (s->mismatched && s->free_stack_id <= nr &&
		    !r.first[s->free_stack_id])
			row_get(&r, s->free_stack_id, p->target);
	}
	qsort(r.v, r.n, sizeof(*r.v), cmp_rows);
	*out = r.v;
	*n = r.n;
	r.v = NULL;
out:
	free(r.v);
	free(r.first);
	free(r.pend_calls);
	free(r.pend_bytes);
	free(c.v);
	return err;
}

struct blocks_of {
	pid_t pid;
	struct collect c;
};

static int block_of(const struct mtp_block *b, void *arg)
{
	struct blocks_of *bo = arg;

	if ((pid_t)b->tgid != bo->pid || b->addr >> 62)
		return 0;
	return collect_block(b, &bo->c);
}

int mt_preload_blocks(struct mt_preload *p, pid_t pid,
		      struct memtrack_leak_block **out, size_t *n)
{
	struct blocks_of bo = { .pid = pid };
	struct memtrack_leak_block *v;
	const struct mtp_stack *s;
	size_t i;
	int err;

	err = each_block(p, block_of, &bo);
	if (!err)
		unique_blocks(&bo.c);
	v = err ? NULL : calloc(bo.c.n ? bo.c.n : 1, sizeof(*v));
	if (!err && !v)
		err = mt_seterr(-ENOMEM, "out of memory");
	for (i = 0; !err && i < bo.c.n; i++) {
		v[i].addr = bo.c.v[i].addr;
		v[i].size = bo.c.v[i].size;
		v[i].time_ns = bo.c.v[i].time_ns;
		v[i].stack_id = bo.c.v[i].stack_id;
		s = stack_of(p, v[i].stack_id);
		v[i].api = s ? s->api : 0;
	}
	free(bo.c.v);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = bo.c.n;
	return 0;
}

struct mt_symbolizer *mt_preload_symbolizer(struct mt_preload *p)
{
	uint32_t n = __atomic_load_n(&p->h->nr_objects, __ATOMIC_ACQUIRE), i, k;
	struct mt_sym_object *o;
	struct mt_symbolizer *s;
	size_t m = 0;

	if (n > MTP_MAX_OBJECTS)
		n = MTP_MAX_OBJECTS;
	o = calloc(n ? n : 1, sizeof(*o));
	if (!o) {
		mt_seterr(-ENOMEM, "out of memory");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		struct mtp_object *ob = &p->h->objects[i];

		ob->path[sizeof(ob->path) - 1] = '\0';
		if (ob->path[0] != '/')
			continue;	/* [vdso] and the like: no file */
		/* an object seen by several processes (-f) or ranges: once */
		for (k = 0; k < m; k++)
			if (o[k].base == ob->base && !strcmp(o[k].path, ob->path))
				break;
		if (k == m)
			o[m++] = (struct mt_sym_object){ ob->path, ob->base };
	}
	s = mt_sym_open_objects(o, m);
	free(o);
	return s;
}

int mt_preload_stats(struct mt_preload *p, struct memtrack_leak_stats *st)
{
	const struct mtp_counters *c = &p->h->c;

	memset(st, 0, sizeof(*st));
	st->unknown_frees = c->unknown_frees;
	st->mismatched_frees = c->mismatched_frees;
	st->dropped_allocs = c->dropped_allocs;
	st->dropped_stacks = c->dropped_stacks;
	st->nr_stacks = p->h->nr_stacks;
	st->unknown_closes = c->unknown_closes;
	st->fds_closed_unseen = c->fds_closed_unseen;
	return 0;
}

int mt_preload_exit_stack(struct mt_preload *p, pid_t *tid, uint64_t *pcs,
			  uint64_t *sps, size_t max)
{
	uint32_t i, n = p->h->nr_exit_frames;

	if (n > MTP_MAX_FRAMES)
		n = MTP_MAX_FRAMES;
	for (i = 0; i < n && i < max; i++) {
		pcs[i] = p->h->exit_pcs[i];
		sps[i] = p->h->exit_sps[i];
	}
	*tid = p->h->exit_tid;
	return (int)i;
}

int mt_preload_by_lib(struct mt_preload *p, const struct mt_leak_stack *v,
		      size_t n, struct mt_bylib_row **out, size_t *nrows)
{
	uint32_t i, nobj = __atomic_load_n(&p->h->nr_objects, __ATOMIC_ACQUIRE);
	struct mt_procmap *segs;
	size_t k = 0;
	int err;

	if (nobj > MTP_MAX_OBJECTS)
		nobj = MTP_MAX_OBJECTS;
	segs = calloc(nobj ? nobj : 1, sizeof(*segs));
	if (!segs)
		return mt_seterr(-ENOMEM, "out of memory");
	for (i = 0; i < nobj; i++) {
		struct mtp_object *o = &p->h->objects[i];

		o->path[sizeof(o->path) - 1] = '\0';
		segs[k].start = o->lo;
		segs[k].end = o->hi;
		segs[k++].path = o->path;	/* borrowed: not freed below */
	}
	err = mt_by_lib_segs(segs, k, v, n, out, nrows);
	free(segs);
	return err;
}
