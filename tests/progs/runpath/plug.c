// SPDX-License-Identifier: GPL-2.0
/* runpath/main's library, in plug/ beside it: leaks 3 blocks of 77 bytes. */
#include <stdlib.h>

void *volatile plug_sink;

__attribute__((noinline)) void plug_leak(void)
{
	for (int i = 0; i < 3; i++)
		plug_sink = malloc(77);		/* LEAK(plug): 3 x 77 */
}
