// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: addresses of a live process -> function, file:line, with the
 * inlined frames, through libdw's dwfl (the modules of /proc/PID/maps, the
 * debug information found the standard way: the object itself, .debug
 * links, build-id under /usr/lib/debug).  C++ names are demangled with
 * libstdc++'s __cxa_demangle (programs using this must link -lstdc++).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "libmemtrack.h"
#include "internal.h"
#include "grow.h"

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

#define MT_SYM_BUCKETS	1024
#define MT_SYM_MAX_INLINE	16

struct sym_entry {
	struct sym_entry *next;
	uint64_t addr;			/* as looked up (after - 1) */
	int nr;
	struct mt_sym_frame *frames;
};

struct mt_symbolizer {
	Dwfl *dwfl;
	pid_t pid;
	struct sym_entry *buckets[MT_SYM_BUCKETS];
};

static char *debuginfo_path;
static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* A symbolizer with libdwfl's session begun (the modules still to report). */
static struct mt_symbolizer *sym_begin(const Dwfl_Callbacks *cb, pid_t pid)
{
	struct mt_symbolizer *s = calloc(1, sizeof(*s));

	if (!s || !(s->dwfl = dwfl_begin(cb))) {
		mt_seterr(-ENOMEM, "libdwfl: %s", s ? dwfl_errmsg(-1) : "out of memory");
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->pid = pid;
	return s;
}

/* The modules reported: s, or NULL (s freed) with errno err and mt_errmsg(). */
static struct mt_symbolizer *sym_end(struct mt_symbolizer *s, int err)
{
	if (!err && dwfl_report_end(s->dwfl, NULL, NULL)) {
		mt_seterr(-EIO, "libdwfl: %s", dwfl_errmsg(-1));
		err = EIO;
	}
	if (!err)
		return s;
	dwfl_end(s->dwfl);
	free(s);
	errno = err;
	return NULL;
}

/*
 * The objects a process had mapped, from a list (the in-process engine's:
 * the process may be gone).  An object that cannot be read, or that
 * overlaps one reported before (dlclose'd and another loaded there), is
 * left out: its addresses come out unknown.
 */
struct mt_symbolizer *mt_sym_open_objects(const struct mt_sym_object *o,
					  size_t n)
{
	struct mt_symbolizer *s = sym_begin(&offline_callbacks, 0);
	size_t i;

	if (!s)
		return NULL;
	for (i = 0; i < n; i++)
		dwfl_report_elf(s->dwfl, o[i].path, o[i].path, -1, o[i].base,
				false);
	return sym_end(s, 0);
}

struct mt_symbolizer *mt_sym_open(pid_t pid)
{
	struct mt_symbolizer *s = sym_begin(&proc_callbacks, pid);
	int err;

	if (!s)
		return NULL;
	err = dwfl_linux_proc_report(s->dwfl, pid);
	if (err) {
		/* > 0: an errno; < 0: a libdwfl error */
		if (err > 0)
			mt_seterr(err == ENOENT ? -ESRCH : -err,
				  "reading the modules of %d: %s", (int)pid,
				  err == ENOENT ? "no such process" : strerror(err));
		else
			mt_seterr(-EIO, "reading the modules of %d: %s",
				  (int)pid, dwfl_errmsg(-1));
		err = err == ENOENT ? ESRCH : err > 0 ? err : EIO;
	}
	return sym_end(s, err);
}

void mt_sym_freeze(struct mt_symbolizer *s)
{
	if (s)
		s->pid = 0;
}

struct objects {
	struct mt_procmap *v;
	size_t n, cap;
};

static int add_object(Dwfl_Module *mod, void **ud, const char *name,
		      Dwarf_Addr base, void *arg)
{
	struct objects *o = arg;
	Dwarf_Addr lo, hi;

	(void)ud;
	(void)base;
	if (mt_grow((void **)&o->v, &o->cap, o->n + 1, sizeof(*o->v), 32))
		return DWARF_CB_ABORT;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	o->v[o->n] = (struct mt_procmap){ .start = lo, .end = hi };
	o->v[o->n].path = strdup(name ? name : "[unknown]");
	if (!o->v[o->n].path)
		return DWARF_CB_ABORT;
	o->n++;
	return DWARF_CB_OK;
}

int mt_sym_objects(struct mt_symbolizer *s, struct mt_procmap **out,
		   size_t *n)
{
	struct objects o = { 0 };

	*out = NULL;
	*n = 0;
	if (dwfl_getmodules(s->dwfl, add_object, &o, 0) != 0) {
		mt_procmaps_free(o.v, o.n);
		return mt_seterr(-ENOMEM, "out of memory");
	}
	*out = o.v;
	*n = o.n;
	return 0;
}

static void free_frames(struct mt_sym_frame *f, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		free((char *)f[i].function);
		free((char *)f[i].file);
	}
	free(f);
}

void mt_sym_close(struct mt_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < MT_SYM_BUCKETS; i++) {
		struct sym_entry *e = s->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			free_frames(e->frames, e->nr);
			free(e);
		}
	}
	dwfl_end(s->dwfl);
	free(s);
}

/* A malloc'ed, demangled copy of name (NULL in, NULL out). */
static char *demangle(const char *name)
{
	char *d;
	int status;

	if (!name)
		return NULL;
	if (name[0] == '_' && name[1] == 'Z') {
		d = __cxa_demangle(name, NULL, NULL, &status);
		if (d && !status)
			return d;
		free(d);
	}
	return strdup(name);
}

