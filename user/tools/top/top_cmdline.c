// SPDX-License-Identifier: GPL-2.0
/* /proc/PID/cmdline for memtrack-top's command-line column (top_cmdline.h). */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "top_cmdline.h"

void top_cmdline_read(pid_t pid, char *buf, size_t len)
{
	char path[32];
	ssize_t n, i;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return;
	/* the arguments end in NULs; the last one's is the end */
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20)
			buf[i] = ' ';
	buf[n] = '\0';
}
