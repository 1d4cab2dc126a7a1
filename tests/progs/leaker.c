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
 * A line "drop" instead drops every object's call frame information
 * (.eh_frame_hdr, .eh_frame) from its page tables, allocating nothing: the
 * next stacks the module walks through it must fault it in again.  A line
 * "garbage N" overwrites leaker's own .eh_frame_hdr and .eh_frame, in its
 * memory, with what the module must survive (seeded by N, see garble()).
 * It uses read()/write() rather than stdio so that nothing else allocates.
 */
#define _GNU_SOURCE			/* dl_iterate_phdr */
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

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

/* MADV_DONTNEED on the read-only segment holding PT_GNU_EH_FRAME. */
static int drop_cfi(struct dl_phdr_info *info, size_t size, void *dropped)
{
	const ElfW(Phdr) *eh = NULL, *ph;
	uintptr_t lo, hi, page = (uintptr_t)sysconf(_SC_PAGESIZE);
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			eh = &info->dlpi_phdr[i];
	for (i = 0; eh && i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || (ph->p_flags & (PF_W | PF_X)) ||
		    eh->p_vaddr < ph->p_vaddr ||
		    eh->p_vaddr >= ph->p_vaddr + ph->p_memsz)
			continue;
		lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) &
		     ~(page - 1);
		if (madvise((void *)lo, hi - lo, MADV_DONTNEED) == 0)
			++*(int *)dropped;
	}
	return 0;
}

/* leaker's own CFI as loaded, kept to garble it afresh each time. */
static unsigned char cfi_orig[16384];
static unsigned char *cfi_hdr, *cfi_eh, *cfi_end;

static int find_own_cfi(struct dl_phdr_info *info, size_t size, void *unused)
{
	const ElfW(Phdr) *ph;
	int32_t rel;
	int i;

	(void)size;
	(void)unused;
	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_GNU_EH_FRAME)
			cfi_hdr = (unsigned char *)(info->dlpi_addr + ph->p_vaddr);
	}
	for (i = 0; cfi_hdr && i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && !(ph->p_flags & (PF_W | PF_X)) &&
		    info->dlpi_addr + ph->p_vaddr <= (uintptr_t)cfi_hdr &&
		    (uintptr_t)cfi_hdr < info->dlpi_addr + ph->p_vaddr + ph->p_filesz)
			cfi_end = (unsigned char *)(info->dlpi_addr + ph->p_vaddr +
						    ph->p_filesz);
	}
	/* eh_frame_ptr, pcrel sdata4, at the header's 4th byte */
	memcpy(&rel, cfi_hdr + 4, 4);
	cfi_eh = cfi_hdr + 4 + rel;
	return 1;			/* the first object is leaker itself */
}

static uint64_t rnd_state;

static unsigned char rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (unsigned char)rnd_state;
}

/*
 * Round n's garbage, from the original: n % 4 == 0 all of it random; 1 a
 * few bits flipped in each; 2 the header kept but for its FDE count, the
 * search table random; 3 the .eh_frame random behind the real table.
 */
static int garble(unsigned int n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	unsigned char *lo, *p;
	static const uint32_t counts[] = { 0, 1, 7, 1 << 20, 0xffffffff };
	size_t len;
	int i;

	if (!cfi_hdr)
		dl_iterate_phdr(find_own_cfi, NULL);
	if (!cfi_hdr || !cfi_end || cfi_eh < cfi_hdr || cfi_eh >= cfi_end ||
	    (size_t)(cfi_end - cfi_hdr) > sizeof(cfi_orig))
		return -1;
	len = cfi_end - cfi_hdr;
	lo = (unsigned char *)((uintptr_t)cfi_hdr & ~(page - 1));
	if (mprotect(lo, cfi_end - lo, PROT_READ | PROT_WRITE))
		return -1;
	if (!cfi_orig[0])
		memcpy(cfi_orig, cfi_hdr, len);
	memcpy(cfi_hdr, cfi_orig, len);
	rnd_state = 0x9e3779b97f4a7c15ULL * (n + 1);
	switch (n % 4) {
	case 0:
		for (p = cfi_hdr; p < cfi_end; p++)
			*p = rnd();
		break;
	case 1:
		for (i = 0; i < 16; i++)
			cfi_hdr[(rnd() | rnd() << 8) % len] ^= 1 << (rnd() & 7);
		break;
	case 2:
		memcpy(cfi_hdr + 8, &counts[rnd() % 5], 4);
		for (p = cfi_hdr + 12; p < cfi_eh; p++)
			*p = rnd();
		break;
	default:
		for (p = cfi_eh; p < cfi_end; p++)
			*p = rnd();
	}
	return mprotect(lo, cfi_end - lo, PROT_READ);
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(2);
}

int main(void)
{
	char c, first;
	ssize_t n;
	int dropped;
	unsigned int num;

	void *early = malloc(77);

	say("ready\n");
	for (;;) {
		/* One line: read it byte by byte, no buffer to allocate. */
		first = 0;
		num = 0;
		do {
			n = read(0, &c, 1);
			if (!first)
				first = c;
			if (c >= '0' && c <= '9')
				num = num * 10 + (c - '0');
		} while (n == 1 && c != '\n');
		if (n <= 0)
			return 0;
		if (first == 'd') {
			dropped = 0;
			dl_iterate_phdr(drop_cfi, &dropped);
			say(dropped ? "dropped\n" : "nothing to drop\n");
			continue;
		}
		if (first == 'g') {
			say(garble(num) ? "cannot garble\n" : "garbled\n");
			continue;
		}
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
