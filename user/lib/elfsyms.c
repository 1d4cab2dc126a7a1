// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: find the allocator entry points in the objects a process has
 * mapped, as (path, file offset, API) triples for MEMTRACK_CMD_LEAK_ATTACH.
 *
 * /proc/PID/maps gives the mapped files; libelf reads each one's .dynsym and
 * .symtab.  A defined GLOBAL/WEAK function whose name is an allocator entry
 * point becomes a probe at the file offset of st_value, through the PT_LOAD
 * segment that holds it (offset = st_value - p_vaddr + p_offset).
 * The injector finds symbols by name the same way (mt_elf_syms()), also
 * in an object's separate debug file: libc's internals (the allocator's)
 * are named only there.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "libmemtrack.h"
#include "internal.h"
#include "grow.h"
#include "arch.h"

struct entry_point {
	const char *name;
	uint32_t api;
};

static const struct entry_point entry_points[] = {
	/* libc */
	{ "malloc", MEMTRACK_API_MALLOC },
	{ "calloc", MEMTRACK_API_CALLOC },
	{ "realloc", MEMTRACK_API_REALLOC },
	{ "reallocarray", MEMTRACK_API_REALLOCARRAY },
	{ "free", MEMTRACK_API_FREE },
	{ "posix_memalign", MEMTRACK_API_POSIX_MEMALIGN },
	{ "aligned_alloc", MEMTRACK_API_ALIGNED_ALLOC },
	{ "memalign", MEMTRACK_API_MEMALIGN },
	{ "valloc", MEMTRACK_API_VALLOC },
	{ "pvalloc", MEMTRACK_API_PVALLOC },
	/* libstdc++: operator new / new[] (plain, nothrow, aligned) */
	{ "_Znwm", MEMTRACK_API_NEW },
	{ "_ZnwmRKSt9nothrow_t", MEMTRACK_API_NEW },
	{ "_ZnwmSt11align_val_t", MEMTRACK_API_NEW },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", MEMTRACK_API_NEW },
	{ "_Znam", MEMTRACK_API_NEW_ARRAY },
	{ "_ZnamRKSt9nothrow_t", MEMTRACK_API_NEW_ARRAY },
	{ "_ZnamSt11align_val_t", MEMTRACK_API_NEW_ARRAY },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", MEMTRACK_API_NEW_ARRAY },
	/* operator delete / delete[] (plain, sized, aligned, nothrow) */
	{ "_ZdlPv", MEMTRACK_API_DELETE },
	{ "_ZdlPvm", MEMTRACK_API_DELETE },
	{ "_ZdlPvSt11align_val_t", MEMTRACK_API_DELETE },
	{ "_ZdlPvmSt11align_val_t", MEMTRACK_API_DELETE },
	{ "_ZdlPvRKSt9nothrow_t", MEMTRACK_API_DELETE },
	{ "_ZdlPvSt11align_val_tRKSt9nothrow_t", MEMTRACK_API_DELETE },
	{ "_ZdaPv", MEMTRACK_API_DELETE_ARRAY },
	{ "_ZdaPvm", MEMTRACK_API_DELETE_ARRAY },
	{ "_ZdaPvSt11align_val_t", MEMTRACK_API_DELETE_ARRAY },
	{ "_ZdaPvmSt11align_val_t", MEMTRACK_API_DELETE_ARRAY },
	{ "_ZdaPvRKSt9nothrow_t", MEMTRACK_API_DELETE_ARRAY },
	{ "_ZdaPvSt11align_val_tRKSt9nothrow_t", MEMTRACK_API_DELETE_ARRAY },
};

/*
 * libc's descriptor calls.  glibc's own callers (fopen through __open)
 * enter the same code as the public symbols, so the probe on the address
 * catches them too; its *_nocancel variants (opendir) are not probed.
 */
static const struct entry_point fd_entry_points[] = {
	{ "open", MEMTRACK_API_OPEN },
	{ "open64", MEMTRACK_API_OPEN },
	{ "openat", MEMTRACK_API_OPEN },
	{ "openat64", MEMTRACK_API_OPEN },
	{ "creat", MEMTRACK_API_OPEN },
	{ "creat64", MEMTRACK_API_OPEN },
	{ "socket", MEMTRACK_API_SOCKET },
	{ "socketpair", MEMTRACK_API_SOCKETPAIR },
	{ "pipe", MEMTRACK_API_PIPE },
	{ "pipe2", MEMTRACK_API_PIPE },
	{ "dup", MEMTRACK_API_DUP },
	{ "dup2", MEMTRACK_API_DUP },
	{ "dup3", MEMTRACK_API_DUP },
	{ "accept", MEMTRACK_API_ACCEPT },
	{ "accept4", MEMTRACK_API_ACCEPT },
	{ "eventfd", MEMTRACK_API_EVENTFD },
	{ "memfd_create", MEMTRACK_API_MEMFD },
	{ "epoll_create", MEMTRACK_API_EPOLL },
	{ "epoll_create1", MEMTRACK_API_EPOLL },
	{ "timerfd_create", MEMTRACK_API_TIMERFD },
	{ "signalfd", MEMTRACK_API_SIGNALFD },
	{ "inotify_init", MEMTRACK_API_INOTIFY },
	{ "inotify_init1", MEMTRACK_API_INOTIFY },
	{ "fcntl", MEMTRACK_API_FCNTL },
	{ "fcntl64", MEMTRACK_API_FCNTL },
	{ "close", MEMTRACK_API_CLOSE },
};

struct ep_table {
	const struct entry_point *v;
	size_t n;
};

static const struct ep_table alloc_table = {
	entry_points, sizeof(entry_points) / sizeof(entry_points[0])
};
static const struct ep_table fd_table = {
	fd_entry_points, sizeof(fd_entry_points) / sizeof(fd_entry_points[0])
};

static const char *const api_names[__MEMTRACK_API_MAX] = {
	[MEMTRACK_API_MALLOC] = "malloc",
	[MEMTRACK_API_CALLOC] = "calloc",
	[MEMTRACK_API_REALLOC] = "realloc",
	[MEMTRACK_API_REALLOCARRAY] = "reallocarray",
	[MEMTRACK_API_FREE] = "free",
	[MEMTRACK_API_POSIX_MEMALIGN] = "posix_memalign",
	[MEMTRACK_API_ALIGNED_ALLOC] = "aligned_alloc",
	[MEMTRACK_API_MEMALIGN] = "memalign",
	[MEMTRACK_API_VALLOC] = "valloc",
	[MEMTRACK_API_PVALLOC] = "pvalloc",
	[MEMTRACK_API_NEW] = "new",
	[MEMTRACK_API_NEW_ARRAY] = "new[]",
	[MEMTRACK_API_DELETE] = "delete",
	[MEMTRACK_API_DELETE_ARRAY] = "delete[]",
	[MEMTRACK_API_OPEN] = "open",
	[MEMTRACK_API_SOCKET] = "socket",
	[MEMTRACK_API_SOCKETPAIR] = "socketpair",
	[MEMTRACK_API_PIPE] = "pipe",
	[MEMTRACK_API_DUP] = "dup",
	[MEMTRACK_API_ACCEPT] = "accept",
	[MEMTRACK_API_EVENTFD] = "eventfd",
	[MEMTRACK_API_MEMFD] = "memfd_create",
	[MEMTRACK_API_EPOLL] = "epoll_create",
	[MEMTRACK_API_TIMERFD] = "timerfd_create",
	[MEMTRACK_API_SIGNALFD] = "signalfd",
	[MEMTRACK_API_INOTIFY] = "inotify_init",
	[MEMTRACK_API_FCNTL] = "fcntl",
	[MEMTRACK_API_CLOSE] = "close",
};

const char *mt_leak_api_name(uint32_t api)
{
	if (api < __MEMTRACK_API_MAX && api_names[api])
		return api_names[api];
	return "unknown";
}

bool mt_leak_api_is_fd(uint32_t api)
{
	return api >= MEMTRACK_API_OPEN && api < __MEMTRACK_API_MAX;
}

struct probe_list {
	const struct ep_table *t;
	struct mt_leak_probe *v;
	size_t n, cap;
};

static int entry_point(const struct ep_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(name, t->v[i].name))
			return (int)i;
	return -1;
}

