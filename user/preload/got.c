// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload injected (memtrack-leak -p): the GOT slots through
 * which the loaded objects call what the library hooks, pointed at the
 * hooks and, at the detach, back.  Apart from the session (inject.c): this
 * is the one place that writes the program's memory.
 *
 * A slot is taken when its relocation (a PLT slot or a GLOB_DAT, by
 * symbol name) names a hook of a kind asked for and the slot holds what
 * the name is bound to (the hook's real function), or, for a PLT slot not
 * yet bound (lazy binding), the object's own PLT code: an object whose
 * relocation is not done (another thread's dlopen under way), a name bound
 * elsewhere (another namespace's libc, a DEEPBIND object) are left alone.
 * A read-only slot (full RELRO) is made writable for the write and
 * read-only again.  Every slot taken is recorded with what it held; the
 * restore writes that back only where the slot still holds the hook, so
 * a slot the loader bound meanwhile or memory an unloaded object left is
 * not written.  Nothing here allocates: the record is a table mapped on
 * its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "arch.h"
#include "got.h"
#include "hooks.h"

struct slot {
	uint64_t addr;			/* 0: an empty entry */
	uint64_t orig;			/* what it held */
	uint64_t obj;			/* the object's load bias */
	uint16_t hook;			/* in pl_hooks */
	uint8_t ro;			/* in a read-only page */
};

static struct slot *table;
static uint64_t slots, used;		/* power of 2; taken entries */
static uint32_t lock;

static void take_lock(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void drop_lock(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

static uint64_t hash(uint64_t addr)
{
	return (addr >> 3) * 0x9e3779b97f4a7c15ULL;
}

static struct slot *lookup(uint64_t addr)
{
	uint64_t i;

	for (i = hash(addr) & (slots - 1); slots && table[i].addr;
	     i = (i + 1) & (slots - 1))
		if (table[i].addr == addr)
			return &table[i];
	return NULL;
}

static void put(struct slot *t, uint64_t n, const struct slot *s)
{
	uint64_t i;

	for (i = hash(s->addr) & (n - 1); t[i].addr; i = (i + 1) & (n - 1))
		;
	t[i] = *s;
}

/* Room for one more at half load; false if no memory. */
static bool room(void)
{
	uint64_t n = slots ? slots * 2 : 1024, i;
	struct slot *t;

	if ((used + 1) * 2 <= slots)
		return true;
	t = mmap(NULL, n * sizeof(*t), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return false;
	for (i = 0; i < slots; i++)
		if (table[i].addr)
			put(t, n, &table[i]);
	if (table)
		munmap(table, slots * sizeof(*table));
	table = t;
	slots = n;
	return true;
}

/* ---- which pages are read-only now ------------------------------------- */

/*
 * /proc/self/maps, read once per patching: an object whose RELRO pages
 * are still writable is being relocated by another thread's dlopen (the
 * loader protects them when it is done), and its protections must not be
 * touched.  Read with system calls into a mapping of its own.
 */
#define MAPS_MAX	(8U << 20)

struct maps {
	char *buf;
	size_t len;
};

static void maps_read(struct maps *m)
{
	ssize_t n;
	int fd;

	m->len = 0;
	m->buf = mmap(NULL, MAPS_MAX, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m->buf == MAP_FAILED) {
		m->buf = NULL;
		return;
	}
	fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps",
			  O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && m->len < MAPS_MAX - 1 &&
	       (n = syscall(SYS_read, fd, m->buf + m->len,
			    MAPS_MAX - 1 - m->len)) > 0)
		m->len += (size_t)n;
	if (fd >= 0)
		syscall(SYS_close, fd);
	m->buf[m->len] = '\0';
}

static void maps_free(struct maps *m)
{
	if (m->buf)
		munmap(m->buf, MAPS_MAX);
}

static uint64_t hex(const char **p)
{
	uint64_t v = 0;
	int c;

	for (;; (*p)++) {
		c = **p;
		if (c >= '0' && c <= '9')
			v = v * 16 + (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uint64_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* [lo, hi) lies in mappings that are all readable and not writable. */
static bool read_only(const struct maps *m, uint64_t lo, uint64_t hi)
{
	const char *p = m->buf;
	uint64_t a, b, covered = lo;

	while (p && *p && covered < hi) {
		a = hex(&p);
		p++;			/* '-' */
		b = hex(&p);
		p++;			/* ' ' */
		if (a <= covered && covered < b) {
			if (p[0] != 'r' || p[1] != '-')
				return false;
			covered = b;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return covered >= hi;
}

/* ---- one object ------------------------------------------------------------ */

struct object {
	uint64_t base;
	uint64_t relro_lo, relro_hi;	/* read-only after relocation */
	const ElfW(Phdr) *phdr;
	int phnum;
};

/* An address of the object's code (a PLT slot not bound yet points there). */
static bool in_code(const struct object *o, uint64_t v)
{
	int i;

	for (i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *ph = &o->phdr[i];
		uint64_t lo = o->base + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    v >= lo && v < lo + ph->p_memsz)
			return true;
	}
	return false;
}

/* The dynamic section's pointers: relocated in place by glibc, or not. */
static uint64_t dyn_ptr(const struct object *o, uint64_t p)
{
	return p < o->base ? p + o->base : p;
}

struct scan {
	uint32_t kinds;			/* 1 << PL_HOOK_*: what to take */
	uint64_t self;			/* an address of this library */
	struct maps maps;
	unsigned int taken;
	int err;
};

static bool ro_slot(const struct object *o, uint64_t addr)
{
	return addr >= o->relro_lo && addr < o->relro_hi;
}

/* The relocations rel[0..n) of o: the slots to take, taken. */
static void take_slots(struct scan *sc, const struct object *o,
		       const mt_rela_t *rel, uint64_t n, const ElfW(Sym) *sym,
		       const char *str, uint64_t strsz)
{
	uint64_t i, v;

	for (i = 0; i < n; i++) {
		uint32_t type = MT_RELA_TYPE(rel[i].r_info);
		const ElfW(Sym) *s = &sym[MT_RELA_SYM(rel[i].r_info)];
		const struct pl_hook *h;
		struct slot e;
		void *real;

		if ((type != MT_R_JUMP_SLOT && type != MT_R_GLOB_DAT) ||
		    !MT_RELA_SYM(rel[i].r_info) || s->st_name >= strsz)
			continue;
		h = pl_hook_find(str + s->st_name);
		if (!h || !(sc->kinds & (1U << h->kind)))
			continue;
		real = __atomic_load_n(h->real, __ATOMIC_RELAXED);
		e.addr = o->base + rel[i].r_offset;
		if (!real || lookup(e.addr))
			continue;
		v = *(const uint64_t *)e.addr;
		if (v != (uint64_t)real &&
		    !(type == MT_R_JUMP_SLOT && in_code(o, v)))
			continue;
		if (!room()) {
			sc->err = -ENOMEM;
			return;
		}
		e.orig = v;
		e.obj = o->base;
		e.hook = (uint16_t)(h - pl_hooks);
		e.ro = ro_slot(o, e.addr);
		put(table, slots, &e);
		used++;
		__atomic_store_n((uint64_t *)e.addr, (uint64_t)h->hook,
				 __ATOMIC_RELEASE);
		sc->taken++;
	}
}

static bool mine(const struct object *o, uint64_t self)
{
	return in_code(o, self);
}

/* Another copy of this library (preloaded, or an earlier injection). */
static bool a_copy(const char *name)
{
	size_t n = strlen(name);
	static const char lib[] = "libmemtrack-preload.so";

	return !strncmp(name, "/proc/self/fd/", 14) ||
	       (n >= sizeof(lib) - 1 && !strcmp(name + n - (sizeof(lib) - 1), lib));
}

static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *sc = arg;
	struct object o = { .base = info->dlpi_addr, .phdr = info->dlpi_phdr,
			    .phnum = info->dlpi_phnum };
	const ElfW(Dyn) *dyn = NULL, *d;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	uint64_t strsz = 0, jmprel = 0, pltsz = 0, rela = 0, relasz = 0;
	long page = sysconf(_SC_PAGESIZE);
	bool relro = false;
	int i;

	(void)size;
	if (mine(&o, sc->self) || a_copy(info->dlpi_name))
		return 0;
	for (i = 0; i < o.phnum; i++) {
		const ElfW(Phdr) *ph = &o.phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(o.base + ph->p_vaddr);
		if (ph->p_type == PT_GNU_RELRO) {
			/* as the loader protects it: whole pages only */
			o.relro_lo = (o.base + ph->p_vaddr) & ~(page - 1);
			o.relro_hi = (o.base + ph->p_vaddr + ph->p_memsz) &
				     ~(page - 1);
			relro = o.relro_hi > o.relro_lo;
		}
	}
	for (d = dyn; d && d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			sym = (const ElfW(Sym) *)dyn_ptr(&o, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			str = (const char *)dyn_ptr(&o, d->d_un.d_ptr);
			break;
		case DT_STRSZ:
			strsz = d->d_un.d_val;
			break;
		case DT_JMPREL:
			jmprel = dyn_ptr(&o, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			pltsz = d->d_un.d_val;
			break;
		case DT_RELA:
			rela = dyn_ptr(&o, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			relasz = d->d_un.d_val;
			break;
		}
	}
	if (!sym || !str)
		return 0;
	/* not relocated yet (another thread's dlopen): for a later pass */
	if (relro && !read_only(&sc->maps, o.relro_lo, o.relro_hi))
		return 0;
	if (relro && mprotect((void *)o.relro_lo, o.relro_hi - o.relro_lo,
			      PROT_READ | PROT_WRITE)) {
		sc->err = -errno;
		return 0;
	}
	if (jmprel)
		take_slots(sc, &o, (const mt_rela_t *)jmprel,
			   pltsz / sizeof(mt_rela_t), sym, str, strsz);
	if (rela)
		take_slots(sc, &o, (const mt_rela_t *)rela,
			   relasz / sizeof(mt_rela_t), sym, str, strsz);
	if (relro)
		mprotect((void *)o.relro_lo, o.relro_hi - o.relro_lo, PROT_READ);
	return 0;
}

int pl_got_patch(uint32_t kinds, const void *self)
{
	struct scan sc = { .self = (uint64_t)self };
	int k;

	take_lock();
	maps_read(&sc.maps);
	/* a kind at a time, releases first (hooks.h) */
	for (k = 0; k < PL_HOOK_KINDS && !sc.err && sc.maps.buf; k++) {
		sc.kinds = kinds & (1U << k);
		if (sc.kinds)
			dl_iterate_phdr(scan_object, &sc);
	}
	if (!sc.maps.buf)
		sc.err = -ENOMEM;
	maps_free(&sc.maps);
	drop_lock();
	return sc.err ? sc.err : (int)sc.taken;
}

/* ---- restore --------------------------------------------------------------- */

/* A word of this process, read without faulting if it is gone. */
static bool peek(uint64_t addr, uint64_t *v)
{
	struct iovec l = { v, sizeof(*v) }, r = { (void *)addr, sizeof(*v) };
	ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);

	if (n == (ssize_t)sizeof(*v))
		return true;
	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		*v = *(const uint64_t *)addr;	/* forbidden here: trusted */
		return true;
	}
	return false;
}

static void restore_slot(struct slot *e)
{
	uint64_t page = e->addr & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1), v;

	if (!peek(e->addr, &v) || v != (uint64_t)pl_hooks[e->hook].hook)
		return;		/* bound anew, or no longer there */
	if (e->ro && mprotect((void *)page, 1, PROT_READ | PROT_WRITE))
		return;
	__atomic_store_n((uint64_t *)e->addr, e->orig, __ATOMIC_RELEASE);
	if (e->ro)
		mprotect((void *)page, 1, PROT_READ);
}

unsigned int pl_got_restore(void)
{
	unsigned int n = 0;
	uint64_t i;
	int k;

	take_lock();
	/* the reverse of the patching order: releases last */
	for (k = PL_HOOK_KINDS - 1; k >= 0; k--)
		for (i = 0; i < slots; i++)
			if (table[i].addr && pl_hooks[table[i].hook].kind ==
			    (enum pl_hook_kind)k) {
				restore_slot(&table[i]);
				n++;
			}
	if (table)
		munmap(table, slots * sizeof(*table));
	table = NULL;
	slots = used = 0;
	drop_lock();
	return n;
}

/* ---- objects unloaded --------------------------------------------------- */

struct live {
	uint64_t *bases;
	unsigned int n, max;
};

static int note_live(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct live *l = arg;

	(void)size;
	if (l->n < l->max)
		l->bases[l->n++] = info->dlpi_addr;
	return 0;
}

void pl_got_forget_gone(void)
{
	uint64_t bases[1024], i, n = slots;
	struct live l = { bases, 0, 1024 };
	struct slot *t, *old = table;
	unsigned int j;

	take_lock();
	dl_iterate_phdr(note_live, &l);
	t = MAP_FAILED;
	if (l.n < l.max && n)
		t = mmap(NULL, n * sizeof(*t), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t != MAP_FAILED) {
		/* the slots of objects still there, in a table of their own */
		used = 0;
		for (i = 0; i < n; i++) {
			if (!old[i].addr)
				continue;
			for (j = 0; j < l.n && bases[j] != old[i].obj; j++)
				;
			if (j < l.n) {
				put(t, n, &old[i]);
				used++;
			}
		}
		table = t;
		munmap(old, n * sizeof(*old));
	}
	drop_lock();
}
