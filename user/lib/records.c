// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: record walking, names, class parsing, text and JSON output.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libmemtrack.h"
#include "internal.h"

static __thread char mt_errbuf[256];

const char *mt_errmsg(void)
{
	return mt_errbuf;
}

int mt_seterr(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(mt_errbuf, sizeof(mt_errbuf), fmt, ap);
	va_end(ap);
	return err;
}

/* ---- types ------------------------------------------------------------------ */

struct rec_type {
	const char *name;
	size_t size;
	uint32_t class;
};

static const struct rec_type rec_types[__MEMTRACK_REC_MAX] = {
	[MEMTRACK_REC_LOST] = { "lost",
		sizeof(struct memtrack_rec_lost), 0 },
	[MEMTRACK_REC_TASK_NEW] = { "task_new",
		sizeof(struct memtrack_rec_task_new), MEMTRACK_CLASS_TASK },
	[MEMTRACK_REC_TASK_EXIT] = { "task_exit",
		sizeof(struct memtrack_rec_task_exit), MEMTRACK_CLASS_TASK },
	[MEMTRACK_REC_MMAP] = { "mmap",
		sizeof(struct memtrack_rec_map), MEMTRACK_CLASS_MMAP },
	[MEMTRACK_REC_MUNMAP] = { "munmap",
		sizeof(struct memtrack_rec_map), MEMTRACK_CLASS_MMAP },
	[MEMTRACK_REC_MREMAP] = { "mremap",
		sizeof(struct memtrack_rec_mremap), MEMTRACK_CLASS_MMAP },
	[MEMTRACK_REC_BRK] = { "brk",
		sizeof(struct memtrack_rec_brk), MEMTRACK_CLASS_MMAP },
	[MEMTRACK_REC_SHM] = { "shm",
		sizeof(struct memtrack_rec_shm), MEMTRACK_CLASS_SHM },
	[MEMTRACK_REC_OOM_VICTIM] = { "oom_victim",
		sizeof(struct memtrack_rec_oom), MEMTRACK_CLASS_OOM },
	[MEMTRACK_REC_RECLAIM_STALL] = { "reclaim_stall",
		sizeof(struct memtrack_rec_reclaim), MEMTRACK_CLASS_RECLAIM },
	[MEMTRACK_REC_PAGE_ALLOC_FAIL] = { "page_alloc_fail",
		sizeof(struct memtrack_rec_page), MEMTRACK_CLASS_ALLOC_FAIL },
	[MEMTRACK_REC_RSS_GROWTH] = { "rss_growth",
		sizeof(struct memtrack_rec_rss), MEMTRACK_CLASS_RSS },
	[MEMTRACK_REC_PAGE_ALLOC] = { "page_alloc",
		sizeof(struct memtrack_rec_page), MEMTRACK_CLASS_PAGE },
	[MEMTRACK_REC_PAGE_FREE] = { "page_free",
		sizeof(struct memtrack_rec_page), MEMTRACK_CLASS_PAGE },
	[MEMTRACK_REC_KMALLOC] = { "kmalloc",
		sizeof(struct memtrack_rec_kmalloc), MEMTRACK_CLASS_KMALLOC },
	[MEMTRACK_REC_KFREE] = { "kfree",
		sizeof(struct memtrack_rec_kmalloc), MEMTRACK_CLASS_KMALLOC },
};

static const struct rec_type *rec_type(unsigned int type)
{
	if (type >= __MEMTRACK_REC_MAX || !rec_types[type].name)
		return NULL;
	return &rec_types[type];
}

const char *mt_record_type_name(unsigned int type)
{
	const struct rec_type *t = rec_type(type);

	return t ? t->name : "unknown";
}

size_t mt_record_min_size(unsigned int type)
{
	const struct rec_type *t = rec_type(type);

	return t ? t->size : 0;
}

uint32_t mt_record_class(unsigned int type)
{
	const struct rec_type *t = rec_type(type);

	return t ? t->class : 0;
}

/* ---- walking ------------------------------------------------------------------ */

