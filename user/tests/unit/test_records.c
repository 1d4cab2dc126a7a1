// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libmemtrack's record handling: hand-built record buffers
 * through mt_walk_records() and the text and JSON formatters, class parsing,
 * counter names.  Prints "PASS name" or "FAIL name: why" per test; exits 1
 * if any failed.  "test_records --dump" prints every sample record as a text
 * line and a JSON line, for the shell test to cross-check; "--binary"
 * writes them as /dev/memtrack would return them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libmemtrack.h"

static int failures;

#define FAIL(name, ...) do { \
	printf("FAIL %s: ", name); \
	printf(__VA_ARGS__); \
	printf("\n"); \
	failures++; \
} while (0)

/* ---- building buffers ---------------------------------------------------- */

struct buf {
	__u64 a[8192];
	size_t len;
};

static void hdr(void *rec, unsigned int type, size_t size)
{
	struct memtrack_rec_hdr *h = rec;

	memset(rec, 0, size);
	h->type = type;
	h->size = size;
	h->cpu = 3;
	h->time_ns = 12000000345ULL;
	h->pid = 1234;
	h->tgid = 1230;
}

static void put(struct buf *b, const void *rec, size_t size)
{
	memcpy((char *)b->a + b->len, rec, size);
	b->len += size;
}

