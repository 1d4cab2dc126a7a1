// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: run a program under the leak tracer from its first
 * allocation ("memtrack-leak -- CMD").
 *
 * The module ends a session when its target execs, so the tracer attaches
 * after the exec: the child asks to be ptraced and execs, and stops before
 * the first instruction of the new program.  Uprobes are per inode, so the
 * libraries it will load can be probed before they are mapped; the
 * dynamic loader's --list mode names them exactly as it will resolve them
 * (same environment, same search path).  Only the main thread is ptraced,
 * for PTRACE_EVENT_EXIT: a stop at its exit, before its memory goes, where
 * the final report is taken.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "memtrack.h"
#include "internal.h"

extern char **environ;

int mt_run_start(char *const argv[], pid_t *pid, int *status)
{
	pid_t child;
	int st;

	*status = 0;
	child = fork();
	if (child < 0)
		return mt_seterr(-errno, "fork: %s", strerror(errno));
	if (!child) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL)) {
			fprintf(stderr, "memtrack-leak: ptrace: %s\n", strerror(errno));
			_exit(126);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "memtrack-leak: %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return mt_seterr(-errno, "waitpid: %s", strerror(errno));
	if (!WIFSTOPPED(st)) {
		*status = st;
		return mt_seterr(-ENOEXEC, "%s did not start", argv[0]);
	}
	if (WSTOPSIG(st) != SIGTRAP ||
	    ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)PTRACE_O_TRACEEXIT)) {
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
		*status = st;
		return mt_seterr(-EIO, "%s: no stop after its exec", argv[0]);
	}
	*pid = child;
	return 0;
}

struct paths {
	char **v;
	size_t n;
};

static int add_path(struct paths *p, const char *path, size_t len)
{
	char **v;
	size_t i;

	for (i = 0; i < p->n; i++)
		if (strlen(p->v[i]) == len && !strncmp(p->v[i], path, len))
			return 0;
	v = realloc(p->v, (p->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->v = v;
	v[p->n] = strndup(path, len);
	if (!v[p->n])
		return -ENOMEM;
	p->n++;
	return 0;
}

/* The ELF interpreter (PT_INTERP) of exe into buf; false if static. */
static bool interpreter(const char *exe, char *buf, size_t size)
{
	bool found = false;
	size_t i, phnum;
	Elf *elf;
	int fd;

	fd = open(exe, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	for (i = 0; elf && !elf_getphdrnum(elf, &phnum) && i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_INTERP)
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (d && d->d_size && d->d_size < size) {
			memcpy(buf, d->d_buf, d->d_size);
			buf[d->d_size] = '\0';
			found = buf[0] == '/';
		}
		break;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

/*
 * "ld.so --list EXE": lines "\tNAME => /PATH (0xADDR)" or "\t/PATH (0xADDR)"
 * (the loader itself) or "\tlinux-vdso.so.1 (0xADDR)"; the paths go to p.
 */
static int loader_list(const char *ld, const char *exe, struct paths *p)
{
	char *const argv[] = { (char *)ld, "--list", (char *)exe, NULL };
	posix_spawn_file_actions_t fa;
	char *line = NULL;
	size_t cap = 0;
	int pipefd[2], st, err = 0;
	pid_t child;
	FILE *f;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	err = -posix_spawn(&child, ld, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (err) {
		close(pipefd[0]);
		return err;
	}
	f = fdopen(pipefd[0], "r");
	if (!f) {
		err = -errno;
		close(pipefd[0]);
	}
	while (f && getline(&line, &cap, f) > 0) {
		char *s = strstr(line, "=> ");

		s = s ? s + 3 : line + strspn(line, " \t");
		if (*s == '/' && !err)
			err = add_path(p, s, strcspn(s, " \n"));
	}
	if (f)
		fclose(f);
	free(line);
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	return err;
}

int mt_run_find_probes(pid_t pid, struct mt_leak_probe **out, size_t *n)
{
	struct paths p = { 0 };
	char link[64], exe[4096], ld[4096];
	ssize_t len;
	size_t i;
	int err;

	*out = NULL;
	*n = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return mt_seterr(-EIO, "libelf: %s", elf_errmsg(-1));
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	len = readlink(link, exe, sizeof(exe) - 1);
	if (len < 0)
		return mt_seterr(-errno, "%s: %s", link, strerror(errno));
	exe[len] = '\0';
	err = add_path(&p, exe, (size_t)len);
	if (!err && interpreter(exe, ld, sizeof(ld))) {
		err = add_path(&p, ld, strlen(ld));
		if (!err)
			err = loader_list(ld, exe, &p);
	}
	if (!err)
		err = mt_leak_find_probes_files((const char *const *)p.v, p.n,
						out, n);
	else
		mt_seterr(err, "finding the libraries of %s: %s", exe,
			  strerror(-err));
	for (i = 0; i < p.n; i++)
		free(p.v[i]);
	free(p.v);
	return err;
}

/* A signal-delivery-stop has siginfo; a group-stop (job control) has none. */
static bool group_stop(pid_t pid)
{
	siginfo_t si;

	return ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) && errno == EINVAL;
}

int mt_run_until_exit(pid_t pid, volatile sig_atomic_t *fwd, int *status)
{
	int st, sig = 0;

	*status = 0;
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) &&
		    errno != ESRCH)
			return mt_seterr(-errno, "ptrace: %s", strerror(errno));
		sig = 0;
		while (waitpid(pid, &st, 0) < 0) {
			if (errno != EINTR)
				return mt_seterr(-errno, "waitpid: %s", strerror(errno));
			if (*fwd) {
				kill(pid, *fwd);
				*fwd = 0;
			}
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			*status = st;
			return 0;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)))
			return 1;
		/*
		 * Its own signals go through unchanged.  A job-control stop
		 * cannot be kept without PTRACE_SEIZE's LISTEN: it resumes.
		 */
		if (!group_stop(pid))
			sig = WSTOPSIG(st);
	}
}

int mt_run_finish(pid_t pid, int *status)
{
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL) && errno != ESRCH)
		return mt_seterr(-errno, "ptrace: %s", strerror(errno));
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return mt_seterr(-errno, "waitpid: %s", strerror(errno));
	return 0;
}
