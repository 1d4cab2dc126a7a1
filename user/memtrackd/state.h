/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrackd's state across samples (programs.c): every program (comm) and
 * process followed from sample to sample; metrics.c and snapshot.c read it.
 */
#ifndef MEMTRACKD_STATE_H
#define MEMTRACKD_STATE_H

#include "sample.h"

/* Programs past max_programs share this row. */
#define MTD_OTHER_COMM		"[other]"

/* A growth alert of a process that is not in the last sample. */
#define MTD_UNKNOWN_COMM	"[unknown]"

/* The program of a process that has none: a kernel thread left out. */
#define MTD_NO_PROG		UINT32_MAX

/*
 * Where a program runs: its container's name, pod and namespace ("" for
 * the host's processes, and for what the runtime's state did not name).
 * A program is a comm in one of them: "nginx" in two pods is two programs.
 */
struct mtd_where {
	char container[128];
	char pod[254];
	char ns[64];
};

struct mtd_program {
	char comm[MEMTRACK_COMM_LEN];
	struct mtd_where where;
	int64_t seen_ms;		/* last sample with a row of it, or alert */
	uint64_t retired[MTD_NR_CTR];	/* of processes gone or exec'ed away */
	uint64_t live[MTD_NR_CTR];	/* of the last sample's processes */
	uint64_t rss_anon, rss_file, rss_shmem, swap;
	uint32_t nproc;			/* live processes */
	uint64_t growth_alerts;
};

/* A process followed across samples. */
struct mtd_pid {
	int32_t pid;
	uint32_t prog;			/* index in progs, or MTD_NO_PROG */
	/*
	 * Its container at the last sample (the containers cache's entry,
	 * which lives while a sample asks for it): the same one and comm
	 * again, the same program, found without names compared.
	 */
	const struct mt_container *ct;
	uint64_t start;
	bool exited;
	bool kthread;			/* as its first row said */
	bool consumed;			/* during an update */
	uint64_t base[MTD_NR_CTR];	/* counts when it took its comm */
	uint64_t last[MTD_NR_CTR];
};

struct mtd_state {
	struct mtd_program *progs;	/* creation order, indices stable */
	uint32_t *order;		/* indices sorted by comm */
	size_t nprogs, progs_cap;
	unsigned int max_programs;
	unsigned int ttl_ms;		/* forget programs gone this long; 0 never */
	struct mtd_pid *pids;		/* sorted like the sample */
	size_t npids;
	struct mtd_sample cur;		/* the last sample, sorted by pid */
	bool have_sample;
	bool events;			/* the source delivers events */
	uint64_t growth_alerts;
	uint64_t overruns;
};

struct mtd_state *mtd_state_new(unsigned int max_programs,
				unsigned int ttl_ms);
void mtd_state_free(struct mtd_state *st);
/*
 * Fold a new sample in; the sample then belongs to the state, its kernel
 * threads' rows marked (kthread) for the readers to skip.
 */
int mtd_state_update(struct mtd_state *st, struct mtd_sample *s);
/* An RSS growth alert for process tgid; comm NULL: look it up. */
void mtd_state_growth_alert(struct mtd_state *st, int32_t tgid,
			    const char *comm);
void mtd_state_add_overruns(struct mtd_state *st, uint64_t n);

#endif /* MEMTRACKD_STATE_H */
