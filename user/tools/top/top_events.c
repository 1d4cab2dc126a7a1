// SPDX-License-Identifier: GPL-2.0
/*
 * The events pane: the module's OOM kills, direct-reclaim stalls and RSS
 * alerts from the "events" multicast group (mt_subscribe), and memtrack-top's
 * own growth alerts, newest first.  Without the module only the latter.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "top_events.h"

static void add(struct top_events *ev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add(struct top_events *ev, const char *fmt, ...)
{
	char *line = ev->lines[ev->next];
	time_t now = time(NULL);
	va_list ap;
	size_t n;

	n = strftime(line, sizeof(ev->lines[0]), "%H:%M:%S ", localtime(&now));
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(ev->lines[0]) - n, fmt, ap);
	va_end(ap);
	ev->next = (ev->next + 1) % TOP_EVENTS_KEEP;
	if (ev->n < TOP_EVENTS_KEEP)
		ev->n++;
}

void top_events_open(struct top_events *ev, struct mt_source *src)
{
	memset(ev, 0, sizeof(*ev));
	if (mt_source_subscribe(src)) {
		snprintf(ev->status, sizeof(ev->status), "%s%s",
			 mt_source_is_module(src) ? "no kernel events: " : "",
			 mt_errmsg());
		return;
	}
	ev->src = src;
}

static int on_record(const struct memtrack_rec_hdr *rec, void *arg)
{
	struct top_events *ev = arg;
	const struct memtrack_rec_oom *oom = (const void *)rec;
	const struct memtrack_rec_reclaim *rc = (const void *)rec;
	const struct memtrack_rec_rss *rss = (const void *)rec;

	switch (rec->type) {
	case MEMTRACK_REC_OOM_VICTIM:
		add(ev, "OOM kill: %d (%.16s), %llu KiB, by %d", oom->victim_tgid,
		    oom->victim_comm,
		    (unsigned long long)oom->victim_rss >> 10, rec->tgid);
		break;
	case MEMTRACK_REC_RECLAIM_STALL:
		add(ev, "reclaim stall: %d, %.1f ms, %llu pages", rec->tgid,
		    rc->duration_ns / 1e6,
		    (unsigned long long)rc->nr_reclaimed);
		break;
	case MEMTRACK_REC_RSS_GROWTH:
		add(ev, "RSS alert: %d, %llu KiB (+%lld KiB in %.1f s)",
		    rec->tgid, (unsigned long long)rss->rss >> 10,
		    ((long long)rss->rss - (long long)rss->prev_rss) / 1024,
		    rss->window_ns / 1e9);
		break;
	default:
		break;
	}
	return 0;
}

void top_events_read(struct top_events *ev)
{
	if (ev->src)
		mt_source_read_events(ev->src, on_record, ev);
}

void top_events_growth(struct top_events *ev, const struct top_table *tb)
{
	size_t i;

	for (i = 0; i < tb->n; i++)
		if (tb->rows[i].growth_new)
			add(ev, "growth: %d (%s) +%.1f KiB/s over %.0f s",
			    tb->rows[i].t.pid, tb->rows[i].t.comm,
			    tb->rows[i].growth_rate / 1024, tb->growth.window);
}

const char *top_events_line(const struct top_events *ev, unsigned int i)
{
	if (i >= ev->n)
		return NULL;
	return ev->lines[(ev->next + TOP_EVENTS_KEEP - 1 - i) % TOP_EVENTS_KEEP];
}
