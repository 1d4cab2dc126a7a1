// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak for memtrack-top's s key (top_leak.h).  A report is the
 * lines from one "YYYY-MM-DD hh:mm:ss pid N report K: ..." header to the
 * next; the pane shows the latest.  The tool is found beside memtrack-top
 * (/proc/self/exe), as installed, else on PATH.
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "top_leak.h"

/* memtrack-leak beside this program, else "memtrack-leak" (PATH). */
static void tool_path(char *buf, size_t len)
{
	char self[PATH_MAX - 32];	/* room for "/memtrack-leak" in buf */
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	snprintf(buf, len, "memtrack-leak");
	if (n <= 0)
		return;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(buf, len, "%s/memtrack-leak", self);
	if (access(buf, X_OK))
		snprintf(buf, len, "memtrack-leak");
}

int top_leak_start(struct top_leak *l, pid_t pid, double interval)
{
	char tool[PATH_MAX], spid[16], sint[32];
	int fds[2];
	pid_t child;

	top_leak_stop(l);
	tool_path(tool, sizeof(tool));
	snprintf(spid, sizeof(spid), "%d", pid);
	snprintf(sint, sizeof(sint), "%g", interval);
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	child = fork();
	if (child < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (!child) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		/* its own group: the terminal's Ctrl-C is memtrack-top's */
		setpgid(0, 0);
		/* its default engine: injected, with or without the module */
		execlp(tool, tool, "-p", spid, "-i", sint, "--top", "4",
		       (char *)NULL);
		warn("cannot run %s", tool);
		_exit(127);
	}
	close(fds[1]);
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	memset(l, 0, sizeof(*l));
	l->target = pid;
	l->child = child;
	l->fd = fds[0];
	return 0;
}

void top_leak_stop(struct top_leak *l)
{
	if (!l->target)
		return;
	if (l->child > 0) {
		kill(l->child, SIGINT);
		waitpid(l->child, NULL, 0);
	}
	close(l->fd);
	l->target = 0;
	l->child = 0;
}

static bool report_header(const char *s)
{
	int y, mo, d, h, mi, se, pid, k;

	return sscanf(s, "%d-%d-%d %d:%d:%d pid %d report %d:", &y, &mo, &d,
		      &h, &mi, &se, &pid, &k) == 8;
}

/* A whole line of the tool's output. */
static void add_line(struct top_leak *l, const char *s)
{
	if (report_header(s))
		l->ncur = 0;
	if (l->ncur < TOP_LEAK_LINES)
		snprintf(l->cur[l->ncur++], TOP_LEAK_WIDTH, "%s", s);
}

bool top_leak_poll(struct top_leak *l)
{
	char buf[4096];
	bool news = false;
	ssize_t n, i;
	int status;

	if (!l->target)
		return false;
	while ((n = read(l->fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				l->part[l->partlen] = '\0';
				add_line(l, l->part);
				l->partlen = 0;
			} else if (l->partlen + 1 < sizeof(l->part)) {
				l->part[l->partlen++] = buf[i];
			}
		}
		news = true;
	}
	if (l->child > 0 && waitpid(l->child, &status, WNOHANG) == l->child) {
		l->child = 0;
		l->exited = true;
		news = true;
	}
	return news;
}

int top_leak_lines(const struct top_leak *l, char (*out)[TOP_LEAK_WIDTH],
		   int max)
{
	int i;

	for (i = 0; i < l->ncur && i < max; i++)
		snprintf(out[i], TOP_LEAK_WIDTH, "%s", l->cur[i]);
	return i;
}
