// SPDX-License-Identifier: GPL-2.0
/*
 * The detail pane's contents (top_detail.h): lines of text the view draws.
 * Sizes in KiB as in the table; the maps summary from /proc/PID/maps
 * (virtual sizes by kind), the open files from /proc/PID/fd, both read
 * as the pane is drawn and only for the one process.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libmemtrack.h"
#include "top_detail.h"

#define KIB(x)	((unsigned long long)(x) >> 10)

void top_detail_toggle(struct top_detail *d, enum top_detail_kind kind)
{
	d->kind = d->kind == kind ? TOP_DETAIL_NONE : kind;
}

void top_detail_sample(struct top_detail *d, const struct top_row *r)
{
	if (!r || r->group) {
		d->pid = 0;
		d->nrss = 0;
		return;
	}
	if (r->t.pid != d->pid || r->t.start_ns != d->start_ns) {
		d->pid = r->t.pid;
		d->start_ns = r->t.start_ns;
		d->nrss = 0;
	}
	if (d->nrss == TOP_DETAIL_HISTORY) {
		memmove(d->rss, d->rss + 1, (d->nrss - 1) * sizeof(d->rss[0]));
		d->nrss--;
	}
	d->rss[d->nrss++] = top_rss(&r->t);
}

/* The history as one character a sample, ' ' (lowest) to '@' (highest). */
static void sparkline(const struct top_detail *d, char *buf, size_t len,
		      uint64_t *lo, uint64_t *hi)
{
	static const char levels[] = " .:-=+*#%@";
	size_t i, k = 0;

	*lo = *hi = d->nrss ? d->rss[0] : 0;
	for (i = 0; i < d->nrss; i++) {
		if (d->rss[i] < *lo)
			*lo = d->rss[i];
		if (d->rss[i] > *hi)
			*hi = d->rss[i];
	}
	for (i = 0; i < d->nrss && k + 1 < len; i++)
		buf[k++] = *hi == *lo ? '-' :
			   levels[(d->rss[i] - *lo) * 9 / (*hi - *lo)];
	buf[k] = '\0';
}

struct maps_sum {
	unsigned int n, nfile, nanon;
	uint64_t file, anon, heap, stack;
};

/* /proc/PID/maps by kind: -errno if it cannot be read. */
static int maps_summary(pid_t pid, struct maps_sum *m)
{
	char path[32], line[512], name[256];
	unsigned long long lo, hi;
	FILE *f;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		name[0] = '\0';
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %255s", &lo, &hi,
			   name) < 2)
			continue;
		m->n++;
		if (!strcmp(name, "[heap]"))
			m->heap += hi - lo;
		else if (!strcmp(name, "[stack]"))
			m->stack += hi - lo;
		else if (name[0] == '/') {
			m->nfile++;
			m->file += hi - lo;
		} else if (!name[0]) {
			m->nanon++;
			m->anon += hi - lo;
		}
	}
	fclose(f);
	return 0;
}

