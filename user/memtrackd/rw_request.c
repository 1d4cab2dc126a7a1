// SPDX-License-Identifier: GPL-2.0
/*
 * A remote write request as the spec has it (remote write 1.0): the body
 * a WriteRequest in protobuf, compressed with snappy's block format;
 * headers Content-Encoding: snappy, Content-Type: application/x-protobuf,
 * X-Prometheus-Remote-Write-Version: 0.1.0.  Each sample is a time series
 * of its own: a series met twice in one batch (two samples of it) is sent
 * twice, which the spec allows, and a batch is built without a lookup.
 *
 * One libcurl easy handle per client, so that the connection is reused
 * from request to request; its thread is the only one to use it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <snappy-c.h>

#include "libmemtrack.h"
#include "remote_write.pb-c.h"
#include "rw_request.h"

#define ANSWER_MAX	256

struct rw_client {
	CURL *curl;
	struct curl_slist *headers;
	char answer[ANSWER_MAX];	/* the start of the response body */
	size_t answer_len;
	unsigned long retry_after_s;	/* the last answer's Retry-After */
};

static size_t keep_answer(char *p, size_t size, size_t n, void *arg)
{
	struct rw_client *c = arg;
	size_t len = size * n, room = sizeof(c->answer) - 1 - c->answer_len;

	memcpy(c->answer + c->answer_len, p, len < room ? len : room);
	c->answer_len += len < room ? len : room;
	return len;
}

static int blob(CURL *curl, CURLoption opt, const char *pem)
{
	struct curl_blob b = {
		.data = (void *)pem, .len = strlen(pem),
		.flags = CURL_BLOB_COPY,
	};

	return curl_easy_setopt(curl, opt, &b) != CURLE_OK;
}

