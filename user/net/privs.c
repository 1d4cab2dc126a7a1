// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * Dropping root once everything privileged is open (the netlink socket and
 * its "events" membership, which needs CAP_SYS_ADMIN to join, and the
 * listening socket).  With keep_ptrace, CAP_SYS_PTRACE alone survives: the
 * module shows another user's event counters (page allocations, kmalloc,
 * reclaim stalls, ...) only to their owner or to CAP_SYS_PTRACE, as /proc
 * does for what a process does.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "privs.h"

static int keep_only_ptrace(char *err, size_t errlen)
{
	cap_value_t v = CAP_SYS_PTRACE;
	cap_t caps = cap_init();
	int ret = -1;

	if (!caps)
		goto out;
	if (cap_set_flag(caps, CAP_PERMITTED, 1, &v, CAP_SET) ||
	    cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_SET) ||
	    cap_set_proc(caps))
		goto out;
	ret = 0;
out:
	if (ret)
		snprintf(err, errlen, "keeping CAP_SYS_PTRACE: %s",
			 strerror(errno));
	if (caps)
		cap_free(caps);
	return ret;
}

int mtd_drop_privileges(const char *user, bool keep_ptrace,
			char *err, size_t errlen)
{
	struct passwd *pw;

	if (geteuid() != 0)
		return 0;	/* started unprivileged: nothing to drop */
	errno = 0;
	pw = getpwnam(user);
	if (!pw) {
		snprintf(err, errlen, "user \"%s\": %s", user,
			 errno ? strerror(errno) : "no such user");
		return -1;
	}
	if (pw->pw_uid == 0)
		return 0;	/* configured to stay root */
	if (keep_ptrace && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)) {
		snprintf(err, errlen, "PR_SET_KEEPCAPS: %s", strerror(errno));
		return -1;
	}
	if (setgroups(1, &pw->pw_gid) || setresgid(pw->pw_gid, pw->pw_gid,
						   pw->pw_gid) ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid)) {
		snprintf(err, errlen, "switching to %s: %s", user,
			 strerror(errno));
		return -1;
	}
	if (keep_ptrace && keep_only_ptrace(err, errlen))
		return -1;
	/* Prove it cannot come back. */
	if (setuid(0) == 0) {
		snprintf(err, errlen, "still able to become root");
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(err, errlen, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return -1;
	}
	return 0;
}
