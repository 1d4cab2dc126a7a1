/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the conn layer (conn.h): the credentials conn_creds.c loads and
 * the TLS sessions conn_tls.c runs on them.  Nothing else includes this.
 */
#ifndef MEMTRACK_NET_CONN_INT_H
#define MEMTRACK_NET_CONN_INT_H

#include <gnutls/gnutls.h>

#include "conn.h"

#define MTN_PSK_MAX_ID	128
#define MTN_PSK_MIN_KEY	16	/* bytes: 128 bits, psktool makes 32 */
#define MTN_PSK_MAX_KEY	64

struct mtn_psk {
	char id[MTN_PSK_MAX_ID + 1];
	unsigned char key[MTN_PSK_MAX_KEY];
	unsigned int keylen;
};

struct mtn_creds {
	enum mtn_auth_kind kind;
	bool server;
	/* PSK: a server knows every key of its file, a client the first */
	struct mtn_psk *psk;
	unsigned int npsk;
	gnutls_psk_server_credentials_t psk_server;
	gnutls_psk_client_credentials_t psk_client;
	/* CERT */
	gnutls_certificate_credentials_t cert;
	gnutls_priority_t prio;
};

struct mtn_conn {
	int fd;
	struct mtn_creds *creds;
	gnutls_session_t tls;		/* NULL: plain TCP */
	bool up;			/* the handshake succeeded */
	bool dontwait;			/* the next recv must not wait */
	bool wouldblock;		/* the last send/recv said EAGAIN */
	bool eof;			/* the last recv saw the end */
	bool unknown_id;		/* a PSK server met an unknown identity */
	char peer[256];
	char peer_name[256];		/* PSK identity, or certificate CN */
	char desc[128];
	char error[256];		/* the last TLS failure */
};

/* The key of a PSK identity, or NULL. */
const struct mtn_psk *mtn_psk_find(const struct mtn_creds *c,
				   const char *id, size_t idlen);

/*
 * TLS handshake on c->fd: 0, or a negative errno (-EACCES credentials
 * refused, -ECONNRESET, -ETIMEDOUT, -EPROTO, -ENOMEM, -EINVAL) with err
 * saying what failed.
 */
int mtn_tls_open(struct mtn_conn *c, char *err, size_t errlen);
void mtn_tls_close(struct mtn_conn *c);

/*
 * One send or receive of at most len bytes at p, plain (conn.c) or TLS
 * (mtn_tls_send/recv): how many went, 0 at the end of the stream, or a
 * negative errno.  mtn_conn_all() repeats step until exactly len bytes
 * went: 0, -ECONNRESET at the end of the stream, or step's errno.
 */
typedef ssize_t (*mtn_conn_step)(struct mtn_conn *c, void *p, size_t len);
int mtn_conn_all(struct mtn_conn *c, void *buf, size_t len,
		 mtn_conn_step step);
ssize_t mtn_tls_send(struct mtn_conn *c, void *p, size_t len);
ssize_t mtn_tls_recv(struct mtn_conn *c, void *p, size_t len);
ssize_t mtn_tls_read_some(struct mtn_conn *c, void *buf, size_t len);
bool mtn_tls_pending(const struct mtn_conn *c);

#endif /* MEMTRACK_NET_CONN_INT_H */
