// SPDX-License-Identifier: GPL-2.0
/*
 * The aggregator's reader of node snapshots (versions 2 and 3,
 * relay_proto.h).
 * A thousand nodes send one a second each: the fields are read by hand,
 * in one pass, without copying the text; anything out of place rejects
 * the whole snapshot (the counts of the first line must match too).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"

struct cursor {
	const char *p, *end;
};

/* A decimal number and the space after it. */
static int num(struct cursor *c, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		unsigned int d = *c->p++ - '0';

		if (v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (c->p == s || c->p == c->end || *c->p != ' ')
		return -1;
	c->p++;
	*out = v;
	return 0;
}

/* An escaped name of at most max - 1 bytes, then end ('\n' or ' '). */
static int name(struct cursor *c, char *out, size_t max, char end)
{
	size_t n = 0;

	while (c->p < c->end && *c->p != end) {
		unsigned char ch = *c->p++;

		if (ch <= 0x20 || ch >= 0x7f)
			return -1;
		if (ch == '\\') {
			int i, v = 0;

			if (c->end - c->p < 3)
				return -1;
			for (i = 0; i < 3; i++) {
				if (c->p[i] < '0' || c->p[i] > '7')
					return -1;
				v = v * 8 + c->p[i] - '0';
			}
			if (v > 0xff || !v)
				return -1;
			c->p += 3;
			ch = v;
		}
		if (n == max - 1)
			return -1;
		out[n++] = ch;
	}
	if (!n || c->p == c->end)
		return -1;
	c->p++;
	out[n] = 0;
	return 0;
}

/* A name of where the row runs ("-": none) into the snapshot's names. */
static int where(struct cursor *c, struct agg_snapshot *s, uint32_t *off)
{
	char buf[256];

	if (name(c, buf, sizeof(buf), ' '))
		return -1;
	if (!strcmp(buf, "-")) {
		*off = 0;		/* "" */
		return 0;
	}
	*off = s->names_len;
	memcpy(s->names + s->names_len, buf, strlen(buf) + 1);
	s->names_len += strlen(buf) + 1;
	return 0;
}

static int row(struct cursor *c, char tag, struct agg_snapshot *s,
	       unsigned int version, struct agg_row *r)
{
	uint64_t first;
	int w;

	if (c->end - c->p < 2 || c->p[0] != tag || c->p[1] != ' ')
		return -1;
	c->p += 2;
	if (num(c, tag == 't' ? INT32_MAX : UINT32_MAX, &first) ||
	    num(c, UINT64_MAX, &r->anon) || num(c, UINT64_MAX, &r->file) ||
	    num(c, UINT64_MAX, &r->shmem) || num(c, UINT64_MAX, &r->swap))
		return -1;
	for (w = 0; version >= 3 && w < AGG_NR_WHERE; w++)
		if (where(c, s, &r->where[w]))
			return -1;
	if (name(c, r->comm, MEMTRACK_COMM_LEN, '\n'))
		return -1;
	if (tag == 't')
		r->pid = first;
	else
		r->nproc = first;
	return 0;
}

/* The most rows a snapshot can hold: each takes at least 14 bytes. */
#define MIN_ROW_LEN	14

int agg_snapshot_parse(const char *text, size_t len, struct agg_snapshot *s,
		       char *err, size_t errlen)
{
	struct cursor c = { text, text + len };
	const char *nl = memchr(text, '\n', len);
	unsigned int version, nprogs, nprocs;
	char source[16], tail;
	char first[96];
	size_t i;

	memset(s, 0, sizeof(*s));
	if (!nl || (size_t)(nl - text) >= sizeof(first)) {
		snprintf(err, errlen, "snapshot: no first line");
		return -EBADMSG;
	}
	memcpy(first, text, nl - text);
	first[nl - text] = 0;
	if (sscanf(first, "snapshot/%u %15s %u %u%c", &version, source, &nprogs,
		   &nprocs, &tail) != 4 || version < 2 ||
	    version > MTN_SNAPSHOT_VERSION) {
		snprintf(err, errlen, "snapshot: bad first line (version 2 to %d wanted)",
			 MTN_SNAPSHOT_VERSION);
		return -EBADMSG;
	}
	if ((uint64_t)nprogs + nprocs > len / MIN_ROW_LEN) {
		snprintf(err, errlen, "snapshot: more rows announced than sent");
		return -EBADMSG;
	}
	strcpy(s->source, source);
	s->progs = calloc(nprogs + 1, sizeof(*s->progs));
	s->procs = calloc(nprocs + 1, sizeof(*s->procs));
	/* the names are no longer than the text that holds them */
	s->names = malloc(len + 1);
	if (s->names) {
		s->names[0] = '\0';
		s->names_len = 1;
	}
	if (!s->progs || !s->procs || !s->names) {
		snprintf(err, errlen, "out of memory");
		agg_snapshot_free(s);
		return -ENOMEM;
	}
	c.p = nl + 1;
	for (i = 0; i < nprogs; i++)
		if (row(&c, 'p', s, version, &s->progs[i]))
			goto bad;
	for (i = 0; i < nprocs; i++)
		if (row(&c, 't', s, version, &s->procs[i]))
			goto bad;
	if (c.p != c.end)
		goto bad;
	s->nprogs = nprogs;
	s->nprocs = nprocs;
	return 0;
bad:
	snprintf(err, errlen, "snapshot: malformed line at byte %zu",
		 (size_t)(c.p - text));
	agg_snapshot_free(s);
	return -EBADMSG;
}

void agg_snapshot_free(struct agg_snapshot *s)
{
	free(s->progs);
	free(s->procs);
	free(s->names);
	s->progs = s->procs = NULL;
	s->names = NULL;
	s->nprogs = s->nprocs = s->names_len = 0;
}

void agg_snapshot_swap(struct agg_snapshot *a, struct agg_snapshot *b)
{
	struct agg_snapshot t = *a;

	*a = *b;
	*b = t;
}
