// SPDX-License-Identifier: GPL-2.0
/*
 * ringread [--idle]: read address-space records from /dev/memtrack and only
 * count them, until SIGINT; then drain and print "N records, M lost".  With
 * --idle it does not read until SIGINT, so the producer's cost is measured
 * without a consumer competing for the CPU.
 */
#include <fcntl.h>
#include <linux/memtrack.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static char buf[1 << 20];

static void on_int(int sig)
{
	(void)sig;
	stop = 1;
}

static void count(ssize_t n, unsigned long long *recs, unsigned long long *lost)
{
	const struct memtrack_rec_hdr *h;
	ssize_t off;

	for (off = 0; off < n; off += h->size) {
		h = (const void *)(buf + off);
		if (h->type == MEMTRACK_REC_LOST)
			*lost += ((const struct memtrack_rec_lost *)h)->lost;
		else
			(*recs)++;
	}
}

int main(int argc, char **argv)
{
	struct memtrack_filter f = { .classes = MEMTRACK_CLASS_MMAP };
	int idle = argc > 1 && !strcmp(argv[1], "--idle");
	unsigned long long recs = 0, lost = 0;
	struct sigaction sa = { .sa_handler = on_int };
	ssize_t n;
	int fd;

	sigaction(SIGINT, &sa, NULL);
	fd = open("/dev/memtrack", O_RDONLY);
	if (fd < 0 || ioctl(fd, MEMTRACK_IOC_SET_FILTER, &f)) {
		perror("/dev/memtrack");
		return 1;
	}
	while (!stop) {
		if (idle) {
			pause();
			continue;
		}
		n = read(fd, buf, sizeof(buf));
		if (n > 0)
			count(n, &recs, &lost);
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		count(n, &recs, &lost);
	fprintf(stderr, "ringread: %llu records, %llu lost\n", recs, lost);
	return 0;
}
