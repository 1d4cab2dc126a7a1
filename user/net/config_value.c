// SPDX-License-Identifier: GPL-2.0
/*
 * Values of memtrackd.conf keys (config.h): numbers in a range, yes/no,
 * numeric addresses, ADDR:PORT; config.c and agg_config.c check every key
 * with them, and the query clients their --server the same way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "config.h"

int mtd_parse_uint(const char *v, unsigned long min, unsigned long max,
		   unsigned int *out)
{
	unsigned long n;
	char *end;

	if (*v < '0' || *v > '9')
		return -1;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n < min || n > max)
		return -1;
	*out = n;
	return 0;
}

int mtd_parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return -1;
	return 0;
}

bool mtd_valid_address(const char *v)
{
	unsigned char a[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, v, a) == 1 || inet_pton(AF_INET6, v, a) == 1;
}

int mtd_parse_hostport(const char *s, char *addr, size_t alen,
		       unsigned int *port)
{
	const char *colon = strrchr(s, ':');
	size_t n;

	if (!colon)
		return -1;
	n = colon - s;
	if (*s == '[') {
		if (n < 3 || s[n - 1] != ']')
			return -1;
		s++;
		n -= 2;
	} else if (memchr(s, ':', n)) {
		return -1;	/* IPv6 needs brackets */
	}
	if (!n || n >= alen)
		return -1;
	memcpy(addr, s, n);
	addr[n] = 0;
	if (!mtd_valid_address(addr) || mtd_parse_uint(colon + 1, 1, 65535, port))
		return -1;
	return 0;
}
