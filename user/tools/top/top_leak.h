/* SPDX-License-Identifier: GPL-2.0 */
/*
 * s: memtrack-leak attached to the selected process, its reports in the
 * detail pane (top_leak.c).  memtrack-top runs the installed tool beside
 * itself (memtrack-leak -p PID -i SECONDS --top 4) with its output on a
 * pipe read without blocking, and shows its latest report whole; its
 * messages (no module, no right to trace) show the same way.  Closing the
 * pane, or quitting, stops it with SIGINT, as Ctrl-C would.
 */
#ifndef MEMTRACK_TOP_LEAK_H
#define MEMTRACK_TOP_LEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define TOP_LEAK_LINES	64		/* of a report kept */
#define TOP_LEAK_WIDTH	256

struct top_leak {
	pid_t target;			/* 0: not running */
	pid_t child;			/* memtrack-leak */
	int fd;				/* its stdout and stderr */
	char part[TOP_LEAK_WIDTH];	/* a line not ended yet */
	size_t partlen;
	/* the latest report (a report comes in one write), or what the
	 * tool said before its first one */
	char cur[TOP_LEAK_LINES][TOP_LEAK_WIDTH];
	int ncur;
	bool exited;			/* the tool ended (its message in cur) */
};

/* Start memtrack-leak on pid (stopping one on another process): 0 or -errno. */
int top_leak_start(struct top_leak *l, pid_t pid, double interval);
void top_leak_stop(struct top_leak *l);
/* Read what the tool wrote since; true if the pane has something new. */
bool top_leak_poll(struct top_leak *l);
/* The pane's lines: the latest report, else what the tool said so far. */
int top_leak_lines(const struct top_leak *l, char (*out)[TOP_LEAK_WIDTH],
		   int max);

#endif
