// SPDX-License-Identifier: GPL-2.0
/* memtrack-leak: JSON and text frames, the same in every report. */
#include <string.h>

#include "leak_json.h"

const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

void json_frame(FILE *o, bool sep, uint64_t addr, const struct mt_sym_frame *f)
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

void text_frame(FILE *o, uint64_t addr, const struct mt_sym_frame *f)
{
	fprintf(o, "        %s", f->function ? f->function : "??");
	if (f->file)
		fprintf(o, " (%s:%d)", f->file, f->line);
	else if (f->module)
		fprintf(o, " (%s+%#llx)", base(f->module), (unsigned long long)f->offset);
	else
		fprintf(o, " (%#llx)", (unsigned long long)addr);
	if (f->inlined)
		fputs(" (inlined)", o);
	fputc('\n', o);
}
