/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The one user-space header that knows the machine (x86-64, arm64): register
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
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>

/* A signal frame's stack_t, the same on every 64-bit Linux */
struct mt_stack {
	uint64_t ss_sp;
	int32_t ss_flags;
	int32_t pad;
	uint64_t ss_size;
};
/* no valid mode: rt_sigreturn leaves the alternate stack as it is */
#define MT_SS_NO_MODE		0x10

/* A call's frame, as mt_callframe_make() builds it (remote_call.c) */
struct mt_callframe {
	uint8_t *buf;			/* what to write at `at` */
	size_t len;
	uint64_t at;
	uint64_t sp;			/* the stack pointer to enter the function with */
};

#if defined(__x86_64__)

/* ---- a stopped thread's registers (struct user_regs_struct) ------------- */

typedef struct user_regs_struct mt_regs_t;

/*
 * glibc's TLS layout (TLS_TCB_AT_TP): variant II, the thread descriptor at
 * the thread pointer and the TLS blocks below it
 */
#define MT_TLS_TCB_AT_TP	1

#define MT_REG_PC(r)		((r)->rip)
#define MT_REG_SP(r)		((r)->rsp)
#define MT_REG_FP(r)		((r)->rbp)	/* the frame pointer */
#define MT_REG_TP(r)		((r)->fs_base)	/* the thread pointer (TLS) */
#define MT_REG_RET(r)		((r)->rax)	/* a call's or syscall's result */
/* the system call a thread is in (-1: none), as the kernel restarts it */
#define MT_REG_SYSCALL(r)	((r)->orig_rax)
#define MT_NO_SYSCALL		((uint64_t)-1)
/* a function's integer arguments, in order (the SysV ABI) */
#define MT_REG_ARG0(r)		((r)->rdi)
#define MT_REG_ARG1(r)		((r)->rsi)
#define MT_REG_ARG2(r)		((r)->rdx)
#define MT_REG_ARG3(r)		((r)->rcx)

/* A stopped thread's registers (0), or -1 and errno. */
static inline int mt_regs_get(pid_t tid, mt_regs_t *r)
{
	return (int)ptrace(PTRACE_GETREGS, tid, NULL, r);
}

static inline int mt_regs_set(pid_t tid, const mt_regs_t *r)
{
	return (int)ptrace(PTRACE_SETREGS, tid, NULL, r);
}

/*
 * A breakpoint (int3, one byte) over the low byte of the word at its
 * address; a thread that hit it stops with its pc past it.
 */
#define MT_BRK_WORD(word)	(((word) & ~0xffL) | 0xcc)
#define MT_BRK_AT(pc)		((pc) - 1)

/* A spin-wait's pause between two looks at a lock. */
#define mt_cpu_relax()		__builtin_ia32_pause()

/* Below a function's stack pointer: the red zone it may use unannounced. */
#define MT_RED_ZONE		128
/* A call's stack pointer, before its return address is pushed. */
#define MT_STACK_ALIGN		16

/* ---- system calls ------------------------------------------------------ */

/* A function called in a stopped thread, through a signal frame (remote_call.c). */
#define MT_ARCH_REMOTE_CALL	1

/* seccomp_data.arch of this ABI's system calls (AUDIT_ARCH_X86_64) */
#define MT_AUDIT_ARCH		0xc000003eU
/* poll(2) in libc: the system call it makes */
#define MT_SYS_POLL		SYS_poll
/* The length of the system call instruction (syscall: 0f 05). */
#define MT_SYSCALL_INSN_LEN	2

/*
 * glibc's signal return trampoline, __restore_rt: mov $15,%rax (the
 * rt_sigreturn system call); syscall.  Found by these bytes in libc's code
 * (0: in libc's file; 1: in the vDSO).
 */
#define MT_RESTORE_RT_BYTES	"\x48\xc7\xc0\x0f\x00\x00\x00\x0f\x05"
#define MT_RESTORE_RT_LEN	9
#define MT_RESTORE_RT_IN_VDSO	0