/* One of each record type (three shm ops), in this order. */
static void build_all(struct buf *b)
{
	struct memtrack_rec_lost lost;
	struct memtrack_rec_task_new tn;
	struct memtrack_rec_task_exit te;
	struct memtrack_rec_map map;
	struct memtrack_rec_mremap mr;
	struct memtrack_rec_brk brk;
	struct memtrack_rec_shm shm;
	struct memtrack_rec_oom oom;
	struct memtrack_rec_reclaim rc;
	struct memtrack_rec_page pg;
	struct memtrack_rec_rss rss;
	struct memtrack_rec_kmalloc km;
	unsigned int i;

	b->len = 0;
	hdr(&lost, MEMTRACK_REC_LOST, sizeof(lost));
	lost.lost = 5;
	put(b, &lost, sizeof(lost));

	hdr(&tn, MEMTRACK_REC_TASK_NEW, sizeof(tn));
	tn.parent_pid = 1230;
	tn.uid = 1000;
	tn.clone_flags = 0x3d0f00;
	strcpy(tn.comm, "worker");
	put(b, &tn, sizeof(tn));

	hdr(&te, MEMTRACK_REC_TASK_EXIT, sizeof(te));
	te.uid = 1000;
	te.process_exit = 1;
	memcpy(te.comm, "a b\\\"\n\xff-16-bytes-full", 16);	/* no NUL */
	te.mm.rss_anon = 1 * 4096;
	te.mm.rss_file = 2 * 4096;
	te.mm.rss_shmem = 3 * 4096;
	te.mm.swap = 4 * 4096;
	te.mm.rss_peak = 5 * 4096;
	te.mm.vm_total = 6 * 4096;
	te.mm.vm_data = 7 * 4096;
	te.mm.vm_stack = 8 * 4096;
	te.mm.vm_exec = 9 * 4096;
	te.mm.pgtables = 10 * 4096;
	for (i = 0; i < MEMTRACK_NR_COUNTERS; i++)
		te.counters[i] = i + 1;
	te.counters[MEMTRACK_CTR_MREMAP_BYTES] = (__u64)-8192;
	te.counters[MEMTRACK_CTR_BRK_BYTES] = (__u64)-4096;
	put(b, &te, sizeof(te));

	hdr(&map, MEMTRACK_REC_MMAP, sizeof(map));
	map.addr = 0x7f0000001000ULL;
	map.len = 8192;
	map.prot = 3;
	map.flags = 0x22;
	put(b, &map, sizeof(map));

	hdr(&map, MEMTRACK_REC_MUNMAP, sizeof(map));
	map.addr = 0x7f0000001000ULL;
	map.len = 4096;
	put(b, &map, sizeof(map));

	hdr(&mr, MEMTRACK_REC_MREMAP, sizeof(mr));
	mr.old_addr = 0x7f0000001000ULL;
	mr.old_len = 4096;
	mr.new_addr = 0x7f0000100000ULL;
	mr.new_len = 16384;
	put(b, &mr, sizeof(mr));

	hdr(&brk, MEMTRACK_REC_BRK, sizeof(brk));
	brk.old_brk = 0x55550000;
	brk.new_brk = 0x55571000;
	put(b, &brk, sizeof(brk));

	hdr(&shm, MEMTRACK_REC_SHM, sizeof(shm));
	shm.op = MEMTRACK_SHM_GET;
	shm.shmid = 7;
	shm.size = 1048576;
	put(b, &shm, sizeof(shm));
	hdr(&shm, MEMTRACK_REC_SHM, sizeof(shm));
	shm.op = MEMTRACK_SHM_AT;
	shm.shmid = 7;
	shm.addr = 0x7f0000200000ULL;
	put(b, &shm, sizeof(shm));
	hdr(&shm, MEMTRACK_REC_SHM, sizeof(shm));
	shm.op = MEMTRACK_SHM_DT;
	shm.addr = 0x7f0000200000ULL;
	put(b, &shm, sizeof(shm));

	hdr(&oom, MEMTRACK_REC_OOM_VICTIM, sizeof(oom));
	oom.victim_pid = 4321;
	oom.victim_tgid = 4321;
	oom.victim_uid = 0;
	oom.victim_rss = 104857600;
	strcpy(oom.victim_comm, "h\xc3\xa9g");	/* UTF-8 */
	put(b, &oom, sizeof(oom));

	hdr(&rc, MEMTRACK_REC_RECLAIM_STALL, sizeof(rc));
	rc.duration_ns = 1500000;
	rc.nr_reclaimed = 32;
	put(b, &rc, sizeof(rc));

	hdr(&pg, MEMTRACK_REC_PAGE_ALLOC_FAIL, sizeof(pg));
	pg.pfn = ~0ULL;
	pg.order = 3;
	pg.gfp = 0xcc0;
	put(b, &pg, sizeof(pg));

	hdr(&rss, MEMTRACK_REC_RSS_GROWTH, sizeof(rss));
	rss.rss = 209715200;
	rss.prev_rss = 104857600;
	rss.window_ns = 1000000000;
	put(b, &rss, sizeof(rss));

	hdr(&pg, MEMTRACK_REC_PAGE_ALLOC, sizeof(pg));
	pg.pfn = 0x12345;
	pg.order = 0;
	pg.gfp = 0x140cca;
	put(b, &pg, sizeof(pg));

	hdr(&pg, MEMTRACK_REC_PAGE_FREE, sizeof(pg));
	pg.pfn = 0x12345;
	pg.order = 2;
	put(b, &pg, sizeof(pg));

	hdr(&km, MEMTRACK_REC_KMALLOC, sizeof(km));
	km.call_site = 0xffffffff81234567ULL;
	km.ptr = 0xffff888012345678ULL;
	km.bytes_req = 100;
	km.bytes_alloc = 128;
	km.gfp = 0xcc0;
	put(b, &km, sizeof(km));

	hdr(&km, MEMTRACK_REC_KFREE, sizeof(km));
	km.call_site = 0xffffffff81234567ULL;
	km.ptr = 0xffff888012345678ULL;
	put(b, &km, sizeof(km));
}

#define H "12.000000345 [003] 1234/1230 "

