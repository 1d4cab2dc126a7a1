// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: follow the dynamic loader of a program run under the leak
 * tracer, the way debuggers do (the r_debug rendezvous).  ld.so calls
 * _dl_debug_state() once it has mapped a set of objects (r_state
 * RT_CONSISTENT) and before it runs their constructors, at startup and for
 * every dlopen/dlclose.  A ptrace breakpoint there lets the tracer send the
 * unwind tables of the new mappings while the program waits, so that even
 * allocations made by library constructors unwind completely.
 *
 * The breakpoint (arch.h's) is at the entry of _dl_debug_state: not an
 * allocator entry point, so never where one of the module's uprobes is.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <elf.h>
#include <gelf.h>
#include <libelf.h>

#include "libmemtrack.h"
#include "internal.h"

/* The dynamic loader's load address, from the aux vector (0: none). */
static uint64_t loader_base(pid_t pid)
{
	char path[64];
	uint64_t av[2], base = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, av, sizeof(av)) == sizeof(av) && av[0] != AT_NULL) {
		if (av[0] == AT_BASE) {
			base = av[1];
			break;
		}
	}
	close(fd);
	return base;
}

/* The file mapped at addr in pid (its first mapping starts there). */
static int mapped_file(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	char maps[64], *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	while (err && getline(&line, &cap, f) > 0) {
		uint64_t start;
		char *p = strchr(line, '/');

		if (!p || sscanf(line, "%" SCNx64 "-", &start) != 1 ||
		    start != addr)
			continue;
		p[strcspn(p, "\n")] = '\0';
		if (strlen(p) < size) {
			strcpy(buf, p);
			err = 0;
		}
	}
	fclose(f);
	free(line);
	return err;
}

/* st_value of a defined function in path's .dynsym, 0 if none. */
static uint64_t dynsym_value(const char *path, const char *name)
{
	Elf_Scn *scn = NULL;
	uint64_t value = 0;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && !value && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *s;
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				value = sym.st_value;
				break;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return value;
}

int mt_rdv_insert(pid_t pid, struct mt_rdv *b)
{
	char ld[4096];
	uint64_t base, off;
	long word;

	memset(b, 0, sizeof(*b));
	base = loader_base(pid);
	/* A static program has no loader: nothing is mapped later but dlopen's. */
	if (!base)
		return 0;
	if (elf_version(EV_CURRENT) == EV_NONE || mapped_file(pid, base, ld, sizeof(ld)))
		return 0;
	/* ld.so's first PT_LOAD is at vaddr 0: its load bias is its base. */
	off = dynsym_value(ld, "_dl_debug_state");
	if (!off)
		return 0;
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, (void *)(base + off), NULL);
	if (errno)
		return mt_seterr(-errno, "ptrace: %s", strerror(errno));
	b->addr = base + off;
	b->orig = word;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)b->addr,
		   (void *)MT_BRK_WORD(word)))
		return mt_seterr(-errno, "ptrace: %s", strerror(errno));
	b->on = true;
	return 0;
}

int mt_rdv_remove(pid_t pid, struct mt_rdv *b)
{
	if (!b->on)
		return 0;
	b->on = false;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)b->addr, (void *)b->orig))
		return -errno;
	return 0;
}

int mt_rdv_hit(pid_t pid, struct mt_rdv *b)
{
	mt_regs_t regs;

	if (!b->on || mt_regs_get(pid, &regs))
		return 0;
	return MT_BRK_AT(MT_REG_PC(&regs)) == b->addr;
}

int mt_rdv_step(pid_t pid, struct mt_rdv *b, int *status)
{
	mt_regs_t regs;
	int st;

	/* Put the instruction back, run it alone, re-arm the breakpoint. */
	if (mt_regs_get(pid, &regs) ||
	    ptrace(PTRACE_POKETEXT, pid, (void *)b->addr, (void *)b->orig))
		return mt_seterr(-errno, "ptrace: %s", strerror(errno));
	MT_REG_PC(&regs) = b->addr;
	if (mt_regs_set(pid, &regs) ||
	    ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL))
		return mt_seterr(-errno, "ptrace: %s", strerror(errno));
	for (;;) {
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR)
				return mt_seterr(-errno, "waitpid: %s", strerror(errno));
		if (!WIFSTOPPED(st)) {
			*status = st;
			return 1;
		}
		if (WSTOPSIG(st) == SIGTRAP)
			break;
		/* A signal for the program: delivered on the next resume. */
		if (!b->pending)
			b->pending = WSTOPSIG(st);
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL))
			return mt_seterr(-errno, "ptrace: %s", strerror(errno));
	}
	if (st >> 8 != SIGTRAP) {
		*status = st;
		return 2;
	}
	if (ptrace(PTRACE_POKETEXT, pid, (void *)b->addr,
		   (void *)MT_BRK_WORD(b->orig)))
		return mt_seterr(-errno, "ptrace: %s", strerror(errno));
	return 0;
}
