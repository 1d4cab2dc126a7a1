// SPDX-License-Identifier: GPL-2.0
/*
 * A static program (built -static: no LD_PRELOAD reaches it) that keeps one
 * 64-byte block: memtrack-leak -- must say so and trace it with uprobes.
 * Built here, not in the guest: a guest of another architecture has no
 * compiler.
 */
#include <stdlib.h>

void *volatile p;

int main(void)
{
	p = malloc(64);
	return 0;
}