/*
 * The frame rt_sigreturn restores a thread from (the kernel's struct
 * rt_sigframe: the return address the trampoline's caller pops, ucontext,
 * siginfo), and the XSAVE area, 64-byte aligned, that uc_mcontext.fpstate
 * points to.  The kernel reads it at the stack pointer the system call is
 * made with.
 */
struct mt_sigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate;		/* address of the XSAVE area */
	uint64_t reserved1[8];
};

struct mt_rt_sigframe {
	uint64_t ret;			/* the trampoline */
	struct {
		uint64_t uc_flags;
		uint64_t uc_link;
		struct mt_stack uc_stack;
		struct mt_sigcontext uc_mcontext;
		uint64_t uc_sigmask;	/* the kernel's sigset: 64 signals */
	} uc;
	uint8_t info[128];		/* siginfo */
};

#define MT_UC_FP_XSTATE		0x1
#define MT_UC_SIGCONTEXT_SS	0x2
#define MT_UC_STRICT_RESTORE_SS	0x4
/* user code and stack segment selectors */
#define MT_USER_CS		0x33
#define MT_USER_SS		0x2b

/*
 * The XSAVE area of a thread (PTRACE_GETREGSET, NT_X86_XSTATE) is the
 * signal frame's: the kernel fills its software-reserved bytes (offset
 * 464 of the legacy area) as it does in a frame; the frame adds this word
 * right after the area.
 */
#define MT_NT_XSTATE		0x202	/* NT_X86_XSTATE */
#define MT_FP_XSTATE_MAGIC2	0x46505845U
#define MT_XSTATE_ALIGN		64
#define MT_XSTATE_MAX		(64 << 10)	/* the largest (AMX: ~11 KiB) */

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
 * A call's frame (remote_call.c): what puts thread tid, stopped with
 * registers back, back as it was (its XSAVE area read here, its signal
 * mask sigmask) when the function it calls returns to the trampoline
 * restore_rt.  Built in memory to be written at cf->at, ending at or
 * below `below`; cf->sp is the stack pointer to enter the function with.
 * 0, or -errno.
 */
static inline int mt_callframe_make(pid_t tid, const mt_regs_t *back,
				    uint64_t sigmask, uint64_t restore_rt,
				    uint64_t below, struct mt_callframe *cf)
{
	struct mt_rt_sigframe *f;
	uint64_t xs, frame, magic = MT_FP_XSTATE_MAGIC2;
	struct iovec iov;
	uint8_t *x;

	x = (uint8_t *)calloc(1, MT_XSTATE_MAX);
	if (!x)
		return -ENOMEM;
	iov.iov_base = x;
	iov.iov_len = MT_XSTATE_MAX;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)MT_NT_XSTATE, &iov) < 0) {
		free(x);
		return -errno;
	}
	xs = (below - iov.iov_len - 4) & ~(uint64_t)(MT_XSTATE_ALIGN - 1);
	/* at the function's entry: sp + 8 aligned, as after a call */
	frame = ((xs - sizeof(*f)) & ~(uint64_t)(MT_STACK_ALIGN - 1)) - 8;
	cf->at = cf->sp = frame;
	cf->len = xs + iov.iov_len + 4 - frame;
	cf->buf = (uint8_t *)calloc(1, cf->len);
	if (!cf->buf) {
		free(x);
		return -ENOMEM;
	}
	f = (struct mt_rt_sigframe *)cf->buf;
	f->ret = restore_rt;
	f->uc.uc_flags = MT_UC_FP_XSTATE | MT_UC_SIGCONTEXT_SS |
			 MT_UC_STRICT_RESTORE_SS;
	f->uc.uc_stack.ss_flags = MT_SS_NO_MODE;
	mt_sigcontext_of(&f->uc.uc_mcontext, back, xs);
	f->uc.uc_sigmask = sigmask;
	/* the XSAVE area as a signal frame has it: MAGIC2 right after */
	memcpy(cf->buf + (xs - frame), x, iov.iov_len);
	memcpy(cf->buf + (xs - frame) + iov.iov_len, &magic, 4);
	free(x);
	return 0;
}