int mt_walk_records(const void *buf, size_t len, mt_record_cb cb, void *arg)
{
	const unsigned char *p = buf;
	uint64_t *bounce = NULL;
	size_t off = 0;
	int n = 0, ret = 0;

	while (off < len) {
		const struct memtrack_rec_hdr *h;
		struct memtrack_rec_hdr hdr;
		size_t min;

		if (len - off < sizeof(hdr)) {
			ret = mt_seterr(-EBADMSG,
					"record at offset %zu: %zu bytes left, less than a header",
					off, len - off);
			break;
		}
		memcpy(&hdr, p + off, sizeof(hdr));
		min = mt_record_min_size(hdr.type);
		if (min < sizeof(hdr))
			min = sizeof(hdr);
		if (hdr.size < min || hdr.size % 8 || hdr.size > len - off) {
			ret = mt_seterr(-EBADMSG,
					"record at offset %zu: bad size %u (type %u, %zu bytes left)",
					off, hdr.size, hdr.type, len - off);
			break;
		}
		h = (const void *)(p + off);
		if ((uintptr_t)h % 8) {
			/* netlink attributes are only 4-byte aligned */
			if (!bounce) {
				bounce = malloc(65536);
				if (!bounce) {
					ret = mt_seterr(-ENOMEM, "out of memory");
					break;
				}
			}
			memcpy(bounce, h, hdr.size);
			h = (const void *)bounce;
		}
		ret = cb(h, arg);
		if (ret < 0)
			break;
		n++;
		off += hdr.size;
		if (ret > 0) {
			ret = 0;
			break;
		}
	}
	free(bounce);
	return ret < 0 ? ret : n;
}

/* ---- classes and counters ------------------------------------------------------- */

static const struct {
	const char *name;
	uint32_t bits;
} class_names[] = {
	{ "task", MEMTRACK_CLASS_TASK },
	{ "mmap", MEMTRACK_CLASS_MMAP },
	{ "shm", MEMTRACK_CLASS_SHM },
	{ "oom", MEMTRACK_CLASS_OOM },
	{ "reclaim", MEMTRACK_CLASS_RECLAIM },
	{ "alloc_fail", MEMTRACK_CLASS_ALLOC_FAIL },
	{ "rss", MEMTRACK_CLASS_RSS },
	{ "page", MEMTRACK_CLASS_PAGE },
	{ "kmalloc", MEMTRACK_CLASS_KMALLOC },
	{ "all", MEMTRACK_CLASS_ALL },
	{ "default", MEMTRACK_CLASS_DEFAULT },
};

int mt_class_parse(const char *csv, uint32_t *classes)
{
	uint32_t bits = 0;
	const char *p = csv;

	for (;;) {
		size_t len = strcspn(p, ",");
		size_t i;

		for (i = 0; i < MT_ARRAY_SIZE(class_names); i++) {
			if (strlen(class_names[i].name) == len &&
			    !strncmp(class_names[i].name, p, len))
				break;
		}
		if (i == MT_ARRAY_SIZE(class_names))
			return mt_seterr(-EINVAL, "unknown event class '%.*s'",
					 (int)len, p);
		bits |= class_names[i].bits;
		if (!p[len])
			break;
		p += len + 1;
	}
	*classes = bits;
	return 0;
}

const char *mt_class_name(uint32_t bit)
{
	size_t i;

	for (i = 0; i < MT_ARRAY_SIZE(class_names); i++)
		if (class_names[i].bits == bit)
			return class_names[i].name;
	return NULL;
}

/* ---- formatting ------------------------------------------------------------------ */

struct out {
	char *buf;
	size_t len;
	size_t pos;		/* what the whole line needs so far */
	bool json;
};

static void out_add(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out_add(struct out *o, const char *fmt, ...)
{
	size_t room = o->pos < o->len ? o->len - o->pos : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->pos : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += n;
}

static void out_key(struct out *o, const char *key)
{
	if (o->json)
		out_add(o, ",\"%s\":", key);
	else
		out_add(o, " %s=", key);
}

static void f_u64(struct out *o, const char *key, uint64_t v)
{
	out_key(o, key);
	out_add(o, "%llu", (unsigned long long)v);
}

static void f_s64(struct out *o, const char *key, int64_t v)
{
	out_key(o, key);
	out_add(o, "%lld", (long long)v);
}

static void f_hex(struct out *o, const char *key, uint64_t v)
{
	out_key(o, key);
	out_add(o, o->json ? "\"0x%llx\"" : "0x%llx", (unsigned long long)v);
}

/*
 * A fixed-size, maybe unterminated string.  Text: '\ooo' for space, '\' and
 * anything unprintable (as /proc/memtrack/tasks does).  JSON: through
 * mt_json_snprint() (the kernel's comm is bytes, not necessarily UTF-8).
 */
static void f_str(struct out *o, const char *key, const char *s, size_t max)
{
	size_t room, i, n = strnlen(s, max);

	out_key(o, key);
	if (o->json) {
		room = o->pos < o->len ? o->len - o->pos : 0;
		o->pos += mt_json_snprint(room ? o->buf + o->pos : NULL, room,
					  s, n);
		return;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c <= ' ' || c == '\\' || c >= 0x7f)
			out_add(o, "\\%03o", c);
		else
			out_add(o, "%c", c);
	}
}

