// SPDX-License-Identifier: GPL-2.0
/*
 * aggsim: NODES simulated memtrackd nodes feeding one aggregator on
 * 127.0.0.1:PORT, each sending a snapshot of PROCS processes (version 2,
 * user/net/relay_proto.h) every INTERVAL_MS for SECONDS, spread evenly
 * over the interval.  Frames are built once per node; a send only patches
 * the sequence number.  One thread, epoll, non-blocking sockets, so that
 * the simulator costs little next to the aggregator.  Prints what it
 * achieved: frames sent and acknowledged, late sends (a node's previous
 * frame still not written when the next was due), its own CPU time.
 *
 *   aggsim PORT NODES PROCS INTERVAL_MS SECONDS
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#define HDR 12
#define MAGIC 0x4d545231u
enum { HELLO = 1, WELCOME, DATA, ACK, HEARTBEAT };

struct node {
	int fd;
	uint8_t *frame;		/* DATA frame, seq patched per send */
	size_t len, off;	/* off < len: a send in progress */
	uint64_t seq;
	int64_t next_ms;
	uint8_t in[HDR + 8];
	size_t have;
	int welcomed;
};

static uint64_t sent, acked, late, bytes;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}

static void be64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = v;
}

static void hdr(uint8_t *p, int type, uint32_t len)
{
	be32(p, MAGIC);
	p[4] = type;
	p[5] = p[6] = p[7] = 0;
	be32(p + 8, len);
}

/* A snapshot of procs processes with comms from a pool of 100 names. */
static void build(struct node *n, int id, int procs)
{
	size_t cap = 64 + (size_t)procs * 160 + 100 * 100;
	char *t = malloc(cap);
	uint64_t anon[100] = { 0 }, file[100] = { 0 };
	unsigned int nproc[100] = { 0 }, nprogs = 0;
	size_t len, procs_at;
	int i, c;

	if (!t)
		exit(1);
	/* the process lines first, into a scratch area at the end */
	procs_at = cap / 2;
	len = 0;
	for (i = 0; i < procs; i++) {
		uint64_t a = (uint64_t)((id * 7919 + i * 104729) % 50000 + 1) * 4096;
		uint64_t f = (uint64_t)((id * 31 + i * 17) % 2000 + 1) * 4096;

		c = (id + i * 7) % 100;
		anon[c] += a;
		file[c] += f;
		nproc[c]++;
		len += snprintf(t + procs_at + len, cap - procs_at - len,
				"t %d %llu %llu 0 0 prog%02d\n", 1000 + i,
				(unsigned long long)a, (unsigned long long)f, c);
	}
	for (c = 0; c < 100; c++)
		nprogs += nproc[c] > 0;
	n->frame = malloc(HDR + 9 + cap);
	if (!n->frame)
		exit(1);
	n->len = HDR + 9;
	n->len += sprintf((char *)n->frame + n->len, "snapshot/2 sim %u %d\n",
			  nprogs, procs);
	for (c = 0; c < 100; c++)
		if (nproc[c])
			n->len += sprintf((char *)n->frame + n->len,
					  "p %u %llu %llu 0 0 prog%02d\n",
					  nproc[c], (unsigned long long)anon[c],
					  (unsigned long long)file[c], c);
	memcpy(n->frame + n->len, t + procs_at, len);
	n->len += len;
	hdr(n->frame, DATA, n->len - HDR);
	n->frame[HDR + 8] = 1;	/* MTD_RELAY_SNAPSHOT */
	n->off = n->len;	/* nothing in progress */
	free(t);
}

