// SPDX-License-Identifier: GPL-2.0
/* memtrack-leak: JSON and text frames, the same in every report. */
#include <limits.h>
#include <string.h>

#include "frames.h"

const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

const struct mt_leak_stack *stack_by_id(const struct mt_leak_stack *v,
				       size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].stack_id == id)
			return &v[i];
	return NULL;
}

void unknown_frame_name(char *buf, size_t size, uint64_t addr,
			const struct mt_sym_frame *f)
{
	if (f->module)
		snprintf(buf, size, "%s+%#llx", base(f->module),
			 (unsigned long long)f->offset);
	else
		snprintf(buf, size, "%#llx", (unsigned long long)addr);
}

/* One symbolized frame as a member of a frames array, after a comma if sep. */
static void json_frame(FILE *o, bool sep, uint64_t addr,
		       const struct mt_sym_frame *f)
{
	fprintf(o, "%s{\"address\":%llu,\"offset\":", sep ? "," : "",
		(unsigned long long)addr);
	if (f->module)
		fprintf(o, "%llu", (unsigned long long)f->offset);
	else
		fputs("null", o);
	fputs(",\"function\":", o);
	mt_json_print(o, f->function);
	fputs(",\"file\":", o);
	mt_json_print(o, f->file);
	fprintf(o, ",\"line\":%d,\"inlined\":%s,\"module\":", f->line,
		f->inlined ? "true" : "false");
	mt_json_print(o, f->module);
	fputc('}', o);
}

/*
 * One frame as a text line: "function (file:line)", else the address in
 * its object "(object+0xOFF)", else addr; "??" for an unknown function.
 */
static void text_frame(FILE *o, uint64_t addr, const struct mt_sym_frame *f)
{
	char where[PATH_MAX + 64];

	fprintf(o, "        %s", f->function ? f->function : "??");
	if (f->file) {
		fprintf(o, " (%s:%d)", f->file, f->line);
	} else {
		unknown_frame_name(where, sizeof(where), addr, f);
		fprintf(o, " (%s)", where);
	}
	if (f->inlined)
		fputs(" (inlined)", o);
	fputc('\n', o);
}

void stack_frames(FILE *o, bool json, struct mt_symbolizer *sym,
		  const struct mt_leak_stack *s)
{
	bool first = true;
	uint32_t j;

	for (j = 0; j < s->nr_frames; j++) {
		const struct mt_sym_frame *f;
		int k, nf = mt_sym_lookup(sym, s->frames[j], true, &f);

		for (k = 0; k < nf; k++) {
			if (!json) {
				text_frame(o, s->frames[j], &f[k]);
				continue;
			}
			json_frame(o, !first, s->frames[j], &f[k]);
			first = false;
		}
	}
}
