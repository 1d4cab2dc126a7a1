// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for testing memtrack-events without memtrack.ko: opening
 * /dev/memtrack opens $MT_FAKE_DEV instead (a FIFO, read-write so that it
 * never reports a hang-up), and the memtrack ioctls on that fd succeed:
 * GET_VERSION says MEMTRACK_ABI_VERSION, SET_FILTER writes the filter as
 * "classes=0x.. flags=.. pid=.. tgid=.." to $MT_FAKE_FILTER_OUT.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/memtrack.h>

static int fake_fd = -1;

static int fake_open(const char *path, int flags, mode_t mode,
		     const char *sym)
{
	int (*real)(const char *, int, ...) = dlsym(RTLD_NEXT, sym);
	const char *dev = getenv("MT_FAKE_DEV");

	if (dev && !strcmp(path, MEMTRACK_DEVICE)) {
		fake_fd = real(dev, (flags & ~O_ACCMODE) | O_RDWR, mode);
		return fake_fd;
	}
	return real(path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	return fake_open(path, flags, mode, "open");
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	return fake_open(path, flags, mode, "open64");
}

int ioctl(int fd, unsigned long req, ...)
{
	int (*real)(int, unsigned long, ...) = dlsym(RTLD_NEXT, "ioctl");
	const char *out = getenv("MT_FAKE_FILTER_OUT");
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != fake_fd || fd < 0)
		return real(fd, req, arg);
	switch (req) {
	case MEMTRACK_IOC_GET_VERSION:
		*(__u32 *)arg = MEMTRACK_ABI_VERSION;
		return 0;
	case MEMTRACK_IOC_SET_FILTER: {
		const struct memtrack_filter *f = arg;
		FILE *o = out ? fopen(out, "w") : NULL;

		if (o) {
			fprintf(o, "classes=%#x flags=%u pid=%d tgid=%d\n",
				f->classes, f->flags, f->pid, f->tgid);
			fclose(o);
		}
		return 0;
	}
	}
	errno = ENOTTY;
	return -1;
}
