/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One relay connection (node -> aggregator, query client -> aggregator):
 * plain TCP, or TLS through GnuTLS with the peers authenticated by a
 * pre-shared key or by X.509 certificates on both sides.  The relay, the
 * aggregator and memtrack-query use only this; none of them knows which.
 *
 * TLS is 1.3 only.  What is checked:
 *  - psk: both sides prove they hold the same key, and the handshake adds
 *    an (EC)DHE exchange (forward secrecy).  psk_file is psktool's format,
 *    IDENTITY:HEXKEY per line: a server accepts every identity of its
 *    file, a client uses the first line.  mtn_conn_peer() is the identity.
 *  - cert: each side sends its certificate and verifies the other's chain
 *    against ca_file, the dates, and the extended key usage when present
 *    (TLS client for a node, TLS server for an aggregator).  Peers are
 *    dialled by numeric address, so no name is matched: any certificate
 *    the CA signed is accepted, and mtn_conn_peer() is its subject DN.
 *  The PSK file and the private key must be readable by their owner only.
 *
 * The sockets come from tcp.h, blocking with SO_RCVTIMEO/SO_SNDTIMEO set by
 * the caller (mtn_set_timeouts()), so
 * every call below returns within the socket's timeout (the whole TLS
 * handshake within the receive timeout).  TLS keeps
 * decrypted bytes of its own: poll() on mtn_conn_fd() misses them, so ask
 * mtn_conn_pending() before sleeping in poll().
 *
 * Errors: net's one convention (tcp.h's top comment).
 */
#ifndef MEMTRACK_NET_CONN_H
#define MEMTRACK_NET_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum mtn_auth_kind {
	MTN_AUTH_NONE,		/* plain TCP: trusted networks only */
	MTN_AUTH_PSK,		/* TLS, pre-shared key */
	MTN_AUTH_CERT,		/* TLS, X.509 certificates both ways */
};

struct mtn_auth_config {
	enum mtn_auth_kind kind;
	char psk_file[256];	/* PSK: the key file (see conn.c) */
	char ca_file[256];	/* CERT: CA that signs every peer */
	char cert_file[256];	/* CERT: this side's certificate... */
	char key_file[256];	/* ...and its private key */
};

/* Credentials, loaded once (before privileges are dropped), shared. */
struct mtn_creds;

/*
 * server: accepts peers (aggregator); else connects (node, query).  NULL
 * on failure, errno set (a file's: ENOENT, EACCES, ...; EINVAL: not a
 * usable key or certificate; ENOMEM) and err saying why.
 */
struct mtn_creds *mtn_creds_load(const struct mtn_auth_config *a,
				 bool server, char *err, size_t errlen);
void mtn_creds_free(struct mtn_creds *c);

struct mtn_conn;

/*
 * Take over the connected socket fd and authenticate (TLS handshake); on
 * failure NULL with errno set (EACCES: credentials refused, one side or
 * the other; ECONNRESET, ETIMEDOUT, EPROTO: not TLS or nothing in common;
 * ENOMEM), err says why, fd is closed.
 */
struct mtn_conn *mtn_conn_open(struct mtn_creds *c, int fd,
			       char *err, size_t errlen);
void mtn_conn_close(struct mtn_conn *c);
int mtn_conn_fd(const struct mtn_conn *c);
/* Who the peer proved to be (PSK identity, certificate DN); "" if none. */
const char *mtn_conn_peer(const struct mtn_conn *c);
/*
 * The name the peer proved, to compare with the one it claims: its PSK
 * identity, or its certificate's common name; "" if none.
 */
const char *mtn_conn_peer_name(const struct mtn_conn *c);
/* The TLS version and algorithms agreed, for logs; "" for plain TCP. */
const char *mtn_conn_desc(const struct mtn_conn *c);
/*
 * Why the last call failed in TLS terms, "" if it did not: with TLS 1.3 a
 * client whose certificate the server refuses learns it at its first read
 * after the handshake (mtn_conn_read() -EACCES).
 */
const char *mtn_conn_error(const struct mtn_conn *c);

/* All of buf: 0 or -errno. */
int mtn_conn_write(struct mtn_conn *c, const void *buf, size_t len);
/* Exactly len bytes: 0, -ECONNRESET at end of stream, or -errno. */
int mtn_conn_read(struct mtn_conn *c, void *buf, size_t len);
/* What is there now, without waiting: > 0 bytes, 0 none yet, or -errno
 * (-ECONNRESET at end of stream). */
ssize_t mtn_conn_read_some(struct mtn_conn *c, void *buf, size_t len);
/* Bytes already received and decoded that poll() would not report. */
bool mtn_conn_pending(const struct mtn_conn *c);

#endif /* MEMTRACK_NET_CONN_H */
