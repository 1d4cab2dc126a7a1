// SPDX-License-Identifier: LGPL-2.1
/*
 * One data source for a top: memtrack.ko through generic netlink when it is
 * loaded, /proc otherwise, behind the same calls and the same row format;
 * a module reloaded under a client is opened anew here, for every client.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libmemtrack.h"
#include "internal.h"
#include "source.h"

#define MT_SOURCE_FLAGS	(MT_SOURCE_PROC | MT_SOURCE_MODULE | MT_SOURCE_NO_CGROUP)

struct mt_source {
	struct mt_handle *h;		/* NULL: /proc */
	bool no_cgroup;			/* MT_SOURCE_NO_CGROUP */
	bool subscribed;		/* to the module's records */
	unsigned int reopened;
};

/*
 * A request failed: if the module was reloaded (a new family id) or
 * unloaded and loaded again, open it anew and say so (the caller retries
 * once).  Its records need CAP_SYS_ADMIN to join again.  The request's
 * error stays the one reported when the module is not back.
 */
static bool reopen(struct mt_source *src, int err)
{
	struct mt_handle *h;
	char why[256];

	snprintf(why, sizeof(why), "%s", mt_errmsg());
	h = mt_open(0);
	if (!h) {
		mt_seterr(err, "%s", why);
		return false;
	}
	mt_close(src->h);
	src->h = h;
	src->reopened++;
	if (src->subscribed && mt_subscribe(h))
		src->subscribed = false;
	return true;
}

struct mt_source *mt_source_open(int flags)
{
	struct mt_source *src;

	if ((flags & ~MT_SOURCE_FLAGS) ||
	    ((flags & MT_SOURCE_PROC) && (flags & MT_SOURCE_MODULE))) {
		mt_seterr(-EINVAL, "%s: %s flags %#x", __func__,
			  flags & ~MT_SOURCE_FLAGS ? "unknown" : "conflicting",
			  flags);
		errno = EINVAL;
		return NULL;
	}
	src = calloc(1, sizeof(*src));
	if (!src) {
		mt_seterr(-ENOMEM, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	src->no_cgroup = flags & MT_SOURCE_NO_CGROUP;
	if (flags & MT_SOURCE_PROC)
		return src;
	src->h = mt_open(0);
	/* No module (or no netlink family): /proc, which always works. */
	if (!src->h && (flags & MT_SOURCE_MODULE)) {
		int e = errno;

		free(src);
		errno = e;
		return NULL;
	}
	return src;
}

void mt_source_close(struct mt_source *src)
{
	if (!src)
		return;
	mt_close(src->h);
	free(src);
}

bool mt_source_is_module(const struct mt_source *src)
{
	return src->h;
}

struct mt_handle *mt_source_handle(struct mt_source *src)
{
	return src->h;
}

const char *mt_source_name(const struct mt_source *src)
{
	return src->h ? "memtrack module" : "/proc";
}

int mt_source_sysinfo(struct mt_source *src, struct mt_sysinfo *si)
{
	struct memtrack_summary sum;
	int err;

	memset(si, 0, sizeof(*si));
	/* Swap total and buffers are not in the module's summary. */
	err = mt_proc_meminfo(si);
	if (err)
		return err;
	if (!src->h)
		return mt_proc_vmstat(si);
	err = mt_get_summary(src->h, &sum);
	if (err && reopen(src, err))
		err = mt_get_summary(src->h, &sum);
	if (err)
		return err;
	si->sum = sum;
	si->module = true;
	return 0;
}

int mt_source_tasks(struct mt_source *src, struct memtrack_task **out,
		    size_t *n)
{
	int err;

	if (!src->h)
		return mt_proc_tasks(out, n, src->no_cgroup);
	err = mt_dump_tasks(src->h, NULL, out, n);
	if (err && reopen(src, err))
		err = mt_dump_tasks(src->h, NULL, out, n);
	return err;
}

int mt_source_threads(struct mt_source *src, pid_t tgid,
		      struct memtrack_task **out, size_t *n)
{
	int err;

	if (tgid <= 0)
		return mt_seterr(-EINVAL, "%s: bad tgid %d", __func__, tgid);
	if (!src->h)
		return mt_proc_threads(tgid, out, n);
	err = mt_dump_threads(src->h, tgid, out, n);
	if (err && err != -ESRCH && reopen(src, err))
		err = mt_dump_threads(src->h, tgid, out, n);
	/* The same answer as /proc gives for a process that is not there. */
	if (!err && !*n) {
		free(*out);
		*out = NULL;
		err = mt_seterr(-ESRCH, "no process %d", tgid);
	}
	return err;
}

int mt_source_subscribe(struct mt_source *src)
{
	int err;

	if (!src->h)
		return mt_seterr(-EOPNOTSUPP,
				 "kernel events need the memtrack module");
	err = mt_subscribe(src->h);
	src->subscribed = !err;
	return err;
}

bool mt_source_subscribed(const struct mt_source *src)
{
	return src->subscribed;
}

int mt_source_events_fd(struct mt_source *src)
{
	return src->subscribed ? mt_events_fd(src->h) : -1;
}

int mt_source_read_events(struct mt_source *src, mt_record_cb cb, void *arg)
{
	return src->subscribed ? mt_read_events(src->h, cb, arg) : 0;
}

unsigned int mt_source_reopened(const struct mt_source *src)
{
	return src->reopened;
}
