// SPDX-License-Identifier: LGPL-2.1
/* libmemtrack: unsigned numbers in decimal, without printf (libmemtrack.h). */
#include "libmemtrack.h"

size_t mt_fmt_u64(char *b, uint64_t v)
{
	char tmp[20];
	size_t n = 0, i;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		b[i] = tmp[n - 1 - i];
	b[n] = '\0';
	return n;
}
