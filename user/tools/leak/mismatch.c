// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak's mismatched releases (new[] freed by delete, malloc by
 * delete, ...): the same section in the stack report and in --scan's, so
 * that both show what valgrind memcheck shows beside its leak summary.
 */
#include "frames.h"
#include "mismatch.h"

/* JSON: one member of the mismatches array, after a comma if sep. */
static void mismatch_json(FILE *o, struct mt_symbolizer *sym, bool sep,
			  const struct mt_leak_stack *s,
			  const struct mt_leak_stack *fs)
{
	fprintf(o, "%s{\"alloc_stack_id\":%u,\"alloc_api\":",
		sep ? "," : "", s->stack_id);
	mt_json_print(o, mt_leak_api_name(s->api));
	fputs(",\"free_api\":", o);
	mt_json_print(o, mt_leak_api_name(s->free_api));
	fprintf(o, ",\"count\":%u,\"free_stack_id\":%u,\"alloc_frames\":[",
		s->mismatched, fs ? fs->stack_id : 0);
	stack_frames(o, true, sym, s);
	fputs("],\"free_frames\":[", o);
	if (fs)
		stack_frames(o, true, sym, fs);
	fputs("]}", o);
}

/* Text: an allocating stack, and the stack that freed its blocks wrongly. */
static void mismatch_text(FILE *o, struct mt_symbolizer *sym,
			  const struct mt_leak_stack *s,
			  const struct mt_leak_stack *fs)
{
	fprintf(o, "  ! %u block%s allocated by %s, freed by %s\n"
		"      allocated at:\n", s->mismatched,
		s->mismatched == 1 ? "" : "s", mt_leak_api_name(s->api),
		mt_leak_api_name(s->free_api));
	stack_frames(o, false, sym, s);
	fputs("      freed (last time) at:\n", o);
	if (fs)
		stack_frames(o, false, sym, fs);
	else
		fputs("        (stack not recorded)\n", o);
}

void print_mismatches(FILE *o, bool json, struct mt_symbolizer *sym,
		      const struct mt_leak_stack *v, size_t n)
{
	size_t i, nr = 0;

	for (i = 0; i < n; i++)
		nr += v[i].mismatched > 0;
	if (!json && !nr)
		return;
	if (json)
		fputs(",\"mismatches\":[", o);
	else
		fprintf(o, "  Mismatched free() / delete / delete []: %zu allocating stack%s\n",
			nr, nr == 1 ? "" : "s");
	for (i = 0, nr = 0; i < n; i++) {
		const struct mt_leak_stack *s = &v[i];
		const struct mt_leak_stack *fs;

		if (!s->mismatched)
			continue;
		/* The stack of the last release of its blocks, if in v. */
		fs = s->free_stack_id ?
		     stack_by_id(v, n, s->free_stack_id) : NULL;
		if (json)
			mismatch_json(o, sym, nr++, s, fs);
		else
			mismatch_text(o, sym, s, fs);
	}
	if (json)
		fputc(']', o);
}