static const char *const want_text[] = {
	H "lost lost=5",
	H "task_new parent=1230 uid=1000 clone_flags=0x3d0f00 comm=worker",
	H "task_exit uid=1000 process_exit=1 comm=a\\040b\\134\"\\012\\377-16-bytes"
	  " rss_anon=4096 rss_file=8192 rss_shmem=12288 swap=16384"
	  " rss_peak=20480 vm_total=24576 vm_data=28672 vm_stack=32768"
	  " vm_exec=36864 pgtables=40960"
	  " min_flt=1 maj_flt=2 pg_alloc=3 pg_free=4 pg_alloc_fail=5"
	  " kmalloc_calls=6 kmalloc_req=7 kmalloc_alloc=8 kfree_calls=9"
	  " mmap_calls=10 mmap_bytes=11 munmap_calls=12 munmap_bytes=13"
	  " mremap_calls=14 mremap_bytes=-8192 brk_calls=16 brk_bytes=-4096"
	  " shmget_calls=18 shmat_calls=19 shmdt_calls=20 reclaim_stalls=21"
	  " reclaim_ns=22",
	H "mmap addr=0x7f0000001000 len=8192 prot=0x3 flags=0x22",
	H "munmap addr=0x7f0000001000 len=4096",
	H "mremap old_addr=0x7f0000001000 old_len=4096 new_addr=0x7f0000100000 new_len=16384",
	H "brk old_brk=0x55550000 new_brk=0x55571000",
	H "shm op=get shmid=7 size=1048576",
	H "shm op=at shmid=7 addr=0x7f0000200000",
	H "shm op=dt addr=0x7f0000200000",
	H "oom_victim victim_pid=4321 victim_tgid=4321 victim_uid=0 victim_rss=104857600 victim_comm=h\\303\\251g",
	H "reclaim_stall duration_ns=1500000 nr_reclaimed=32",
	H "page_alloc_fail order=3 gfp=0xcc0",
	H "rss_growth rss=209715200 prev_rss=104857600 window_ns=1000000000",
	H "page_alloc pfn=0x12345 order=0 gfp=0x140cca",
	H "page_free pfn=0x12345 order=2 gfp=0x0",
	H "kmalloc call_site=0xffffffff81234567 ptr=0xffff888012345678 bytes_req=100 bytes_alloc=128 gfp=0xcc0",
	H "kfree call_site=0xffffffff81234567 ptr=0xffff888012345678",
};

#define NR_ALL (sizeof(want_text) / sizeof(want_text[0]))

/*
 * Record i's text: the task_exit's, with the counters appended to the list
 * after reclaim_ns (counter i is i + 1), so that a new counter is checked
 * here without this test naming it.
 */
static const char *want(unsigned int i)
{
	static char buf[2048];
	size_t k;
	unsigned int c;

	if (i != 2)
		return want_text[i];
	k = snprintf(buf, sizeof(buf), "%s", want_text[2]);
	for (c = MEMTRACK_CTR_RECLAIM_NS + 1; c < MEMTRACK_NR_COUNTERS; c++)
		k += snprintf(buf + k, sizeof(buf) - k, " %s=%u",
			      mt_counter_name(c), c + 1);
	return buf;
}

#define J "{\"time\":12.000000345,\"cpu\":3,\"pid\":1234,\"tgid\":1230,"

/* JSON of a few; the shell test checks all of them against the text. */
static const struct {
	unsigned int idx;
	const char *json;
} want_json[] = {
	{ 0, J "\"type\":\"lost\",\"lost\":5}" },
	{ 1, J "\"type\":\"task_new\",\"parent\":1230,\"uid\":1000,\"clone_flags\":\"0x3d0f00\",\"comm\":\"worker\"}" },
	{ 3, J "\"type\":\"mmap\",\"addr\":\"0x7f0000001000\",\"len\":8192,\"prot\":\"0x3\",\"flags\":\"0x22\"}" },
	{ 7, J "\"type\":\"shm\",\"op\":\"get\",\"shmid\":7,\"size\":1048576}" },
	/* UTF-8 as it is */
	{ 10, J "\"type\":\"oom_victim\",\"victim_pid\":4321,\"victim_tgid\":4321,\"victim_uid\":0,\"victim_rss\":104857600,\"victim_comm\":\"h\xc3\xa9g\"}" },
	{ 12, J "\"type\":\"page_alloc_fail\",\"order\":3,\"gfp\":\"0xcc0\"}" },
};

