// SPDX-License-Identifier: GPL-2.0
/*
 * The tool's read of the in-process engine's block table (user/lib/
 * leak_preload.c) while the program rehashes a shard.  A writer thread
 * moves shard 0's table between two places as rehash() in
 * user/preload/state.c does (the shard's seqcount odd, the new table
 * published, the count even again), then clears the table it left, as
 * another shard taking it from the free tables does.  Every read must
 * hold every block, exactly NB, never a table caught half cleared.
 * Prints "PASS name" or "FAIL name: why"; exits 1 if one failed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libmemtrack.h"
#include "memtrack_preload.h"

#define SLOTS	1024	/* the shard's table */
#define NB	500	/* its live blocks */
#define READS	20000

static struct mtp_header *h;
static uint64_t tables[2];	/* offsets of the two places */
static volatile int stop;
static unsigned long rehashes;

static struct mtp_block *table(int i)
{
	return (struct mtp_block *)((char *)h + tables[i]);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* rehash()'s protocol, once every 20 us: about a read's time apart. */
static void *writer(void *arg)
{
	struct mtp_shard *sh = &h->shards[0];
	int cur = 0;
	uint64_t next;

	(void)arg;
	while (!stop) {
		next = now_ns() + 20000;
		while (now_ns() < next)
			;
		memcpy(table(!cur), table(cur), SLOTS * sizeof(struct mtp_block));
		__atomic_store_n(&sh->seq, sh->seq + 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		__atomic_store_n(&sh->table, tables[!cur], __ATOMIC_RELAXED);
		__atomic_store_n(&sh->seq, sh->seq + 1, __ATOMIC_RELEASE);
		/* another shard's rehash takes the table left and clears it */
		memset(table(cur), 0, SLOTS * sizeof(struct mtp_block));
		cur = !cur;
		__atomic_add_fetch(&rehashes, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(void)
{
	struct memtrack_leak_block *v;
	unsigned long torn = 0, i, moved;
	struct mt_preload *p;
	pthread_t th;
	size_t n, worst = NB;
	int fd;

	fd = memfd_create("test_preload_read", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, MTP_SIZE) < 0) {
		perror("memfd");
		return 2;
	}
	h = mmap(NULL, MTP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
		 fd, 0);
	if (h == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	h->magic = MTP_MAGIC;
	h->version = MTP_VERSION;
	tables[0] = (sizeof(*h) + 4095) & ~4095ULL;
	tables[1] = tables[0] + SLOTS * sizeof(struct mtp_block);
	for (i = 0; i < NB; i++)
		table(0)[i * 2] = (struct mtp_block){
			.addr = 0x100000 + i * 64, .size = 64, .stack_id = 1,
			.tgid = (uint32_t)getpid() };
	h->shards[0].table = tables[0];
	h->shards[0].slots = SLOTS;
	h->shards[0].used = h->shards[0].live = NB;

	p = mt_preload_open_fd(fd, getpid(), 0);
	if (!p) {
		fprintf(stderr, "%s\n", mt_errmsg());
		return 2;
	}
	if (pthread_create(&th, NULL, writer, NULL))
		return 2;
	for (i = 0; i < READS; i++) {
		if (mt_preload_blocks(p, getpid(), &v, &n) < 0) {
			printf("FAIL read-during-rehash: %s\n", mt_errmsg());
			stop = 1;
			pthread_join(th, NULL);
			return 1;
		}
		free(v);
		if (n != NB) {
			torn++;
			if (n < worst)
				worst = n;
		}
	}
	stop = 1;
	pthread_join(th, NULL);
	moved = __atomic_load_n(&rehashes, __ATOMIC_RELAXED);
	mt_preload_free(p);
	if (torn)
		printf("FAIL read-during-rehash: %lu of %d reads short (one of %zu blocks, not %d), %lu rehashes\n",
		       torn, READS, worst, NB, moved);
	else if (moved < 1000)
		printf("FAIL read-during-rehash: only %lu rehashes during %d reads: nothing raced\n",
		       moved, READS);
	else
		printf("# %d reads of %d blocks, %lu rehashes meanwhile\nPASS read-during-rehash\n",
		       READS, NB, moved);
	return torn || moved < 1000;
}
