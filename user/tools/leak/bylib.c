// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak --by-lib: outstanding bytes and allocator calls per calling
 * object and API.
 */
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "modes.h"

int bylib_report(struct mode_out *m, const struct mt_leak_stack *v, size_t n)
{
	struct mt_bylib_row *rows;
	char at[16] = "";
	size_t nr, i;
	int err;

	/* A process that ended has no maps left: the objects it had. */
	err = m->pre ? mt_preload_by_lib(m->pre, v, n, &rows, &nr) :
	      m->ended ? mt_sym_by_lib(m->sym, v, n, &rows, &nr) :
			 mt_leak_by_lib(m->pid, v, n, &rows, &nr);
	if (err)
		return err;
	m->nr++;
	if (m->ended)
		snprintf(at, sizeof(at), " at its %s", m->ended);
	if (m->json) {
		fprintf(m->o, "{\"pid\":%d,\"report\":%u,", (int)m->pid, m->nr);
		if (m->ended)
			fprintf(m->o, "\"ended\":\"%s\",", m->ended);
		fputs("\"by_lib\":[", m->o);
	} else {
		fprintf(m->o, "pid %d report %u%s: outstanding and allocated, per calling object and API\n"
			"%14s %10s %12s %14s  %-13s %s\n", (int)m->pid, m->nr, at,
			"live bytes", "blocks", "calls", "bytes alloc'd", "api",
			"object");
	}
	for (i = 0; i < nr; i++) {
		const struct mt_bylib_row *r = &rows[i];

		if (m->json) {
			fprintf(m->o, "%s{\"object\":", i ? "," : "");
			mt_json_print(m->o, r->object);
			fputs(",\"api\":", m->o);
			mt_json_print(m->o, mt_leak_api_name(r->api));
			fprintf(m->o, ",\"bytes\":%llu,\"blocks\":%llu,\"calls\":%llu,"
				"\"call_bytes\":%llu,\"stacks\":%u}",
				(unsigned long long)r->bytes,
				(unsigned long long)r->blocks,
				(unsigned long long)r->calls,
				(unsigned long long)r->call_bytes, r->stacks);
		} else {
			fprintf(m->o, "%14llu %10llu %12llu %14llu  %-13s %s\n",
				(unsigned long long)r->bytes,
				(unsigned long long)r->blocks,
				(unsigned long long)r->calls,
				(unsigned long long)r->call_bytes,
				mt_leak_api_name(r->api), r->object);
		}
	}
	fputs(m->json ? "]}\n" : "\n", m->o);
	fflush(m->o);
	mt_bylib_free(rows, nr);
	return 0;
}
