// SPDX-License-Identifier: LGPL-2.1
/*
 * The data source's output for tests: "source NAME", the system figures as
 * "sys KEY VALUE" lines, then one "task k=v ..." line per row, of every
 * process or (-T TGID) of one process's threads.  --proc forces /proc,
 * --module the module, --no-cgroup leaves /proc rows without cgroup_id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libmemtrack.h"

static void print_row(const struct memtrack_task *t)
{
	printf("task pid=%d tgid=%d ppid=%d uid=%u threads=%u exited=%u "
	       "rss_anon=%llu rss_file=%llu rss_shmem=%llu swap=%llu "
	       "vm_total=%llu min_flt=%llu maj_flt=%llu cgroup_id=%llu "
	       "utime_ns=%llu stime_ns=%llu start_ns=%llu comm=%s\n",
	       t->pid, t->tgid, t->ppid, t->uid, t->threads, t->exited,
	       (unsigned long long)t->mm.rss_anon,
	       (unsigned long long)t->mm.rss_file,
	       (unsigned long long)t->mm.rss_shmem,
	       (unsigned long long)t->mm.swap,
	       (unsigned long long)t->mm.vm_total,
	       (unsigned long long)t->counters[MEMTRACK_CTR_MIN_FLT],
	       (unsigned long long)t->counters[MEMTRACK_CTR_MAJ_FLT],
	       (unsigned long long)t->cgroup_id,
	       (unsigned long long)t->utime_ns,
	       (unsigned long long)t->stime_ns,
	       (unsigned long long)t->start_ns, t->comm);
}

int main(int argc, char **argv)
{
	struct memtrack_task *rows;
	struct mt_source *src;
	struct mt_sysinfo si;
	int flags = 0, i;
	pid_t tgid = 0;
	size_t n, k;
	int err;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--proc"))
			flags |= MT_SOURCE_PROC;
		else if (!strcmp(argv[i], "--module"))
			flags |= MT_SOURCE_MODULE;
		else if (!strcmp(argv[i], "--no-cgroup"))
			flags |= MT_SOURCE_NO_CGROUP;
		else if (!strcmp(argv[i], "-T") && i + 1 < argc)
			tgid = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: source_dump [--proc|--module] [--no-cgroup] [-T TGID]\n");
			return 2;
		}
	}
	src = mt_source_open(flags);
	if (!src) {
		fprintf(stderr, "source_dump: %s\n", mt_errmsg());
		return 1;
	}
	printf("source %s\nsys is_module %d\n", mt_source_name(src),
	       mt_source_is_module(src));
	err = mt_source_sysinfo(src, &si);
	if (!err) {
		printf("sys module %d\nsys mem_total %llu\nsys mem_free %llu\n"
		       "sys swap_total %llu\nsys oom_kills %llu\n"
		       "sys page_allocs %llu\nsys kmallocs %llu\n"
		       "sys pgfault %llu\nsys pgmajfault %llu\n", si.module,
		       (unsigned long long)si.sum.mem_total,
		       (unsigned long long)si.sum.mem_free,
		       (unsigned long long)si.swap_total,
		       (unsigned long long)si.sum.oom_kills,
		       (unsigned long long)si.sum.page_allocs,
		       (unsigned long long)si.sum.kmallocs,
		       (unsigned long long)si.pgfault,
		       (unsigned long long)si.pgmajfault);
		err = tgid ? mt_source_threads(src, tgid, &rows, &n) :
			     mt_source_tasks(src, &rows, &n);
	}
	if (err) {
		fprintf(stderr, "source_dump: %s\n", mt_errmsg());
		mt_source_close(src);
		return 1;
	}
	for (k = 0; k < n; k++)
		print_row(&rows[k]);
	free(rows);
	mt_source_close(src);
	return 0;
}
