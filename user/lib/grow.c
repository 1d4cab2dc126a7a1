// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: mt_grow() (grow.h), the doubling realloc written once, with
 * the overflow checks every copy of it needed and few had.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

int mt_grow(void **p, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t n = *cap ? *cap : first;
	void *old, *v;

	if (need <= *cap)
		return 0;
	if (!n)
		n = 1;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			goto overflow;
		n *= 2;
	}
	if (!size)
		return -EINVAL;
	if (n > SIZE_MAX / size)
		goto overflow;
	/* the caller's pointer is of its own type: read and written as bytes */
	memcpy(&old, p, sizeof(old));
	v = realloc(old, n * size);
	if (!v)
		return -ENOMEM;
	memcpy(p, &v, sizeof(v));
	*cap = n;
	return 0;
overflow:
	return -ENOMEM;
}