/* ---- collecting walks ----------------------------------------------------- */

struct seen {
	unsigned int n;
	unsigned int stop_after;	/* 0: never */
	char text[64][2048];
	char json[64][2048];
};

static int collect(const struct memtrack_rec_hdr *r, void *arg)
{
	struct seen *s = arg;

	if (s->n < 64) {
		mt_format_text(r, s->text[s->n], sizeof(s->text[0]));
		mt_format_json(r, s->json[s->n], sizeof(s->json[0]));
	}
	s->n++;
	return s->stop_after && s->n >= s->stop_after ? 1 : 0;
}

static struct seen seen;
static struct buf b;

static int walk(const void *p, size_t len, unsigned int stop_after)
{
	memset(&seen, 0, sizeof(seen));
	seen.stop_after = stop_after;
	return mt_walk_records(p, len, collect, &seen);
}

/* ---- tests ------------------------------------------------------------------- */

static void test_all_types(void)
{
	const char *name = "walk-all-types-text";
	unsigned int i;
	int n;

	build_all(&b);
	n = walk(b.a, b.len, 0);
	if (n != (int)NR_ALL || seen.n != NR_ALL) {
		FAIL(name, "walk returned %d, %u callbacks, want %zu", n,
		     seen.n, NR_ALL);
		return;
	}
	for (i = 0; i < NR_ALL; i++) {
		if (strcmp(seen.text[i], want(i))) {
			FAIL(name, "record %u:\n got  '%s'\n want '%s'", i,
			     seen.text[i], want(i));
			return;
		}
	}
	printf("PASS %s\n", name);
}

static void test_json(void)
{
	const char *name = "format-json-exact";
	/* \n short; 0xff, not UTF-8, as U+FFFD */
	const char *te_comm = "\"comm\":\"a b\\\\\\\"\\n\xef\xbf\xbd-16-bytes\"";
	size_t i;

	build_all(&b);
	walk(b.a, b.len, 0);
	for (i = 0; i < sizeof(want_json) / sizeof(want_json[0]); i++) {
		if (strcmp(seen.json[want_json[i].idx], want_json[i].json)) {
			FAIL(name, "record %u:\n got  '%s'\n want '%s'",
			     want_json[i].idx, seen.json[want_json[i].idx],
			     want_json[i].json);
			return;
		}
	}
	if (!strstr(seen.json[2], te_comm) ||
	    !strstr(seen.json[2], "\"mremap_bytes\":-8192,") ||
	    !strstr(seen.json[2], "\"reclaim_ns\":22") ||
	    seen.json[2][strlen(seen.json[2]) - 1] != '}') {
		FAIL(name, "task_exit: '%s' lacks %s, mremap_bytes or reclaim_ns",
		     seen.json[2], te_comm);
		return;
	}
	printf("PASS %s\n", name);
}

/* a valid mmap record, then bad bytes: the walk must stop with -EBADMSG */
static void bad_after_one(const char *name, unsigned int size, size_t len)
{
	struct memtrack_rec_map map;
	struct memtrack_rec_hdr bad;
	int n;

	b.len = 0;
	hdr(&map, MEMTRACK_REC_MMAP, sizeof(map));
	put(&b, &map, sizeof(map));
	hdr(&bad, MEMTRACK_REC_BRK, sizeof(bad));
	bad.size = size;
	put(&b, &bad, sizeof(bad));
	memset((char *)b.a + b.len, 0, 64);
	n = walk(b.a, len ? len : b.len + 64, 0);
	if (n != -EBADMSG || seen.n != 1)
		FAIL(name, "walk returned %d with %u callbacks, want %d and 1",
		     n, seen.n, -EBADMSG);
	else if (!strstr(mt_errmsg(), "bad size") &&
		 !strstr(mt_errmsg(), "less than a header"))
		FAIL(name, "no useful message: '%s'", mt_errmsg());
	else
		printf("PASS %s\n", name);
}