/* The (linkage or plain) name of a subprogram or inlined instance. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name,
							     &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name;
}

/*
 * The module of addr; for an address in none, the process's modules are
 * read again first: objects dlopen'ed since mt_sym_open().
 */
static Dwfl_Module *addr_module(struct mt_symbolizer *s, uint64_t addr)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	int err;

	if (mod || !s->pid)
		return mod;
	dwfl_report_begin_add(s->dwfl);
	err = dwfl_linux_proc_report(s->dwfl, s->pid);
	if (dwfl_report_end(s->dwfl, NULL, NULL) || err)
		return NULL;
	return dwfl_addrmodule(s->dwfl, addr);
}

static int lookup(struct mt_symbolizer *s, uint64_t addr,
		  struct mt_sym_frame *out, int max)
{
	Dwfl_Module *mod = addr_module(s, addr);
	const char *modname = NULL, *symname = NULL, *file = NULL;
	Dwarf_Die *cudie, *scopes = NULL;
	Dwarf_Addr bias = 0, elf_bias = 0;
	Dwfl_Line *line;
	GElf_Off symoff;
	GElf_Sym sym;
	int nr = 0, lineno = 0, nscopes, i;

	if (!mod) {
		memset(out, 0, sizeof(*out));
		return 1;
	}
	/* Without its ELF file no address within it: the frame has no object. */
	if (dwfl_module_getelf(mod, &elf_bias))
		modname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL,
					   NULL);
	symname = dwfl_module_addrinfo(mod, addr, &symoff, &sym, NULL, NULL, NULL);
	line = dwfl_module_getsrc(mod, addr);
	if (line)
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

	cudie = dwfl_module_addrdie(mod, addr, &bias);
	nscopes = cudie ? dwarf_getscopes(cudie, addr - bias, &scopes) : 0;
	if (nscopes > 0) {
		/*
		 * dwarf_getscopes() follows an inlined instance to its abstract
		 * origin's scopes; the callers are the DIEs physically
		 * enclosing the innermost one (as eu-addr2line -i does).
		 */
		Dwarf_Die inner;
		Dwarf *dw = dwfl_module_getdwarf(mod, &bias);

		if (dw && dwarf_offdie(dw, dwarf_dieoffset(&scopes[0]), &inner)) {
			free(scopes);
			scopes = NULL;
			nscopes = dwarf_getscopes_die(&inner, &scopes);
		}
	}
	for (i = 0; i < nscopes && nr < max; i++) {
		Dwarf_Die *sc = &scopes[i];
		const char *name;
		int tag = dwarf_tag(sc);
		Dwarf_Attribute attr;
		Dwarf_Word w;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		name = die_name(sc);
		if (!name && tag == DW_TAG_subprogram)
			name = symname;
		out[nr].function = demangle(name);
		out[nr].file = file ? strdup(file) : NULL;
		out[nr].line = lineno;
		out[nr].inlined = tag == DW_TAG_inlined_subroutine;
		out[nr].module = modname;
		out[nr].offset = addr - elf_bias;
		nr++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the next frame out is at this instance's call site */
		file = NULL;
		lineno = 0;
		if (dwarf_formudata(dwarf_attr(sc, DW_AT_call_file, &attr), &w) == 0) {
			Dwarf_Files *files;
			size_t nfiles;

			if (dwarf_getsrcfiles(cudie, &files, &nfiles) == 0 &&
			    w < nfiles)
				file = dwarf_filesrc(files, w, NULL, NULL);
		}
		if (dwarf_formudata(dwarf_attr(sc, DW_AT_call_line, &attr), &w) == 0)
			lineno = (int)w;
	}
	free(scopes);
	if (nscopes < 0)
		nr = 0;
	if (!nr) {
		/* no DWARF scope: the ELF symbol and the line table, if any */
		out[0].function = demangle(symname);
		out[0].file = file ? strdup(file) : NULL;
		out[0].line = lineno;
		out[0].inlined = false;
		out[0].module = modname;
		out[0].offset = addr - elf_bias;
		nr = 1;
	}
	return nr;
}

int mt_sym_lookup(struct mt_symbolizer *s, uint64_t addr, bool ret_addr,
		  const struct mt_sym_frame **frames)
{
	struct mt_sym_frame tmp[MT_SYM_MAX_INLINE];
	struct sym_entry *e;
	size_t b;
	int nr;

	if (ret_addr && addr)
		addr--;
	b = (addr ^ (addr >> 12)) % MT_SYM_BUCKETS;
	for (e = s->buckets[b]; e; e = e->next)
		if (e->addr == addr) {
			*frames = e->frames;
			return e->nr;
		}
	memset(tmp, 0, sizeof(tmp));
	nr = lookup(s, addr, tmp, MT_SYM_MAX_INLINE);
	e = malloc(sizeof(*e));
	if (e)
		e->frames = malloc(nr * sizeof(*e->frames));
	if (!e || !e->frames) {
		/* out of memory: answer "unknown", cache nothing */
		static struct mt_sym_frame unknown;
		int i;

		free(e);
		for (i = 0; i < nr; i++) {
			free((char *)tmp[i].function);
			free((char *)tmp[i].file);
		}
		*frames = &unknown;
		return 1;
	}
	memcpy(e->frames, tmp, nr * sizeof(*e->frames));
	e->addr = addr;
	e->nr = nr;
	e->next = s->buckets[b];
	s->buckets[b] = e;
	*frames = e->frames;
	return nr;
}
