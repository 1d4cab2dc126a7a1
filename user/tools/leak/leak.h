/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What memtrack-leak's files share: a report's state (how it prints, what
 * the previous one held), the session main sets up and undoes, and the
 * calls between the files, each under the file that has it.
 */
#ifndef MEMTRACK_LEAK_H
#define MEMTRACK_LEAK_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "libmemtrack.h"
#include "opts.h"

/* A stack's bytes (--fds: descriptors) at the previous report. */
struct prev {
	uint32_t id;
	uint64_t bytes;
};

struct report {
	struct mt_preload *pre;		/* the in-process engine's state, or NULL */
	struct mt_scan_stack from;	/* --scan at the exit: from exit's caller */
	FILE *o;
	enum fmt fmt;
	enum mode mode;
	bool fds;			/* --fds: stacks count descriptors */
	bool follow;			/* -f: children too, stacks show their pid */
	pid_t pid;
	struct mt_symbolizer *sym;
	unsigned int nr;		/* reports so far */
	uint32_t min_age_ms;		/* --min-age */
	size_t top;			/* --top: stacks shown */
	struct prev *prev;		/* the previous report's, sorted by id */
	size_t nprev;
	const char *ended;		/* the last report's: "exit", "exec" */
};

/* What main sets up for the tracing, and undoes at the end. */
struct session {
	const struct leak_opts *opt;
	struct report r;
	struct mt_leak_probe *probes;
	size_t nprobes;
	struct mt_unwinder *unw;
	struct mt_preload *pre;		/* -- COMMAND in-process */
	struct mt_inject *inj;		/* -p in-process: its state is r.pre */
	struct mt_handle *h;
	bool attached;			/* the module's probes are on r.pid */
	bool running;			/* a launched command, not reaped yet */
};

/* growth.c: what a report ranks stacks by, and their growth */
uint64_t stack_metric(const struct report *r, const struct mt_leak_stack *s);
int64_t stack_growth(const struct report *r, const struct mt_leak_stack *s);
size_t keep_kind(const struct report *r, struct mt_leak_stack *v, size_t n);
size_t split_leaks(struct mt_leak_stack *v, size_t n);
void rank_stacks(const struct report *r, struct mt_leak_stack *v, size_t n);
void keep_growth(struct report *r, const struct mt_leak_stack *v, size_t n);

/* render.c: the stack report (text, JSON, folded) */
void print_report(struct report *r, const struct mt_leak_stack *v, size_t n,
		  size_t nother);

/* report.c: one report, from the dump to the output */
int take_report(struct mt_handle *h, struct report *r);
bool session_gone(int err);
bool module_gone(void);
bool module_going(void);

/* signals.c: a stop asked for (-p), signals forwarded (-- COMMAND) */
extern volatile sig_atomic_t stop_asked;
extern volatile sig_atomic_t sig_to_forward;
void catch_stop(int flags);
void forward_signals(void);

/* attach.c: the module's probes on a process (--engine uprobe) */
int find_probes(struct session *s);
int attach(struct session *s);

/* launch.c: -- COMMAND under the module's probes, run to its exit */
int wait_status_code(int st);
void exit_caller(struct report *r, pid_t tid, const uint64_t *pcs,
		 const uint64_t *sps, int n);
int launch(struct session *s);
int run_command(struct session *s);

/* preload.c: -- COMMAND in-process, libmemtrack-preload.so preloaded */
int preload_lib(char *buf, size_t len);
int run_preload(struct session *s);

/* inject.c: -p in-process, libmemtrack-preload.so injected */
int inject(struct session *s);
int inject_loop(struct session *s);
int inject_detach(struct session *s, int rc);

/* report_loop.c: -p under the module's probes, a report every interval */
int report_loop(struct session *s);

#endif
