/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the conn layer (conn.h): the credentials conn_creds.c loads and
 * the TLS sessions conn_tls.c runs on them.  Nothing else includes this.
 */
#ifndef MEMTRACK_NET_CONN_INT_H
#define MEMTRACK_NET_CONN_INT_H

#include <gnutls/gnutls.h>

#include "conn.h"

#define MTD_PSK_MAX_ID	128
#define MTD_PSK_MIN_KEY	16	/* bytes: 128 bits, psktool makes 32 */
#define MTD_PSK_MAX_KEY	64

struct mtd_psk {
	char id[MTD_PSK_MAX_ID + 1];
	unsigned char key[MTD_PSK_MAX_KEY];
	unsigned int keylen;
};

struct mtd_creds {
	enum mtd_auth_kind kind;
	bool server;
	/* PSK: a server knows every key of its file, a client the first */
	struct mtd_psk *psk;
	unsigned int npsk;
	gnutls_psk_server_credentials_t psk_server;
	gnutls_psk_client_credentials_t psk_client;
	/* CERT */
	gnutls_certificate_credentials_t cert;
	gnutls_priority_t prio;
};

struct mtd_conn {
	int fd;
	struct mtd_creds *creds;
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
const struct mtd_psk *mtd_psk_find(const struct mtd_creds *c,
				   const char *id, size_t idlen);

/* TLS handshake on c->fd: 0, or -1 with err saying what failed. */
int mtd_tls_open(struct mtd_conn *c, char *err, size_t errlen);
void mtd_tls_close(struct mtd_conn *c);

/*
 * One send or receive of at most len bytes at p, plain (conn.c) or TLS
 * (mtd_tls_send/recv): how many went, 0 at the end of the stream, or a
 * negative errno.  mtd_conn_all() repeats step until exactly len bytes
 * went: 0, -ECONNRESET at the end of the stream, or step's errno.
 */
typedef ssize_t (*mtd_conn_step)(struct mtd_conn *c, void *p, size_t len);
int mtd_conn_all(struct mtd_conn *c, void *buf, size_t len,
		 mtd_conn_step step);
ssize_t mtd_tls_send(struct mtd_conn *c, void *p, size_t len);
ssize_t mtd_tls_recv(struct mtd_conn *c, void *p, size_t len);
ssize_t mtd_tls_read_some(struct mtd_conn *c, void *buf, size_t len);
bool mtd_tls_pending(const struct mtd_conn *c);

#endif /* MEMTRACK_NET_CONN_INT_H */
