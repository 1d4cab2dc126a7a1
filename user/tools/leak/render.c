// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak: the stack report as it is printed, in text, JSON or folded
 * (flame graph) lines: the report's header, each stack's line with its
 * frames, the mismatched releases after them.
 */
#include <limits.h>
#include <stdio.h>
#include <time.h>

#include "frames.h"
#include "leak.h"
#include "mismatch.h"

static double age_s(uint64_t now_ns, uint64_t oldest_ns)
{
	return oldest_ns && now_ns > oldest_ns ? (now_ns - oldest_ns) / 1e9 : 0;
}

/* Folded: one frame's name; ';' and ' ' separate fields: replaced. */
static void folded_frame(FILE *o, uint64_t addr, const struct mt_sym_frame *f)
{
	const char *fn = f->function;
	char buf[NAME_MAX + 24];

	/* Unknown: the address in its object, the same in every run. */
	if (!fn)
		unknown_frame_name(buf, sizeof(buf), addr, f);
	for (fn = fn ? fn : buf; *fn; fn++)
		fputc(*fn == ';' || *fn == ' ' ? '_' : *fn, o);
}

/* Folded: a stack as one line "root;...;leaf COUNT". */
static void print_folded(struct report *r, const struct mt_leak_stack *s)
{
	/* root first: outermost return address, outer inline frame first */
	bool first = true;
	uint32_t j;

	for (j = s->nr_frames; j-- > 0;) {
		const struct mt_sym_frame *f;
		int k, nf = mt_sym_lookup(r->sym, s->frames[j], true, &f);

		for (k = nf; k-- > 0;) {
			fputs(first ? "" : ";", r->o);
			first = false;
			folded_frame(r->o, s->frames[j], &f[k]);
		}
	}
	fprintf(r->o, "%s %llu\n", first ? "[unknown]" : "",
		(unsigned long long)stack_metric(r, s));
}

/* Text: frame lines; JSON: the members of a frames array. */
static void print_frames(struct report *r, const struct mt_leak_stack *s)
{
	stack_frames(r->o, r->fmt == FMT_JSON, r->sym, s);
}

/* JSON: the report object's members up to its stacks array, opened. */
static void json_header(struct report *r, const struct timespec *wall,
			size_t n, uint64_t total, uint64_t blocks)
{
	fprintf(r->o, "{\"time\":%lld.%03ld,\"pid\":%d,\"report\":%u,",
		(long long)wall->tv_sec, wall->tv_nsec / 1000000, (int)r->pid,
		r->nr);
	if (r->ended)
		fprintf(r->o, "\"ended\":\"%s\",", r->ended);
	if (r->fds)
		fprintf(r->o, "\"total_fds\":%llu,\"nr_stacks\":%zu,\"fds\":[",
			(unsigned long long)blocks, n);
	else
		fprintf(r->o, "\"total_bytes\":%llu,\"total_blocks\":%llu,"
			"\"nr_stacks\":%zu,\"stacks\":[",
			(unsigned long long)total, (unsigned long long)blocks,
			n);
}

/* Text: the report's first line, at the local time t. */
static void text_header(struct report *r, time_t t, size_t n, size_t shown,
			uint64_t total, uint64_t blocks)
{
	const char *more = n > shown ? " (top ones shown)" : "";
	char tbuf[32], at[16] = "";
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(tbuf, sizeof(tbuf), "%F %T", &tm);
	if (r->ended)
		snprintf(at, sizeof(at), " at its %s", r->ended);
	if (r->fds)
		fprintf(r->o, "%s pid %d report %u%s: %llu descriptors open, %zu stacks%s\n",
			tbuf, (int)r->pid, r->nr, at,
			(unsigned long long)blocks, n, more);
	else
		fprintf(r->o, "%s pid %d report %u%s: %llu bytes in %llu blocks outstanding, %zu stacks%s\n",
			tbuf, (int)r->pid, r->nr, at, (unsigned long long)total,
			(unsigned long long)blocks, n, more);
}