static void test_malformed(void)
{
	size_t mlen = sizeof(struct memtrack_rec_map);
	size_t blen = sizeof(struct memtrack_rec_brk);

	bad_after_one("malformed-size-zero", 0, 0);
	bad_after_one("malformed-size-not-multiple-of-8", blen + 4, 0);
	bad_after_one("malformed-size-smaller-than-header", 16, 0);
	bad_after_one("malformed-shorter-than-its-type", blen - 8, 0);
	/* a brk record whose size runs past the end of the buffer */
	bad_after_one("malformed-truncated-record", blen, mlen + blen - 8);
	/* fewer bytes left than a header */
	bad_after_one("malformed-trailing-bytes", blen, mlen + 8);
}

static void test_lost(void)
{
	const char *name = "lost-record";
	struct memtrack_rec_lost l;
	int n;

	b.len = 0;
	hdr(&l, MEMTRACK_REC_LOST, sizeof(l));
	l.lost = 18446744073709551615ULL;
	put(&b, &l, sizeof(l));
	n = walk(b.a, b.len, 0);
	if (n != 1 || strcmp(seen.text[0], H "lost lost=18446744073709551615") ||
	    strcmp(seen.json[0], J "\"type\":\"lost\",\"lost\":18446744073709551615}"))
		FAIL(name, "n=%d '%s' '%s'", n, seen.text[0], seen.json[0]);
	else if (mt_record_class(MEMTRACK_REC_LOST) != 0)
		FAIL(name, "LOST has a class");
	else
		printf("PASS %s\n", name);
}

/* A newer kernel: longer records and a type we do not know. */
static void test_future(void)
{
	const char *name = "future-sizes-and-types";
	__u64 big[8];
	struct memtrack_rec_map *m = (void *)big;
	struct memtrack_rec_brk brk;
	struct memtrack_rec_hdr *u = (void *)big;
	int n;

	b.len = 0;
	hdr(big, MEMTRACK_REC_MMAP, sizeof(big));
	m->addr = 0x1000;
	m->len = 4096;
	big[7] = 0xdeadbeef;
	put(&b, big, sizeof(big));
	hdr(big, 99, 32);
	u->size = 32;
	put(&b, big, 32);
	hdr(&brk, MEMTRACK_REC_BRK, sizeof(brk));
	brk.old_brk = 0x1000;
	brk.new_brk = 0x2000;
	put(&b, &brk, sizeof(brk));
	n = walk(b.a, b.len, 0);
	if (n != 3) {
		FAIL(name, "walk returned %d (%s)", n, mt_errmsg());
		return;
	}
	if (strcmp(seen.text[0], H "mmap addr=0x1000 len=4096 prot=0x0 flags=0x0") ||
	    strcmp(seen.text[1], H "unknown type_id=99 size=32") ||
	    strcmp(seen.text[2], H "brk old_brk=0x1000 new_brk=0x2000"))
		FAIL(name, "got '%s' / '%s' / '%s'", seen.text[0], seen.text[1],
		     seen.text[2]);
	else if (strcmp(seen.json[1], J "\"type\":\"unknown\",\"type_id\":99,\"size\":32}"))
		FAIL(name, "json '%s'", seen.json[1]);
	else
		printf("PASS %s\n", name);
}

static void test_stop_and_align(void)
{
	const char *name = "callback-stop";
	static __u64 shifted[8200];
	int n;

	build_all(&b);
	n = walk(b.a, b.len, 4);
	if (n != 4 || seen.n != 4) {
		FAIL(name, "walk returned %d, %u callbacks, want 4", n, seen.n);
	} else {
		printf("PASS %s\n", name);
	}

	/* netlink attribute data is only 4-byte aligned */
	name = "walk-unaligned-buffer";
	memcpy((char *)shifted + 4, b.a, b.len);
	n = walk((char *)shifted + 4, b.len, 0);
	if (n != (int)NR_ALL || strcmp(seen.text[2], want(2)) ||
	    strcmp(seen.text[NR_ALL - 2], want(NR_ALL - 2)))
		FAIL(name, "walk returned %d; '%s'", n, seen.text[2]);
	else
		printf("PASS %s\n", name);

	name = "walk-empty-buffer";
	n = walk(b.a, 0, 0);
	if (n != 0 || seen.n)
		FAIL(name, "walk returned %d", n);
	else
		printf("PASS %s\n", name);
}

