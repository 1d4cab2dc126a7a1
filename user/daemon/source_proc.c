// SPDX-License-Identifier: GPL-2.0
/*
 * Samples from /proc, for machines without memtrack.ko, through
 * libmemtrack's /proc readers (the ones memtrack-top uses): per process
 * /proc/PID/stat (comm, faults, start time) and status (RssAnon, RssFile,
 * RssShmem, VmSwap), the system's memory from meminfo; and vmstat here,
 * for the fault counts the library's summary has no field for.  /proc has
 * no per-process page allocation, kernel heap or reclaim counts: those
 * families are left out.  A process that exits between the directory
 * listing and the reads is skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/memtrack.h>

#include "memtrackd.h"
#include "memtrack.h"
#include "source.h"		/* libmemtrack's /proc readers */

struct proc_src {
	int dirfd;			/* /proc, for vmstat */
};

static ssize_t read_at(int dirfd, const char *path, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			got = -errno;
			break;
		}
		if (!n)
			break;
		got += n;
	}
	close(fd);
	if (got >= 0)
		buf[got] = 0;
	return got;
}

/* Processes: libmemtrack's rows, without the cgroup nobody here reads. */
static int read_processes(struct mtd_sample *s)
{
	struct memtrack_task *t;
	size_t n, i;
	int err;

	err = mt_proc_tasks_flags(&t, &n, MT_PROC_NO_CGROUP);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		struct mtd_proc *p = mtd_sample_add(s);

		if (!p) {
			free(t);
			return -ENOMEM;
		}
		p->pid = t[i].pid;
		p->start = t[i].start_ns;	/* with pid, who it is */
		snprintf(p->comm, sizeof(p->comm), "%.*s",
			 (int)sizeof(t[i].comm), t[i].comm);
		p->rss_anon = t[i].mm.rss_anon;
		p->rss_file = t[i].mm.rss_file;
		p->rss_shmem = t[i].mm.rss_shmem;
		p->swap = t[i].mm.swap;
		p->ctr[MTD_C_MIN_FLT] = t[i].counters[MEMTRACK_CTR_MIN_FLT];
		p->ctr[MTD_C_MAJ_FLT] = t[i].counters[MEMTRACK_CTR_MAJ_FLT];
	}
	free(t);
	s->ctr_have = 1U << MTD_C_MIN_FLT | 1U << MTD_C_MAJ_FLT;
	return 0;
}

/* The system's memory: libmemtrack's meminfo reader. */
static void read_meminfo(struct mtd_sample *s)
{
	struct mt_sysinfo si = { 0 };
	const struct memtrack_summary *m = &si.sum;
	size_t i;

	if (mt_proc_meminfo(&si))
		return;
	/* file_pages: Cached + Buffers + SwapCached, as the module counts */
	s->mem[MTD_M_TOTAL] = m->mem_total;
	s->mem[MTD_M_FREE] = m->mem_free;
	s->mem[MTD_M_AVAILABLE] = si.mem_available;
	s->mem[MTD_M_FILE] = m->file_pages;
	s->mem[MTD_M_ANON] = m->anon_pages;
	s->mem[MTD_M_SHMEM] = m->shmem;
	s->mem[MTD_M_MAPPED] = m->mapped;
	s->mem[MTD_M_DIRTY] = m->dirty;
	s->mem[MTD_M_WRITEBACK] = m->writeback;
	s->mem[MTD_M_SLAB_RECLAIMABLE] = m->slab_reclaimable;
	s->mem[MTD_M_SLAB_UNRECLAIMABLE] = m->slab_unreclaimable;
	s->mem[MTD_M_PAGE_TABLES] = m->page_tables;
	s->mem[MTD_M_SWAP_TOTAL] = si.swap_total;
	s->mem[MTD_M_SWAP_FREE] = m->swap_free;
	for (i = 0; i < MTD_NR_MEM; i++)
		s->mem_have |= 1U << i;
}

static void read_vmstat(struct proc_src *ps, struct mtd_sample *s)
{
	char buf[16384], *line, *save = NULL;
	char name[64];
	unsigned long long v;

	if (read_at(ps->dirfd, "vmstat", buf, sizeof(buf)) <= 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		int k = -1;

		if (sscanf(line, "%63s %llu", name, &v) != 2)
			continue;
		if (!strncmp(name, "pgalloc_", 8))
			k = MTD_S_PG_ALLOC;
		else if (!strcmp(name, "pgfree"))
			k = MTD_S_PG_FREE;
		else if (!strncmp(name, "allocstall_", 11))
			k = MTD_S_RECLAIM_STALLS;
		else if (!strcmp(name, "oom_kill"))
			k = MTD_S_OOM_KILLS;
		else if (!strcmp(name, "pgfault"))
			k = MTD_S_PG_FAULT;
		else if (!strcmp(name, "pgmajfault"))
			k = MTD_S_PG_MAJFAULT;
		if (k < 0)
			continue;
		s->sys[k] += v;
		s->sys_have |= 1U << k;
	}
}

static int proc_sample(struct mtd_source *src, struct mtd_sample *s)
{
	int err = read_processes(s);

	if (err)
		return err;
	read_meminfo(s);
	read_vmstat(src->priv, s);
	return 0;
}

static int no_events_fd(struct mtd_source *src)
{
	(void)src;
	return -1;
}

static void proc_close(struct mtd_source *src)
{
	struct proc_src *ps = src->priv;

	close(ps->dirfd);
	free(ps);
}

static const struct mtd_source_ops proc_ops = {
	.name = "proc",
	.sample = proc_sample,
	.events_fd = no_events_fd,
	.close = proc_close,
};

int mtd_source_proc_open(struct mtd_source *src, char *err, size_t errlen)
{
	struct proc_src *ps = calloc(1, sizeof(*ps));

	if (!ps) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ps->dirfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ps->dirfd < 0) {
		int e = errno;

		snprintf(err, errlen, "/proc: %s", strerror(e));
		free(ps);
		return -e;
	}
	src->ops = &proc_ops;
	src->priv = ps;
	return 0;
}
