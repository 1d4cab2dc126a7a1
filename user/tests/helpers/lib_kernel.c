// SPDX-License-Identifier: GPL-2.0
/*
 * lib_kernel PID: libmemtrack's netlink requests against the loaded module,
 * for tests/guest/test_stream.py to compare with /proc/memtrack.  Prints one
 * "key value..." line per fact; exits 1 on any failed call.  Last, the heap
 * bytes in use that 200 handles opened, asked and closed left behind, after
 * 50 first ones ("handles-heap-growth N"; glibc's mallinfo2()).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libmemtrack.h"

static int fail(const char *what, int err)
{
	printf("error %s %d %s\n", what, err, mt_errmsg());
	return 1;
}

/* A handle that asks once: what it allocated must all go at mt_close(). */
static int one_handle(void)
{
	struct memtrack_summary s;
	struct mt_handle *h = mt_open(0);
	int err;

	if (!h)
		return fail("open", -errno);
	err = mt_get_summary(h, &s);
	mt_close(h);
	return err ? fail("summary", err) : 0;
}

static int handles_heap(void)
{
	size_t before;
	int i;

	/* the first ones allocate what libnl and libc keep for the process */
	for (i = 0; i < 50; i++)
		if (one_handle())
			return 1;
	before = mallinfo2().uordblks;
	for (i = 0; i < 200; i++)
		if (one_handle())
			return 1;
	printf("handles-heap-growth %lld\n",
	       (long long)mallinfo2().uordblks - (long long)before);
	return 0;
}

int main(int argc, char **argv)
{
	pid_t pid = argc > 1 ? atoi(argv[1]) : 0;
	struct memtrack_task *rows, t;
	struct memtrack_summary s;
	struct mt_task_filter f = { .tgid = pid };
	struct mt_config c, c2;
	struct mt_handle *h;
	size_t n, i, live = 0;
	int err;

	h = mt_open(0);
	if (!h)
		return fail("open", -errno);
	err = mt_get_summary(h, &s);
	if (err)
		return fail("summary", err);
	printf("summary abi %u processes %u threads %u\n", s.abi_version,
	       s.processes, s.threads);
	err = mt_dump_tasks(h, NULL, &rows, &n);
	if (err)
		return fail("dump", err);
	for (i = 0; i < n; i++)
		live += !rows[i].exited;
	printf("dump rows %zu live %zu\n", n, live);
	free(rows);
	err = mt_dump_tasks(h, &f, &rows, &n);
	if (err)
		return fail("dump-tgid", err);
	printf("dump-tgid rows %zu pid %d\n", n, n ? rows[0].pid : 0);
	free(rows);
	err = mt_get_task(h, pid, false, &t);
	if (err)
		return fail("task", err);
	printf("task pid %d threads %u rss_anon %llu mmap_calls %llu comm %s\n",
	       t.pid, t.threads, (unsigned long long)t.mm.rss_anon,
	       (unsigned long long)t.counters[MEMTRACK_CTR_MMAP_CALLS], t.comm);
	err = mt_dump_threads(h, pid, &rows, &n);
	if (err)
		return fail("threads", err);
	printf("threads rows %zu\n", n);
	free(rows);
	printf("task-unknown %d\n", mt_get_task(h, 4000000, false, &t));
	err = mt_get_config(h, &c);
	if (err)
		return fail("config", err);
	memset(&c2, 0, sizeof(c2));
	c2.retention_ms = 12345;
	err = mt_set_config(h, &c2);
	if (err)
		return fail("set-config", err);
	err = mt_get_config(h, &c2);
	if (err)
		return fail("config2", err);
	printf("config retention %lld set %lld hooks %zu\n",
	       (long long)c.retention_ms, (long long)c2.retention_ms, c2.nr_hooks);
	/* Hooks only: retention_ms < 0 must leave it as it is. */
	memset(&c2, 0, sizeof(c2));
	c2.retention_ms = -1;
	c2.nr_hooks = 1;
	snprintf(c2.hooks[0].name, sizeof(c2.hooks[0].name), "oom");
	c2.hooks[0].enabled = true;
	err = mt_set_config(h, &c2);
	if (err)
		return fail("set-hooks-only", err);
	err = mt_get_config(h, &c2);
	if (err)
		return fail("config3", err);
	printf("hooks-only retention %lld\n", (long long)c2.retention_ms);
	c.nr_hooks = 0;
	err = mt_set_config(h, &c);
	if (err)
		return fail("restore-config", err);
	mt_close(h);
	return handles_heap();
}
