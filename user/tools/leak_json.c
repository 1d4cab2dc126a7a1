// SPDX-License-Identifier: GPL-2.0
/* memtrack-leak: JSON strings and frames, the same in every report. */
#include "leak_json.h"

void json_str(FILE *o, const char *s)
{
	if (!s) {
		fputs("null", o);
		return;
	}
	fputc('"', o);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(o, "\\%c", c);
		else if (c < 0x20)
			fprintf(o, "\\u%04x", c);
		else
			fputc(c, o);
	}
	fputc('"', o);
}

void json_frame(FILE *o, bool sep, uint64_t addr, const struct mt_sym_frame *f)
{
	fprintf(o, "%s{\"address\":%llu,\"function\":", sep ? "," : "",
		(unsigned long long)addr);
	json_str(o, f->function);
	fputs(",\"file\":", o);
	json_str(o, f->file);
	fprintf(o, ",\"line\":%d,\"inlined\":%s,\"module\":", f->line,
		f->inlined ? "true" : "false");
	json_str(o, f->module);
	fputc('}', o);
}
