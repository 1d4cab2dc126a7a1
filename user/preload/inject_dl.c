// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload injected: the hooks of dlopen, dlmopen and dlclose,
 * through which the objects a program loads after the attach get their
 * slots pointed at the hooks too (and those it unloads are forgotten).
 * Hidden: only an injected library's patched slots reach them; preloaded,
 * objects loaded later bind to the hooks by name.
 *
 * The loader looks at its caller: a name without '/' is searched in the
 * calling object's DT_RPATH/DT_RUNPATH, and $ORIGIN is its directory.
 * Called from here, the caller would be this library, so those parts are
 * done here, as the caller's: $ORIGIN expanded with the caller's origin,
 * and a bare name, unless it is loaded already or the caller searches
 * where this library would, looked up in the caller's search path
 * (dlinfo's RTLD_DI_SERINFO) up to the system directories, which, with
 * the loader's cache, the loader then searches itself.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hooks.h"
#include "real.h"

#define PL_HIDDEN	__attribute__((visibility("hidden")))
#define SERINFO_MAX	(16 << 10)

PL_NEXT_DEF(dlopen);
PL_NEXT_DEF(dlmopen);
PL_NEXT_DEF(dlclose);

void *pl_hook_dlopen(const char *file, int mode) PL_HIDDEN;
void *pl_hook_dlmopen(Lmid_t lmid, const char *file, int mode) PL_HIDDEN;
int pl_hook_dlclose(void *handle) PL_HIDDEN;

typedef void *(*dlopen_fn)(const char *, int);
typedef void *(*dlmopen_fn)(Lmid_t, const char *, int);

/* The loader's dlopen, or its dlmopen for another namespace than the base. */
static void *load(Lmid_t lmid, const char *file, int mode)
{
	if (lmid == LM_ID_BASE) {
		dlopen_fn f = (dlopen_fn)PL_NEXT(dlopen);

		return f ? f(file, mode) : NULL;
	} else {
		dlmopen_fn f = (dlmopen_fn)PL_NEXT(dlmopen);

		return f ? f(lmid, file, mode) : NULL;
	}
}

static void changed(bool unloaded)
{
	void (*f)(bool) = __atomic_load_n(&pl_objects_changed, __ATOMIC_ACQUIRE);

	if (f)
		f(unloaded);
}

static struct link_map *map_of(const void *addr)
{
	struct link_map *m = NULL;
	Dl_info info;

	if (!dladdr1(addr, &info, (void **)&m, RTLD_DL_LINKMAP))
		return NULL;
	return m;
}

/* "$ORIGIN" and "${ORIGIN}" in file: the caller's directory. */
static const char *origin(const char *file, struct link_map *caller,
			  char *buf, size_t len)
{
	char dir[PATH_MAX];
	size_t o = 0;
	const char *p;

	if (!caller || dlinfo(caller, RTLD_DI_ORIGIN, dir))
		return file;
	for (p = file; *p && o + 1 < len;) {
		size_t n = !strncmp(p, "$ORIGIN", 7) ? 7 :
			   !strncmp(p, "${ORIGIN}", 9) ? 9 : 0;

		if (n) {
			o += (size_t)snprintf(buf + o, len - o, "%s", dir);
			p += n;
		} else {
			buf[o++] = *p++;
		}
	}
	if (o >= len)
		return file;
	buf[o] = '\0';
	return buf;
}

/* The object's search path; NULL if it cannot be had. */
static Dl_serinfo *serinfo(struct link_map *m, char *buf)
{
	Dl_serinfo size, *si = (Dl_serinfo *)buf;

	if (!m || dlinfo(m, RTLD_DI_SERINFOSIZE, &size) ||
	    size.dls_size > SERINFO_MAX)
		return NULL;
	*si = size;
	return dlinfo(m, RTLD_DI_SERINFO, si) ? NULL : si;
}

static bool same_path(const Dl_serinfo *a, const Dl_serinfo *b)
{
	unsigned int i;

	if (a->dls_cnt != b->dls_cnt)
		return false;
	for (i = 0; i < a->dls_cnt; i++)
		if (strcmp(a->dls_serpath[i].dls_name, b->dls_serpath[i].dls_name))
			return false;
	return true;
}

/*
 * A bare name, loaded as from the caller: already loaded, or found in the
 * caller's own directories; NULL if the loader is to search itself.
 */
static void *search(Lmid_t lmid, const char *file, int mode,
		    struct link_map *caller)
{
	char *a = mmap(NULL, 2 * SERINFO_MAX, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const Dl_serinfo *theirs, *ours;
	char path[PATH_MAX];
	unsigned int i;
	void *h = NULL;

	if (a == MAP_FAILED)
		return NULL;
	theirs = serinfo(caller, a);
	ours = serinfo(map_of((void *)pl_hook_dlopen), a + SERINFO_MAX);
	if (theirs && ours && !same_path(theirs, ours)) {
		h = load(lmid, file, mode | RTLD_NOLOAD);
		for (i = 0; !h && i < theirs->dls_cnt; i++) {
			const Dl_serpath *d = &theirs->dls_serpath[i];

			if (d->dls_flags & LA_SER_DEFAULT)
				break;
			if (snprintf(path, sizeof(path), "%s/%s", d->dls_name,
				     file) < (int)sizeof(path) &&
			    !access(path, F_OK))
				h = load(lmid, path, mode);
		}
	}
	munmap(a, 2 * SERINFO_MAX);
	return h;
}

static void *open_as(Lmid_t lmid, const char *file, int mode,
		     const void *ret)
{
	struct link_map *caller = file ? map_of(ret) : NULL;
	char buf[PATH_MAX];
	void *h = NULL;

	if (file && strchr(file, '$'))
		file = origin(file, caller, buf, sizeof(buf));
	if (file && !strchr(file, '/'))
		h = search(lmid, file, mode, caller);
	if (!h)
		h = load(lmid, file, mode);
	if (h)
		changed(false);
	return h;
}

void *pl_hook_dlopen(const char *file, int mode)
{
	Lmid_t lmid = LM_ID_BASE;
	struct link_map *caller = map_of(__builtin_return_address(0));

	/* dlopen loads into its caller's namespace */
	if (caller)
		dlinfo(caller, RTLD_DI_LMID, &lmid);
	return open_as(lmid, file, mode, __builtin_return_address(0));
}

/*
 * A new namespace has a libc of its own: its objects' slots are bound to
 * that one's functions, not this library's real ones, and stay as they are.
 */
void *pl_hook_dlmopen(Lmid_t lmid, const char *file, int mode)
{
	return open_as(lmid, file, mode, __builtin_return_address(0));
}

int pl_hook_dlclose(void *handle)
{
	int (*f)(void *) = PL_NEXT(dlclose);
	int r = f ? f(handle) : -1;

	changed(true);
	return r;
}