static void test_format_truncation(void)
{
	const char *name = "format-small-buffer";
	char small[16];
	int n;

	build_all(&b);
	memset(small, 'x', sizeof(small));
	n = mt_format_text((const void *)((char *)b.a +
		sizeof(struct memtrack_rec_lost)), small, sizeof(small));
	if (n != (int)strlen(want_text[1]) || small[15] != '\0' ||
	    strncmp(small, want_text[1], 15))
		FAIL(name, "returned %d, want %zu; '%.16s'", n,
		     strlen(want_text[1]), small);
	else
		printf("PASS %s\n", name);
}

static void test_classes(void)
{
	const char *name = "class-parse";
	static const struct {
		const char *csv;
		int ret;
		uint32_t bits;
	} cases[] = {
		{ "task", 0, MEMTRACK_CLASS_TASK },
		{ "task,mmap,shm", 0, MEMTRACK_CLASS_TASK | MEMTRACK_CLASS_MMAP |
			MEMTRACK_CLASS_SHM },
		{ "oom,reclaim,alloc_fail,rss", 0, MEMTRACK_CLASS_OOM |
			MEMTRACK_CLASS_RECLAIM | MEMTRACK_CLASS_ALLOC_FAIL |
			MEMTRACK_CLASS_RSS },
		{ "page,kmalloc", 0, MEMTRACK_CLASS_PAGE | MEMTRACK_CLASS_KMALLOC },
		{ "all", 0, MEMTRACK_CLASS_ALL },
		{ "default", 0, MEMTRACK_CLASS_DEFAULT },
		{ "default,page", 0, MEMTRACK_CLASS_DEFAULT | MEMTRACK_CLASS_PAGE },
		{ "", -EINVAL, 0 },
		{ "task,", -EINVAL, 0 },
		{ ",task", -EINVAL, 0 },
		{ "tas", -EINVAL, 0 },
		{ "tasks", -EINVAL, 0 },
		{ "TASK", -EINVAL, 0 },
		{ "mmap,bogus", -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t bits = 0xdead;
		int ret = mt_class_parse(cases[i].csv, &bits);

		if (ret != cases[i].ret ||
		    (ret == 0 && bits != cases[i].bits) ||
		    (ret < 0 && bits != 0xdead)) {
			FAIL(name, "'%s': ret %d bits %#x, want %d %#x",
			     cases[i].csv, ret, bits, cases[i].ret,
			     cases[i].bits);
			return;
		}
	}
	mt_class_parse("mmap,bogus", &(uint32_t){ 0 });
	if (strcmp(mt_errmsg(), "unknown event class 'bogus'")) {
		FAIL(name, "message '%s'", mt_errmsg());
		return;
	}
	/* mt_class_name(): each single bit's name parses back to it */
	for (i = 0; i < 32; i++) {
		uint32_t bit = 1U << i, bits = 0;
		const char *cn = mt_class_name(bit);

		if ((bit & MEMTRACK_CLASS_ALL) ?
		    !cn || mt_class_parse(cn, &bits) || bits != bit : !!cn) {
			FAIL(name, "mt_class_name(%#x) '%s'", bit, cn ? cn : "NULL");
			return;
		}
	}
	if (mt_class_name(0) ||
	    mt_class_name(MEMTRACK_CLASS_PAGE | MEMTRACK_CLASS_KMALLOC) ||
	    strcmp(mt_class_name(MEMTRACK_CLASS_ALLOC_FAIL), "alloc_fail")) {
		FAIL(name, "mt_class_name of no bit, of two, of alloc_fail");
		return;
	}
	printf("PASS %s\n", name);
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), k = strlen(end);

	return n >= k && !strcmp(s + n - k, end);
}

