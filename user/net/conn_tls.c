// SPDX-License-Identifier: GPL-2.0
/*
 * TLS sessions of the conn layer (conn.h), through GnuTLS: the handshake,
 * what to say when it fails, and record I/O on the caller's blocking
 * socket.
 *
 * The socket's timeouts bound every wait; the whole handshake is bounded
 * by its receive timeout too, so that a peer trickling bytes cannot hold
 * it.  mtn_conn_read_some() must not wait: its recv() alone uses
 * MSG_DONTWAIT, and GnuTLS keeps a partial record for the next call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "conn_int.h"

#define HANDSHAKE_DEFAULT_MS	10000

static ssize_t tls_push(gnutls_transport_ptr_t p, const void *buf, size_t len)
{
	struct mtn_conn *c = p;
	ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);

	if (n < 0) {
		c->wouldblock = errno == EAGAIN;
		gnutls_transport_set_errno(c->tls, errno);
	}
	return n;
}

static ssize_t tls_pull(gnutls_transport_ptr_t p, void *buf, size_t len)
{
	struct mtn_conn *c = p;
	ssize_t n = recv(c->fd, buf, len, c->dontwait ? MSG_DONTWAIT : 0);

	if (n < 0) {
		c->wouldblock = errno == EAGAIN;
		gnutls_transport_set_errno(c->tls, errno);
	}
	c->eof = !n;
	return n;
}

/* Only the handshake asks this (it has a timeout of its own). */
static int tls_pull_timeout(gnutls_transport_ptr_t p, unsigned int ms)
{
	struct mtn_conn *c = p;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	int n = poll(&pfd, 1, ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : (int)ms);

	if (n < 0)
		gnutls_transport_set_errno(c->tls, errno);
	return n;
}

static unsigned int handshake_ms(int fd)
{
	struct timeval tv = { 0 };
	socklen_t len = sizeof(tv);
	unsigned int ms;

	if (getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len))
		return HANDSHAKE_DEFAULT_MS;
	ms = tv.tv_sec * 1000 + tv.tv_usec / 1000;
	return ms ? ms : HANDSHAKE_DEFAULT_MS;
}

/* The peer wrote it: no control characters into the log. */
static void copy_printable(char *out, size_t outlen, const unsigned char *s,
			   size_t len)
{
	size_t i;

	for (i = 0; i < len && i < outlen - 1; i++)
		out[i] = s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[i] = '\0';
}

/*
 * The first certificate the peer sent: its RFC 4514 DN into dn and, if cn
 * is not NULL, its (first) common name into cn.
 */
static void peer_dn(struct mtn_conn *c, char *dn, size_t dnlen, char *cn,
		    size_t cnlen)
{
	const gnutls_datum_t *certs;
	gnutls_x509_crt_t crt;
	gnutls_datum_t d;
	unsigned int n = 0;
	char buf[256];
	size_t blen = sizeof(buf);

	dn[0] = '\0';
	if (cn)
		cn[0] = '\0';
	certs = gnutls_certificate_get_peers(c->tls, &n);
	if (!certs || !n || gnutls_x509_crt_init(&crt) < 0)
		return;
	if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) >= 0) {
		if (gnutls_x509_crt_get_dn3(crt, &d, 0) >= 0) {
			copy_printable(dn, dnlen, d.data, d.size);
			gnutls_free(d.data);
		}
		if (cn && gnutls_x509_crt_get_dn_by_oid(crt,
				GNUTLS_OID_X520_COMMON_NAME, 0, 0, buf,
				&blen) >= 0)
			copy_printable(cn, cnlen, (unsigned char *)buf, blen);
	}
	gnutls_x509_crt_deinit(crt);
}

