// SPDX-License-Identifier: GPL-2.0
/* memtrack-top's toprc (top_toprc.h): read with inih, written whole. */
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

const char *top_sort_title(enum top_sort sort)
{
	size_t i;

	if (sort == TOP_SORT_TIME)
		return "TIME";
	for (i = 0; i < top_nr_columns; i++)
		if (top_columns[i].sort == sort && sort != TOP_SORT_NONE)
			return top_columns[i].title;
	return NULL;
}

int top_sort_from_title(const char *title, enum top_sort *sort)
{
	int i;

	if (!strcasecmp(title, "TIME")) {
		*sort = TOP_SORT_TIME;
		return 0;
	}
	i = top_column_index(title);
	if (i < 0 || top_columns[i].sort == TOP_SORT_NONE)
		return -1;
	*sort = top_columns[i].sort;
	return 0;
}

struct parse {
	struct top_toprc rc;
	const char *why;
};

/* "PID,USER,..." into a layout: each known title once. */
static const char *parse_columns(const char *v, struct top_layout *l)
{
	char buf[512], *save, *tok;
	uint64_t seen = 0;
	int i;

	if (strlen(v) >= sizeof(buf))
		return "too long";
	strcpy(buf, v);
	l->n = 0;
	for (tok = strtok_r(buf, ", ", &save); tok;
	     tok = strtok_r(NULL, ", ", &save)) {
		i = top_column_index(tok);
		if (i < 0)
			return "an unknown column (F2 lists them)";
		if (seen & (1ULL << i))
			return "a column given twice";
		seen |= 1ULL << i;
		l->col[l->n++] = (uint8_t)i;
	}
	return l->n ? NULL : "no column";
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
		p->why = parse_columns(value, &p->rc.layout);
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
	if (line == -1 && errno == ENOENT)
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
	size_t i;
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
	for (i = 0; i < rc->layout.n; i++)
		fprintf(f, "%s%s", i ? "," : "",
			top_columns[rc->layout.col[i]].title);
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