/*
 * A thread's registers made to enter fn with stack pointer sp (where the
 * frame put the return address), as a call leaves them: al, which
 * variadic calls read the number of vector registers used from, 0; the
 * trap and direction flags (TF, DF) clear.
 */
static inline void mt_regs_call(mt_regs_t *r, uint64_t fn, uint64_t sp,
				uint64_t ret)
{
	(void)ret;			/* on the stack, in the frame */
	r->rip = fn;
	r->rsp = sp;
	r->rax = 0;
	r->eflags &= ~(0x100ULL | 0x400ULL);
}

/* ---- relocations of GOT slots ------------------------------------------- */

/* a PLT slot, and a GOT slot of a function's address (PIC code, -z now) */
#define MT_R_JUMP_SLOT		R_X86_64_JUMP_SLOT
#define MT_R_GLOB_DAT		R_X86_64_GLOB_DAT

/* ---- where a uprobe goes at a function's entry ------------------------- */

/*
 * How far past an entry the breakpoint can go (b: the entry's first 16
 * bytes).  x86 uprobes run most instructions out of line with a second
 * trap, but emulate jumps; endbr64 and test %rdi,%rdi change no register
 * or stack slot a handler reads, so a breakpoint on the jump that follows
 * them sees what the entry would (glibc's free: test %rdi,%rdi; je;
 * libstdc++'s delete: endbr64; jmp).
 */
static inline uint32_t mt_uprobe_entry_skip(const uint8_t *b)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t test_rdi[] = { 0x48, 0x85, 0xff };
	uint32_t at = 0;

	if (!memcmp(b, endbr64, sizeof(endbr64)))
		at += sizeof(endbr64);
	if (!memcmp(b + at, test_rdi, sizeof(test_rdi)))
		at += sizeof(test_rdi);
	if (b[at] == 0xeb || b[at] == 0xe9 ||			/* jmp */
	    (b[at] >= 0x70 && b[at] <= 0x7f) ||			/* jcc rel8 */
	    (b[at] == 0x0f && b[at + 1] >= 0x80 && b[at + 1] <= 0x8f))
		return at;
	return 0;
}

#elif defined(__aarch64__)

/* ---- a stopped thread's registers ------------------------------------------ */

/*
 * struct user_regs_struct (NT_PRSTATUS) lacks the thread pointer and the
 * system call a thread is in: they are regsets of their own.
 */
typedef struct {
	struct user_regs_struct gp;
	uint64_t tp;			/* NT_ARM_TLS: tpidr_el0 */
	int32_t syscall;		/* NT_ARM_SYSTEM_CALL */
	int32_t pad;
} mt_regs_t;

/*
 * glibc's TLS layout: variant I, the thread pointer past the descriptor
 * (struct pthread below it), the TLS blocks above it
 */
#define MT_TLS_TCB_AT_TP	0

#define MT_REG_PC(r)		((r)->gp.pc)
#define MT_REG_SP(r)		((r)->gp.sp)
#define MT_REG_FP(r)		((r)->gp.regs[29])	/* the frame pointer */
#define MT_REG_TP(r)		((r)->tp)	/* the thread pointer (TLS) */
#define MT_REG_RET(r)		((r)->gp.regs[0])	/* a call's or syscall's result */
/* the system call a thread is in (-1: none), as the kernel restarts it */
#define MT_REG_SYSCALL(r)	((r)->syscall)
#define MT_NO_SYSCALL		(-1)
/* a function's integer arguments, in order (AAPCS64) */
#define MT_REG_ARG0(r)		((r)->gp.regs[0])
#define MT_REG_ARG1(r)		((r)->gp.regs[1])
#define MT_REG_ARG2(r)		((r)->gp.regs[2])
#define MT_REG_ARG3(r)		((r)->gp.regs[3])

