// SPDX-License-Identifier: GPL-2.0
/*
 * Address-space syscalls: mmap, munmap, mremap, brk and SysV shm.  No
 * tracepoint covers these, and raw_syscalls would tax every syscall of every
 * task, so kretprobes sit on the syscall entry points themselves.  Only
 * calls that succeed are counted; bytes are page-rounded lengths, except brk,
 * which counts the exact movement of the break.
 */
#include <linux/mm.h>
#include <linux/err.h>
#include <linux/ptrace.h>
#include <asm/syscall.h>
#include "mtr.h"
#include "compat.h"
#include "arch.h"

enum mtr_sys {
	MTR_SYS_MMAP, MTR_SYS_MUNMAP, MTR_SYS_MREMAP, MTR_SYS_BRK,
	MTR_SYS_SHMGET, MTR_SYS_SHMAT, MTR_SYS_SHMDT, MTR_NR_SYS
};

struct mtr_sys_args {
	enum mtr_sys sys;
	unsigned long arg[4];
	unsigned long old_brk;
};

static struct mtr_kretprobe mtr_mmap_krps[MTR_NR_SYS];

static int mtr_sys_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mtr_sys_args *a = (struct mtr_sys_args *)ri->data;
	struct kretprobe *rp = mtr_get_kretprobe(ri);
	unsigned long args[6];

	a->sys = container_of(rp, struct mtr_kretprobe, rp) - mtr_mmap_krps;
	syscall_get_arguments(current, task_pt_regs(current), args);
	memcpy(a->arg, args, sizeof(a->arg));
	a->old_brk = current->mm ? READ_ONCE(current->mm->brk) : 0;
	return 0;
}

static void mtr_count2(struct mtr_thread *t, enum mtr_counter calls,
		       enum mtr_counter bytes, unsigned long n)
{
	mtr_count(t, calls, 1);
	mtr_count(t, bytes, n);
}

static int mtr_sys_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	const struct mtr_sys_args *a = (const struct mtr_sys_args *)ri->data;
	long ret = regs_return_value(regs);
	bool ok = !IS_ERR_VALUE(ret);
	struct mtr_thread *t;

	mtr_total_add(mmap_events, 1);
	t = mtr_current();
	if (!t)
		return 0;
	switch (a->sys) {
	case MTR_SYS_MMAP:
		if (!ok)
			break;
		mtr_count2(t, MTR_C_MMAP_CALLS, MTR_C_MMAP_BYTES,
			   PAGE_ALIGN(a->arg[1]));
		mtr_ev_map(MEMTRACK_REC_MMAP, ret, a->arg[1], a->arg[2],
			   a->arg[3]);
		break;
	case MTR_SYS_MUNMAP:
		if (ret)
			break;
		mtr_count2(t, MTR_C_MUNMAP_CALLS, MTR_C_MUNMAP_BYTES,
			   PAGE_ALIGN(a->arg[1]));
		mtr_ev_map(MEMTRACK_REC_MUNMAP, a->arg[0], a->arg[1], 0, 0);
		break;
	case MTR_SYS_MREMAP:
		/* mremap(old_addr, old_len, new_len, ...): net growth. */
		if (!ok)
			break;
		mtr_count2(t, MTR_C_MREMAP_CALLS, MTR_C_MREMAP_BYTES,
			   PAGE_ALIGN(a->arg[2]) - PAGE_ALIGN(a->arg[1]));
		mtr_ev_mremap(a->arg[0], a->arg[1], ret, a->arg[2]);
		break;
	case MTR_SYS_BRK:
		/* brk returns the new break; a refused brk returns the old. */
		mtr_count2(t, MTR_C_BRK_CALLS, MTR_C_BRK_BYTES,
			   (unsigned long)ret - a->old_brk);
		mtr_ev_brk(a->old_brk, ret);
		break;
	case MTR_SYS_SHMGET:
		if (ret < 0)
			break;
		mtr_count(t, MTR_C_SHMGET_CALLS, 1);
		mtr_ev_shm(MEMTRACK_SHM_GET, ret, 0, a->arg[1]);
		break;
	case MTR_SYS_SHMAT:
		if (!ok)
			break;
		mtr_count(t, MTR_C_SHMAT_CALLS, 1);
		mtr_ev_shm(MEMTRACK_SHM_AT, a->arg[0], ret, 0);
		break;
	case MTR_SYS_SHMDT:
		if (ret)
			break;
		mtr_count(t, MTR_C_SHMDT_CALLS, 1);
		mtr_ev_shm(MEMTRACK_SHM_DT, -1, a->arg[0], 0);
		break;
	case MTR_NR_SYS:
		break;
	}
	return 0;
}

/* Syscalls sleep (mmap_lock, faults), so allow many calls in flight. */
#define MTR_SYS_KRETPROBE(sys) {					\
	.rp = {								\
		.kp.symbol_name = MTR_SYSCALL_SYM(sys),			\
		.entry_handler = mtr_sys_entry,				\
		.handler = mtr_sys_ret,					\
		.data_size = sizeof(struct mtr_sys_args),		\
		.maxactive = 512,					\
	},								\
}

static struct mtr_kretprobe mtr_mmap_krps[MTR_NR_SYS] = {
	[MTR_SYS_MMAP] = MTR_SYS_KRETPROBE(mmap),
	[MTR_SYS_MUNMAP] = MTR_SYS_KRETPROBE(munmap),
	[MTR_SYS_MREMAP] = MTR_SYS_KRETPROBE(mremap),
	[MTR_SYS_BRK] = MTR_SYS_KRETPROBE(brk),
	[MTR_SYS_SHMGET] = MTR_SYS_KRETPROBE(shmget),
	[MTR_SYS_SHMAT] = MTR_SYS_KRETPROBE(shmat),
	[MTR_SYS_SHMDT] = MTR_SYS_KRETPROBE(shmdt),
};

static_assert(ARRAY_SIZE(mtr_mmap_krps) <= MTR_MAX_KRETPROBES);

struct mtr_hook_group mtr_group_mmap = {
	.name = "mmap",
	.krps = mtr_mmap_krps,
	.nr_krps = ARRAY_SIZE(mtr_mmap_krps),
};

unsigned long mtr_mmap_missed(void)
{
	unsigned long n = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mtr_mmap_krps); i++)
		n += READ_ONCE(mtr_mmap_krps[i].rp.nmissed);
	return n;
}
