/* SPDX-License-Identifier: GPL-2.0 */
/* memtrackd's state across samples (programs.c), read by metrics.c. */
#ifndef MEMTRACKD_STATE_H
#define MEMTRACKD_STATE_H

#include "memtrackd.h"

/* A growth alert of a process that is not in the last sample. */
#define MTD_UNKNOWN_COMM	"[unknown]"

struct mtd_program {
	char comm[MTD_COMM_LEN];
	uint64_t retired[MTD_NR_CTR];	/* of processes gone or exec'ed away */
	uint64_t live[MTD_NR_CTR];	/* of the last sample's processes */
	uint64_t rss_anon, rss_file, rss_shmem, swap;
	uint32_t nproc;			/* live processes */
	uint64_t growth_alerts;
};

/* A process followed across samples. */
struct mtd_pid {
	int32_t pid;
	uint32_t prog;			/* index in progs */
	uint64_t start;
	bool exited;
	bool consumed;			/* during an update */
	uint64_t base[MTD_NR_CTR];	/* counts when it took its comm */
	uint64_t last[MTD_NR_CTR];
};

struct mtd_state {
	struct mtd_program *progs;	/* creation order, indices stable */
	uint32_t *order;		/* indices sorted by comm */
	size_t nprogs, progs_cap;
	unsigned int max_programs;
	struct mtd_pid *pids;		/* sorted like the sample */
	size_t npids;
	struct mtd_sample cur;		/* the last sample, sorted by pid */
	bool have_sample;
	bool events;			/* the source delivers events */
	uint64_t growth_alerts;
	uint64_t overruns;
};

#endif /* MEMTRACKD_STATE_H */
