// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's actions on the selected process (top_actions.h): a
 * signal menu drawn over the table, a y/N confirmation, kill(2); renice
 * by a step or to a typed value, setpriority(2).  Errors are the kernel's
 * (EPERM for another user's process, ESRCH if it is gone) in the message.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <ncurses.h>
#include "top_actions.h"

static const struct {
	int sig;
	const char *name;
} signals[] = {
	{ SIGTERM, "TERM" }, { SIGKILL, "KILL" }, { SIGHUP, "HUP" },
	{ SIGINT, "INT" }, { SIGQUIT, "QUIT" }, { SIGUSR1, "USR1" },
	{ SIGUSR2, "USR2" }, { SIGSTOP, "STOP" }, { SIGCONT, "CONT" },
	{ SIGTSTP, "TSTP" }, { SIGABRT, "ABRT" }, { SIGSEGV, "SEGV" },
};
#define NR_SIGNALS	(sizeof(signals) / sizeof(signals[0]))

/* The menu in a box at the top left; the chosen index, or -1. */
static int signal_menu(const pid_t *pids, size_t n, const char *comm)
{
	int h = NR_SIGNALS + 3, w = 34, sel = 0, c, i;
	WINDOW *win = newwin(h, w, 1, 1);

	if (!win)
		return -1;
	keypad(win, TRUE);
	wtimeout(win, -1);
	for (;;) {
		werase(win);
		box(win, 0, 0);
		if (n == 1)
			mvwprintw(win, 0, 2, " signal %d (%.12s) ", pids[0],
				  comm);
		else
			mvwprintw(win, 0, 2, " signal %zu tagged ", n);
		for (i = 0; i < (int)NR_SIGNALS; i++) {
			if (i == sel)
				wattron(win, A_REVERSE);
			mvwprintw(win, 1 + i, 2, "%2d SIG%-22s", signals[i].sig,
				  signals[i].name);
			if (i == sel)
				wattroff(win, A_REVERSE);
		}
		mvwprintw(win, h - 2, 2, "Enter: send  Esc: cancel");
		wrefresh(win);
		c = wgetch(win);
		if (c == KEY_UP && sel > 0)
			sel--;
		else if (c == KEY_DOWN && sel < (int)NR_SIGNALS - 1)
			sel++;
		else if (c == '\n' || c == '\r' || c == KEY_ENTER)
			break;
		else if (c == 27 || c == 'q' || c == ERR)
			sel = -1;
		if (sel < 0)
			break;
	}
	delwin(win);
	touchwin(stdscr);
	return sel;
}

/* A question on the status line (line 5); true for y or Y. */
static bool confirm(const char *question)
{
	int c;

	move(5, 0);
	clrtoeol();
	attron(A_BOLD);
	printw("%s [y/N] ", question);
	attroff(A_BOLD);
	refresh();
	timeout(-1);
	c = getch();
	return c == 'y' || c == 'Y';
}

void top_action_signal(const pid_t *pids, size_t n, const char *comm,
			char *msg, size_t len)
{
	char q[96];
	size_t j, sent = 0;
	pid_t failed = 0;
	int i, err = 0;

	if (!n)
		return;
	i = signal_menu(pids, n, comm);
	if (i < 0) {
		snprintf(msg, len, "no signal sent");
		return;
	}
	if (n == 1)
		snprintf(q, sizeof(q), "send SIG%s to %d (%.16s)?",
			 signals[i].name, pids[0], comm);
	else
		snprintf(q, sizeof(q), "send SIG%s to %zu tagged processes?",
			 signals[i].name, n);
	if (!confirm(q)) {
		snprintf(msg, len, "no signal sent");
		return;
	}
	for (j = 0; j < n; j++) {
		if (!kill(pids[j], signals[i].sig)) {
			sent++;
		} else if (!failed) {
			failed = pids[j];
			err = errno;
		}
	}
	if (n == 1 && failed)
		snprintf(msg, len, "kill %d: %s", failed, strerror(err));
	else if (n == 1)
		snprintf(msg, len, "sent SIG%s to %d (%.16s)", signals[i].name,
			 pids[0], comm);
	else if (failed)
		snprintf(msg, len, "sent SIG%s to %zu of %zu processes; kill %d: %s",
			 signals[i].name, sent, n, failed, strerror(err));
	else
		snprintf(msg, len, "sent SIG%s to %zu processes",
			 signals[i].name, n);
}

/* The nice value typed on the status line; false if none or not one. */
static bool ask_nice(pid_t pid, int cur, int *val, char *msg, size_t len,
		     const struct top_redraw *rd)
{
	char buf[16], what[64], *end;
	long v;

	snprintf(what, sizeof(what), "renice %d (now %d) to: ", pid, cur);
	if (!top_prompt(5, what, buf, sizeof(buf), rd) || !buf[0]) {
		snprintf(msg, len, "not reniced");
		return false;
	}
	v = strtol(buf, &end, 10);
	if (*end || end == buf || v < -20 || v > 19) {
		snprintf(msg, len, "not a nice value from -20 to 19: %s", buf);
		return false;
	}
	*val = (int)v;
	return true;
}

void top_action_renice(pid_t pid, const char *comm, int delta, char *msg,
		       size_t len, const struct top_redraw *rd)
{
	int cur, val;

	errno = 0;
	cur = getpriority(PRIO_PROCESS, pid);
	if (cur == -1 && errno) {
		snprintf(msg, len, "renice %d: %s", pid, strerror(errno));
		return;
	}
	if (delta) {
		val = cur + delta;
		if (val < -20 || val > 19) {
			snprintf(msg, len, "%d is at nice %d already", pid, cur);
			return;
		}
	} else if (!ask_nice(pid, cur, &val, msg, len, rd)) {
		return;
	}
	if (setpriority(PRIO_PROCESS, pid, val))
		snprintf(msg, len, "renice %d to %d: %s", pid, val,
			 strerror(errno));
	else
		snprintf(msg, len, "%d (%.16s): nice %d -> %d", pid, comm, cur,
			 val);
}