#define MT_NT_ARM_TLS		0x401
#define MT_NT_ARM_SYSTEM_CALL	0x404

static inline int mt_regset(pid_t tid, int get, int type, void *buf,
			    size_t len)
{
	struct iovec iov = { buf, len };

	return (int)ptrace(get ? PTRACE_GETREGSET : PTRACE_SETREGSET, tid,
			   (void *)(long)type, &iov);
}

/* A stopped thread's registers (0), or -1 and errno. */
static inline int mt_regs_get(pid_t tid, mt_regs_t *r)
{
	memset(r, 0, sizeof(*r));
	return mt_regset(tid, 1, NT_PRSTATUS, &r->gp, sizeof(r->gp)) ||
	       mt_regset(tid, 1, MT_NT_ARM_TLS, &r->tp, sizeof(r->tp)) ||
	       mt_regset(tid, 1, MT_NT_ARM_SYSTEM_CALL, &r->syscall,
			 sizeof(r->syscall)) ? -1 : 0;
}

static inline int mt_regs_set(pid_t tid, const mt_regs_t *r)
{
	mt_regs_t w = *r;

	return mt_regset(tid, 0, NT_PRSTATUS, &w.gp, sizeof(w.gp)) ||
	       mt_regset(tid, 0, MT_NT_ARM_SYSTEM_CALL, &w.syscall,
			 sizeof(w.syscall)) ? -1 : 0;
}

/*
 * A breakpoint (brk #0, one instruction) over the low half of the word at
 * its address; a thread that hit it stops with its pc on it.
 */
#define MT_BRK_WORD(word)	(((word) & ~0xffffffffL) | 0xd4200000L)
#define MT_BRK_AT(pc)		(pc)

/* A spin-wait's pause between two looks at a lock. */
#define mt_cpu_relax()		__asm__ __volatile__("yield" ::: "memory")

/* AAPCS64 has no red zone below the stack pointer. */
#define MT_RED_ZONE		0
#define MT_STACK_ALIGN		16

/* ---- system calls ------------------------------------------------------ */

/* A function called in a stopped thread, through a signal frame (remote_call.c). */
#define MT_ARCH_REMOTE_CALL	1

/* seccomp_data.arch of this ABI's system calls (AUDIT_ARCH_AARCH64) */
#define MT_AUDIT_ARCH		0xc00000b7U
/* poll(2) in libc: the system call it makes (arm64 has no poll) */
#define MT_SYS_POLL		SYS_ppoll
/* The length of the system call instruction (svc #0). */
#define MT_SYSCALL_INSN_LEN	4

/*
 * The vDSO's signal return trampoline, __kernel_rt_sigreturn (glibc sets
 * no restorer of its own on arm64): mov x8, #139 (rt_sigreturn); svc #0.
 */
#define MT_RESTORE_RT_BYTES	"\x68\x11\x80\xd2\x01\x00\x00\xd4"
#define MT_RESTORE_RT_LEN	8
#define MT_RESTORE_RT_IN_VDSO	1

/*
 * The frame rt_sigreturn restores a thread from, at the stack pointer the
 * system call is made with (16-byte aligned): the kernel's struct
 * rt_sigframe, siginfo then ucontext, whose sigcontext holds the general
 * registers and, in __reserved, records: FP/SIMD (always), SVE (a thread
 * whose SVE registers are live), then an empty one.
 *
 * A thread a tracer stops in an interrupted system call shows it already
 * made to restart (the kernel's do_signal() rewinds pc onto the svc and
 * puts x0 back before the stop), so the frame restarts it; one that only
 * restart_syscall would resume (a relative sleep, a futex wait with a
 * timeout) starts again with its own arguments, where x86-64's returns
 * EINTR.
 */
