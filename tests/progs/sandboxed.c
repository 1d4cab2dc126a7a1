// SPDX-License-Identifier: GPL-2.0
/*
 * sandboxed MODE: a process under seccomp, for the tests of what
 * memtrack-leak -p does with one.  MODE:
 *   strict       seccomp's strict mode (read, write, exit, sigreturn)
 *   kill-memfd   a filter killing the process on memfd_create
 *   deny-mount   a filter refusing mount with EPERM, allowing the rest
 * It prints "ready" once under it, then answers each line on stdin with
 * "pong N" (N counting from 1) through read and write alone, and exits at
 * the end of stdin.  A process that was killed, or whose answers are not
 * the next numbers, was not left as it was.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "arch.h"		/* user/preload's: MT_AUDIT_ARCH */

#define NR	offsetof(struct seccomp_data, nr)
#define ARCH	offsetof(struct seccomp_data, arch)

static int filter(int nr, unsigned int action)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARCH),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MT_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char buf[64], out[32];
	unsigned long n = 0;
	int err, len;

	if (!strcmp(mode, "strict"))
		err = prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT);
	else if (!strcmp(mode, "kill-memfd"))
		err = filter(SYS_memfd_create, SECCOMP_RET_KILL_PROCESS);
	else if (!strcmp(mode, "deny-mount"))
		err = filter(SYS_mount, SECCOMP_RET_ERRNO | EPERM);
	else
		err = -1;
	if (err) {
		static const char msg[] = "usage: sandboxed strict|kill-memfd|deny-mount\n";

		if (write(2, msg, sizeof(msg) - 1) < 0)
			return 2;
		return 2;
	}
	if (write(1, "ready\n", 6) != 6)
		syscall(SYS_exit, 1);
	while (read(0, buf, sizeof(buf)) > 0) {
		len = snprintf(out, sizeof(out), "pong %lu\n", ++n);
		if (write(1, out, (size_t)len) != len)
			break;
	}
	syscall(SYS_exit, 0);
	return 0;
}
