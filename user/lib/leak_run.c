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
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "libmemtrack.h"
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
			warn("ptrace");
			_exit(126);
		}
		execvp(argv[0], argv);
		st = errno;
		warn("%s", argv[0]);
		_exit(st == ENOENT ? 127 : 126);
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

/* name as execvp() finds it: a path, or the first executable in $PATH. */
static bool find_program(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(name, '/')) {
		snprintf(buf, size, "%s", name);
		return true;
	}
	for (p = path && *path ? path : "/bin:/usr/bin"; *p; p = end) {
		end = strchrnul(p, ':');
		snprintf(buf, size, "%.*s/%s", (int)(end - p), p, name);
		if (!access(buf, X_OK))
			return true;
		if (*end)
			end++;
	}
	return false;
}

int mt_program_is_static(const char *name)
{
	char path[4096], interp[4096], magic[4] = { 0 };
	int fd;

	if (!find_program(name, path, sizeof(path)))
		return mt_seterr(-ENOENT, "%s: not found", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return mt_seterr(-errno, "%s: %s", path, strerror(errno));
	if (read(fd, magic, sizeof(magic)) != sizeof(magic))
		magic[0] = 0;
	close(fd);
	/* a script: its interpreter is what runs */
	if (memcmp(magic, "\177ELF", 4))
		return 0;
	elf_version(EV_CURRENT);
	return !interpreter(path, interp, sizeof(interp));
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

/*
 * The loader's rendezvous breakpoint is shared with every thread, but only
 * the main thread is ptraced (for its exit stop): another thread reaching it
 * would die of the SIGTRAP.  Tracing every thread would make each of them
 * stop at every clone and exit and at each signal, for the whole run, and
 * races a breakpoint lifted for one thread's step against the others.  So
 * the breakpoint lives while the program has one thread, which covers the
 * loader's startup (every library's constructor) and the dlopens of
 * single-threaded programs exactly; the first clone takes it out
 * (PTRACE_O_TRACECLONE, the new thread is let go at once) and from then on
 * the tables are re-synced every RESYNC_MS.  A forked child gets a copy of
 * the breakpoint: it is taken out of the copy before the child is let go
 * (a vfork child shares the memory, and only execs or exits).
 */
#define RESYNC_MS	500

static int opts(const struct mt_rdv *b)
{
	return PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC |
	       (b->on ? PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
			PTRACE_O_TRACEVFORK : 0);
}

/* A new task the program made stops first: let it go, without breakpoint. */
static int new_task(pid_t pid, struct mt_rdv *b, int event)
{
	unsigned long msg;
	pid_t child;
	int st;

	if (ptrace(PTRACE_GETEVENTMSG, pid, NULL, &msg))
		return 0;
	child = (pid_t)msg;
	if (event == PTRACE_EVENT_CLONE) {
		mt_rdv_remove(pid, b);
		ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)opts(b));
	}
	while (waitpid(child, &st, __WALL) < 0)
		if (errno != EINTR)
			return 0;
	if (!WIFSTOPPED(st))
		return 0;
	if (event == PTRACE_EVENT_FORK && b->on)
		ptrace(PTRACE_POKETEXT, child, (void *)b->addr, (void *)b->orig);
	ptrace(PTRACE_DETACH, child, NULL, NULL);
	return 0;
}

/* Wait for the main thread's next stop; sync every RESYNC_MS meanwhile. */
static int wait_stop(pid_t pid, int sfd, const struct mt_rdv *b,
		     volatile sig_atomic_t *fwd, const struct mt_run_sync *sync,
		     int *st)
{
	struct pollfd p = { .fd = sfd, .events = POLLIN };
	struct signalfd_siginfo si;
	pid_t r;

	for (;;) {
		r = waitpid(pid, st, WNOHANG);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return mt_seterr(-errno, "waitpid: %s", strerror(errno));
		if (*fwd) {
			kill(pid, *fwd);
			*fwd = 0;
		}
		if (!poll(&p, 1, RESYNC_MS) && !b->on && sync)
			sync->fn(sync->arg);
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			;
	}
}

int mt_run_until_exit(pid_t pid, volatile sig_atomic_t *fwd,
		      const struct mt_run_sync *sync, int *status)
{
	struct mt_rdv b = { 0 };
	sigset_t chld, old;
	int st, sig = 0, err, sfd, event;

	*status = 0;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		err = mt_seterr(-errno, "signalfd: %s", strerror(errno));
		goto out;
	}
	/* Without it, stacks only stop short: the tables follow by resync. */
	if (sync && mt_rdv_insert(pid, &b) < 0)
		warnx("warning: loader breakpoint: %s", mt_errmsg());
	/*
	 * ESRCH here and below: the program was killed (SIGKILL) between two
	 * of our calls.  Not an error of ours: the wait says how it ended
	 * (its exit stop, when the kernel still makes one, or its death).
	 */
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)opts(&b)) &&
	    errno != ESRCH) {
		err = mt_seterr(-errno, "ptrace: %s", strerror(errno));
		goto out;
	}
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) &&
		    errno != ESRCH) {
			err = mt_seterr(-errno, "ptrace: %s", strerror(errno));
			goto out;
		}
		sig = 0;
		err = wait_stop(pid, sfd, &b, fwd, sync, &st);
		if (err)
			goto out;
again:
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			*status = st;
			err = 0;
			goto out;
		}
		if (!WIFSTOPPED(st))
			continue;
		event = st >> 16;
		if (event == PTRACE_EVENT_EXIT) {
			/* Its memory stays as it is: no int3 left behind. */
			mt_rdv_remove(pid, &b);
			err = 1;
			goto out;
		}
		/*
		 * Without this event the tracee would get a SIGTRAP after the
		 * exec and, handed it back, die of it.  The new image has none
		 * of the old breakpoint.
		 */
		if (event == PTRACE_EVENT_EXEC) {
			b.on = false;
			err = MT_RUN_EXECED;
			goto out;
		}
		if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
		    event == PTRACE_EVENT_VFORK) {
			new_task(pid, &b, event);
			continue;
		}
		if (event)
			continue;
		if (WSTOPSIG(st) == SIGTRAP && mt_rdv_hit(pid, &b)) {
			/* ld.so mapped objects: their tables, before their code runs. */
			sync->fn(sync->arg);
			err = mt_rdv_step(pid, &b, &st);
			if (err == -ESRCH)
				continue;
			if (err < 0)
				goto out;
			sig = b.pending;
			b.pending = 0;
			if (err)
				goto again;
			continue;
		}
		/*
		 * Its own signals go through unchanged.  A job-control stop
		 * cannot be kept without PTRACE_SEIZE's LISTEN: it resumes.
		 */
		if (!group_stop(pid))
			sig = WSTOPSIG(st);
	}
out:
	if (sfd >= 0)
		close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
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