struct mt_aarch64_ctx {
	uint32_t magic;
	uint32_t size;
};

struct mt_fpsimd_context {
	struct mt_aarch64_ctx head;
	uint32_t fpsr;
	uint32_t fpcr;
	__uint128_t vregs[32];
};

struct mt_sve_context {
	struct mt_aarch64_ctx head;
	uint16_t vl;
	uint16_t flags;
	uint16_t reserved[2];
};

struct mt_rt_sigframe {
	uint8_t info[128];		/* siginfo */
	struct {
		uint64_t uc_flags;
		uint64_t uc_link;
		struct mt_stack uc_stack;
		uint64_t uc_sigmask;	/* the kernel's sigset: 64 signals */
		uint8_t unused[120];	/* to glibc's 1024-bit sigset_t */
		struct {
			uint64_t fault_address;
			uint64_t regs[31];
			uint64_t sp, pc, pstate;
			uint8_t reserved[4096] __attribute__((aligned(16)));
		} uc_mcontext;
	} uc;
};

_Static_assert(sizeof(struct mt_fpsimd_context) == 528, "fpsimd_context");
_Static_assert(sizeof(struct mt_rt_sigframe) == 4688, "struct rt_sigframe");

#define MT_FPSIMD_MAGIC		0x46508001U
#define MT_SVE_MAGIC		0x53564501U
#define MT_NT_ARM_SVE		0x405
#define MT_NT_ARM_SSVE		0x40b
#define MT_NT_ARM_ZA		0x40c
/* NT_ARM_SVE's header (struct user_sve_header), and NT_ARM_ZA's */
struct mt_sve_header {
	uint32_t size;
	uint32_t max_size;
	uint16_t vl;
	uint16_t max_vl;
	uint16_t flags;			/* bit 0: SVE registers, not FP/SIMD */
	uint16_t reserved;
};

/* A regset's header (NT_ARM_SVE, _SSVE, _ZA): false if it has none. */
static inline bool mt_sve_header_of(pid_t tid, int type,
				    struct mt_sve_header *h)
{
	struct iovec iov = { h, sizeof(*h) };

	return ptrace(PTRACE_GETREGSET, tid, (void *)(long)type, &iov) == 0;
}

/*
 * A call's frame (remote_call.c): what puts thread tid, stopped with
 * registers back, back as it was (its FP/SIMD and SVE registers read here,
 * its signal mask sigmask) when the function it calls returns to the
 * trampoline (x30: mt_regs_call()).  Built in memory to be written at
 * cf->at, ending at or below `below`; cf->sp is the stack pointer to enter
 * the function with.  0, or -errno: -EOPNOTSUPP for state the frame does
 * not hold (SME's streaming mode or ZA in use, an SVE vector too long for
 * __reserved).
 */
