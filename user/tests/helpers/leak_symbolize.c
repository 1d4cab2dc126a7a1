// SPDX-License-Identifier: GPL-2.0
/*
 * "leak_symbolize [-r] PID ADDR...": mt_sym_lookup() of each address (-r:
 * as return addresses), one line per frame, innermost first:
 * "ADDR<TAB>FUNCTION<TAB>FILE:LINE<TAB>inlined|-<TAB>OBJECT+0xOFFSET|-"
 * (OBJECT: the file name of the frame's module).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libmemtrack.h"

int main(int argc, char **argv)
{
	struct mt_symbolizer *s;
	bool ret = false;
	int i = 1, j, nr;

	if (argc > 1 && !strcmp(argv[1], "-r")) {
		ret = true;
		i++;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: leak_symbolize [-r] PID ADDR...\n");
		return 2;
	}
	s = mt_sym_open(atoi(argv[i]));
	if (!s) {
		fprintf(stderr, "leak_symbolize: %s\n", mt_errmsg());
		return 1;
	}
	for (i++; i < argc; i++) {
		const struct mt_sym_frame *f;
		uint64_t addr = strtoull(argv[i], NULL, 0);

		nr = mt_sym_lookup(s, addr, ret, &f);
		for (j = 0; j < nr; j++) {
			const char *obj = f[j].module ? strrchr(f[j].module, '/') : NULL;

			printf("%s\t%s\t%s:%d\t%s\t", argv[i],
			       f[j].function ? f[j].function : "??",
			       f[j].file ? f[j].file : "??", f[j].line,
			       f[j].inlined ? "inlined" : "-");
			if (f[j].module)
				printf("%s+%#llx\n", obj ? obj + 1 : f[j].module,
				       (unsigned long long)f[j].offset);
			else
				puts("-");
		}
	}
	mt_sym_close(s);
	return 0;
}
