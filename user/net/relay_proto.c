// SPDX-License-Identifier: GPL-2.0
/*
 * Frame headers of the relay protocol (relay_proto.h), strictly checked,
 * and the escaping of a table RESULT's strings.
 */
#include <errno.h>

#include "buf.h"
#include "relay_proto.h"

void mtn_result_put_str(struct mtn_buf *b, const char *s, char sep)
{
	const unsigned char *c = (const unsigned char *)s;

	for (; *c; c++) {
		if (*c < 0x20 || *c == '\\' || *c == 0x7f)
			mtn_buf_printf(b, "\\%03o", *c);
		else
			mtn_buf_append(b, c, 1);
	}
	mtn_buf_append(b, &sep, 1);
}

void mtn_put_be64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = v & 0xff;
}

uint64_t mtn_get_be64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

void mtn_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

void mtn_relay_hdr(uint8_t *out, uint8_t type, uint32_t len)
{
	mtn_put_be32(out, MTN_RELAY_MAGIC);
	out[4] = type;
	out[5] = out[6] = out[7] = 0;
	mtn_put_be32(out + 8, len);
}

int mtn_relay_parse_hdr(const uint8_t *in, uint8_t *type, uint32_t *len)
{
	*type = in[4];
	*len = get_be32(in + 8);
	if (get_be32(in) != MTN_RELAY_MAGIC || in[5] || in[6] || in[7])
		return -EBADMSG;
	switch (*type) {
	case MTN_RELAY_HELLO:
		return *len >= 19 && *len <= 18 + MTN_RELAY_MAX_NODE ?
			0 : -EBADMSG;
	case MTN_RELAY_WELCOME:
	case MTN_RELAY_ACK:
		return *len == 8 ? 0 : -EBADMSG;
	case MTN_RELAY_DATA:
		return *len >= 9 && *len <= MTN_RELAY_MAX_BODY ? 0 : -EBADMSG;
	case MTN_RELAY_HEARTBEAT:
		return *len == 0 ? 0 : -EBADMSG;
	case MTN_RELAY_QUERY:
		return *len >= 1 && *len <= MTN_RELAY_MAX_QUERY ? 0 : -EBADMSG;
	case MTN_RELAY_RESULT:
		return *len >= 2 && *len <= MTN_RELAY_MAX_RESULT ? 0 : -EBADMSG;
	default:
		return -EBADMSG;
	}
}
