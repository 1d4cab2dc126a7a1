/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One remote write request (rw_request.c): a batch of samples encoded as
 * a Prometheus WriteRequest (protobuf-c), snappy-compressed, POSTed with
 * libcurl, and the answer sorted the way Prometheus's queue manager sorts
 * it: sent, to retry, or refused for good.
 */
#ifndef MEMTRACKD_RW_REQUEST_H
#define MEMTRACKD_RW_REQUEST_H

#include <stddef.h>
#include <stdint.h>

/* A sample and its series: nlab labels as "name\0value\0" pairs, sorted. */
struct rw_sample {
	const char *labels;
	uint16_t nlab;
	double value;
	int64_t ts_ms;
};

/* What a client needs besides the URL; the strings are kept, not copied. */
struct rw_client_opts {
	unsigned int timeout_ms;
	const char *ca_pem, *cert_pem, *key_pem;	/* NULL: none */
	const char *user, *password;			/* basic auth */
	const char *bearer_token;
};

enum rw_result {
	RW_SENT,
	RW_RETRY,	/* 5xx, 429, no connection, timeout: try again */
	RW_REFUSED,	/* any other answer: the samples are lost */
};

struct rw_client;

/* Call curl_global_init first, before any thread. */
struct rw_client *rw_client_new(const char *url,
				const struct rw_client_opts *o);
void rw_client_free(struct rw_client *c);
/* why: the HTTP status and the start of the body, or the transport error. */
enum rw_result rw_client_send(struct rw_client *c,
			      const struct rw_sample *const *s, size_t n,
			      char *why, size_t whylen);
/* After RW_RETRY: the seconds the receiver's Retry-After asked for, or 0. */
unsigned long rw_client_retry_after(const struct rw_client *c);

#endif /* MEMTRACKD_RW_REQUEST_H */