/*
 * The table every program derives its counters from: each entry whole,
 * names, families and titles each once, a family's name ending in its
 * unit as Prometheus' naming rules want.
 */
static void test_counter_table(void)
{
	const char *name = "counter-table-from-the-abi-list";
	static const char *const suffix[] = {
		[MEMTRACK_UNIT_COUNT] = "_total",
		[MEMTRACK_UNIT_BYTES] = "_bytes_total",
		[MEMTRACK_UNIT_NS] = "_seconds_total",
		[MEMTRACK_UNIT_NET_BYTES] = "_bytes",
	};
	unsigned int i, j;

	for (i = 0; i < MEMTRACK_NR_COUNTERS; i++) {
		const struct mt_counter *c = &mt_counters[i];

		if (!c->name || !c->metric || !c->title || !c->help ||
		    !c->name[0] || !c->title[0] || !c->help[0] ||
		    c->unit > MEMTRACK_UNIT_NET_BYTES ||
		    !ends_with(c->metric, suffix[c->unit]) ||
		    (c->unit == MEMTRACK_UNIT_COUNT &&
		     (ends_with(c->metric, "_bytes_total") ||
		      ends_with(c->metric, "_seconds_total"))) ||
		    mt_counter_signed(i) != (c->unit == MEMTRACK_UNIT_NET_BYTES)) {
			FAIL(name, "%s", c->name ? c->name : "(no name)");
			return;
		}
		for (j = 0; j < i; j++)
			if (!strcmp(c->name, mt_counters[j].name) ||
			    !strcmp(c->metric, mt_counters[j].metric) ||
			    !strcmp(c->title, mt_counters[j].title)) {
				FAIL(name, "%s", c->name);
				return;
			}
	}
	printf("PASS %s\n", name);
}

static void test_names(void)
{
	const char *name = "counter-and-type-names";

	if (strcmp(mt_counter_name(0), "min_flt") ||
	    strcmp(mt_counter_name(MEMTRACK_CTR_MREMAP_BYTES), "mremap_bytes") ||
	    strcmp(mt_counter_name(MEMTRACK_CTR_RECLAIM_NS), "reclaim_ns") ||
	    mt_counter_name(MEMTRACK_NR_COUNTERS) ||
	    !mt_counter_signed(MEMTRACK_CTR_BRK_BYTES) ||
	    mt_counter_signed(MEMTRACK_CTR_MMAP_BYTES))
		FAIL(name, "counter names");
	else if (strcmp(mt_record_type_name(MEMTRACK_REC_RSS_GROWTH), "rss_growth") ||
		 strcmp(mt_record_type_name(0), "unknown") ||
		 strcmp(mt_record_type_name(__MEMTRACK_REC_MAX), "unknown") ||
		 mt_record_class(MEMTRACK_REC_KFREE) != MEMTRACK_CLASS_KMALLOC ||
		 mt_record_class(MEMTRACK_REC_BRK) != MEMTRACK_CLASS_MMAP)
		FAIL(name, "type names or classes");
	else
		printf("PASS %s\n", name);
}

static int dump(void)
{
	unsigned int i;

	build_all(&b);
	walk(b.a, b.len, 0);
	for (i = 0; i < seen.n; i++)
		printf("%s\n%s\n", seen.text[i], seen.json[i]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--dump"))
		return dump();
	if (argc > 1 && !strcmp(argv[1], "--binary")) {
		build_all(&b);
		return fwrite(b.a, 1, b.len, stdout) == b.len ? 0 : 1;
	}
	test_all_types();
	test_json();
	test_malformed();
	test_lost();
	test_future();
	test_stop_and_align();
	test_format_truncation();
	test_classes();
	test_names();
	test_counter_table();
	return failures ? 1 : 0;
}
