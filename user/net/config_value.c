// SPDX-License-Identifier: GPL-2.0
/*
 * Values of memtrackd.conf keys (config.h): numbers in a range, yes/no,
 * numeric addresses; config.c and agg_config.c check every key with them.
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
