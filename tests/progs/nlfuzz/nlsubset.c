// SPDX-License-Identifier: GPL-2.0
/*
 * The request side of test_netlink.py's every_command_with_every_attribute_
 * subset, loaded with ctypes (built into libnlfuzz.so with nlfuzz.c): every
 * command with every subset of well-formed attributes, in a random order,
 * sent here and each answer awaited here.  A run is about 57,000 requests;
 * in Python each cost about 1 ms of emulated CPU on top of the kernel's own
 * work, more than half of the test.
 *
 * The attributes' encodings stay in the test: it hands over, for each
 * attribute, a pool of well-formed instances (the random ones drawn by its
 * own generator), and a request carries, for each attribute of its subset,
 * one instance picked here.  The checks stay in the test too:
 *
 *   s = nlsub_new(family, seed, nattrs, blob, offs, lens, owners, ninst,
 *                 cmd_max, set_config, dump_cmds)
 *   while (i = nlsub_next(s, &what, &cmd, &err, picks)) >= 0:
 *       what 1: request i was a SET_CONFIG; err its answer (0 or an errno),
 *               picks[j] the instance of attribute j it carried, or -1
 *       what 2: the periodic check after request i (every 256th, the last)
 *       what 3: request i (command cmd) had no answer: err is ETIMEDOUT
 *               (none in 30 s) or what recv() said
 *   nlsub_counts(s, &answered, &requests); nlsub_free(s)
 *
 * Instance k is blob[offs[k], offs[k] + lens[k]), an attribute of the
 * test's attribute owners[k] (0..nattrs-1).  dump_cmds: bit c set when
 * command c answers a dump; one request in ten asks the other way (a
 * SET_CONFIG never dumps: that is no SET_CONFIG, not modelled).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "nltest.h"

#define MAX_ATTRS	16
#define MAX_MSG		16384
#define CHECK_EVERY	256
#define ANSWER_MS	30000

struct nlsub {
	int fd, family, nattrs, set_config;
	uint32_t dump_cmds;
	uint64_t rng;
	long njobs, i, answered;
	uint32_t *jobs;			/* cmd << 16 | attribute mask */
	unsigned char *blob;
	int *offs, *lens;
	int *pool[MAX_ATTRS], npool[MAX_ATTRS];
	unsigned char buf[1 << 20];
};

void nlsub_free(void *arg)
{
	struct nlsub *s = arg;
	int j;

	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	for (j = 0; j < MAX_ATTRS; j++)
		free(s->pool[j]);
	free(s->jobs);
	free(s->blob);
	free(s->offs);
	free(s->lens);
	free(s);
}

void *nlsub_new(int family, unsigned long long seed, int nattrs,
		const unsigned char *blob, const int *offs, const int *lens,
		const int *owners, int ninst, int cmd_max, int set_config,
		unsigned int dump_cmds)
{
	struct nlsub *s = calloc(1, sizeof(*s));
	size_t bytes = 0;
	long k, m;
	int j;

	if (!s || nattrs < 1 || nattrs > MAX_ATTRS || ninst < 1)
		goto fail;
	s->fd = -1;
	for (k = 0; k < ninst; k++) {
		if (owners[k] < 0 || owners[k] >= nattrs || offs[k] < 0 ||
		    lens[k] < 4 || lens[k] > MAX_MSG / MAX_ATTRS)
			goto fail;
		if ((size_t)offs[k] + (size_t)lens[k] > bytes)
			bytes = (size_t)offs[k] + (size_t)lens[k];
	}
	s->blob = malloc(bytes);
	s->offs = malloc(sizeof(int) * (size_t)ninst);
	s->lens = malloc(sizeof(int) * (size_t)ninst);
	s->njobs = (long)cmd_max << nattrs;
	s->jobs = malloc(sizeof(uint32_t) * (size_t)s->njobs);
	if (!s->blob || !s->offs || !s->lens || !s->jobs)
		goto fail;
	memcpy(s->blob, blob, bytes);
	memcpy(s->offs, offs, sizeof(int) * (size_t)ninst);
	memcpy(s->lens, lens, sizeof(int) * (size_t)ninst);
	for (j = 0; j < nattrs; j++) {
		s->pool[j] = malloc(sizeof(int) * (size_t)ninst);
		if (!s->pool[j])
			goto fail;
	}
	for (k = 0; k < ninst; k++)
		s->pool[owners[k]][s->npool[owners[k]]++] = (int)k;
	for (j = 0; j < nattrs; j++)
		if (!s->npool[j])
			goto fail;
	s->nattrs = nattrs;
	s->family = family;
	s->set_config = set_config;
	s->dump_cmds = dump_cmds;
	s->rng = seed;
	/* every (command, subset), then shuffled (Fisher-Yates) */
	for (k = 0; k < s->njobs; k++)
		s->jobs[k] = (uint32_t)((k >> nattrs) + 1) << 16 |
			     (uint32_t)(k & ((1L << nattrs) - 1));
	for (k = s->njobs - 1; k > 0; k--) {
		uint32_t t = s->jobs[k];

		m = (long)(splitmix64(&s->rng) % (uint64_t)(k + 1));
		s->jobs[k] = s->jobs[m];
		s->jobs[m] = t;
	}
	s->fd = nltest_socket();
	if (s->fd < 0)
		goto fail;
	return s;
fail:
	nlsub_free(s);
	return NULL;
}

