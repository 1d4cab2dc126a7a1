/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The one user-space header that knows the machine (x86-64): register
 * names of a ptrace'd thread, the system call ABI and its restart codes,
 * the relocation types of GOT slots, instruction bytes and the layout of
 * the signal frame rt_sigreturn reads.  libmemtrack's injector and unwinder
 * and the in-process engine's GOT patcher use these names, never a
 * register or a number of their own, so that another architecture is this
 * file (kmod/arch.h is the kernel's counterpart).
 */
#ifndef MEMTRACK_ARCH_H
#define MEMTRACK_ARCH_H

#include <elf.h>
#include <stdint.h>
#include <string.h>
#include <sys/user.h>

#if !defined(__x86_64__)
#error "memtrack's user space is written for x86-64 (user/preload/arch.h)"
#endif

/* ---- a stopped thread's registers (struct user_regs_struct) ------------- */

typedef struct user_regs_struct mt_regs_t;

#define MT_REG_PC(r)		((r)->rip)
#define MT_REG_SP(r)		((r)->rsp)
#define MT_REG_FP(r)		((r)->rbp)	/* the frame pointer */
#define MT_REG_TP(r)		((r)->fs_base)	/* the thread pointer (TLS) */
#define MT_REG_RET(r)		((r)->rax)	/* a call's or syscall's result */
/* the system call a thread is in (-1: none), as the kernel restarts it */
#define MT_REG_SYSCALL(r)	((r)->orig_rax)
/* a function's integer arguments, in order (the SysV ABI) */
#define MT_REG_ARG0(r)		((r)->rdi)
#define MT_REG_ARG1(r)		((r)->rsi)
#define MT_REG_ARG2(r)		((r)->rdx)
#define MT_REG_ARG3(r)		((r)->rcx)
/* variadic calls read the number of vector registers used here */
#define MT_REG_VARARGS(r)	((r)->rax)

/* Below a function's stack pointer: the red zone it may use unannounced. */
#define MT_RED_ZONE		128
/* A call's stack pointer, before its return address is pushed. */
#define MT_STACK_ALIGN		16

/* ---- system calls ------------------------------------------------------ */

/* seccomp_data.arch of this ABI's system calls (AUDIT_ARCH_X86_64) */
#define MT_AUDIT_ARCH		0xc000003eU
/* The length of the system call instruction (syscall: 0f 05). */
#define MT_SYSCALL_INSN_LEN	2
/*
 * What an interrupted system call returns into the kernel before it is
 * restarted (include/linux/errno.h, not exported to user space).
 */
#define MT_ERESTARTSYS		512
#define MT_ERESTARTNOINTR	513
#define MT_ERESTARTNOHAND	514
#define MT_ERESTART_RESTARTBLOCK 516

/*
 * glibc's signal return trampoline, __restore_rt: mov $15,%rax (the
 * rt_sigreturn system call); syscall.  Found by these bytes in libc's code.
 */
#define MT_RESTORE_RT_BYTES	"\x48\xc7\xc0\x0f\x00\x00\x00\x0f\x05"
#define MT_RESTORE_RT_LEN	9

/*
 * The frame rt_sigreturn restores a thread from (the kernel's struct
 * rt_sigframe less its return address, which the trampoline's caller
 * popped): ucontext, siginfo, then the XSAVE area, 64-byte aligned, that
 * uc_mcontext.fpstate points to.  The kernel reads it at the stack pointer
 * the system call is made with.
 */
struct mt_sigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate;		/* address of the XSAVE area */
	uint64_t reserved1[8];
};

struct mt_ucontext {
	uint64_t uc_flags;
	uint64_t uc_link;
	struct {
		uint64_t ss_sp;
		int32_t ss_flags;
		int32_t pad;
		uint64_t ss_size;
	} uc_stack;
	struct mt_sigcontext uc_mcontext;
	uint64_t uc_sigmask;		/* the kernel's sigset: 64 signals */
};

#define MT_UC_FP_XSTATE		0x1
#define MT_UC_SIGCONTEXT_SS	0x2
#define MT_UC_STRICT_RESTORE_SS	0x4
/* user code and stack segment selectors */
#define MT_USER_CS		0x33
#define MT_USER_SS		0x2b
#define MT_SIGINFO_SIZE		128

/* A signal frame's registers: a stopped thread's, its XSAVE area's address. */
static inline void mt_sigcontext_of(struct mt_sigcontext *sc,
				    const mt_regs_t *r, uint64_t fpstate)
{
	memset(sc, 0, sizeof(*sc));
	sc->r8 = r->r8;
	sc->r9 = r->r9;
	sc->r10 = r->r10;
	sc->r11 = r->r11;
	sc->r12 = r->r12;
	sc->r13 = r->r13;
	sc->r14 = r->r14;
	sc->r15 = r->r15;
	sc->rdi = r->rdi;
	sc->rsi = r->rsi;
	sc->rbp = r->rbp;
	sc->rbx = r->rbx;
	sc->rdx = r->rdx;
	sc->rax = r->rax;
	sc->rcx = r->rcx;
	sc->rsp = r->rsp;
	sc->rip = r->rip;
	sc->eflags = r->eflags;
	sc->cs = MT_USER_CS;
	sc->ss = MT_USER_SS;
	sc->fpstate = fpstate;
}

/*
 * The XSAVE area of a thread (PTRACE_GETREGSET, NT_X86_XSTATE) is the
 * signal frame's: the kernel fills its software-reserved bytes (offset
 * 464 of the legacy area) as it does in a frame; the frame adds this word
 * right after the area.
 */
#define MT_NT_XSTATE		0x202	/* NT_X86_XSTATE */
#define MT_FP_XSTATE_MAGIC2	0x46505845U
#define MT_XSTATE_ALIGN		64

/* ---- relocations of GOT slots ------------------------------------------- */

typedef Elf64_Rela mt_rela_t;
#define MT_RELA_TYPE(info)	ELF64_R_TYPE(info)
#define MT_RELA_SYM(info)	ELF64_R_SYM(info)
/* a PLT slot, and a GOT slot of a function's address (PIC code, -z now) */
#define MT_R_JUMP_SLOT		R_X86_64_JUMP_SLOT
#define MT_R_GLOB_DAT		R_X86_64_GLOB_DAT

#endif
