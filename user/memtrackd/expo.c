// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus text exposition writer, format 0.0.4: a family's HELP and
 * TYPE lines, a series' name, labels and value, label values escaped (\ "
 * and newline) and made valid UTF-8, the labels a scrape repeats written
 * once; or, with a sink, the same series as data for remote write.
 *
 * Apart from metrics.c, what memtrackd exports from its state, because
 * this knows the format and nothing of the state: metrics.c's families,
 * the relay's (relay.c) and remote write's (remote_write.c) own figures
 * are all written with it, and a change of the format is made here once.
 */
#include <stdlib.h>
#include <string.h>

#include "libmemtrack.h"
#include "expo.h"

/*
 * s as valid UTF-8 (U+FFFD for each bad sequence) into b, with \ " and
 * newline escaped for the text format if escape.
 */
static void put_utf8(struct mtn_buf *b, const char *str, size_t n, bool escape)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run;

	while (i < n && s[i]) {
		int len;

		/* a run of ASCII with nothing to escape at once: most of it */
		for (run = i; run < n && s[run] && s[run] < 0x80 &&
		     !(escape && (s[run] == '\\' || s[run] == '"' ||
				  s[run] == '\n')); run++)
			;
		if (run > i) {
			mtn_buf_append(b, s + i, run - i);
			i = run;
			continue;
		}
		len = mt_utf8_seq(s + i, n - i);
		if (len < 0) {
			mtn_buf_append(b, "\xef\xbf\xbd", 3);	/* U+FFFD */
			i -= len;
		} else if (escape && s[i] == '\\') {
			mtn_buf_append(b, "\\\\", 2);
			i++;
		} else if (escape && s[i] == '"') {
			mtn_buf_append(b, "\\\"", 2);
			i++;
		} else if (escape && s[i] == '\n') {
			mtn_buf_append(b, "\\n", 2);
			i++;
		} else {
			mtn_buf_append(b, s + i, len);
			i += len;
		}
	}
}

void mtd_buf_label(struct mtn_buf *b, const char *s, size_t n)
{
	put_utf8(b, s, n, true);
}

void mtd_family(struct mtn_buf *b, const char *name, const char *type,
		const char *help)
{
	mtn_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
		       type);
}

void mtd_peer_families(struct mtn_buf *b, const struct mtd_expo_opts *o,
		       const struct mtd_family_doc *fam, unsigned int nfam,
		       const char *key, unsigned int npeers,
		       mtd_peer_value peer, const void *arg)
{
	struct mtd_series s;
	unsigned int f, i;

	for (f = 0; f < nfam; f++) {
		mtd_family(b, fam[f].name, fam[f].type, fam[f].help);
		for (i = 0; i < npeers; i++) {
			const char *name;
			uint64_t v = peer(arg, i, f, &name);

			mtd_series_begin(&s, b, fam[f].name, o);
			mtd_series_label(&s, key, name, strlen(name));
			mtd_series_value(&s, v, false);
		}
	}
}

void mtd_series_begin(struct mtd_series *s, struct mtn_buf *b,
		      const char *name, const struct mtd_expo_opts *o)
{
	s->b = b;
	s->labels = false;
	s->sink = o->sink;
	s->nlab = 0;
	s->vlen = 0;
	if (s->sink)
		mtd_series_label(s, "__name__", name, strlen(name));
	else
		mtn_buf_append(b, name, strlen(name));
	if (o->node)
		mtd_series_label(s, "node", o->node, strlen(o->node));
}

/*
 * A label for the sink: its value made valid UTF-8 in s->vals.  Our label
 * values are short (comm, pid, version, an address or URL); one that
 * does not fit, or a label past the limit, is a bug: caught in the tests.
 */