static void f_mm(struct out *o, const struct memtrack_mm *mm)
{
	f_u64(o, "rss_anon", mm->rss_anon);
	f_u64(o, "rss_file", mm->rss_file);
	f_u64(o, "rss_shmem", mm->rss_shmem);
	f_u64(o, "swap", mm->swap);
	f_u64(o, "rss_peak", mm->rss_peak);
	f_u64(o, "vm_total", mm->vm_total);
	f_u64(o, "vm_data", mm->vm_data);
	f_u64(o, "vm_stack", mm->vm_stack);
	f_u64(o, "vm_exec", mm->vm_exec);
	f_u64(o, "pgtables", mm->pgtables);
}

static void f_counters(struct out *o, const __u64 *c)
{
	unsigned int i;

	for (i = 0; i < MEMTRACK_NR_COUNTERS; i++) {
		if (mt_counter_signed(i))
			f_s64(o, mt_counters[i].name, (int64_t)c[i]);
		else
			f_u64(o, mt_counters[i].name, c[i]);
	}
}

static const char *const shm_ops[] = {
	[MEMTRACK_SHM_GET] = "get",
	[MEMTRACK_SHM_AT] = "at",
	[MEMTRACK_SHM_DT] = "dt",
};

static void f_shm(struct out *o, const struct memtrack_rec_shm *r)
{
	out_key(o, "op");
	if (r->op >= MEMTRACK_SHM_GET && r->op <= MEMTRACK_SHM_DT)
		out_add(o, o->json ? "\"%s\"" : "%s", shm_ops[r->op]);
	else
		out_add(o, "%u", r->op);
	switch (r->op) {
	case MEMTRACK_SHM_GET:
		f_s64(o, "shmid", r->shmid);
		f_u64(o, "size", r->size);
		break;
	case MEMTRACK_SHM_AT:
		f_s64(o, "shmid", r->shmid);
		f_hex(o, "addr", r->addr);
		break;
	case MEMTRACK_SHM_DT:
		f_hex(o, "addr", r->addr);
		break;
	default:
		f_s64(o, "shmid", r->shmid);
		f_hex(o, "addr", r->addr);
		f_u64(o, "size", r->size);
		break;
	}
}