/* JSON: a stack's members up to its frames array, opened. */
static void stack_json(const struct report *r, size_t i,
		       const struct mt_leak_stack *s, double age, int64_t growth)
{
	FILE *o = r->o;

	fprintf(o, "%s{\"stack_id\":%u,\"pid\":%d,", i ? "," : "",
		s->stack_id, (int)s->tgid);
	if (r->fds)
		fprintf(o, "\"count\":%llu,", (unsigned long long)s->blocks);
	else
		fprintf(o, "\"bytes\":%llu,\"blocks\":%llu,",
			(unsigned long long)s->bytes,
			(unsigned long long)s->blocks);
	fprintf(o, "\"oldest_s\":%.3f,\"growth\":%lld,\"api\":", age,
		(long long)growth);
	mt_json_print(o, mt_leak_api_name(s->api));
	if (r->fds)
		fputs(",\"frames\":[", o);
	else
		fprintf(o, ",\"mismatched\":%u,\"frames\":[", s->mismatched);
}

/* Text: a stack's first line, the i-th of the report (-f: its pid too). */
static void stack_text(const struct report *r, size_t i,
		       const struct mt_leak_stack *s, double age, int64_t growth)
{
	FILE *o = r->o;

	if (r->fds) {
		fprintf(o, "  #%zu %llu fds (%s)", i + 1,
			(unsigned long long)s->blocks,
			mt_leak_api_name(s->api));
		if (r->follow)
			fprintf(o, " pid %d", (int)s->tgid);
		fprintf(o, ", oldest %.1fs, growth %+lld\n", age,
			(long long)growth);
		return;
	}
	if (r->follow)
		fprintf(o, "  pid %d:\n", (int)s->tgid);
	fprintf(o, "  #%zu %llu bytes in %llu blocks (%s), oldest %.1fs, growth %+lld%s\n",
		i + 1, (unsigned long long)s->bytes,
		(unsigned long long)s->blocks, mt_leak_api_name(s->api), age,
		(long long)growth,
		s->mismatched ? ", MISMATCHED frees seen" : "");
}

/* The i-th stack of a report, in any format, now_ns being its time. */
static void print_stack(struct report *r, size_t i,
			const struct mt_leak_stack *s, uint64_t now_ns)
{
	int64_t growth = stack_growth(r, s);
	double age = age_s(now_ns, s->oldest_ns);

	if (r->fmt == FMT_FOLDED) {
		print_folded(r, s);
		return;
	}
	if (r->fmt == FMT_JSON)
		stack_json(r, i, s, age, growth);
	else
		stack_text(r, i, s, age, growth);
	print_frames(r, s);
	if (r->fmt == FMT_JSON)
		fputs("]}", r->o);
}

/*
 * v[0..n): stacks holding blocks, sorted; v[n..n+nother): stacks that are
 * there only for a mismatched free.
 */
void print_report(struct report *r, const struct mt_leak_stack *v, size_t n,
		  size_t nother)
{
	uint64_t now = mt_mono_ns(), total = 0, blocks = 0;
	size_t i, shown = n < r->top ? n : r->top;
	struct timespec wall;

	clock_gettime(CLOCK_REALTIME, &wall);
	for (i = 0; i < n; i++) {
		total += v[i].bytes;
		blocks += v[i].blocks;
	}
	r->nr++;
	if (r->fmt == FMT_JSON)
		json_header(r, &wall, n, total, blocks);
	else if (r->fmt == FMT_TEXT)
		text_header(r, wall.tv_sec, n, shown, total, blocks);
	for (i = 0; i < shown; i++)
		print_stack(r, i, &v[i], now);
	if (r->fmt == FMT_JSON)
		fputs("]", r->o);
	if (r->fmt != FMT_FOLDED)
		print_mismatches(r->o, r->fmt == FMT_JSON, r->sym, v, n + nother);
	if (r->fmt == FMT_JSON)
		fputs("}\n", r->o);
	else if (r->fmt == FMT_TEXT)
		fputc('\n', r->o);
	fflush(r->o);
}