static const char *alert_hint(gnutls_alert_description_t a, bool psk)
{
	switch (a) {
	case GNUTLS_A_DECRYPT_ERROR:
	case GNUTLS_A_ILLEGAL_PARAMETER:
		return psk ? ": wrong pre-shared key?" : "";
	case GNUTLS_A_UNKNOWN_PSK_IDENTITY:
		return ": our identity is not in its PSK file";
	case GNUTLS_A_CERTIFICATE_REQUIRED:
		return ": it requires a client certificate";
	case GNUTLS_A_BAD_CERTIFICATE:
	case GNUTLS_A_UNSUPPORTED_CERTIFICATE:
	case GNUTLS_A_CERTIFICATE_REVOKED:
	case GNUTLS_A_CERTIFICATE_EXPIRED:
	case GNUTLS_A_CERTIFICATE_UNKNOWN:
	case GNUTLS_A_UNKNOWN_CA:
		return ": it refused our certificate";
	case GNUTLS_A_PROTOCOL_VERSION:
	case GNUTLS_A_HANDSHAKE_FAILURE:
	case GNUTLS_A_INSUFFICIENT_SECURITY:
		return ": no common TLS version or authentication (psk vs cert?)";
	default:
		return "";
	}
}

/* The connection ended (or broke) under the handshake. */
static bool peer_closed(const struct mtn_conn *c, int ret)
{
	/* GnuTLS may say GNUTLS_E_AGAIN when the stream ends in a record */
	return c->eof || ret == GNUTLS_E_PREMATURE_TERMINATION ||
	       ret == GNUTLS_E_SESSION_EOF || ret == GNUTLS_E_PULL_ERROR ||
	       ret == GNUTLS_E_PUSH_ERROR;
}

static void describe_cert(struct mtn_conn *c, char *err, size_t errlen)
{
	gnutls_datum_t status;
	char dn[256];

	peer_dn(c, dn, sizeof(dn), NULL, 0);
	if (gnutls_certificate_verification_status_print(
		gnutls_session_get_verify_cert_status(c->tls),
		GNUTLS_CRT_X509, &status, 0) < 0)
		status.data = NULL;
	while (status.data && status.size &&
	       status.data[status.size - 1] == ' ')
		status.data[--status.size] = '\0';
	snprintf(err, errlen, "TLS handshake: peer certificate \"%s\" refused: %s",
		 dn, status.data ? (char *)status.data : "not trusted");
	gnutls_free(status.data);
}

/* What failed, for the log: err gets the reason for ret. */
static void describe(struct mtn_conn *c, int ret, unsigned int ms, char *err,
		     size_t errlen)
{
	bool psk = c->creds->kind == MTN_AUTH_PSK;
	gnutls_alert_description_t a;

	if (peer_closed(c, ret)) {
		snprintf(err, errlen,
			 "TLS handshake: the peer closed the connection (%s)%s",
			 c->eof ? "end of stream" : gnutls_strerror(ret),
			 c->creds->server ? "" : ": not a TLS server?");
		return;
	}
	switch (ret) {
	case GNUTLS_E_FATAL_ALERT_RECEIVED:
		a = gnutls_alert_get(c->tls);
		snprintf(err, errlen, "TLS handshake: the peer refused: %s%s",
			 gnutls_alert_get_name(a), alert_hint(a, psk));
		return;
	case GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR:
		describe_cert(c, err, errlen);
		return;
	case GNUTLS_E_CERTIFICATE_REQUIRED:
	case GNUTLS_E_NO_CERTIFICATE_FOUND:
		snprintf(err, errlen,
			 "TLS handshake: the peer sent no certificate");
		return;
	case GNUTLS_E_TIMEDOUT:
	case GNUTLS_E_AGAIN:
		snprintf(err, errlen, "TLS handshake: timed out after %u ms",
			 ms);
		return;
	case GNUTLS_E_UNEXPECTED_PACKET:
	case GNUTLS_E_UNEXPECTED_PACKET_LENGTH:
	case GNUTLS_E_UNSUPPORTED_VERSION_PACKET:
	case GNUTLS_E_UNEXPECTED_HANDSHAKE_PACKET:
	case GNUTLS_E_RECORD_OVERFLOW:
		snprintf(err, errlen,
			 "TLS handshake: not TLS from the peer (plain TCP or garbage): %s",
			 gnutls_strerror(ret));
		return;
	case GNUTLS_E_INSUFFICIENT_CREDENTIALS:
	case GNUTLS_E_NO_CIPHER_SUITES:
	case GNUTLS_E_NO_COMMON_KEY_SHARE:
		if (psk && c->unknown_id)
			break;
		snprintf(err, errlen,
			 "TLS handshake: the peer does not authenticate with %s (%s)",
			 psk ? "a pre-shared key" : "certificates",
			 gnutls_strerror(ret));
		return;
	}
	if (psk && c->unknown_id)
		snprintf(err, errlen,
			 "TLS handshake: unknown PSK identity \"%s\" (not in psk_file)",
			 c->peer);
	else if (psk && c->creds->server &&
		 (ret == GNUTLS_E_RECEIVED_ILLEGAL_PARAMETER ||
		  ret == GNUTLS_E_DECRYPTION_FAILED))
		snprintf(err, errlen,
			 "TLS handshake: bad pre-shared key for identity \"%s\" (%s)",
			 c->peer, gnutls_strerror(ret));
	else
		snprintf(err, errlen, "TLS handshake: %s", gnutls_strerror(ret));
}

