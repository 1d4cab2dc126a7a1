// SPDX-License-Identifier: GPL-2.0
/*
 * PSS (each page divided among the processes mapping it) and USS (the pages
 * only this process maps: Private_Clean + Private_Dirty + Private_Hugetlb)
 * from /proc/PID/smaps_rollup, in kB there, in bytes here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "top_smaps.h"

/* The value of "Name:   123 kB" if line starts with name, in bytes. */
static bool field(const char *line, const char *name, uint64_t *v)
{
	size_t n = strlen(name);

	if (strncmp(line, name, n) || line[n] != ':')
		return false;
	*v = strtoull(line + n + 1, NULL, 10) << 10;
	return true;
}

int top_smaps_read(pid_t pid, uint64_t *pss, uint64_t *uss)
{
	char path[64], buf[4096], *line, *nl;
	uint64_t v, priv = 0;
	bool got_pss = false;
	ssize_t len, got = 0;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((len = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += len;
	err = len < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[got] = '\0';
	for (line = buf; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = '\0';
		if (field(line, "Pss", &v)) {
			*pss = v;
			got_pss = true;
		} else if (field(line, "Private_Clean", &v) ||
			   field(line, "Private_Dirty", &v) ||
			   field(line, "Private_Hugetlb", &v)) {
			priv += v;
		}
	}
	/* A kernel thread has no mm: an empty file. */
	if (!got_pss)
		return -ENODATA;
	*uss = priv;
	return 0;
}

void top_rows_smaps(struct top_row *rows, size_t n)
{
	struct top_row *r;
	size_t i;

	for (i = 0; i < n; i++) {
		r = &rows[i];
		r->has_smaps = !r->group && !r->thread &&
			       !top_smaps_read(r->t.pid, &r->pss, &r->uss);
	}
}