struct rw_client *rw_client_new(const char *url,
				const struct rw_client_opts *o)
{
	struct rw_client *c = calloc(1, sizeof(*c));
	static const char *const hdrs[] = {
		"Content-Encoding: snappy",
		"Content-Type: application/x-protobuf",
		"X-Prometheus-Remote-Write-Version: 0.1.0",
		"User-Agent: memtrackd/" MEMTRACK_VERSION,
	};
	size_t i;
	int bad = 0;

	if (!c)
		return NULL;
	c->curl = curl_easy_init();
	if (!c->curl)
		goto fail;
	for (i = 0; i < MT_ARRAY_SIZE(hdrs); i++) {
		struct curl_slist *h = curl_slist_append(c->headers, hdrs[i]);

		if (!h)
			goto fail;
		c->headers = h;
	}
	bad |= curl_easy_setopt(c->curl, CURLOPT_URL, url);
	bad |= curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
	bad |= curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, (long)o->timeout_ms);
	bad |= curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	bad |= curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, keep_answer);
	bad |= curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, c);
	/* redirects would carry the credentials elsewhere: none */
	bad |= curl_easy_setopt(c->curl, CURLOPT_FOLLOWLOCATION, 0L);
	bad |= curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	if (o->ca_pem)
		bad |= blob(c->curl, CURLOPT_CAINFO_BLOB, o->ca_pem);
	if (o->cert_pem)
		bad |= blob(c->curl, CURLOPT_SSLCERT_BLOB, o->cert_pem) |
		       blob(c->curl, CURLOPT_SSLKEY_BLOB, o->key_pem);
	if (o->user) {
		bad |= curl_easy_setopt(c->curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
		bad |= curl_easy_setopt(c->curl, CURLOPT_USERNAME, o->user);
		bad |= curl_easy_setopt(c->curl, CURLOPT_PASSWORD, o->password);
	}
	if (o->bearer_token) {
		bad |= curl_easy_setopt(c->curl, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
		bad |= curl_easy_setopt(c->curl, CURLOPT_XOAUTH2_BEARER,
					o->bearer_token);
	}
	if (bad)
		goto fail;
	return c;
fail:
	rw_client_free(c);
	return NULL;
}

void rw_client_free(struct rw_client *c)
{
	if (!c)
		return;
	curl_easy_cleanup(c->curl);
	curl_slist_free_all(c->headers);
	free(c);
}

/*
 * The batch as a WriteRequest, packed: *len bytes in a malloc'ed buffer.
 * The messages point into the samples' label strings, nothing is copied.
 */
static uint8_t *encode(const struct rw_sample *const *s, size_t n, size_t *len)
{
	Prometheus__TimeSeries *ts = calloc(n, sizeof(*ts));
	Prometheus__TimeSeries **tsp = calloc(n, sizeof(*tsp));
	Prometheus__Sample *smp = calloc(n, sizeof(*smp));
	Prometheus__Sample **smpp = calloc(n, sizeof(*smpp));
	Prometheus__WriteRequest req = PROMETHEUS__WRITE_REQUEST__INIT;
	Prometheus__Label *lab = NULL, **labp = NULL;
	size_t i, j, nlab = 0, k = 0;
	uint8_t *out = NULL;

	for (i = 0; i < n; i++)
		nlab += s[i]->nlab;
	lab = calloc(nlab ? nlab : 1, sizeof(*lab));
	labp = calloc(nlab ? nlab : 1, sizeof(*labp));
	if (!ts || !tsp || !smp || !smpp || !lab || !labp)
		goto out;
	for (i = 0; i < n; i++) {
		const char *p = s[i]->labels;

		prometheus__time_series__init(&ts[i]);
		prometheus__sample__init(&smp[i]);
		smp[i].value = s[i]->value;
		smp[i].timestamp = s[i]->ts_ms;
		smpp[i] = &smp[i];
		ts[i].n_samples = 1;
		ts[i].samples = &smpp[i];
		ts[i].n_labels = s[i]->nlab;
		ts[i].labels = &labp[k];
		for (j = 0; j < s[i]->nlab; j++, k++) {
			prometheus__label__init(&lab[k]);
			lab[k].name = (char *)p;
			p += strlen(p) + 1;
			lab[k].value = (char *)p;
			p += strlen(p) + 1;
			labp[k] = &lab[k];
		}
		tsp[i] = &ts[i];
	}
	req.n_timeseries = n;
	req.timeseries = tsp;
	*len = prometheus__write_request__get_packed_size(&req);
	out = malloc(*len ? *len : 1);
	if (out)
		prometheus__write_request__pack(&req, out);
out:
	free(ts);
	free(tsp);
	free(smp);
	free(smpp);
	free(lab);
	free(labp);
	return out;
}

static enum rw_result post(struct rw_client *c, const char *body, size_t len,
			   char *why, size_t whylen)
{
	curl_off_t retry_after = 0;
	long code = 0;
	CURLcode rc;
	size_t i;

	c->answer_len = 0;
	c->retry_after_s = 0;
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	rc = curl_easy_perform(c->curl);
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "%s", curl_easy_strerror(rc));
		return RW_RETRY;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300)
		return RW_SENT;
	/* one line of the answer, printable */
	c->answer[c->answer_len] = '\0';
	for (i = 0; i < c->answer_len; i++)
		if ((unsigned char)c->answer[i] < ' ' || c->answer[i] == 0x7f)
			c->answer[i] = ' ';
	while (c->answer_len && c->answer[c->answer_len - 1] == ' ')
		c->answer[--c->answer_len] = '\0';
	snprintf(why, whylen, "HTTP %ld%s%s", code, c->answer_len ? ": " : "",
		 c->answer);
	if (code != 429 && code < 500)
		return RW_REFUSED;
	/* seconds or an HTTP date, which libcurl turns into seconds from now */
	if (curl_easy_getinfo(c->curl, CURLINFO_RETRY_AFTER, &retry_after) ==
	    CURLE_OK && retry_after > 0)
		c->retry_after_s = retry_after;
	return RW_RETRY;
}

enum rw_result rw_client_send(struct rw_client *c,
			      const struct rw_sample *const *s, size_t n,
			      char *why, size_t whylen)
{
	size_t len, zlen;
	enum rw_result r;
	uint8_t *pb;
	char *z;

	pb = encode(s, n, &len);
	if (!pb) {
		snprintf(why, whylen, "out of memory");
		return RW_RETRY;
	}
	zlen = snappy_max_compressed_length(len);
	z = malloc(zlen);
	if (!z || snappy_compress((const char *)pb, len, z, &zlen) != SNAPPY_OK) {
		snprintf(why, whylen, "out of memory");
		free(pb);
		free(z);
		return RW_RETRY;
	}
	free(pb);
	r = post(c, z, zlen, why, whylen);
	free(z);
	return r;
}

unsigned long rw_client_retry_after(const struct rw_client *c)
{
	return c->retry_after_s;
}
