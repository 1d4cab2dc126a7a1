// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: the injected engine's survey (inject.c's first step), made
 * from the outside before anything is stopped: libc and the dynamic loader
 * in the target's maps (none: a static program), libc's dlopen, memfd_create
 * and signal trampoline, the code ranges a thread must not be in, and a hash
 * of the code mappings, so that the attach knows when what it found went
 * stale.  Apart from inject.c, which stops, calls and lets go, because it
 * only reads: /proc/PID/maps, the objects' files and, for arm64's vDSO, the
 * target's memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libmemtrack.h"
#include "internal.h"
#include "grow.h"
#include "memtrack_preload.h"
#include "inject_int.h"

/* The functions of libc a thread the calls run on must not be in. */
static const char *const unsafe[] = {
	/* the allocator, and its internals (named in libc's debug file) */
	"malloc", "free", "calloc", "realloc", "reallocarray", "memalign",
	"aligned_alloc", "posix_memalign", "valloc", "pvalloc", "malloc_trim",
	"malloc_usable_size", "mallinfo", "mallinfo2", "malloc_stats",
	"malloc_info", "mallopt", "_int_malloc", "_int_free", "_int_realloc",
	"_int_memalign", "malloc_consolidate", "sysmalloc", "systrim",
	"arena_get2", "arena_get_retry", "tcache_init", "ptmalloc_init",
	"munmap_chunk", "mremap_chunk", "unlink_chunk", "malloc_printerr",
	"sysmalloc_mmap", "sysmalloc_mmap_fallback",
	"__malloc_fork_lock_parent", "__malloc_fork_unlock_parent",
	"__malloc_arena_thread_freeres", "tcache_thread_shutdown",
	/* the loader's lock */
	"dl_iterate_phdr", "dlopen", "dlmopen", "dlclose", "dlsym", "dlvsym",
	"dladdr", "dladdr1", "dlinfo", "dlerror", "__libc_dlopen_mode",
	"__libc_dlsym", "__libc_dlclose", "_dl_find_object",
	/* the stack cache's lock, fork's, exit's */
	"pthread_create", "allocate_stack", "__nptl_deallocate_stack",
	"__nptl_free_stacks", "fork", "_Fork", "__libc_fork", "vfork",
	"__run_fork_handlers", "__register_atfork", "exit",
	"__run_exit_handlers",
};

/* The libc symbols the calls use (inject_int.h's U_* index them). */
static const char *const used[] = {
	"dlopen", "__libc_dlopen_mode", "memfd_create", "close", "pipe2",
};

static int add_range(struct ranges *r, uint64_t lo, uint64_t hi)
{
	if (mt_grow((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v), 64))
		return mt_seterr(-ENOMEM, "out of memory");
	r->v[r->n++] = (struct range){ lo, hi };
	return 0;
}

bool mt_inject_in_ranges(const struct ranges *r, uint64_t pc)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (pc >= r->v[i].lo && pc < r->v[i].hi)
			return true;
	return false;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool is_libc(const char *path)
{
	const char *b = base_name(path);

	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-2.", 7);
}

static bool is_loader(const char *path)
{
	const char *b = base_name(path);

	return !strncmp(b, "ld-linux", 8) || !strncmp(b, "ld-2.", 5) ||
	       !strncmp(b, "ld64.so", 7);
}

/* The seccomp mode of /proc/PID/status (0 none, 1 strict, 2 filter). */
int mt_inject_seccomp_mode(pid_t pid)
{
	char path[64], line[256];
	int mode = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	fclose(f);
	return mode;
}

/* A file of the target's, as the target sees it (its mount namespace). */
static void target_path(pid_t pid, const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/%d/root%s", (int)pid, path);
}

/* The signal trampoline in the target's vDSO (arm64's): a page or two. */
static int find_restore_rt_vdso(struct mt_inject *in,
				const struct mt_procmap *m)
{
	size_t len = m->end - m->start;
	unsigned char *buf = malloc(len);
	const unsigned char *hit;
	int err;

	if (!buf)
		return mt_seterr(-ENOMEM, "out of memory");
	err = mt_remote_peek(in->pid, m->start, buf, len);
	hit = err ? NULL : memmem(buf, len, MT_RESTORE_RT_BYTES,
				  MT_RESTORE_RT_LEN);
	if (hit)
		in->restore_rt = m->start + (uint64_t)(hit - buf);
	free(buf);
	return err;
}

/*
 * libc's signal trampoline: its bytes in libc's code, read from the file
 * (as the target sees it): reading them in the target's memory would map
 * every page of libc's code into it, a megabyte more of its RSS.
 */
