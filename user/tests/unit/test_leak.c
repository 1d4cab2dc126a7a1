// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the leak tracer's pure parts: mt_leak_stack_decode() on
 * hand-built MEMTRACK_ATTR_LEAK_STACK payloads (good, short, too many
 * frames, length not matching nr_frames), mt_leak_api_name(), and the
 * in-process engine's state read back with a thread's buffer counted but
 * not yet published (mt_preload_stacks(), mt_preload_blocks()).  Prints
 * "PASS name" or "FAIL name: why" per test; exits 1 if any failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libmemtrack.h"
#include "internal.h"
#include "memtrack_preload.h"

static int failures;

static void check(const char *name, bool ok, const char *why)
{
	if (ok) {
		printf("PASS %s\n", name);
	} else {
		printf("FAIL %s: %s\n", name, why);
		failures++;
	}
}

/* A payload: header + nr frames (frames[i] = 0x1000 + i), len bytes of it. */
static size_t build(void *buf, uint32_t nr)
{
	struct memtrack_leak_stack h = {
		.stack_id = 7, .nr_frames = nr, .bytes = 4096, .blocks = 2,
		.oldest_ns = 123456789, .api = MEMTRACK_API_NEW_ARRAY,
		.mismatched = 1,
	};
	uint64_t f;
	uint32_t i;

	memcpy(buf, &h, sizeof(h));
	for (i = 0; i < nr; i++) {
		f = 0x1000 + i;
		memcpy((char *)buf + sizeof(h) + i * 8, &f, 8);
	}
	return sizeof(h) + nr * 8;
}

/*
 * young_get() (preload/state.c) counts a thread's young-block buffer in
 * nr_young before it publishes its offset: a reader between the two sees
 * 0, which is no corruption (seen on cycle 54 of 100 attaches to a
 * 16-thread storm: "the traced program's state is corrupt (young 13)").
 * An offset outside the state still is.
 */
static void young_unpublished(void)
{
	struct mt_preload *p = mt_preload_new(0);
	struct mtp_header *h = p ? mt_preload_header(p) : NULL;
	struct memtrack_leak_block *b = NULL;
	struct mt_leak_stack *v = NULL;
	size_t n = 9, nb = 9;

	if (!h) {
		check("preload-young-unpublished", false, mt_errmsg());
		return;
	}
	h->nr_young = 2;
	h->young[0] = 0;
	h->young[1] = 0;
	check("preload-young-unpublished-stacks",
	      mt_preload_stacks(p, 0, true, &v, &n) == 0 && n == 0, mt_errmsg());
	check("preload-young-unpublished-blocks",
	      mt_preload_blocks(p, 0, &b, &nb) == 0 && nb == 0, mt_errmsg());
	free(v);
	free(b);
	h->young[1] = MTP_SIZE;
	check("preload-young-outside-refused",
	      mt_preload_stacks(p, 0, true, &v, &n) == -EBADMSG &&
	      strstr(mt_errmsg(), "young 1"), "accepted");
	mt_preload_free(p);
}

int main(void)
{
	static char buf[sizeof(struct memtrack_leak_stack) + 8 * (MEMTRACK_LEAK_MAX_FRAMES + 2)];
	struct mt_leak_stack s;
	size_t len;
	bool ok;
	int i;

	len = build(buf, 3);
	ok = mt_leak_stack_decode(buf, len, &s) == 0 && s.stack_id == 7 &&
	     s.nr_frames == 3 && s.bytes == 4096 && s.blocks == 2 &&
	     s.oldest_ns == 123456789 && s.api == MEMTRACK_API_NEW_ARRAY &&
	     s.mismatched == 1 && s.frames[0] == 0x1000 && s.frames[2] == 0x1002;
	check("decode-3-frames", ok, "fields differ");

	len = build(buf, 0);
	check("decode-0-frames", mt_leak_stack_decode(buf, len, &s) == 0 &&
	      s.nr_frames == 0, "rejected or wrong");

	len = build(buf, MEMTRACK_LEAK_MAX_FRAMES);
	check("decode-max-frames", mt_leak_stack_decode(buf, len, &s) == 0 &&
	      s.frames[MEMTRACK_LEAK_MAX_FRAMES - 1] ==
	      0x1000 + MEMTRACK_LEAK_MAX_FRAMES - 1, "rejected or wrong");

	len = build(buf, MEMTRACK_LEAK_MAX_FRAMES + 1);
	check("reject-too-many-frames",
	      mt_leak_stack_decode(buf, len, &s) == -EBADMSG &&
	      strstr(mt_errmsg(), "frames"), mt_errmsg());

	len = build(buf, 3);
	check("reject-missing-frame",
	      mt_leak_stack_decode(buf, len - 8, &s) == -EBADMSG, "accepted");
	check("reject-extra-bytes",
	      mt_leak_stack_decode(buf, len + 8, &s) == -EBADMSG, "accepted");
	check("reject-short-header",
	      mt_leak_stack_decode(buf, sizeof(struct memtrack_leak_stack) - 1,
				   &s) == -EBADMSG, "accepted");
	check("reject-empty", mt_leak_stack_decode(buf, 0, &s) == -EBADMSG,
	      "accepted");

	ok = true;
	for (i = MEMTRACK_API_MALLOC; i < __MEMTRACK_API_MAX; i++)
		if (!strcmp(mt_leak_api_name(i), "unknown"))
			ok = false;
	ok = ok && !strcmp(mt_leak_api_name(0), "unknown") &&
	     !strcmp(mt_leak_api_name(__MEMTRACK_API_MAX), "unknown") &&
	     !strcmp(mt_leak_api_name(MEMTRACK_API_MALLOC), "malloc") &&
	     !strcmp(mt_leak_api_name(MEMTRACK_API_DELETE_ARRAY), "delete[]");
	check("api-names", ok, "an API without a name, or a wrong one");

	check("find-probes-no-such-pid", ({
		struct mt_leak_probe *p;
		size_t n;

		mt_leak_find_probes(999999999, &p, &n) == -ESRCH && !p && !n;
	}), mt_errmsg());
	errno = 0;
	check("symbolizer-no-such-pid", !mt_sym_open(999999999) && errno == ESRCH,
	      mt_errmsg());
	young_unpublished();
	return failures ? 1 : 0;
}
