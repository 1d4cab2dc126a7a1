// SPDX-License-Identifier: GPL-2.0
/*
 * Samples from /proc, for machines without memtrack.ko: per process
 * /proc/PID/stat (comm, faults, start time) and status (RssAnon, RssFile,
 * RssShmem, VmSwap); the system from meminfo and vmstat.  /proc has no
 * per-process page allocation, kernel heap or reclaim counts: those
 * families are left out.  A process that exits between the directory
 * listing and the reads is skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memtrackd.h"

#define STAT_FORMAT \
	"%*c %*d %*d %*d %*d %*d %*u %llu %*u %llu %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu"

struct proc_src {
	int dirfd;			/* /proc, opened before dropping root */
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

/* "Key:   123 kB" lines: the value of key in bytes (kB * 1024). */
static bool kb_field(const char *text, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p) {
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			*out = strtoull(p + klen + 1, NULL, 10) * 1024;
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

static int read_process(struct proc_src *ps, const char *pid,
			struct mtd_proc *p)
{
	char path[64], buf[4096];
	unsigned long long minflt, majflt, start;
	const char *open_p, *close_p;
	size_t comm_len;

	snprintf(path, sizeof(path), "%s/stat", pid);
	if (read_at(ps->dirfd, path, buf, sizeof(buf)) <= 0)
		return -1;
	/* comm may hold anything, ')' included: it ends at the last ')' */
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p)
		return -1;
	comm_len = close_p - open_p - 1;
	if (comm_len >= MTD_COMM_LEN)
		comm_len = MTD_COMM_LEN - 1;
	memcpy(p->comm, open_p + 1, comm_len);
	p->comm[comm_len] = 0;
	/*
	 * Fields after the comm: state ppid pgrp session tty_nr tpgid flags
	 * minflt cminflt majflt cmajflt utime stime cutime cstime priority
	 * nice num_threads itrealvalue starttime.
	 */
	if (sscanf(close_p + 2, STAT_FORMAT, &minflt, &majflt, &start) != 3)
		return -1;
	p->pid = atoi(pid);
	p->start = start;
	p->ctr[MTD_C_MIN_FLT] = minflt;
	p->ctr[MTD_C_MAJ_FLT] = majflt;

	snprintf(path, sizeof(path), "%s/status", pid);
	if (read_at(ps->dirfd, path, buf, sizeof(buf)) <= 0)
		return -1;
	/* kernel threads have no Rss lines: zero */
	kb_field(buf, "RssAnon", &p->rss_anon);
	kb_field(buf, "RssFile", &p->rss_file);
	kb_field(buf, "RssShmem", &p->rss_shmem);
	kb_field(buf, "VmSwap", &p->swap);
	return 0;
}

static const struct {
	const char *key;
	int mem;
} meminfo_keys[] = {
	{ "MemTotal", MTD_M_TOTAL }, { "MemFree", MTD_M_FREE },
	{ "MemAvailable", MTD_M_AVAILABLE }, { "AnonPages", MTD_M_ANON },
	{ "Shmem", MTD_M_SHMEM }, { "Mapped", MTD_M_MAPPED },
	{ "Dirty", MTD_M_DIRTY }, { "Writeback", MTD_M_WRITEBACK },
	{ "SReclaimable", MTD_M_SLAB_RECLAIMABLE },
	{ "SUnreclaim", MTD_M_SLAB_UNRECLAIMABLE },
	{ "PageTables", MTD_M_PAGE_TABLES },
	{ "SwapTotal", MTD_M_SWAP_TOTAL }, { "SwapFree", MTD_M_SWAP_FREE },
};

static void read_meminfo(struct proc_src *ps, struct mtd_sample *s)
{
	uint64_t cached, buffers, swapcached;
	char buf[8192];
	size_t i;

	if (read_at(ps->dirfd, "meminfo", buf, sizeof(buf)) <= 0)
		return;
	for (i = 0; i < ARRAY_SIZE(meminfo_keys); i++)
		if (kb_field(buf, meminfo_keys[i].key,
			     &s->mem[meminfo_keys[i].mem]))
			s->mem_have |= 1U << meminfo_keys[i].mem;
	/*
	 * The kernel's file pages (what the module reports): meminfo's Cached
	 * leaves out buffers and the swap cache.
	 */
	if (kb_field(buf, "Cached", &cached) &&
	    kb_field(buf, "Buffers", &buffers) &&
	    kb_field(buf, "SwapCached", &swapcached)) {
		s->mem[MTD_M_FILE] = cached + buffers + swapcached;
		s->mem_have |= 1U << MTD_M_FILE;
	}
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
	struct proc_src *ps = src->priv;
	struct dirent *de;
	DIR *d;
	int fd;

	fd = openat(ps->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct mtd_proc *p;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		p = mtd_sample_add(s);
		if (!p) {
			closedir(d);
			return -ENOMEM;
		}
		if (read_process(ps, de->d_name, p))
			s->nr--;	/* gone meanwhile */
	}
	closedir(d);
	s->ctr_have = 1U << MTD_C_MIN_FLT | 1U << MTD_C_MAJ_FLT;
	read_meminfo(ps, s);
	read_vmstat(ps, s);
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