static inline int mt_callframe_make(pid_t tid, const mt_regs_t *back,
				    uint64_t sigmask, uint64_t restore_rt,
				    uint64_t below, struct mt_callframe *cf)
{
	struct user_fpsimd_struct fp;
	struct iovec iov = { &fp, sizeof(fp) };
	struct mt_fpsimd_context *fc;
	struct mt_sve_context *sc;
	struct mt_rt_sigframe *f;
	struct mt_sve_header h;
	size_t regs = 0, len;
	int i;

	(void)restore_rt;		/* in x30 */
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &iov) < 0)
		return -errno;
	if ((mt_sve_header_of(tid, MT_NT_ARM_SSVE, &h) && (h.flags & 1)) ||
	    (mt_sve_header_of(tid, MT_NT_ARM_ZA, &h) && h.size > sizeof(h)))
		return -EOPNOTSUPP;
	f = (struct mt_rt_sigframe *)calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	fc = (struct mt_fpsimd_context *)f->uc.uc_mcontext.reserved;
	sc = (struct mt_sve_context *)(fc + 1);
	if (mt_sve_header_of(tid, MT_NT_ARM_SVE, &h) && (h.flags & 1)) {
		/* live SVE registers: their record, laid out as ptrace's */
		regs = h.vl / 16 * (32 * 16 + 16 * 2 + 2);
		len = (sizeof(*sc) + regs + 15) & ~15UL;
		/* a whole number of quadwords, as the regset reads */
		iov.iov_base = (uint8_t *)(sc + 1) - sizeof(h);
		iov.iov_len = len;
		if (len + sizeof(*fc) + sizeof(struct mt_aarch64_ctx) >
		    sizeof(f->uc.uc_mcontext.reserved) ||
		    h.size < sizeof(h) + regs) {
			free(f);
			return -EOPNOTSUPP;
		}
		/* the header lands over sc's, written after */
		if (ptrace(PTRACE_GETREGSET, tid, (void *)MT_NT_ARM_SVE, &iov) < 0) {
			free(f);
			return -errno;
		}
		sc->head.magic = MT_SVE_MAGIC;
		sc->head.size = (uint32_t)len;
		sc->vl = h.vl;
		sc->flags = 0;
		memset(sc->reserved, 0, sizeof(sc->reserved));
	}
	cf->buf = (uint8_t *)f;
	cf->len = sizeof(*f);
	cf->at = cf->sp = (below - sizeof(*f)) & ~(uint64_t)(MT_STACK_ALIGN - 1);
	f->uc.uc_stack.ss_flags = MT_SS_NO_MODE;
	f->uc.uc_sigmask = sigmask;
	for (i = 0; i < 31; i++)
		f->uc.uc_mcontext.regs[i] = back->gp.regs[i];
	f->uc.uc_mcontext.sp = back->gp.sp;
	f->uc.uc_mcontext.pc = back->gp.pc;
	f->uc.uc_mcontext.pstate = back->gp.pstate;
	fc->head.magic = MT_FPSIMD_MAGIC;
	fc->head.size = sizeof(*fc);
	fc->fpsr = fp.fpsr;
	fc->fpcr = fp.fpcr;
	memcpy(fc->vregs, fp.vregs, sizeof(fc->vregs));
	/* the empty record that ends them: zero already */
	return 0;
}

/* A thread's registers made to enter fn with stack pointer sp, returning to ret. */
static inline void mt_regs_call(mt_regs_t *r, uint64_t fn, uint64_t sp,
				uint64_t ret)
{
	r->gp.pc = fn;
	r->gp.sp = sp;
	r->gp.regs[30] = ret;
}

/* ---- relocations of GOT slots ------------------------------------------- */

/* a PLT slot, and a GOT slot of a function's address (PIC code, -z now) */
#define MT_R_JUMP_SLOT		R_AARCH64_JUMP_SLOT
#define MT_R_GLOB_DAT		R_AARCH64_GLOB_DAT

/* ---- where a uprobe goes at a function's entry ------------------------- */

/* At the entry: arm64's uprobes simulate or single-step every instruction
 * alike, so moving past one saves nothing. */
static inline uint32_t mt_uprobe_entry_skip(const uint8_t *b)
{
	(void)b;
	return 0;
}

#else
#error "no user/preload/arch.h block for this architecture"
#endif

/* ---- the same on every 64-bit Linux ----------------------------------------- */

/*
 * What an interrupted system call returns into the kernel before it is
 * restarted (include/linux/errno.h, not exported to user space).
 */
#define MT_ERESTARTSYS		512
#define MT_ERESTARTNOINTR	513
#define MT_ERESTARTNOHAND	514
#define MT_ERESTART_RESTARTBLOCK 516

/* GOT slots' relocations (the types are each architecture's, above) */
typedef Elf64_Rela mt_rela_t;
#define MT_RELA_TYPE(info)	ELF64_R_TYPE(info)
#define MT_RELA_SYM(info)	ELF64_R_SYM(info)

#endif
