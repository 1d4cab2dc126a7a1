// SPDX-License-Identifier: GPL-2.0
/*
 * svespin: a thread whose SVE registers are live when a tracer stops it.
 * It prints "ready", then spins with a pattern in z7 (every byte of the
 * vector, past the 128 bits FP/SIMD holds) and p7 (all true), making no
 * system call (one would discard SVE state beyond FP/SIMD), checking both
 * each turn, until SIGUSR1; then prints "ok VL" or "corrupt VL" (VL the
 * vector length in bytes) and exits.  A call made in it through a signal
 * frame that did not hold its SVE record returns with z7's upper bits
 * zeroed.  arm64 only (tests/Makefile builds it for aarch64).
 */
#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t done;

static void on_usr1(int sig)
{
	(void)sig;
	done = 1;
}

static __attribute__((noinline)) int spin(void)
{
	unsigned long bad = 0;

	__asm__ __volatile__(
		"ptrue	p7.b\n"
		"index	z7.b, #1, #3\n"
		"cntb	x11\n"
		"1:	ldr	w9, [%[done]]\n"
		"cbnz	w9, 2f\n"
		"index	z6.b, #1, #3\n"
		"cmpne	p6.b, p7/z, z6.b, z7.b\n"
		"b.any	3f\n"
		"cntp	x10, p7, p7.b\n"
		"cmp	x10, x11\n"
		"b.eq	1b\n"
		"3:	mov	%[bad], #1\n"
		"2:\n"
		: [bad] "+r"(bad)
		: [done] "r"(&done)
		: "x9", "x10", "x11", "v6", "v7", "p6", "p7", "cc", "memory");
	return (int)bad;
}

int main(void)
{
	unsigned long vl;

	signal(SIGUSR1, on_usr1);
	__asm__ __volatile__("cntb %0" : "=r"(vl));
	puts("ready");
	fflush(stdout);
	printf("%s %lu\n", spin() ? "corrupt" : "ok", vl);
	return 0;
}