static int find_restore_rt(struct mt_inject *in, const struct mt_procmap *m)
{
	size_t len = m->end - m->start, chunk = 1 << 20, off;
	unsigned char *buf = malloc(chunk + MT_RESTORE_RT_LEN);
	const unsigned char *hit;
	char file[PATH_MAX];
	ssize_t n;
	int fd, err = 0;

	if (!buf)
		return mt_seterr(-ENOMEM, "out of memory");
	target_path(in->pid, m->path, file, sizeof(file));
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		err = mt_seterr(-errno, "%s: %s", file, strerror(errno));
	for (off = 0; !err && off < len && !in->restore_rt; off += chunk) {
		n = pread(fd, buf, len - off < chunk + MT_RESTORE_RT_LEN ?
			  len - off : chunk + MT_RESTORE_RT_LEN,
			  (off_t)(m->offset + off));
		if (n <= 0)
			break;
		hit = memmem(buf, (size_t)n, MT_RESTORE_RT_BYTES,
			     MT_RESTORE_RT_LEN);
		if (hit)
			in->restore_rt = m->start + off + (uint64_t)(hit - buf);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

/* libc's symbols and the unsafe ranges in it. */
static int libc_syms(struct mt_inject *in, const char *path, uint64_t start)
{
	size_t nun = MT_ARRAY_SIZE(unsafe), i;
	struct mt_elf_sym u[MT_ARRAY_SIZE(unsafe)], f[NR_USED];
	char file[PATH_MAX];
	uint64_t vaddr;
	int err;

	target_path(in->pid, path, file, sizeof(file));
	err = mt_elf_syms(file, used, NR_USED, f, &vaddr);
	if (!err)
		err = mt_elf_syms(file, unsafe, nun, u, &vaddr);
	if (err)
		return err;
	for (i = 0; i < NR_USED; i++)
		in->fn[i] = f[i].value ? start - vaddr + f[i].value : 0;
	for (i = 0; i < nun && !err; i++)
		if (u[i].value && u[i].size)
			err = add_range(&in->unsafe, start - vaddr + u[i].value,
					start - vaddr + u[i].value + u[i].size);
	return err;
}

/*
 * A hash of the process's code mappings (address, file, offset): what the
 * survey found is stale once it changes (an exec, a dlopen, between the
 * survey and the stop).
 */
static uint64_t image_of(const struct mt_procmap *maps, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	const char *c;
	size_t i;

	for (i = 0; i < n; i++) {
		if (maps[i].perms[2] != 'x')
			continue;
		h = (h ^ maps[i].start) * 1099511628211ULL;
		h = (h ^ maps[i].offset) * 1099511628211ULL;
		h = (h ^ maps[i].inode) * 1099511628211ULL;
		for (c = maps[i].path; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	}
	return h;
}

bool mt_inject_image_changed(const struct mt_inject *in)
{
	struct mt_procmap *maps;
	uint64_t h;
	size_t n;

	if (mt_procmaps_read(in->pid, &maps, &n))
		return true;
	h = image_of(maps, n);
	mt_procmaps_free(maps, n);
	return h != in->image;
}

/* What the injection needs from the target's maps and objects. */
int mt_inject_survey(struct mt_inject *in)
{
	const struct mt_procmap *libc = NULL, *libc_x = NULL, *vdso = NULL;
	bool loader = false;
	struct mt_procmap *maps;
	uint64_t lib = 0;
	size_t n, i;
	int err;

	err = mt_procmaps_read(in->pid, &maps, &n);
	if (err == -ESRCH)
		return mt_seterr(err, "no such process: %d", (int)in->pid);
	if (err == -EACCES || err == -EPERM)
		return mt_seterr(-EPERM, "permission denied: tracing %d needs the rights of ptrace on it",
				 (int)in->pid);
	if (err)
		return err;
	for (i = 0; i < n && !err; i++) {
		const struct mt_procmap *m = &maps[i];

		if (!strcmp(base_name(m->path), "libmemtrack-preload.so")) {
			err = mt_seterr(-EBUSY, "%d runs with libmemtrack-preload.so preloaded: it is traced by a memtrack-leak -- COMMAND already",
					(int)in->pid);
		} else if (!strcmp(m->path, LIB_NAME)) {
			if (!m->offset)
				lib = m->start;
			if (m->perms[2] == 'x')
				err = add_range(&in->unsafe, m->start, m->end);
		} else if (is_loader(m->path)) {
			loader = true;
			if (m->perms[2] == 'x')
				err = add_range(&in->loader, m->start, m->end);
		} else if (!strcmp(m->path, "[vdso]")) {
			vdso = m;
		} else if (is_libc(m->path)) {
			if (!m->offset && !libc)
				libc = m;
			if (m->perms[2] == 'x' && !libc_x)
				libc_x = m;
		}
	}
	if (!err && (!loader || !libc || !libc_x))
		err = mt_seterr(-ENOEXEC, loader ?
				"%d has no glibc mapped (another C library?): the library cannot be injected" :
				"%d is statically linked: no dynamic loader to load a library",
				(int)in->pid);
	if (!err)
		err = libc_syms(in, libc->path, libc->start);
	if (!err && MT_RESTORE_RT_IN_VDSO && vdso)
		err = find_restore_rt_vdso(in, vdso);
	else if (!err && !MT_RESTORE_RT_IN_VDSO)
		err = find_restore_rt(in, libc_x);
	if (!err && (!in->restore_rt || !in->fn[U_MEMFD] || !in->fn[U_CLOSE] ||
		     !in->fn[U_PIPE2] ||
		     (!in->fn[U_DLOPEN] && !in->fn[U_LIBC_DLOPEN])))
		err = mt_seterr(-ENOEXEC, "%d's libc (%s) lacks what the injection calls",
				(int)in->pid, libc->path);
	/* the library of an earlier session: its load bias */
	in->lib_base = lib ? lib : 0;
	in->image = image_of(maps, n);
	mt_procmaps_free(maps, n);
	return err;
}