/* How far past an entry the breakpoint can go: arch.h's rule. */
static uint32_t entry_skip(int fd, uint64_t off)
{
	uint8_t b[16];

	if (pread(fd, b, sizeof(b), (off_t)off) != (ssize_t)sizeof(b))
		return 0;
	return mt_uprobe_entry_skip(b);
}

/* Add unless this object already has a probe at that offset. */
static int add_probe(struct probe_list *l, const char *path, uint64_t off,
		     uint32_t skip, int ep)
{
	struct mt_leak_probe *p;
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (l->v[i].offset != off || strcmp(l->v[i].path, path))
			continue;
		/*
		 * An alias (same API) or shared code of two APIs (glibc:
		 * aligned_alloc = memalign): one probe; keep the API earlier
		 * in the table, so the result does not depend on symbol order.
		 */
		if (entry_point(l->t, l->v[i].symbol) > ep) {
			l->v[i].api = l->t->v[ep].api;
			l->v[i].symbol = l->t->v[ep].name;
		}
		return 0;
	}
	if (mt_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v), 32))
		return -ENOMEM;
	p = &l->v[l->n];
	p->path = strdup(path);
	if (!p->path)
		return -ENOMEM;
	p->offset = off;
	p->skip = skip;
	p->api = l->t->v[ep].api;
	p->symbol = l->t->v[ep].name;
	l->n++;
	return 0;
}

