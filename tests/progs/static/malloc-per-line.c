// SPDX-License-Identifier: GPL-2.0
/*
 * A static program (no dynamic loader: no library can be injected into it)
 * that prints "ready", then keeps a 64-byte block and answers "ok" for each
 * line on stdin: memtrack-leak -p must say so and trace it with uprobes.
 * Built here, not in the guest: a guest of another architecture has no
 * compiler.
 */
#include <stdio.h>
#include <stdlib.h>

void *volatile p;

int main(void)
{
	char l[8];

	puts("ready");
	fflush(stdout);
	while (fgets(l, sizeof(l), stdin)) {
		p = malloc(64);
		puts("ok");
		fflush(stdout);
	}
	return 0;
}
