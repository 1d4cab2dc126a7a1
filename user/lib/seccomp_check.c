// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: would a process's seccomp filters let the system calls
 * through that an injection makes in it (inject.c)?  A filter that
 * refuses one with an error would only make the attach fail, but one
 * that kills or traps would kill the target: so the filters are read
 * (PTRACE_SECCOMP_GET_FILTER: CAP_SYS_ADMIN, the process stopped) and run
 * here, classic BPF as the kernel runs it, over each call with the
 * arguments the injection passes it; the most restrictive action of all
 * filters is the verdict, as in the kernel.  Apart from the injector: it
 * is an interpreter, of no use to anything else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ptrace.h>

#include "libmemtrack.h"
#include "internal.h"

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER	0x420c
#endif
#define MAX_INSNS	BPF_MAXINSNS
#define MAX_FILTERS	64

/* One filter over data: its return value (SECCOMP_RET_*). */
static uint32_t run(const struct sock_filter *f, size_t n,
		    const struct seccomp_data *data)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 }, k;
	const unsigned char *d = (const unsigned char *)data;
	size_t pc;

	for (pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t src;

		k = i->k;
		src = BPF_SRC(i->code) == BPF_X ? x : k;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			if (BPF_MODE(i->code) == BPF_ABS && k % 4 == 0 &&
			    k + 4 <= sizeof(*data))
				memcpy(&a, d + k, 4);
			else if (BPF_MODE(i->code) == BPF_IMM)
				a = k;
			else if (BPF_MODE(i->code) == BPF_MEM && k < BPF_MEMWORDS)
				a = mem[k];
			else if (BPF_MODE(i->code) == BPF_LEN)
				a = sizeof(*data);
			else
				return SECCOMP_RET_KILL_PROCESS;
			break;
		case BPF_LDX:
			if (BPF_MODE(i->code) == BPF_IMM)
				x = k;
			else if (BPF_MODE(i->code) == BPF_MEM && k < BPF_MEMWORDS)
				x = mem[k];
			else if (BPF_MODE(i->code) == BPF_LEN)
				x = sizeof(*data);
			else
				return SECCOMP_RET_KILL_PROCESS;
			break;
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return SECCOMP_RET_KILL_PROCESS;
			mem[k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			switch (BPF_OP(i->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV: a = src ? a / src : 0; break;
			case BPF_MOD: a = src ? a % src : 0; break;
			case BPF_OR: a |= src; break;
			case BPF_AND: a &= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src < 32 ? a << src : 0; break;
			case BPF_RSH: a = src < 32 ? a >> src : 0; break;
			case BPF_NEG: a = -a; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			break;
		case BPF_JMP: {
			bool t;

			if (BPF_OP(i->code) == BPF_JA) {
				pc += k;
				continue;
			}
			switch (BPF_OP(i->code)) {
			case BPF_JEQ: t = a == src; break;
			case BPF_JGT: t = a > src; break;
			case BPF_JGE: t = a >= src; break;
			case BPF_JSET: t = a & src; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			pc += t ? i->jt : i->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? a : k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return SECCOMP_RET_KILL_PROCESS;
		}
	}
	return SECCOMP_RET_KILL_PROCESS;	/* fell off the end */
}

/* The action, ordered as the kernel orders them: lower wins. */
static int32_t action(uint32_t ret)
{
	return (int32_t)(ret & SECCOMP_RET_ACTION_FULL);
}

struct filters {
	struct sock_filter *f[MAX_FILTERS];
	size_t n[MAX_FILTERS];
	size_t count;
};

static void filters_free(struct filters *fs)
{
	while (fs->count)
		free(fs->f[--fs->count]);
}

static int read_filters(pid_t pid, struct filters *fs)
{
	long n;

	for (fs->count = 0; fs->count < MAX_FILTERS; fs->count++) {
		n = ptrace(PTRACE_SECCOMP_GET_FILTER, pid,
			   (void *)fs->count, NULL);
		if (n < 0 && errno == ENOENT)
			return 0;
		if (n <= 0 || n > MAX_INSNS)
			return -(errno ? errno : EINVAL);
		fs->f[fs->count] = calloc((size_t)n, sizeof(struct sock_filter));
		if (!fs->f[fs->count])
			return -ENOMEM;
		fs->n[fs->count] = (size_t)n;
		if (ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *)fs->count,
			   fs->f[fs->count]) != n) {
			free(fs->f[fs->count]);
			return -(errno ? errno : EIO);
		}
	}
	return -E2BIG;
}

int mt_seccomp_check(pid_t pid, const struct mt_syscall_use *use, size_t n,
		     const struct mt_syscall_use **denied)
{
	struct seccomp_data d;
	struct filters fs = { .count = 0 };
	size_t i, j;
	int err;

	*denied = NULL;
	err = read_filters(pid, &fs);
	if (err) {
		filters_free(&fs);
		return mt_seterr(err, "reading %d's seccomp filters: %s",
				 (int)pid, strerror(-err));
	}
	for (i = 0; i < n && !*denied; i++) {
		int32_t worst = action(SECCOMP_RET_ALLOW);

		memset(&d, 0, sizeof(d));
		d.nr = (int)use[i].nr;
		d.arch = MT_AUDIT_ARCH;
		memcpy(d.args, use[i].args, sizeof(d.args));
		for (j = 0; j < fs.count; j++) {
			int32_t act = action(run(fs.f[j], fs.n[j], &d));

			if (act < worst)
				worst = act;
		}
		if (worst != action(SECCOMP_RET_ALLOW) &&
		    worst != action(SECCOMP_RET_LOG))
			*denied = &use[i];
	}
	filters_free(&fs);
	return 0;
}