/* st_value -> file offset through the PT_LOAD holding it; -1 if none. */
static int64_t vaddr_to_offset(Elf *elf, size_t phnum, GElf_Addr va)
{
	size_t i;

	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (va >= ph.p_vaddr && va < ph.p_vaddr + ph.p_filesz)
			return (int64_t)(va - ph.p_vaddr + ph.p_offset);
	}
	return -1;
}

static int scan_object(const char *path, struct probe_list *l)
{
	Elf_Scn *scn = NULL;
	size_t phnum;
	Elf *elf;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* gone or unreadable: nothing to probe there */
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, nsyms;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		nsyms = sh.sh_size / sh.sh_entsize;
		for (i = 1; i < nsyms; i++) {
			GElf_Sym sym;
			const char *name;
			int64_t off;
			int ep, bind;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			bind = GELF_ST_BIND(sym.st_info);
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF ||
			    (bind != STB_GLOBAL && bind != STB_WEAK))
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || (ep = entry_point(l->t, name)) < 0)
				continue;
			off = vaddr_to_offset(elf, phnum, sym.st_value);
			if (off < 0)
				continue;
			err = add_probe(l, path, (uint64_t)off,
					entry_skip(fd, (uint64_t)off), ep);
			if (err)
				goto out;
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

void mt_leak_probes_free(struct mt_leak_probe *p, size_t n)
{
	size_t i;

	for (i = 0; p && i < n; i++)
		free(p[i].path);
	free(p);
}

/* Was path scanned already?  (maps lists an object once per segment.) */
static bool seen(const char *const *v, size_t n, const char *path)
{
	while (n--)
		if (!strcmp(v[n], path))
			return true;
	return false;
}

static int find_probes(pid_t pid, const struct ep_table *t,
		       struct mt_leak_probe **out, size_t *n)
{
	struct probe_list l = { .t = t };
	struct mt_procmap *maps;
	const char **done = NULL;
	size_t nmaps, ndone = 0, i;
	int err;

