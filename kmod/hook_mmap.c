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
#include "memtrack.h"
#include "compat.h"

struct mtr_sys_args {
	unsigned long arg[3];
	unsigned long old_brk;
};

static int mtr_sys_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mtr_sys_args *a = (struct mtr_sys_args *)ri->data;
	unsigned long args[6];

	syscall_get_arguments(current, task_pt_regs(current), args);
	memcpy(a->arg, args, sizeof(a->arg));
	a->old_brk = current->mm ? READ_ONCE(current->mm->brk) : 0;
	return 0;
}

static struct mtr_thread *mtr_sys_ret(struct kretprobe_instance *ri,
				    struct pt_regs *regs, long *ret,
				    struct mtr_sys_args **a)
{
	mtr_total_add(mmap_events, 1);
	*ret = regs_return_value(regs);
	*a = (struct mtr_sys_args *)ri->data;
	return mtr_current();
}

static int mtr_mmap_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mtr_sys_args *a;
	long ret;
	struct mtr_thread *t = mtr_sys_ret(ri, regs, &ret, &a);

	if (t && !IS_ERR_VALUE(ret)) {
		mtr_count(t, MTR_C_MMAP_CALLS, 1);
		mtr_count(t, MTR_C_MMAP_BYTES, PAGE_ALIGN(a->arg[1]));
	}
	return 0;
}

static int mtr_munmap_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mtr_sys_args *a;
	long ret;
	struct mtr_thread *t = mtr_sys_ret(ri, regs, &ret, &a);

	if (t && !ret) {
		mtr_count(t, MTR_C_MUNMAP_CALLS, 1);
		mtr_count(t, MTR_C_MUNMAP_BYTES, PAGE_ALIGN(a->arg[1]));
	}
	return 0;
}

/* mremap(old_addr, old_len, new_len, ...): net growth, signed. */
static int mtr_mremap_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mtr_sys_args *a;
	long ret;
	struct mtr_thread *t = mtr_sys_ret(ri, regs, &ret, &a);

	if (t && !IS_ERR_VALUE(ret)) {
		mtr_count(t, MTR_C_MREMAP_CALLS, 1);
		mtr_count(t, MTR_C_MREMAP_BYTES,
			 PAGE_ALIGN(a->arg[2]) - PAGE_ALIGN(a->arg[1]));
	}
	return 0;
}

/* brk returns the new break; a refused brk returns the old one. */
static int mtr_brk_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mtr_sys_args *a;
	long ret;
	struct mtr_thread *t = mtr_sys_ret(ri, regs, &ret, &a);

	if (t) {
		mtr_count(t, MTR_C_BRK_CALLS, 1);
		mtr_count(t, MTR_C_BRK_BYTES, (unsigned long)ret - a->old_brk);
	}
	return 0;
}

static int mtr_shmget_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mtr_sys_args *a;
	long ret;
	struct mtr_thread *t = mtr_sys_ret(ri, regs, &ret, &a);

	if (t && ret >= 0)
		mtr_count(t, MTR_C_SHMGET_CALLS, 1);
	return 0;
}

static int mtr_shmat_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mtr_sys_args *a;
	long ret;
	struct mtr_thread *t = mtr_sys_ret(ri, regs, &ret, &a);

	if (t && !IS_ERR_VALUE(ret))
		mtr_count(t, MTR_C_SHMAT_CALLS, 1);
	return 0;
}

static int mtr_shmdt_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mtr_sys_args *a;
	long ret;
	struct mtr_thread *t = mtr_sys_ret(ri, regs, &ret, &a);

	if (t && !ret)
		mtr_count(t, MTR_C_SHMDT_CALLS, 1);
	return 0;
}

/* Syscalls sleep (mmap_lock, faults), so allow many calls in flight. */
#define MTR_SYS_KRETPROBE(sys, ret_handler) {				\
	.rp = {								\
		.kp.symbol_name = MTR_SYSCALL_SYM(sys),			\
		.entry_handler = mtr_sys_entry,				\
		.handler = ret_handler,					\
		.data_size = sizeof(struct mtr_sys_args),		\
		.maxactive = 512,					\
	},								\
}

static struct mtr_kretprobe mtr_mmap_krps[] = {
	MTR_SYS_KRETPROBE(mmap, mtr_mmap_ret),
	MTR_SYS_KRETPROBE(munmap, mtr_munmap_ret),
	MTR_SYS_KRETPROBE(mremap, mtr_mremap_ret),
	MTR_SYS_KRETPROBE(brk, mtr_brk_ret),
	MTR_SYS_KRETPROBE(shmget, mtr_shmget_ret),
	MTR_SYS_KRETPROBE(shmat, mtr_shmat_ret),
	MTR_SYS_KRETPROBE(shmdt, mtr_shmdt_ret),
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