static int dial(int port, int id)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	uint8_t h[HDR + 18 + 16];
	char name[16];
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, nl;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("connect");
		exit(1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	nl = snprintf(name, sizeof(name), "sim-%04d", id);
	hdr(h, HELLO, 18 + nl);
	be64(h + HDR, 0x5100000000000001ull + ((uint64_t)id << 8));
	be64(h + HDR + 8, 1);
	h[HDR + 16] = 0;
	h[HDR + 17] = nl;
	memcpy(h + HDR + 18, name, nl);
	if (write(fd, h, HDR + 18 + nl) != HDR + 18 + nl) {
		perror("hello");
		exit(1);
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

static void push(struct node *n)
{
	while (n->off < n->len) {
		ssize_t w = send(n->fd, n->frame + n->off, n->len - n->off,
				 MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EAGAIN)
				return;
			perror("send");
			exit(1);
		}
		n->off += w;
		bytes += w;
	}
}

static void pull(struct node *n)
{
	for (;;) {
		ssize_t r = recv(n->fd, n->in + n->have, sizeof(n->in) - n->have, 0);

		if (r == 0) {
			fprintf(stderr, "aggsim: the aggregator closed a connection\n");
			exit(1);
		}
		if (r < 0) {
			if (errno == EAGAIN)
				return;
			perror("recv");
			exit(1);
		}
		n->have += r;
		if (n->have < sizeof(n->in))
			continue;
		n->have = 0;
		if (n->in[4] == WELCOME)
			n->welcomed = 1;
		else if (n->in[4] == ACK)
			acked++;
	}
}

int main(int argc, char **argv)
{
	int port, nodes, procs, interval, seconds, ep, i;
	struct epoll_event ev, evs[256];
	struct node *ns;
	struct rusage ru;
	int64_t start, end;

	if (argc != 6) {
		fprintf(stderr, "usage: aggsim PORT NODES PROCS INTERVAL_MS SECONDS\n");
		return 2;
	}
	port = atoi(argv[1]);
	nodes = atoi(argv[2]);
	procs = atoi(argv[3]);
	interval = atoi(argv[4]);
	seconds = atoi(argv[5]);
	ns = calloc(nodes, sizeof(*ns));
	ep = epoll_create1(0);
	if (!ns || ep < 0)
		return 1;
	for (i = 0; i < nodes; i++)
		build(&ns[i], i, procs);
	fprintf(stderr, "aggsim: frames built (%zu bytes each)\n", ns[0].len);
	start = now_ms();
	for (i = 0; i < nodes; i++) {
		ns[i].fd = dial(port, i);
		ns[i].next_ms = start + (int64_t)interval * i / nodes;
		ev.events = EPOLLIN | EPOLLOUT | EPOLLET;
		ev.data.ptr = &ns[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, ns[i].fd, &ev);
	}
	start = now_ms();
	end = start + seconds * 1000LL;
	for (;;) {
		int64_t t = now_ms(), next = end;
		int k, n;

		if (t >= end)
			break;
		for (i = 0; i < nodes; i++) {
			struct node *nd = &ns[i];

			if (nd->welcomed && t >= nd->next_ms) {
				if (nd->off < nd->len) {
					late++;
				} else {
					be64(nd->frame + HDR, ++nd->seq);
					nd->off = 0;
					sent++;
					push(nd);
				}
				nd->next_ms += interval;
			}
			if (nd->next_ms < next)
				next = nd->next_ms;
		}
		n = epoll_wait(ep, evs, 256, next > t ? (int)(next - t) : 0);
		for (k = 0; k < n; k++) {
			struct node *nd = evs[k].data.ptr;

			if (evs[k].events & EPOLLIN)
				pull(nd);
			if (evs[k].events & EPOLLOUT)
				push(nd);
		}
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("aggsim: %d nodes x %d processes every %d ms for %d s: sent %llu "
	       "frames (%.0f/s, %.1f MB/s), acked %llu, late %llu, own CPU %.2f s "
	       "(%.2f cores)\n", nodes, procs, interval, seconds,
	       (unsigned long long)sent, sent * 1000.0 / (now_ms() - start),
	       bytes / 1e6 / ((now_ms() - start) / 1000.0),
	       (unsigned long long)acked, (unsigned long long)late,
	       ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6) /
	       ((now_ms() - start) / 1000.0));
	return 0;
}
