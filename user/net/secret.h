/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Key, password and certificate files (secret.c), read whole at start,
 * before memtrackd drops its privileges: the relay's TLS credentials
 * (conn_creds.c) and remote write's (memtrackd/remote_write.c).  Errors:
 * net's one convention (tcp.h's top comment).
 */
#ifndef MEMTRACK_NET_SECRET_H
#define MEMTRACK_NET_SECRET_H

#include <stddef.h>

/*
 * A secret (a private key, a PSK, a password, a token): a regular file no
 * one but its owner may read or write, at most 64 KiB; NUL-terminated in
 * *out.  0, or a negative errno with "KEY PATH: why" in err: open()'s
 * (-ENOENT, -EACCES, ...), -EINVAL (not a regular file), -EACCES (others
 * may read or write it), -EFBIG (too large), -ENOMEM, -EIO (it changed
 * while read).
 */
int mtn_read_secret(const char *key, const char *path, char **out,
		    char *err, size_t errlen);
/* A public file (a CA or a certificate): any mode, at most 4 MiB. */
int mtn_read_public(const char *key, const char *path, char **out,
		    char *err, size_t errlen);
/* Wipe and free a secret; NULL is fine. */
void mtn_free_secret(char *s);

#endif /* MEMTRACK_NET_SECRET_H */
