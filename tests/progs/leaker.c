// SPDX-License-Identifier: GPL-2.0
/*
 * leaker: leaks exactly known amounts through known functions, once per line
 * read from stdin, then writes "done".  Built with frame pointers
 * (-fno-omit-frame-pointer) so a frame-pointer walk finds its callers.
 *
 * Per round, outstanding afterwards (the leak tracer's expected stacks):
 *   leak_a          malloc      10 blocks, 1000 bytes
 *   leak_b          calloc       5 blocks, 1280 bytes (5 x (4 x 64))
 *   churn           malloc       4 blocks,  800 bytes (8 x 200, half freed)
 *   realloc_chain   realloc      1 block,    48 bytes (NULL->16->32->4096->48)
 *   failed_realloc  malloc       1 block,    64 bytes (its realloc fails)
 *   zero_alloc      malloc       1 block,     0 bytes (malloc(0))
 * The first round also frees a block allocated before "ready" (a free the
 * tracer never saw the allocation of: unknown_frees 1).
 * It uses read()/write() rather than stdio so that nothing else allocates.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* Where the blocks go, so the compiler cannot drop the calls. */
void *volatile sink[64];
volatile size_t huge = SIZE_MAX / 2;
/* Opaque NULL: the compiler turns realloc(NULL, n) into malloc(n). */
void *volatile null_block;
volatile int failures;

NOINLINE void leak_a(void)
{
	for (int i = 0; i < 10; i++)
		sink[i] = malloc(100);
}

NOINLINE void leak_b(void)
{
	for (int i = 0; i < 5; i++)
		sink[10 + i] = calloc(4, 64);
}

NOINLINE void churn(void)
{
	void *p[8];

	for (int i = 0; i < 8; i++) {
		p[i] = malloc(200);
		sink[20 + i] = p[i];
	}
	for (int i = 0; i < 8; i += 2)
		free(p[i]);
}

NOINLINE void realloc_chain(void)
{
	/* glibc's realloc(NULL, n) calls malloc: a nested probe hit. */
	void *p = realloc(null_block, 16);

	sink[30] = p;
	p = realloc(p, 32);
	sink[30] = p;
	p = realloc(p, 4096);
	sink[30] = p;
	p = realloc(p, 48);
	sink[30] = p;
}

NOINLINE void failed_realloc(void)
{
	void *q = malloc(64), *r;

	sink[31] = q;
	r = realloc(q, huge);
	if (!r)
		failures++;
	else
		sink[31] = r;
}

NOINLINE void zero_alloc(void)
{
	sink[32] = malloc(0);
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(2);
}

int main(void)
{
	char c;
	ssize_t n;

	void *early = malloc(77);

	say("ready\n");
	for (;;) {
		/* One line: read it byte by byte, no buffer to allocate. */
		do {
			n = read(0, &c, 1);
		} while (n == 1 && c != '\n');
		if (n <= 0)
			return 0;
		leak_a();
		leak_b();
		churn();
		realloc_chain();
		failed_realloc();
		zero_alloc();
		free(early);
		early = NULL;
		say(failures ? "done\n" : "realloc did not fail\n");
		failures = 0;
	}
}