static void f_body(struct out *o, const struct memtrack_rec_hdr *h)
{
	const void *r = h;

	switch (h->type) {
	case MEMTRACK_REC_LOST: {
		const struct memtrack_rec_lost *l = r;

		f_u64(o, "lost", l->lost);
		break;
	}
	case MEMTRACK_REC_TASK_NEW: {
		const struct memtrack_rec_task_new *t = r;

		f_s64(o, "parent", t->parent_pid);
		f_u64(o, "uid", t->uid);
		f_hex(o, "clone_flags", t->clone_flags);
		f_str(o, "comm", t->comm, sizeof(t->comm));
		break;
	}
	case MEMTRACK_REC_TASK_EXIT: {
		const struct memtrack_rec_task_exit *t = r;

		f_u64(o, "uid", t->uid);
		f_u64(o, "process_exit", t->process_exit);
		f_str(o, "comm", t->comm, sizeof(t->comm));
		f_mm(o, &t->mm);
		f_counters(o, t->counters);
		break;
	}
	case MEMTRACK_REC_MMAP:
	case MEMTRACK_REC_MUNMAP: {
		const struct memtrack_rec_map *m = r;

		f_hex(o, "addr", m->addr);
		f_u64(o, "len", m->len);
		if (h->type == MEMTRACK_REC_MMAP) {
			f_hex(o, "prot", m->prot);
			f_hex(o, "flags", m->flags);
		}
		break;
	}
	case MEMTRACK_REC_MREMAP: {
		const struct memtrack_rec_mremap *m = r;

		f_hex(o, "old_addr", m->old_addr);
		f_u64(o, "old_len", m->old_len);
		f_hex(o, "new_addr", m->new_addr);
		f_u64(o, "new_len", m->new_len);
		break;
	}
	case MEMTRACK_REC_BRK: {
		const struct memtrack_rec_brk *b = r;

		f_hex(o, "old_brk", b->old_brk);
		f_hex(o, "new_brk", b->new_brk);
		break;
	}
	case MEMTRACK_REC_SHM:
		f_shm(o, r);
		break;
	case MEMTRACK_REC_OOM_VICTIM: {
		const struct memtrack_rec_oom *v = r;

		f_s64(o, "victim_pid", v->victim_pid);
		f_s64(o, "victim_tgid", v->victim_tgid);
		f_u64(o, "victim_uid", v->victim_uid);
		f_u64(o, "victim_rss", v->victim_rss);
		f_str(o, "victim_comm", v->victim_comm,
		      sizeof(v->victim_comm));
		break;
	}
	case MEMTRACK_REC_RECLAIM_STALL: {
		const struct memtrack_rec_reclaim *c = r;

		f_u64(o, "duration_ns", c->duration_ns);
		f_u64(o, "nr_reclaimed", c->nr_reclaimed);
		break;
	}
	case MEMTRACK_REC_PAGE_ALLOC_FAIL:
	case MEMTRACK_REC_PAGE_ALLOC:
	case MEMTRACK_REC_PAGE_FREE: {
		const struct memtrack_rec_page *p = r;

		if (h->type != MEMTRACK_REC_PAGE_ALLOC_FAIL)
			f_hex(o, "pfn", p->pfn);
		f_u64(o, "order", p->order);
		f_hex(o, "gfp", p->gfp);
		break;
	}
	case MEMTRACK_REC_RSS_GROWTH: {
		const struct memtrack_rec_rss *s = r;

		f_u64(o, "rss", s->rss);
		f_u64(o, "prev_rss", s->prev_rss);
		f_u64(o, "window_ns", s->window_ns);
		break;
	}
	case MEMTRACK_REC_KMALLOC:
	case MEMTRACK_REC_KFREE: {
		const struct memtrack_rec_kmalloc *k = r;

		f_hex(o, "call_site", k->call_site);
		f_hex(o, "ptr", k->ptr);
		if (h->type == MEMTRACK_REC_KMALLOC) {
			f_u64(o, "bytes_req", k->bytes_req);
			f_u64(o, "bytes_alloc", k->bytes_alloc);
			f_hex(o, "gfp", k->gfp);
		}
		break;
	}
	}
}

static int format(const struct memtrack_rec_hdr *h, char *buf, size_t len,
		  bool json)
{
	struct out o = { .buf = buf, .len = len, .json = json };
	unsigned long long sec = h->time_ns / 1000000000ULL;
	unsigned long long nsec = h->time_ns % 1000000000ULL;
	const char *name = mt_record_type_name(h->type);

	if (len)
		buf[0] = '\0';
	if (json)
		out_add(&o, "{\"time\":%llu.%09llu,\"cpu\":%u,\"pid\":%d,\"tgid\":%d,\"type\":\"%s\"",
			sec, nsec, h->cpu, h->pid, h->tgid, name);
	else
		out_add(&o, "%llu.%09llu [%03u] %d/%d %s",
			sec, nsec, h->cpu, h->pid, h->tgid, name);
	if (!mt_record_min_size(h->type)) {
		f_u64(&o, "type_id", h->type);
		f_u64(&o, "size", h->size);
	} else if (h->size < mt_record_min_size(h->type)) {
		f_u64(&o, "size", h->size);
		f_u64(&o, "truncated", 1);
	} else {
		f_body(&o, h);
	}
	if (json)
		out_add(&o, "}");
	return (int)o.pos;
}

int mt_format_text(const struct memtrack_rec_hdr *rec, char *buf, size_t len)
{
	return format(rec, buf, len, false);
}

int mt_format_json(const struct memtrack_rec_hdr *rec, char *buf, size_t len)
{
	return format(rec, buf, len, true);
}