/* What a peer's certificate must be for, if it says (extended key usage) */
static gnutls_typed_vdata_st client_purpose = {
	GNUTLS_DT_KEY_PURPOSE_OID, (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0
};
static gnutls_typed_vdata_st server_purpose = {
	GNUTLS_DT_KEY_PURPOSE_OID, (unsigned char *)GNUTLS_KP_TLS_WWW_SERVER, 0
};

static int setup(struct mtn_conn *c, unsigned int ms)
{
	struct mtn_creds *cr = c->creds;
	int ret;

	ret = gnutls_init(&c->tls, (cr->server ? GNUTLS_SERVER : GNUTLS_CLIENT) |
			  GNUTLS_NO_TICKETS);
	if (ret < 0) {
		c->tls = NULL;
		return ret;
	}
	gnutls_session_set_ptr(c->tls, c);
	gnutls_transport_set_ptr(c->tls, c);
	gnutls_transport_set_push_function(c->tls, tls_push);
	gnutls_transport_set_pull_function(c->tls, tls_pull);
	gnutls_transport_set_pull_timeout_function(c->tls, tls_pull_timeout);
	gnutls_handshake_set_timeout(c->tls, ms);
	ret = gnutls_priority_set(c->tls, cr->prio);
	if (ret < 0)
		return ret;
	if (cr->kind == MTN_AUTH_PSK)
		return gnutls_credentials_set(c->tls, GNUTLS_CRD_PSK,
					      cr->server ? (void *)cr->psk_server :
					      (void *)cr->psk_client);
	ret = gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, cr->cert);
	if (ret < 0)
		return ret;
	/* the chain against ca_file, dates, and what the peer is for */
	if (cr->server) {
		gnutls_certificate_server_set_request(c->tls, GNUTLS_CERT_REQUIRE);
		/*
		 * Name no CA: a client then sends its certificate even when
		 * another CA signed it, and the log says so, instead of
		 * "no certificate".
		 */
		gnutls_certificate_send_x509_rdn_sequence(c->tls, 1);
	}
	gnutls_session_set_verify_cert2(c->tls, cr->server ? &client_purpose :
					&server_purpose, 1, 0);
	return 0;
}

static const char *or_dash(const char *s)
{
	return s ? s : "-";
}

