/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything memtrack reads from an architecture's registers or names after
 * its ABI, in one place: the logic files ask for "argument n" or "the stack
 * pointer" and never name a register, so a port to another architecture is
 * this file and the unwind rules' block for it in uapi/linux/memtrack_unwind.h
 * (DWARF's register numbers, where a frame keeps its return address).
 *
 * Plain field reads, not regs_get_kernel_argument() and friends: the leak
 * tracer reads user registers at a uprobe, where the arguments follow the
 * user-space calling convention, and the field reads are the same on every
 * kernel memtrack builds for.
 */
#ifndef MEMTRACK_ARCH_H
#define MEMTRACK_ARCH_H

#include <linux/ptrace.h>

#if defined(CONFIG_X86_64)

/* Syscall entry points, for kprobes: the arch's syscall wrapper names. */
#define MTR_SYSCALL_SYM(name) "__x64_sys_" #name

/*
 * The n-th (from 0) integer argument of a user function at its first
 * instruction (System V AMD64: rdi, rsi, rdx, rcx, r8, r9).
 */
static __always_inline unsigned long mtr_arg(const struct pt_regs *regs,
					     unsigned int n)
{
	switch (n) {
	case 0:
		return regs->di;
	case 1:
		return regs->si;
	case 2:
		return regs->dx;
	case 3:
		return regs->cx;
	case 4:
		return regs->r8;
	case 5:
		return regs->r9;
	default:
		return 0;
	}
}

static __always_inline unsigned long mtr_sp(const struct pt_regs *regs)
{
	return regs->sp;
}

static __always_inline unsigned long mtr_ip(const struct pt_regs *regs)
{
	return regs->ip;
}

/* The frame pointer, for the frame-pointer walk of the unwinder. */
static __always_inline unsigned long mtr_fp(const struct pt_regs *regs)
{
	return regs->bp;
}

/*
 * At a function's first instruction (a uprobe): its return address if a
 * register holds it (true), else the address of the word that does, and
 * the stack pointer its caller has again once it returns.  A call pushes
 * the return address: it is the word at the stack pointer.
 */
static __always_inline bool mtr_entry_ra(const struct pt_regs *regs,
					 unsigned long *ra, unsigned long *at)
{
	*at = regs->sp;
	return false;
}

static __always_inline unsigned long mtr_entry_caller_sp(const struct pt_regs *regs)
{
	return regs->sp + sizeof(long);
}

/*
 * At a uretprobe: the stack pointer the returning call had at its entry.
 * A call pushes its return address and the return pops it.
 */
static __always_inline unsigned long mtr_sp_at_entry(const struct pt_regs *regs)
{
	return regs->sp - sizeof(long);
}

#elif defined(CONFIG_ARM64)

/* Syscall entry points, for kprobes: the arch's syscall wrapper names. */
#define MTR_SYSCALL_SYM(name) "__arm64_sys_" #name

/*
 * The n-th (from 0) integer argument of a user function at its first
 * instruction (AAPCS64: x0 to x7).
 */
static __always_inline unsigned long mtr_arg(const struct pt_regs *regs,
					     unsigned int n)
{
	return n < 8 ? regs->regs[n] : 0;
}

static __always_inline unsigned long mtr_sp(const struct pt_regs *regs)
{
	return regs->sp;
}

static __always_inline unsigned long mtr_ip(const struct pt_regs *regs)
{
	return regs->pc;
}

/* The frame pointer (x29), for the frame-pointer walk of the unwinder. */
static __always_inline unsigned long mtr_fp(const struct pt_regs *regs)
{
	return regs->regs[29];
}

/*
 * At a function's first instruction (a uprobe): bl left the return address
 * in the link register (x30) and the stack pointer as the caller has it.
 */
static __always_inline bool mtr_entry_ra(const struct pt_regs *regs,
					 unsigned long *ra, unsigned long *at)
{
	*ra = regs->regs[30];
	return true;
}

static __always_inline unsigned long mtr_entry_caller_sp(const struct pt_regs *regs)
{
	return regs->sp;
}

/* At a uretprobe: the stack pointer the returning call had at its entry. */
static __always_inline unsigned long mtr_sp_at_entry(const struct pt_regs *regs)
{
	return regs->sp;
}

#else
#error "memtrack: no arch.h block for this architecture"
#endif

#endif /* MEMTRACK_ARCH_H */
