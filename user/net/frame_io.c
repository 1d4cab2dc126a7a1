// SPDX-License-Identifier: GPL-2.0
/* Relay frames with deadlines (frame_io.h). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "libmemtrack.h"
#include "conn.h"
#include "frame_io.h"
#include "relay_proto.h"

int mtn_conn_read_by(struct mtn_conn *c, void *buf, size_t len,
		     int64_t deadline)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n;

		/* TLS may hold decoded bytes that poll() cannot see */
		if (!mtn_conn_pending(c)) {
			struct pollfd pfd = { .fd = mtn_conn_fd(c),
					      .events = POLLIN };
			int64_t left = deadline - mt_mono_ms();
			int r;

			if (left <= 0)
				return -ETIMEDOUT;
			r = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
			if (r < 0 && errno != EINTR)
				return -errno;
			if (r <= 0)
				continue;
		}
		n = mtn_conn_read_some(c, p, len);
		if (n < 0)
			return n;
		p += n;
		len -= n;
	}
	return 0;
}

int mtn_frame_read(struct mtn_conn *c, uint8_t *type, uint8_t **body,
		   uint32_t *len, int64_t head_deadline, int64_t body_deadline,
		   int body_ms)
{
	uint8_t hdr[MTN_RELAY_HDR_LEN];
	int err;

	*body = NULL;
	err = mtn_conn_read_by(c, hdr, sizeof(hdr), head_deadline);
	if (err)
		return err;
	if (mtn_relay_parse_hdr(hdr, type, len))
		return -EBADMSG;
	if (!*len)
		return 0;
	*body = malloc(*len);
	if (!*body)
		return -ENOMEM;
	if (!body_deadline)
		body_deadline = mt_mono_ms() + body_ms;
	err = mtn_conn_read_by(c, *body, *len, body_deadline);
	if (err) {
		free(*body);
		*body = NULL;
	}
	return err;
}

int mtn_frame_write(struct mtn_conn *c, uint8_t type, const void *body,
		    size_t len)
{
	uint8_t *f = malloc(MTN_RELAY_HDR_LEN + len);
	int err;

	if (!f)
		return -ENOMEM;
	mtn_relay_hdr(f, type, len);
	if (len)
		memcpy(f + MTN_RELAY_HDR_LEN, body, len);
	err = mtn_conn_write(c, f, MTN_RELAY_HDR_LEN + len);
	free(f);
	return err;
}