static int memory_lines(const struct top_detail *d, const struct top_row *r,
			bool module, char (*out)[TOP_DETAIL_WIDTH], int max)
{
	const struct memtrack_task *t = &r->t;
	const struct memtrack_mm *mm = &t->mm;
	char spark[TOP_DETAIL_HISTORY + 1];
	struct maps_sum ms;
	uint64_t lo, hi;
	int n = 0, k, len, err;
	unsigned int i;

	snprintf(out[n++], TOP_DETAIL_WIDTH,
		 "memory of %d (%.16s)  user %s  threads %u  ppid %d  (Enter: close)",
		 t->pid, t->comm, r->user, t->threads, t->ppid);
	if (n < max && r->ct) {
		char what[600];
		size_t k;

		/* cut to the line: names can be long */
		mt_container_describe(r->ct, what, sizeof(what));
		k = strlen(what);
		if (r->ct->qos)
			snprintf(what + k, sizeof(what) - k, ", QoS %s",
				 mt_qos_name(r->ct->qos));
		memcpy(out[n], "in ", 3);
		snprintf(out[n] + 3, TOP_DETAIL_WIDTH - 3, "%.*s",
			 TOP_DETAIL_WIDTH - 4, what);
		n++;
	}
	if (n < max)
		snprintf(out[n++], TOP_DETAIL_WIDTH,
			 "RSS %llu KiB = anon %llu + file %llu + shmem %llu   swap %llu   peak %llu",
			 KIB(top_rss(t)), KIB(mm->rss_anon), KIB(mm->rss_file),
			 KIB(mm->rss_shmem), KIB(mm->swap), KIB(mm->rss_peak));
	if (n < max)
		snprintf(out[n++], TOP_DETAIL_WIDTH,
			 "VIRT %llu KiB  data %llu  stack %llu  exec+libs %llu  page tables %llu",
			 KIB(mm->vm_total), KIB(mm->vm_data), KIB(mm->vm_stack),
			 KIB(mm->vm_exec), KIB(mm->pgtables));
	if (n < max) {
		err = maps_summary(t->pid, &ms);
		if (err)
			snprintf(out[n++], TOP_DETAIL_WIDTH, "maps: %s",
				 strerror(-err));
		else
			snprintf(out[n++], TOP_DETAIL_WIDTH,
				 "maps: %u mappings: %u of files %llu KiB, %u anonymous %llu KiB, heap %llu KiB, stack %llu KiB (virtual)",
				 ms.n, ms.nfile, KIB(ms.file), ms.nanon,
				 KIB(ms.anon), KIB(ms.heap), KIB(ms.stack));
	}
	/* the module's counters, as /proc/memtrack/tasks names them */
	for (i = 0; n < max && i < MEMTRACK_NR_COUNTERS;) {
		len = 0;
		out[n][0] = '\0';
		if (!module || !t->detailed) {
			snprintf(out[n++], TOP_DETAIL_WIDTH, "faults: minor %llu major %llu%s",
				 (unsigned long long)t->counters[MEMTRACK_CTR_MIN_FLT],
				 (unsigned long long)t->counters[MEMTRACK_CTR_MAJ_FLT],
				 module ? "  (other counters: not yours to see)" :
				 "  (other counters: with the memtrack module)");
			break;
		}
		/* 8 a line; a line too narrow for them is cut, never overrun */
		for (k = 0; i < MEMTRACK_NR_COUNTERS && k < 8 &&
			    len < TOP_DETAIL_WIDTH; i++, k++)
			len += snprintf(out[n] + len, TOP_DETAIL_WIDTH - len,
					"%s%s %llu", k ? "  " : "",
					mt_counter_name(i),
					(unsigned long long)t->counters[i]);
		n++;
	}
	if (n < max) {
		sparkline(d, spark, sizeof(spark), &lo, &hi);
		snprintf(out[n++], TOP_DETAIL_WIDTH,
			 "RSS, last %zu samples [%s] %llu..%llu KiB", d->nrss,
			 spark, KIB(lo), KIB(hi));
	}
	return n;
}

static int fd_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int file_lines(const struct top_row *r, char (*out)[TOP_DETAIL_WIDTH],
		      int max)
{
	char path[64], target[TOP_DETAIL_WIDTH - 16];
	int fds[1024], nfd = 0, n = 0, i;
	struct dirent *e;
	ssize_t len;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", r->t.pid);
	dir = opendir(path);
	if (!dir) {
		snprintf(out[n++], TOP_DETAIL_WIDTH,
			 "open files of %d (%.16s): %s  (l: close)", r->t.pid,
			 r->t.comm, strerror(errno));
		return n;
	}
	while ((e = readdir(dir)) && nfd < (int)MT_ARRAY_SIZE(fds))
		if (e->d_name[0] != '.')
			fds[nfd++] = atoi(e->d_name);
	closedir(dir);
	qsort(fds, nfd, sizeof(fds[0]), fd_cmp);
	snprintf(out[n++], TOP_DETAIL_WIDTH, "open files of %d (%.16s): %d  (l: close)",
		 r->t.pid, r->t.comm, nfd);
	for (i = 0; i < nfd && n < max; i++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", r->t.pid, fds[i]);
		len = readlink(path, target, sizeof(target) - 1);
		if (len < 0)
			snprintf(target, sizeof(target), "(%s)", strerror(errno));
		else
			target[len] = '\0';
		snprintf(out[n++], TOP_DETAIL_WIDTH, "%5d %s", fds[i], target);
	}
	return n;
}

int top_detail_lines(const struct top_detail *d, const struct top_row *r,
		     bool module, char (*out)[TOP_DETAIL_WIDTH], int max)
{
	if (max <= 0 || d->kind == TOP_DETAIL_NONE ||
	    d->kind == TOP_DETAIL_LEAK)
		return 0;
	if (!r || r->group) {
		snprintf(out[0], TOP_DETAIL_WIDTH,
			 "select one process for its %s",
			 d->kind == TOP_DETAIL_FILES ? "open files" : "memory");
		return 1;
	}
	return d->kind == TOP_DETAIL_FILES ? file_lines(r, out, max) :
		memory_lines(d, r, module, out, max);
}
