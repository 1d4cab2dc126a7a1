// SPDX-License-Identifier: GPL-2.0
/*
 * "leak_probes PID": the allocator entry points mt_leak_find_probes() finds
 * in PID, one "PATH OFFSET(hex) API SYMBOL SKIP" line each (the breakpoint
 * is at OFFSET + SKIP), for tests/host/test_memtrack_leak.sh to check
 * against readelf and objdump.
 */
#include <stdio.h>
#include <stdlib.h>

#include "libmemtrack.h"

int main(int argc, char **argv)
{
	struct mt_leak_probe *p;
	size_t n, i;

	if (argc != 2) {
		fprintf(stderr, "usage: leak_probes PID\n");
		return 2;
	}
	if (mt_leak_find_probes(atoi(argv[1]), &p, &n) < 0) {
		fprintf(stderr, "leak_probes: %s\n", mt_errmsg());
		return 1;
	}
	for (i = 0; i < n; i++)
		printf("%s %#llx %s %s %u\n", p[i].path,
		       (unsigned long long)p[i].offset,
		       mt_leak_api_name(p[i].api), p[i].symbol, p[i].skip);
	mt_leak_probes_free(p, n);
	return 0;
}
