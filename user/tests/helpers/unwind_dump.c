// SPDX-License-Identifier: GPL-2.0
/*
 * Print the unwind table libmemtrack builds for an object, one row a line
 * in readelf --debug-dump=frames-interp's notation, for
 * tests/host/test_unwind.sh to compare with readelf:
 *
 *   ADDR CFA RBP      e.g. "1040 rsp+8 u", "11a4 rbp+16 c-16"
 *
 * CFA is "-" where no CFI covers the address, "outermost" where the return
 * address is undefined, "unknown" for rules the module does not follow.
 */
#include <stdio.h>

#include "libmemtrack.h"

int main(int argc, char **argv)
{
	struct mt_unwind_table t;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: unwind_dump ELF\n");
		return 2;
	}
	if (mt_unwind_build(argv[1], &t) < 0) {
		fprintf(stderr, "unwind_dump: %s\n", mt_errmsg());
		return 1;
	}
	for (i = 0; i < t.nr; i++) {
		const struct memtrack_unwind_row *r = &t.rows[i];

		printf("%x ", r->addr);
		switch (r->cfa) {
		case MEMTRACK_UNWIND_CFA_SP:
			printf("rsp+%d", r->cfa_off);
			break;
		case MEMTRACK_UNWIND_CFA_BP:
			printf("rbp+%d", r->cfa_off);
			break;
		case MEMTRACK_UNWIND_OUTERMOST:
			printf("outermost");
			break;
		case MEMTRACK_UNWIND_UNKNOWN:
			printf("unknown");
			break;
		default:
			printf("-");
			break;
		}
		if (r->bp_off)
			printf(" c%d\n", r->bp_off);
		else
			printf(" u\n");
	}
	mt_unwind_table_free(&t);
	return 0;
}
