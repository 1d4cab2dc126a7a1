// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
/*
 * Dropping root once everything privileged is open (the netlink socket and
 * its "events" membership, which needs CAP_SYS_ADMIN to join, and the
 * listening socket).  With keep_ptrace, CAP_SYS_PTRACE survives: the
 * module shows another user's event counters (page allocations, kmalloc,
 * reclaim stalls, ...) only to their owner or to CAP_SYS_PTRACE, as /proc
 * does for what a process does.  With container names, CAP_DAC_READ_SEARCH
 * survives: the runtimes keep their state (/run/containerd,
 * /var/lib/docker, /run/containers) readable by root only, and a new
 * container's names are read when it appears.  It reads; it never writes.
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

static int keep_only(unsigned int keep, char *err, size_t errlen)
{
	cap_value_t v[2];
	cap_t caps = cap_init();
	int n = 0, ret = 0;

	if (keep & MTN_KEEP_PTRACE)
		v[n++] = CAP_SYS_PTRACE;
	if (keep & MTN_KEEP_READ_SEARCH)
		v[n++] = CAP_DAC_READ_SEARCH;
	if (!caps ||
	    cap_set_flag(caps, CAP_PERMITTED, n, v, CAP_SET) ||
	    cap_set_flag(caps, CAP_EFFECTIVE, n, v, CAP_SET) ||
	    cap_set_proc(caps)) {
		ret = errno ? -errno : -EPERM;
		snprintf(err, errlen, "keeping %s%s%s: %s",
			 keep & MTN_KEEP_PTRACE ? "CAP_SYS_PTRACE" : "",
			 n == 2 ? " and " : "",
			 keep & MTN_KEEP_READ_SEARCH ? "CAP_DAC_READ_SEARCH" : "",
			 strerror(-ret));
	}
	if (caps)
		cap_free(caps);
	return ret;
}

int mtn_drop_privileges(const char *user, unsigned int keep,
			char *err, size_t errlen)
{
	struct passwd *pw;
	int e;

	if (geteuid() != 0)
		return 0;	/* started unprivileged: nothing to drop */
	errno = 0;
	pw = getpwnam(user);
	if (!pw) {
		e = errno;
		snprintf(err, errlen, "user \"%s\": %s", user,
			 e ? strerror(e) : "no such user");
		return e ? -e : -ENOENT;
	}
	if (pw->pw_uid == 0)
		return 0;	/* configured to stay root */
	if (keep && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)) {
		e = errno;
		snprintf(err, errlen, "PR_SET_KEEPCAPS: %s", strerror(e));
		return -e;
	}
	if (setgroups(1, &pw->pw_gid) || setresgid(pw->pw_gid, pw->pw_gid,
						   pw->pw_gid) ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid)) {
		e = errno;
		snprintf(err, errlen, "switching to %s: %s", user, strerror(e));
		return -e;
	}
	if (keep) {
		e = keep_only(keep, err, errlen);
		if (e)
			return e;
	}
	/* Prove it cannot come back. */
	if (setuid(0) == 0) {
		snprintf(err, errlen, "still able to become root");
		return -EPERM;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		e = errno;
		snprintf(err, errlen, "PR_SET_NO_NEW_PRIVS: %s", strerror(e));
		return -e;
	}
	return 0;
}
