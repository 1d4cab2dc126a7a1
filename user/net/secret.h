/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Key, password and certificate files (secret.c), read whole at start,
 * before memtrackd drops its privileges: the relay's TLS credentials
 * (conn_creds.c) and remote write's (memtrackd/remote_write.c).
 */
#ifndef MEMTRACK_NET_SECRET_H
#define MEMTRACK_NET_SECRET_H

#include <stddef.h>

/*
 * A secret (a private key, a PSK, a password, a token): a regular file no
 * one but its owner may read or write, at most 64 KiB; NUL-terminated in
 * *out.  0, or -1 with "KEY PATH: why" in err.
 */
int mtd_read_secret(const char *key, const char *path, char **out,
		    char *err, size_t errlen);
/* A public file (a CA or a certificate): any mode, at most 4 MiB. */
int mtd_read_public(const char *key, const char *path, char **out,
		    char *err, size_t errlen);
/* Wipe and free a secret; NULL is fine. */
void mtd_free_secret(char *s);

#endif /* MEMTRACK_NET_SECRET_H */