/*
 * The answer to seq: 0 (an ack, or the end of a dump), an errno the family
 * answered, or -(what went wrong): -ETIMEDOUT, or recv()'s errno.
 */
static int answer(struct nlsub *s, uint32_t seq)
{
	for (;;) {
		struct pollfd p = { s->fd, POLLIN, 0 };
		size_t off = 0;
		ssize_t r;

		if (poll(&p, 1, ANSWER_MS) <= 0)
			return -ETIMEDOUT;
		r = recv(s->fd, s->buf, sizeof(s->buf), 0);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		while (off + NLMSG_HDRLEN <= (size_t)r) {
			struct nlmsghdr h;
			int32_t e = 0;

			memcpy(&h, s->buf + off, sizeof(h));
			if (h.nlmsg_len < NLMSG_HDRLEN)
				return -EPROTO;
			if (h.nlmsg_seq == seq &&
			    (h.nlmsg_type == NLMSG_ERROR ||
			     h.nlmsg_type == NLMSG_DONE)) {
				if (h.nlmsg_len >= NLMSG_HDRLEN + 4 &&
				    off + NLMSG_HDRLEN + 4 <= (size_t)r)
					memcpy(&e, s->buf + off + NLMSG_HDRLEN, 4);
				return -e;
			}
			off += NLMSG_ALIGN(h.nlmsg_len);
		}
	}
}

long nlsub_next(void *arg, int *what, int *cmd_out, int *err, int *picks)
{
	struct nlsub *s = arg;
	unsigned char msg[MAX_MSG];

	while (s->i < s->njobs) {
		long i = s->i++;
		int cmd = (int)(s->jobs[i] >> 16), dump, r, j;
		uint32_t mask = s->jobs[i] & 0xffff;
		struct genlmsghdr g = { .cmd = (uint8_t)cmd, .version = 1 };
		struct nlmsghdr h = { .nlmsg_type = (uint16_t)s->family,
				      .nlmsg_seq = (uint32_t)i + 1 };
		size_t len = NLMSG_HDRLEN + GENL_HDRLEN;

		for (j = 0; j < s->nattrs; j++) {
			int k;

			picks[j] = -1;
			if (!(mask >> j & 1))
				continue;
			k = s->pool[j][splitmix64(&s->rng) % (uint64_t)s->npool[j]];
			picks[j] = k;
			memcpy(msg + len, s->blob + s->offs[k], (size_t)s->lens[k]);
			memset(msg + len + s->lens[k], 0,
			       NLA_ALIGN(s->lens[k]) - (size_t)s->lens[k]);
			len += NLA_ALIGN(s->lens[k]);
		}
		dump = cmd != s->set_config &&
		       !!(s->dump_cmds >> cmd & 1) != (splitmix64(&s->rng) % 10 == 0);
		h.nlmsg_len = (uint32_t)len;
		h.nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK);
		memcpy(msg, &h, sizeof(h));
		memcpy(msg + NLMSG_HDRLEN, &g, sizeof(g));
		*cmd_out = cmd;
		r = send(s->fd, msg, len, 0) < 0 ? -errno : answer(s, h.nlmsg_seq);
		if (r < 0) {
			*what = 3;
			*err = -r;
			return i;
		}
		s->answered += r == 0;
		*err = r;
		if (cmd == s->set_config) {
			*what = 1;	/* its own check stands for the periodic one */
			return i;
		}
		if (i % CHECK_EVERY == CHECK_EVERY - 1 || i == s->njobs - 1) {
			*what = 2;
			return i;
		}
	}
	return -1;
}

/* The requests answered without an error, and how many there are. */
void nlsub_counts(void *arg, long *answered, long *requests)
{
	struct nlsub *s = arg;

	*answered = s->answered;
	*requests = s->njobs;
}
