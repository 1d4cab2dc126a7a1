// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: /proc/PID/maps, one entry per mapping.  The tracer, the
 * unwinder, --by-lib and --scan each filter it their own way.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "grow.h"

#define DELETED " (deleted)"
#define DELETED_LEN (sizeof(DELETED) - 1)

void mt_procmaps_free(struct mt_procmap *v, size_t n)
{
	while (v && n--)
		free(v[n].path);
	free(v);
}

/* One line of maps into m; false for a line that is not a mapping. */
static bool parse_line(char *line, struct mt_procmap *m)
{
	size_t len;
	int at = -1;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %"
		   SCNu64 " %n", &m->start, &m->end, m->perms, &m->offset,
		   &m->dev_major, &m->dev_minor, &m->inode, &at) != 7 || at < 0)
		return false;
	line += at;
	len = strcspn(line, "\n");
	line[len] = '\0';
	/* the file was unlinked or replaced after it was mapped */
	m->deleted = len > DELETED_LEN &&
		     !strcmp(line + len - DELETED_LEN, DELETED);
	if (m->deleted)
		line[len - DELETED_LEN] = '\0';
	m->path = strdup(line);
	return true;
}

int mt_procmaps_read(pid_t pid, struct mt_procmap **out, size_t *n)
{
	struct mt_procmap *v = NULL, m;
	char maps[64], *line = NULL;
	size_t cap = 0, len = 0, nr = 0;
	int err = 0;
	FILE *f;

	*out = NULL;
	*n = 0;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f) {
		err = errno;
		return mt_seterr(err == ENOENT ? -ESRCH : -err, "%s: %s", maps,
				 strerror(err));
	}
	while (getline(&line, &len, f) > 0) {
		memset(&m, 0, sizeof(m));
		if (!parse_line(line, &m))
			continue;
		if (!m.path) {
			err = -ENOMEM;
			break;
		}
		if (mt_grow((void **)&v, &cap, nr + 1, sizeof(*v), 64)) {
			free(m.path);
			err = -ENOMEM;
			break;
		}
		v[nr++] = m;
	}
	if (!err && ferror(f))
		err = mt_seterr(-EIO, "%s: %s", maps, strerror(EIO));
	else if (err)
		err = mt_seterr(err, "out of memory");
	fclose(f);
	free(line);
	if (err) {
		mt_procmaps_free(v, nr);
		return err;
	}
	*out = v;
	*n = nr;
	return 0;
}
