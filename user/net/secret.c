// SPDX-License-Identifier: GPL-2.0
/*
 * Key and certificate files, read once before the privileges go.  A secret
 * must be a regular file that no one but its owner may read or write;
 * otherwise it is refused, as ssh refuses an unprotected private key:
 * whoever else could read it can be this node.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "secret.h"

#define SECRET_MAX	(64 << 10)
#define PUBLIC_MAX	(4 << 20)

static int read_file(const char *key, const char *path, bool secret,
		     char **out, char *err, size_t errlen)
{
	long max = secret ? SECRET_MAX : PUBLIC_MAX;
	struct stat st;
	ssize_t n;
	char *buf;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "%s %s: %s", key, path, strerror(-e));
		return e;
	}
	if (fstat(fd, &st)) {
		e = -errno;
		snprintf(err, errlen, "%s %s: %s", key, path, strerror(-e));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		e = -EINVAL;
		snprintf(err, errlen, "%s %s: not a regular file", key, path);
		goto fail;
	}
	if (secret && (st.st_mode & 077)) {
		e = -EACCES;
		snprintf(err, errlen,
			 "%s %s: permissions %04o are too open: it must be readable by its owner only (chmod 600)",
			 key, path, (unsigned int)(st.st_mode & 07777));
		goto fail;
	}
	if (st.st_size > max) {
		e = -EFBIG;
		snprintf(err, errlen, "%s %s: larger than %ld bytes", key, path,
			 max);
		goto fail;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		e = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	n = read(fd, buf, st.st_size);
	if (n != st.st_size) {
		e = n < 0 ? -errno : -EIO;
		snprintf(err, errlen, "%s %s: %s", key, path,
			 n < 0 ? strerror(-e) : "changed while read");
		explicit_bzero(buf, st.st_size);
		free(buf);
		goto fail;
	}
	buf[n] = '\0';
	close(fd);
	*out = buf;
	return 0;
fail:
	close(fd);
	return e;
}

int mtn_read_secret(const char *key, const char *path, char **out,
		    char *err, size_t errlen)
{
	return read_file(key, path, true, out, err, errlen);
}

int mtn_read_public(const char *key, const char *path, char **out,
		    char *err, size_t errlen)
{
	return read_file(key, path, false, out, err, errlen);
}

void mtn_free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}
