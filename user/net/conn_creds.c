// SPDX-License-Identifier: GPL-2.0
/*
 * The conn layer's credentials (conn.h): read once, before memtrackd drops
 * its privileges, and kept in memory (GnuTLS's own PSK file reader would
 * reopen the file at every handshake, when it can no longer be read).
 *
 * A secret (the PSK file, the private key) must be readable by its owner
 * only (secret.c).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "conn_int.h"
#include "secret.h"

/* TLS 1.3 only; a PSK handshake always adds an (EC)DHE exchange. */
#define PRIO_PSK	"NORMAL:-VERS-ALL:+VERS-TLS1.3:-KX-ALL:+ECDHE-PSK:+DHE-PSK"
#define PRIO_CERT	"NORMAL:-VERS-ALL:+VERS-TLS1.3"

/*
 * The errno of a GnuTLS failure: -ENOMEM, a file's (errno cleared before
 * the call: -ENOENT, -EACCES, ...), else -EINVAL (what was read is not a
 * usable key, certificate or setting).
 */
static int tls_errno(int ret)
{
	if (ret == GNUTLS_E_MEMORY_ERROR)
		return -ENOMEM;
	if (ret == GNUTLS_E_FILE_ERROR)
		return errno ? -errno : -EIO;
	return -EINVAL;
}

static int init_prio(struct mtn_creds *c, const char *prio, char *err,
		     size_t errlen)
{
	int ret = gnutls_priority_init(&c->prio, prio, NULL);

	if (ret < 0) {
		snprintf(err, errlen, "TLS priorities: %s", gnutls_strerror(ret));
		return tls_errno(ret);
	}
	return 0;
}

/* One "identity:hexkey" line (psktool's format) into p. */
static const char *parse_psk_line(char *line, struct mtn_psk *p)
{
	char *colon = strchr(line, ':');
	gnutls_datum_t hex;
	size_t klen = sizeof(p->key);

	if (!colon || colon == line)
		return "expected IDENTITY:HEXKEY, as psktool writes";
	if (colon - line > MTN_PSK_MAX_ID)
		return "identity longer than 128 characters";
	memcpy(p->id, line, colon - line);
	p->id[colon - line] = '\0';
	hex.data = (unsigned char *)colon + 1;
	hex.size = strlen(colon + 1);
	if (hex.size % 2 || strspn(colon + 1, "0123456789abcdefABCDEF") != hex.size ||
	    hex.size / 2 > MTN_PSK_MAX_KEY ||
	    gnutls_hex_decode(&hex, p->key, &klen))
		return "the key must be 16 to 64 bytes in hexadecimal";
	if (klen < MTN_PSK_MIN_KEY)
		return "key shorter than 128 bits (psktool makes 256)";
	p->keylen = klen;
	return NULL;
}

static int load_psk(struct mtn_creds *c, const char *path, char *err,
		    size_t errlen)
{
	char *text, *line, *next;
	unsigned int lineno = 0;
	const char *why = NULL;
	int e;

	e = mtn_read_secret("psk_file", path, &text, err, errlen);
	if (e)
		return e;
	e = -EINVAL;
	for (line = text; line && *line; line = next) {
		struct mtn_psk one, *p;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (!*line)
			continue;
		why = parse_psk_line(line, &one);
		if (!why && mtn_psk_find(c, one.id, strlen(one.id)))
			why = "identity listed twice";
		p = why ? NULL : reallocarray(c->psk, c->npsk + 1, sizeof(*p));
		if (p) {
			c->psk = p;
			c->psk[c->npsk++] = one;
		} else if (!why) {
			why = "out of memory";
			e = -ENOMEM;
		}
		explicit_bzero(&one, sizeof(one));
		if (why)
			break;
	}
	mtn_free_secret(text);
	if (why) {
		snprintf(err, errlen, "psk_file %s line %u: %s", path, lineno,
			 why);
		return e;
	}
	if (!c->npsk) {
		snprintf(err, errlen, "psk_file %s: no key in it", path);
		return -EINVAL;
	}
	return 0;
}

const struct mtn_psk *mtn_psk_find(const struct mtn_creds *c,
				   const char *id, size_t idlen)
{
	unsigned int i;

	for (i = 0; i < c->npsk; i++)
		if (strlen(c->psk[i].id) == idlen &&
		    !memcmp(c->psk[i].id, id, idlen))
			return &c->psk[i];
	return NULL;
}

/*
 * GnuTLS asks a PSK server for the key of the identity the client sent:
 * 0, or -1 (GnuTLS's convention for this callback, not net's).
 */
