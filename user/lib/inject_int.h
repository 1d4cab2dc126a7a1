/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libmemtrack's injected engine, inside: the session inject.c keeps, and
 * what its survey (inject_survey.c) fills in before the target is stopped.
 */
#ifndef MT_INJECT_INT_H
#define MT_INJECT_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "memtrack_preload.h"

/* The library's memfd, as the target's maps name it. */
#define LIB_NAME	"/memfd:" MTP_LIB_MEMFD_NAME

/* The libc functions the calls use; the library's entry points. */
enum { U_DLOPEN, U_LIBC_DLOPEN, U_MEMFD, U_CLOSE, U_PIPE2, NR_USED };
enum { L_ATTACH, L_DETACH, L_INFO, NR_LIB };

struct range {
	uint64_t lo, hi;
};

struct ranges {
	struct range *v;
	size_t n, cap;
};

struct mt_inject {
	pid_t pid;
	int pidfd;			/* inject_wait.c's */
	char lib[PATH_MAX];
	struct mt_preload *pre;
	int watch_fd;			/* the tool's end of the pipe */
	/* in the target */
	uint64_t lib_off[NR_LIB];	/* the library's symbols (st_value) */
	uint64_t lib_base;		/* its load bias; 0: not loaded */
	uint64_t fn[NR_USED];		/* libc's, runtime addresses */
	uint64_t restore_rt;
	struct ranges loader;		/* ld.so's code */
	struct ranges unsafe;		/* unsafe[]'s, the library's code */
	int seccomp;			/* /proc/PID/status Seccomp: 0, 1, 2 */
	uint64_t image;			/* its code mappings when surveyed */
	struct mt_unwinder *unw;
	struct mt_walker *walker;
};

/* MEMTRACK_INJECT_DEBUG=1: when each step ended, on stderr. */
void mt_inject_dbg(const char *what);
/* What the injection needs from the target's maps and objects: 0 or -errno. */
int mt_inject_survey(struct mt_inject *in);
/* Its code mappings changed since the survey (an exec, a dlopen)? */
bool mt_inject_image_changed(const struct mt_inject *in);
bool mt_inject_in_ranges(const struct ranges *r, uint64_t pc);
/* The seccomp mode of /proc/PID/status (0 none, 1 strict, 2 filter). */
int mt_inject_seccomp_mode(pid_t pid);

#endif