	*out = NULL;
	*n = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return mt_seterr(-EIO, "libelf: %s", elf_errmsg(-1));
	err = mt_procmaps_read(pid, &maps, &nmaps);
	if (err == -ESRCH)
		return mt_seterr(err, "no such process: %d", (int)pid);
	if (err)
		return err;
	for (i = 0; i < nmaps && !err; i++) {
		const char *path = maps[i].path;
		const char **nd;

		if (path[0] != '/' || maps[i].deleted || seen(done, ndone, path))
			continue;
		nd = realloc(done, (ndone + 1) * sizeof(*done));
		if (!nd) {
			err = -ENOMEM;
			break;
		}
		done = nd;
		done[ndone++] = path;
		err = scan_object(path, &l);
	}
	free(done);
	mt_procmaps_free(maps, nmaps);
	if (err) {
		mt_leak_probes_free(l.v, l.n);
		return mt_seterr(err, "finding entry points in %d: %s",
				 (int)pid, strerror(-err));
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

int mt_leak_find_probes_files(const char *const *paths, size_t n,
			      struct mt_leak_probe **out, size_t *nout)
{
	struct probe_list l = { .t = &alloc_table };
	size_t i;
	int err = 0;

	*out = NULL;
	*nout = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return mt_seterr(-EIO, "libelf: %s", elf_errmsg(-1));
	for (i = 0; i < n && !err; i++)
		err = scan_object(paths[i], &l);
	if (err) {
		mt_leak_probes_free(l.v, l.n);
		return mt_seterr(err, "finding allocator entry points: %s",
				 strerror(-err));
	}
	*out = l.v;
	*nout = l.n;
	return 0;
}

int mt_leak_find_probes(pid_t pid, struct mt_leak_probe **out, size_t *n)
{
	return find_probes(pid, &alloc_table, out, n);
}

int mt_leak_find_fd_probes(pid_t pid, struct mt_leak_probe **out, size_t *n)
{
	return find_probes(pid, &fd_table, out, n);
}

/* ---- symbols by name, for the injector ------------------------------------- */

struct func_find {
	const char *const *names;
	size_t n;
	struct mt_elf_sym *out;
};

/* name, or one of its compiler clones (name.part.0, name.constprop.0) */
static bool same_func(const char *sym, const char *name)
{
	size_t len = strlen(name);

	return !strncmp(sym, name, len) && (!sym[len] || sym[len] == '.');
}

static void find_in(Elf *elf, struct func_find *f)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, j, nsyms;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		nsyms = sh.sh_size / sh.sh_entsize;
		for (i = 1; i < nsyms; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(sym.st_info) != STT_OBJECT) ||
			    sym.st_shndx == SHN_UNDEF ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			for (j = 0; j < f->n; j++)
				if (!f->out[j].value && same_func(name, f->names[j])) {
					f->out[j].value = sym.st_value;
					f->out[j].size = sym.st_size;
				}
		}
	}
}

/* The separate debug file of elf (by its build id), or -1. */
static int debug_file(Elf *elf)
{
	Elf_Scn *scn = NULL;
	char path[PATH_MAX];

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *data;
		size_t off = 0, noff, doff, i;
		int len;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(data, off, &nh, &noff, &doff))) {
			const unsigned char *id = (const unsigned char *)data->d_buf + doff;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_descsz < 2 ||
			    nh.n_descsz > 64)
				continue;
			len = snprintf(path, sizeof(path),
				       "/usr/lib/debug/.build-id/%02x/", id[0]);
			for (i = 1; i < nh.n_descsz; i++)
				len += snprintf(path + len, sizeof(path) - (size_t)len,
						"%02x", id[i]);
			snprintf(path + len, sizeof(path) - (size_t)len, ".debug");
			return open(path, O_RDONLY | O_CLOEXEC);
		}
	}
	return -1;
}

int mt_elf_syms(const char *path, const char *const *names, size_t n,
		struct mt_elf_sym *out, uint64_t *load_vaddr)
{
	struct func_find f = { names, n, out };
	size_t phnum, i;
	Elf *elf, *dbg;
	int fd, dfd;

	memset(out, 0, n * sizeof(*out));
	*load_vaddr = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return mt_seterr(-EIO, "libelf: %s", elf_errmsg(-1));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return mt_seterr(-errno, "%s: %s", path, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return mt_seterr(-ENOEXEC, "%s: not an ELF object", path);
	}
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    !ph.p_offset) {
			*load_vaddr = ph.p_vaddr;
			break;
		}
	}
	find_in(elf, &f);
	dfd = debug_file(elf);
	if (dfd >= 0) {
		dbg = elf_begin(dfd, ELF_C_READ_MMAP, NULL);
		if (dbg && elf_kind(dbg) == ELF_K_ELF)
			find_in(dbg, &f);
		if (dbg)
			elf_end(dbg);
		close(dfd);
	}
	elf_end(elf);
	close(fd);
	return 0;
}
