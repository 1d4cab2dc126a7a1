// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's toprc (top_toprc.h): read with inih, written whole; the
 * columns and the sort key by their titles (a column's name read too).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ini.h>
#include "top_toprc.h"

#define SECTION		"memtrack-top"
/* a line of the file at most, where inih's are 200 bytes */
#define TOPRC_LINE	160

int top_toprc_path(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		snprintf(buf, len, "%s/memtrack/toprc", xdg);
	else if (home && home[0])
		snprintf(buf, len, "%s/.config/memtrack/toprc", home);
	else
		return -1;
	return 0;
}

const char *top_sort_title(int sort)
{
	return sort >= 0 && (size_t)sort < top_nr_columns &&
	       top_columns[sort].sort ? top_columns[sort].title : NULL;
}

int top_sort_from_title(const char *title, int *sort)
{
	int i = top_column_sort_find(title);

	if (i < 0)
		return -1;
	*sort = i;
	return 0;
}

struct parse {
	struct top_toprc rc;
	const char *why;
	bool columns;			/* columns seen: more of them */
};

/*
 * "PID,USER,..." into a layout: each known title once.  A long list goes
 * on over indented lines, which inih hands over as the same key again:
 * more is those, added to the layout.
 */
static const char *parse_columns(const char *v, struct top_layout *l,
				 bool more)
{
	char buf[512], *save, *tok;
	uint64_t seen = top_layout_mask(l);
	int i;

	if (strlen(v) >= sizeof(buf))
		return "too long";
	strcpy(buf, v);
	if (!more) {
		l->n = 0;
		seen = 0;
	}
	for (tok = strtok_r(buf, ", ", &save); tok;
	     tok = strtok_r(NULL, ", ", &save)) {
		/* a title, as written, or a name */
		i = top_column_find(tok);
		if (i < 0 || top_columns[i].needs & TOP_SHOW_NEVER)
			return "an unknown column (F2 lists them)";
		if (seen & (1ULL << i))
			return "a column given twice";
		seen |= 1ULL << i;
		l->col[l->n++] = (uint8_t)i;
	}
	return l->n || more ? NULL : "no column";
}

static int handle(void *arg, const char *section, const char *name,
		  const char *value)
{
	struct parse *p = arg;
	char *end;

	if (strcmp(section, SECTION)) {
		p->why = "unknown section (only [" SECTION "])";
		return 0;
	}
	if (!strcmp(name, "columns")) {
		p->why = parse_columns(value, &p->rc.layout, p->columns);
		p->columns = true;
	} else if (!strcmp(name, "sort")) {
		p->why = top_sort_from_title(value, &p->rc.sort) ?
			 "sort: a sortable column's title, or TIME" : NULL;
		p->rc.has_sort = true;
	} else if (!strcmp(name, "delay")) {
		p->rc.delay = strtod(value, &end);
		p->why = *end || end == value || !isfinite(p->rc.delay) ||
			 p->rc.delay < 0.1 || p->rc.delay > 3600 ?
			 "delay: seconds, 0.1..3600" : NULL;
		p->rc.has_delay = true;
	} else {
		p->why = "unknown key (columns, sort, delay)";
	}
	return !p->why;
}

int top_toprc_load(const char *path, struct top_toprc *rc, char *err,
		   size_t errlen)
{
	struct parse p = { .rc = *rc };
	int line;

	line = ini_parse(path, handle, &p);
	/*
	 * None, or one that is not ours to read (another user's HOME kept
	 * by sudo -u): the defaults, as top(1) takes them then.
	 */
	if (line == -1 && (errno == ENOENT || errno == EACCES))
		return 0;
	if (line == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (line) {
		snprintf(err, errlen, "%s:%d: %s", path, line,
			 p.why ? p.why : "not a key = value line");
		return -1;
	}
	*rc = p.rc;
	return 0;
}

/* mkdir -p of path's directory. */
static int make_dirs(const char *path)
{
	char dir[4096], *s;

	if (strlen(path) >= sizeof(dir))
		return -ENAMETOOLONG;
	strcpy(dir, path);
	for (s = dir + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

int top_toprc_save(const char *path, const struct top_toprc *rc)
{
	char tmp[4200];
	const char *title;
	size_t i, len;
	FILE *f;
	int err = make_dirs(path);

	if (err)
		return err;
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "# memtrack-top's settings, written by its F2 screen\n[%s]\ncolumns = ",
		SECTION);
	/* inih reads lines of 200 bytes: a longer list goes on over indented
	 * lines */
	for (i = 0, len = 10; i < rc->layout.n; i++) {
		title = top_columns[rc->layout.col[i]].title;
		if (i && len + 1 + strlen(title) > TOPRC_LINE) {
			fputs(",\n\t", f);
			len = 8;
		} else if (i) {
			fputc(',', f);
			len++;
		}
		fputs(title, f);
		len += strlen(title);
	}
	fprintf(f, "\nsort = %s\ndelay = %g\n",
		top_sort_title(rc->sort) ? top_sort_title(rc->sort) : "RSS",
		rc->delay);
	if (fclose(f)) {
		err = -errno;
		unlink(tmp);
		return err;
	}
	if (rename(tmp, path)) {
		err = -errno;
		unlink(tmp);
		return err;
	}
	return 0;
}
