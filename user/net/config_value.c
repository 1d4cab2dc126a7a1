// SPDX-License-Identifier: GPL-2.0
/*
 * Values of memtrackd.conf keys (config.h): numbers in a range, durations,
 * yes/no, addresses, HOST:PORT; config.c and agg_config.c check every key
 * with them, and the query clients their --server the same way.  Host
 * names are only checked for their form here: they are resolved where
 * they are used (tcp.c), at start or at each connection.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "config.h"
#include "libmemtrack.h"

int mtn_parse_uint(const char *v, unsigned long min, unsigned long max,
		   unsigned int *out)
{
	unsigned long n;
	char *end;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n < min || n > max)
		return -EINVAL;
	*out = n;
	return 0;
}

int mtn_parse_duration_ms(const char *v, unsigned long min_ms,
			  unsigned long max_ms, unsigned int *out)
{
	static const struct {
		const char *unit;
		unsigned long ms;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 },
		      { "h", 3600000 } };
	unsigned long long n;
	size_t i;
	char *end;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return -EINVAL;
	/* 0 is 0 in any unit */
	if (!*end && n == 0 && min_ms == 0) {
		*out = 0;
		return 0;
	}
	for (i = 0; i < MT_ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (n > max_ms / units[i].ms || n * units[i].ms < min_ms)
			return -EINVAL;
		*out = n * units[i].ms;
		return 0;
	}
	return -EINVAL;
}

int mtn_parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/* A numeric IPv4 or IPv6 address. */
static bool valid_address(const char *v)
{
	unsigned char a[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, v, a) == 1 || inet_pton(AF_INET6, v, a) == 1;
}

/*
 * RFC 1123 host names: dot-separated labels of letters, digits and '-',
 * 1..63 characters each, not starting or ending with '-', 253 in all.  A
 * name whose last label is all digits would be a malformed IPv4 address
 * ("1.2.3.4.5", "10.0.0.256"): refused, as browsers do.
 */
static bool valid_host_name(const char *v)
{
	size_t len = strlen(v), label = 0, i;
	bool digits = true;

	if (!len || len > 253)
		return false;
	for (i = 0; i <= len; i++) {
		char c = v[i];

		if (c == '.' || !c) {
			if (!label || v[i - 1] == '-')
				return false;
			if (!c)
				break;
			label = 0;
			digits = true;
			continue;
		}
		if (!isascii(c) || (!isalnum(c) && c != '-') ||
		    (c == '-' && !label) || ++label > 63)
			return false;
		digits &= isdigit(c) != 0;
	}
	return !digits;
}

bool mtn_valid_host(const char *v)
{
	return valid_address(v) || valid_host_name(v);
}

int mtn_parse_hostport(const char *s, char *addr, size_t alen,
		       unsigned int *port)
{
	const char *colon = strrchr(s, ':');
	bool bracketed = *s == '[';
	size_t n;

	if (!colon)
		return -EINVAL;
	n = colon - s;
	if (bracketed) {
		if (n < 3 || s[n - 1] != ']')
			return -EINVAL;
		s++;
		n -= 2;
	} else if (memchr(s, ':', n)) {
		return -EINVAL;	/* IPv6 needs brackets */
	}
	if (!n || n >= alen)
		return -EINVAL;
	memcpy(addr, s, n);
	addr[n] = 0;
	/* in brackets a numeric address, else an IPv4 address or a name */
	if (bracketed ? !valid_address(addr) : !mtn_valid_host(addr))
		return -EINVAL;
	return mtn_parse_uint(colon + 1, 1, 65535, port);
}

int mtn_parse_listen(const char *v, char *host, size_t hlen,
		     unsigned int *port)
{
	const char *colon = strchr(v, ':');

	if (*v == '[' || (colon && !strchr(colon + 1, ':')))
		return mtn_parse_hostport(v, host, hlen, port);
	*port = 0;
	if (strlen(v) >= hlen || !mtn_valid_host(v))
		return -EINVAL;
	strcpy(host, v);
	return 0;
}