static int psk_lookup(gnutls_session_t s, const gnutls_datum_t *id,
		      gnutls_datum_t *key)
{
	struct mtn_conn *conn = gnutls_session_get_ptr(s);
	const struct mtn_psk *p = mtn_psk_find(conn->creds, (char *)id->data,
					       id->size);
	unsigned int i;

	/* for the log, whatever the peer sent */
	for (i = 0; i < id->size && i < sizeof(conn->peer) - 1; i++)
		conn->peer[i] = isgraph(id->data[i]) ? id->data[i] : '?';
	conn->peer[i] = '\0';
	if (!p) {
		conn->unknown_id = true;
		return -1;
	}
	key->data = gnutls_malloc(p->keylen);
	if (!key->data)
		return -1;
	memcpy(key->data, p->key, p->keylen);
	key->size = p->keylen;
	return 0;
}

static int setup_psk(struct mtn_creds *c, const struct mtn_auth_config *a,
		     char *err, size_t errlen)
{
	gnutls_datum_t key;
	int ret;

	ret = load_psk(c, a->psk_file, err, errlen);
	if (ret)
		return ret;
	if (c->server) {
		ret = gnutls_psk_allocate_server_credentials(&c->psk_server);
		if (!ret)
			gnutls_psk_set_server_credentials_function2(c->psk_server,
								    psk_lookup);
	} else {
		ret = gnutls_psk_allocate_client_credentials(&c->psk_client);
		key.data = c->psk[0].key;
		key.size = c->psk[0].keylen;
		if (!ret)
			ret = gnutls_psk_set_client_credentials(c->psk_client,
								c->psk[0].id, &key,
								GNUTLS_PSK_KEY_RAW);
	}
	if (ret < 0) {
		snprintf(err, errlen, "PSK credentials: %s", gnutls_strerror(ret));
		return tls_errno(ret);
	}
	return init_prio(c, PRIO_PSK, err, errlen);
}

static int setup_cert(struct mtn_creds *c, const struct mtn_auth_config *a,
		      char *err, size_t errlen)
{
	gnutls_datum_t cert = { NULL, 0 }, key;
	char *keytext = NULL;
	int ret, e;

	ret = gnutls_certificate_allocate_credentials(&c->cert);
	if (ret < 0)
		goto gnutls_fail;
	errno = 0;
	ret = gnutls_certificate_set_x509_trust_file(c->cert, a->ca_file,
						     GNUTLS_X509_FMT_PEM);
	if (ret <= 0) {
		e = ret ? tls_errno(ret) : -EINVAL;
		snprintf(err, errlen, "ca_file %s: %s", a->ca_file,
			 ret ? gnutls_strerror(ret) : "no certificate in it");
		return e;
	}
	errno = 0;
	ret = gnutls_load_file(a->cert_file, &cert);
	if (ret < 0) {
		e = tls_errno(ret);
		snprintf(err, errlen, "cert_file %s: %s", a->cert_file,
			 gnutls_strerror(ret));
		return e;
	}
	e = mtn_read_secret("key_file", a->key_file, &keytext, err, errlen);
	if (e) {
		gnutls_free(cert.data);
		return e;
	}
	key.data = (unsigned char *)keytext;
	key.size = strlen(keytext);
	ret = gnutls_certificate_set_x509_key_mem(c->cert, &cert, &key,
						  GNUTLS_X509_FMT_PEM);
	gnutls_free(cert.data);
	mtn_free_secret(keytext);
	if (ret < 0) {
		snprintf(err, errlen, "cert_file %s, key_file %s: %s",
			 a->cert_file, a->key_file, gnutls_strerror(ret));
		return tls_errno(ret);
	}
	return init_prio(c, PRIO_CERT, err, errlen);
gnutls_fail:
	snprintf(err, errlen, "certificate credentials: %s",
		 gnutls_strerror(ret));
	return tls_errno(ret);
}

struct mtn_creds *mtn_creds_load(const struct mtn_auth_config *a,
				 bool server, char *err, size_t errlen)
{
	struct mtn_creds *c = calloc(1, sizeof(*c));
	int ret = 0;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	c->kind = a->kind;
	c->server = server;
	if (a->kind == MTN_AUTH_PSK)
		ret = setup_psk(c, a, err, errlen);
	else if (a->kind == MTN_AUTH_CERT)
		ret = setup_cert(c, a, err, errlen);
	if (ret) {
		mtn_creds_free(c);
		errno = -ret;
		return NULL;
	}
	return c;
}

void mtn_creds_free(struct mtn_creds *c)
{
	if (!c)
		return;
	if (c->psk) {
		explicit_bzero(c->psk, c->npsk * sizeof(*c->psk));
		free(c->psk);
	}
	if (c->psk_server)
		gnutls_psk_free_server_credentials(c->psk_server);
	if (c->psk_client)
		gnutls_psk_free_client_credentials(c->psk_client);
	if (c->cert)
		gnutls_certificate_free_credentials(c->cert);
	if (c->prio)
		gnutls_priority_deinit(c->prio);
	free(c);
}
