// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: the /dev/memtrack record ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "libmemtrack.h"
#include "internal.h"

#define MT_RING_READ_BYTES	(256 * 1024)

int mt_ring_open(const struct memtrack_filter *f, bool nonblock)
{
	__u32 version;
	int fd, err;

	fd = open(MEMTRACK_DEVICE, O_RDONLY | O_CLOEXEC |
		  (nonblock ? O_NONBLOCK : 0));
	if (fd < 0) {
		err = errno;
		if ((err == ENOENT || err == ENXIO || err == ENODEV) &&
		    access("/sys/module/memtrack", F_OK))
			return mt_seterr(-err, "%s: %s: memtrack.ko is not loaded (%s)",
					 MEMTRACK_DEVICE, strerror(err),
					 MT_MODULE_HINT);
		return mt_seterr(-err, "%s: %s", MEMTRACK_DEVICE, strerror(err));
	}
	if (ioctl(fd, MEMTRACK_IOC_GET_VERSION, &version) == 0 &&
	    version != MEMTRACK_ABI_VERSION) {
		close(fd);
		return mt_seterr(-EPROTO,
				 "%s: memtrack.ko speaks ABI version %u, this program %u",
				 MEMTRACK_DEVICE, version, MEMTRACK_ABI_VERSION);
	}
	if (f && ioctl(fd, MEMTRACK_IOC_SET_FILTER, f) < 0) {
		err = errno;
		close(fd);
		return mt_seterr(-err, "%s: setting the filter: %s",
				 MEMTRACK_DEVICE, strerror(err));
	}
	return fd;
}

int mt_ring_read(int fd, mt_record_cb cb, void *arg)
{
	static __thread __u64 buf[MT_RING_READ_BYTES / sizeof(__u64)];
	ssize_t n;

	n = read(fd, buf, sizeof(buf));
	if (n < 0) {
		if (errno == EAGAIN)
			return 0;
		return mt_seterr(-errno, "%s: read: %s", MEMTRACK_DEVICE,
				 strerror(errno));
	}
	return mt_walk_records(buf, n, cb, arg);
}