static void sink_label(struct mtd_series *s, const char *key, const char *v,
		       size_t len)
{
	struct mtn_buf tmp = { 0 };
	size_t i;

	/* ASCII, the usual case, as it is */
	for (i = 0; i < len && v[i] && !(v[i] & 0x80); i++)
		;
	if (i == len || !v[i])
		mtn_buf_append(&tmp, v, i);
	else
		put_utf8(&tmp, v, len, false);
	if (s->nlab < MTD_SERIES_MAX_LABELS && !tmp.oom &&
	    s->vlen + tmp.len < sizeof(s->vals)) {
		memcpy(s->vals + s->vlen, tmp.p ? tmp.p : "", tmp.len);
		s->vals[s->vlen + tmp.len] = '\0';
		s->lab[s->nlab].name = key;
		s->voff[s->nlab++] = s->vlen;
		s->vlen += tmp.len + 1;
	}
	free(tmp.p);
}

void mtd_series_label(struct mtd_series *s, const char *key, const char *v,
		      size_t len)
{
	if (s->sink) {
		sink_label(s, key, v, len);
		return;
	}
	mtn_buf_append(s->b, s->labels ? "," : "{", 1);
	mtn_buf_append(s->b, key, strlen(key));
	mtn_buf_append(s->b, "=\"", 2);
	mtd_buf_label(s->b, v, len);
	mtn_buf_append(s->b, "\"", 1);
	s->labels = true;
}

/*
 * The value and the line's end.  Digits by hand: a scrape of a node of pods
 * writes thousands of lines, and vsnprintf() was a good part of each.
 */
static void series_put(struct mtd_series *s, uint64_t v, bool ns, bool neg)
{
	char line[48];
	size_t i, k = 0;

	if (s->sink) {
		for (i = 0; i < s->nlab; i++)
			s->lab[i].value = s->vals + s->voff[i];
		s->sink->put(s->sink, s->lab, s->nlab,
			     (neg ? -1 : 1) * (ns ? (double)v / 1e9 : (double)v));
		return;
	}
	if (s->labels)
		line[k++] = '}';
	line[k++] = ' ';
	if (neg)
		line[k++] = '-';
	if (ns) {
		k += mt_fmt_u64(line + k, v / 1000000000ULL);
		line[k++] = '.';
		v %= 1000000000ULL;
		for (i = 9; i-- > 0; v /= 10)
			line[k + i] = '0' + v % 10;
		k += 9;
	} else {
		k += mt_fmt_u64(line + k, v);
	}
	line[k++] = '\n';
	mtn_buf_append(s->b, line, k);
}

void mtd_series_value(struct mtd_series *s, uint64_t v, bool ns)
{
	series_put(s, v, ns, false);
}

/* A value that may be negative (two's complement: a net growth). */
void mtd_series_signed(struct mtd_series *s, int64_t v)
{
	series_put(s, v < 0 ? -(uint64_t)v : (uint64_t)v, false, v < 0);
}

/*
 * The labels a scrape repeats, written once (struct mtd_label_texts in
 * expo.h): a series on text, its labels added as they come: the entries'
 * start.
 */
bool mtd_texts_begin(struct mtd_label_texts *lt, size_t n,
		     const struct mtd_expo_opts *o, struct mtd_series *s)
{
	memset(lt, 0, sizeof(*lt));
	memset(s, 0, sizeof(*s));
	s->b = &lt->text;
	s->labels = true;		/* each label after a comma */
	if (o->sink)
		return false;
	lt->off = malloc((n + 1) * sizeof(*lt->off));
	return lt->off;
}

void mtd_texts_end(struct mtd_label_texts *lt, size_t n)
{
	lt->off[n] = lt->text.len;
	if (lt->text.oom) {
		free(lt->off);
		lt->off = NULL;
	}
}

void mtd_texts_free(struct mtd_label_texts *lt)
{
	free(lt->off);
	free(lt->text.p);
}

/* Entry i's labels into s. */
void mtd_series_texts(struct mtd_series *s, const struct mtd_label_texts *lt,
		      size_t i)
{
	const char *t = lt->text.p + lt->off[i];
	size_t len = lt->off[i + 1] - lt->off[i];

	if (!len)
		return;
	if (!s->labels) {
		mtn_buf_append(s->b, "{", 1);
		t++;			/* the comma */
		len--;
	}
	mtn_buf_append(s->b, t, len);
	s->labels = true;
}
