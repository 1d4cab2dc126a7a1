// SPDX-License-Identifier: GPL-2.0
/* freeall: allocates through every API and frees everything: no leak. */
#include <malloc.h>
#include <stdlib.h>
#include "common.h"

void *volatile fixture_sink;

int main(void)
{
	void *p[6];

	fixture_wait("ready");
	for (int i = 0; i < 1000; i++) {
		p[0] = malloc(100);			/* FREED */
		p[1] = calloc(3, 40);			/* FREED */
		p[2] = realloc(malloc(8), 800);		/* FREED */
		p[3] = aligned_alloc(64, 128);		/* FREED */
		if (posix_memalign(&p[4], 32, 64))	/* FREED */
			p[4] = NULL;
		p[5] = memalign(16, 48);		/* FREED */
		for (int j = 0; j < 6; j++)
			free(p[j]);
	}
	fixture_wait("done");
	return 0;
}