static void identify(struct mtn_conn *c)
{
	gnutls_datum_t id;

	if (c->creds->kind == MTN_AUTH_CERT)
		peer_dn(c, c->peer, sizeof(c->peer), c->peer_name,
			sizeof(c->peer_name));
	else if (!c->creds->server)
		snprintf(c->peer, sizeof(c->peer), "%s", c->creds->psk[0].id);
	else if (gnutls_psk_server_get_username2(c->tls, &id) >= 0)
		copy_printable(c->peer, sizeof(c->peer), id.data, id.size);
	if (c->creds->kind == MTN_AUTH_PSK)
		strcpy(c->peer_name, c->peer);
	snprintf(c->desc, sizeof(c->desc), "%s %s %s %s",
		 or_dash(gnutls_protocol_get_name(gnutls_protocol_get_version(c->tls))),
		 or_dash(gnutls_kx_get_name(gnutls_kx_get(c->tls))),
		 or_dash(gnutls_group_get_name(gnutls_group_get(c->tls))),
		 or_dash(gnutls_cipher_get_name(gnutls_cipher_get(c->tls))));
}

/* Tell the peer why, unless the link itself failed. */
static void refuse(struct mtn_conn *c, int ret)
{
	if (c->eof)
		return;
	switch (ret) {
	case GNUTLS_E_TIMEDOUT:
	case GNUTLS_E_AGAIN:
	case GNUTLS_E_PREMATURE_TERMINATION:
	case GNUTLS_E_SESSION_EOF:
	case GNUTLS_E_PULL_ERROR:
	case GNUTLS_E_PUSH_ERROR:
	case GNUTLS_E_FATAL_ALERT_RECEIVED:
		return;
	}
	char buf[4096];

	if (c->unknown_id)
		gnutls_alert_send(c->tls, GNUTLS_AL_FATAL,
				  GNUTLS_A_UNKNOWN_PSK_IDENTITY);
	else
		gnutls_alert_send_appropriate(c->tls, ret);
	/*
	 * Unread bytes at close() would reset the connection, and the peer
	 * could lose the alert: take what is there (the peer's last flight).
	 */
	while (recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/*
 * The errno of a failed handshake (describe() says what in words):
 * -ECONNRESET the peer closed, -ETIMEDOUT, -EPROTO not TLS or nothing in
 * common, -EACCES the peer or we refused the other's credentials.
 */
static int handshake_errno(const struct mtn_conn *c, int ret)
{
	if (peer_closed(c, ret))
		return -ECONNRESET;
	switch (ret) {
	case GNUTLS_E_TIMEDOUT:
	case GNUTLS_E_AGAIN:
		return -ETIMEDOUT;
	case GNUTLS_E_MEMORY_ERROR:
		return -ENOMEM;
	case GNUTLS_E_FATAL_ALERT_RECEIVED:
	case GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR:
	case GNUTLS_E_CERTIFICATE_REQUIRED:
	case GNUTLS_E_NO_CERTIFICATE_FOUND:
	case GNUTLS_E_RECEIVED_ILLEGAL_PARAMETER:
	case GNUTLS_E_DECRYPTION_FAILED:
		return -EACCES;
	}
	return c->unknown_id ? -EACCES : -EPROTO;
}

int mtn_tls_open(struct mtn_conn *c, char *err, size_t errlen)
{
	unsigned int ms = handshake_ms(c->fd);
	int ret = setup(c, ms);

	if (ret < 0) {
		snprintf(err, errlen, "TLS session: %s", gnutls_strerror(ret));
		return ret == GNUTLS_E_MEMORY_ERROR ? -ENOMEM : -EINVAL;
	}
	do {
		c->wouldblock = false;
		ret = gnutls_handshake(c->tls);
	} while (ret == GNUTLS_E_INTERRUPTED ||
		 ret == GNUTLS_E_WARNING_ALERT_RECEIVED ||
		 (ret == GNUTLS_E_AGAIN && !c->wouldblock && !c->eof));
	if (ret < 0) {
		describe(c, ret, ms, err, errlen);
		snprintf(c->error, sizeof(c->error), "%s", err);
		refuse(c, ret);
		return handshake_errno(c, ret);
	}
	c->up = true;
	identify(c);
	return 0;
}

void mtn_tls_close(struct mtn_conn *c)
{
	if (!c->tls)
		return;
	/* close_notify, without waiting for the peer's */
	if (c->up)
		gnutls_bye(c->tls, GNUTLS_SHUT_WR);
	gnutls_deinit(c->tls);
	c->tls = NULL;
}

/* -errno for ret, and what GnuTLS said into c->error. */
static int to_errno(struct mtn_conn *c, int ret)
{
	gnutls_alert_description_t a;

	if (ret == GNUTLS_E_FATAL_ALERT_RECEIVED) {
		/* TLS 1.3: a client learns its certificate was refused here */
		a = gnutls_alert_get(c->tls);
		snprintf(c->error, sizeof(c->error), "TLS: the peer refused: %s%s",
			 gnutls_alert_get_name(a),
			 alert_hint(a, c->creds->kind == MTN_AUTH_PSK));
		return -EACCES;
	}
	if (ret != GNUTLS_E_AGAIN)
		snprintf(c->error, sizeof(c->error), "TLS: %s",
			 gnutls_strerror(ret));
	switch (ret) {
	case GNUTLS_E_AGAIN:
		return -EAGAIN;
	case GNUTLS_E_PREMATURE_TERMINATION:
	case GNUTLS_E_PULL_ERROR:
	case GNUTLS_E_PUSH_ERROR:
		return -ECONNRESET;
	case GNUTLS_E_MEMORY_ERROR:
		return -ENOMEM;
	default:
		return -EPROTO;
	}
}

/*
 * GNUTLS_E_AGAIN is the socket's timeout (or, for read_some, no data yet)
 * only if the socket said so: GnuTLS also returns it after a record that
 * carried no data (a TLS 1.3 session ticket, a key update).
 */
static ssize_t retry_send(struct mtn_conn *c, const void *buf, size_t len)
{
	ssize_t n;

	do {
		c->wouldblock = false;
		n = gnutls_record_send(c->tls, buf, len);
	} while (n == GNUTLS_E_INTERRUPTED ||
		 (n == GNUTLS_E_AGAIN && !c->wouldblock));
	return n;
}

static ssize_t retry_recv(struct mtn_conn *c, void *buf, size_t len)
{
	ssize_t n;

	do {
		c->wouldblock = false;
		n = gnutls_record_recv(c->tls, buf, len);
	} while (n == GNUTLS_E_INTERRUPTED ||
		 (n == GNUTLS_E_AGAIN && !c->wouldblock));
	return n;
}

ssize_t mtn_tls_send(struct mtn_conn *c, void *p, size_t len)
{
	ssize_t n = retry_send(c, p, len);

	if (n == GNUTLS_E_PUSH_ERROR && !c->wouldblock) {
		/* the peer may have said why before it closed */
		char why[64];

		c->dontwait = true;
		if (retry_recv(c, why, sizeof(why)) ==
		    GNUTLS_E_FATAL_ALERT_RECEIVED)
			n = GNUTLS_E_FATAL_ALERT_RECEIVED;
		c->dontwait = false;
	}
	return n < 0 ? to_errno(c, n) : n;
}

ssize_t mtn_tls_recv(struct mtn_conn *c, void *p, size_t len)
{
	ssize_t n = retry_recv(c, p, len);

	return n < 0 ? to_errno(c, n) : n;
}

ssize_t mtn_tls_read_some(struct mtn_conn *c, void *buf, size_t len)
{
	ssize_t n;

	c->dontwait = true;
	n = retry_recv(c, buf, len);
	c->dontwait = false;
	if (n == GNUTLS_E_AGAIN)
		return 0;
	if (n < 0)
		return to_errno(c, n);
	return n ? n : -ECONNRESET;
}

bool mtn_tls_pending(const struct mtn_conn *c)
{
	return gnutls_record_check_pending(c->tls) > 0;
}
