/* SPDX-License-Identifier: GPL-2.0 */
/* memtrack-leak's command line (opts.c): options, usage text. */
#ifndef MEMTRACK_LEAK_OPTS_H
#define MEMTRACK_LEAK_OPTS_H

#include <stdbool.h>

/* "memtrack-leak": its messages' prefix (main's mt_set_progname()), usage */
extern const char prog[];

enum fmt { FMT_TEXT, FMT_JSON, FMT_FOLDED };
enum mode { MODE_STACKS, MODE_SCAN, MODE_BYLIB };
/*
 * How the program is traced: in-process (a command: the library
 * preloaded; -p: the library injected; the defaults), or uprobes.
 */
enum engine { ENGINE_PRELOAD, ENGINE_UPROBE, ENGINE_INJECT };

struct leak_opts {
	long pid;			/* -p, or 0 with a command */
	char **cmd;			/* -- COMMAND [ARGS...], or NULL */
	long long interval_ms;		/* -i */
	long long min_age_ms;		/* --min-age */
	long count;			/* -n; 0: until stopped */
	long top;			/* --top */
	enum fmt fmt;			/* --json, --folded */
	enum mode mode;			/* --scan, --by-lib */
	enum engine engine;		/* --engine */
	bool fds;			/* --fds */
	bool follow;			/* -f */
	const char *output;		/* -o, or NULL: standard output */
};

/*
 * Fills o from the command line, checked as a whole.  Does not return
 * after --help (exit 0) or a usage error (exit 2, a message on stderr).
 */
void parse_args(struct leak_opts *o, int argc, char **argv);

#endif
