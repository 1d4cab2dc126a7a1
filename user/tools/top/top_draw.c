// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's screen (top_ui_int.h): the header (the status line and
 * the memory meters), the process table or the cluster's, and the pane
 * under it (events, a process's detail, memtrack-leak's report).
 */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>
#include "top_cluster.h"
#include "top_cluster_view.h"
#include "top_cmdline.h"
#include "top_smaps.h"
#include "top_text.h"
#include "top_ui_int.h"

/*
 * One part of a meter: n cells of c, or with colours of '|' in the part's
 * colour (pair 0: the empty rest, blank either way).
 */
static void meter_part(int n, int pair, char c)
{
	bool paint = top_colour && pair;

	if (paint)
		attron(COLOR_PAIR(pair));
	while (n-- > 0)
		addch(paint ? '|' : c);
	if (paint)
		attroff(COLOR_PAIR(pair));
}

/*
 * "Mem [|||||+++###     12.3G/15.6G]": used, buffers and cache of total
 * (a swap meter has only used, in its own colour).
 */
static void bar(int y, const char *label, uint64_t used, uint64_t buffers,
		uint64_t cache, uint64_t total, int used_pair)
{
	int width = COLS - (int)strlen(label) - 24, nu = 0, nb = 0, nc = 0;

	if (width < 10)
		width = 10;
	if (total) {
		nu = (int)((double)used / total * width);
		nb = (int)((double)buffers / total * width);
		nc = (int)((double)cache / total * width);
	}
	move(y, 0);
	clrtoeol();
	printw("%s[", label);
	meter_part(nu, used_pair, '|');
	meter_part(nb, PAIR_BUFFERS, '#');
	meter_part(nc, PAIR_CACHE, '#');
	meter_part(width - nu - nb - nc, 0, ' ');
	printw("] %.1f/%.1fG", used / 1073741824.0, total / 1073741824.0);
}

/* The status line's name of a grouped view. */
static const char *const view_names[] = {
	[TOP_GROUP_PROGRAM] = "per program",
	[TOP_GROUP_CGROUP] = "per cgroup",
	[TOP_GROUP_CONTAINER] = "per container",
	[TOP_GROUP_POD] = "per pod",
	[TOP_GROUP_NAMESPACE] = NULL,
};

/* The sort column's title on the status line. */
static const char *top_sort_name(int sort)
{
	return sort >= 0 ? top_columns[sort].title : "-";
}

static void draw_header(struct ui *u)
{
	const struct memtrack_summary *s = &u->tb.si.sum;
	uint64_t cache = s->file_pages + s->slab_reclaimable;
	uint64_t used = s->mem_total - s->mem_free - cache, buffers;
	char when[16], line[256];
	time_t now = time(NULL);

	if (s->mem_total < s->mem_free + cache)
		used = 0;
	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	move(0, 0);
	clrtoeol();
	/* cut at the edge, never wrapped into the meter below: the pause
	 * mark first, where a narrow terminal still shows it */
	snprintf(line, sizeof(line),
		 "memtrack-top%s - %s  source: %s  processes: %zu  sort: %s%s  delay: %.1fs",
		 u->paused ? " [paused]" : "", when, mt_source_name(u->tb.src),
		 u->tb.n, top_sort_name(u->vo.sort),
		 u->vo.reverse ? " (rev)" : "", u->delay);
	top_add_cells(line, COLS);
	buffers = u->tb.si.buffers < cache ? u->tb.si.buffers : 0;
	bar(1, "Mem ", used, buffers, cache - buffers, s->mem_total,
	    PAIR_USED);
	bar(2, "Swp ", u->tb.si.swap_total - s->swap_free, 0, 0,
	    u->tb.si.swap_total, PAIR_SWAP);
	move(3, 0);
	clrtoeol();
	printw("anon %lluM file %lluM shmem %lluM slab %lluM dirty %lluM writeback %lluM",
	       (unsigned long long)s->anon_pages >> 20,
	       (unsigned long long)s->file_pages >> 20,
	       (unsigned long long)s->shmem >> 20,
	       (unsigned long long)(s->slab_reclaimable +
				    s->slab_unreclaimable) >> 20,
	       (unsigned long long)s->dirty >> 20,
	       (unsigned long long)s->writeback >> 20);
	move(4, 0);
	clrtoeol();
	if (u->tb.si.module)
		printw("since load: %llu reclaim stalls, %llu allocation failures, %llu OOM kills",
		       (unsigned long long)s->direct_reclaim_stalls,
		       (unsigned long long)s->page_alloc_failures,
		       (unsigned long long)s->oom_kills);
	else
		printw("since boot: %llu reclaim stalls, %llu OOM kills",
		       (unsigned long long)s->direct_reclaim_stalls,
		       (unsigned long long)s->oom_kills);
	move(5, 0);
	clrtoeol();
	/*
	 * A message stays until the next key, or MESSAGE_S after it was first
	 * drawn: one refresh (the delay) is too short to read it.
	 */
	if (u->message[0] && u->message_until && mt_mono_s() >= u->message_until) {
		u->message[0] = '\0';
		u->message_until = 0;
	}
	if (u->message[0] && !u->message_until)
		u->message_until = mt_mono_s() + MESSAGE_S;
	if (u->cluster_view && !u->message[0]) {
		char line[512];

		top_cluster_status(&u->cs, top_cluster_name(u->cluster),
				   mt_mono_s(), line, sizeof(line));
		top_add_cells(line, COLS);
	} else if (u->message[0]) {
		printw("%s", u->message);
	} else {
		printw("filter: %s  user: %s  view: %s%s",
		       u->vo.filter[0] ? u->vo.filter : "-",
		       u->vo.by_user ? u->user_name : "-",
		       view_names[u->vo.group] ? view_names[u->vo.group] :
		       u->vo.tree ? "tree" : "processes",
		       u->vo.threads ? " + threads" : "");
	}
}

static bool detail_open(const struct ui *u)
{
	return u->detail.kind != TOP_DETAIL_NONE && !u->cluster_view;
}

static int pane_lines(const struct ui *u)
{
	/* a leak report's stacks want room: half the list's */
	if (detail_open(u) && u->detail.kind == TOP_DETAIL_LEAK &&
	    (LINES - HEADER_LINES) / 2 > DETAIL_LINES)
		return (LINES - HEADER_LINES) / 2;
	if (detail_open(u))
		return LINES > HEADER_LINES + DETAIL_LINES + 4 ?
		       DETAIL_LINES : 0;
	return u->events && LINES > HEADER_LINES + EVENT_LINES + 4 ?
	       EVENT_LINES : 0;
}

static void draw_detail(struct ui *u)
{
	char lines[TOP_LEAK_LINES][TOP_DETAIL_WIDTH];
	int y = LINES - pane_lines(u), n, i, h = pane_lines(u);

	if (!h)
		return;
	if (u->detail.kind == TOP_DETAIL_LEAK) {
		snprintf(lines[0], sizeof(lines[0]),
			 "memtrack-leak -p %d, a report every %g s%s  (s: stop)",
			 u->leak.target, leak_interval(u),
			 u->leak.exited ? ", ended:" : "");
		n = 1 + top_leak_lines(&u->leak, lines + 1,
				       h - 1 < TOP_LEAK_LINES - 1 ? h - 1 :
				       TOP_LEAK_LINES - 1);
	} else {
		n = top_detail_lines(&u->detail, u->sel < u->view.n ?
				     &u->view.rows[u->sel] : NULL,
				     u->tb.si.module, lines, DETAIL_LINES);
	}
	for (i = 0; i < h; i++) {
		move(y + i, 0);
		clrtoeol();
		if (i >= n)
			continue;
		if (!i)
			top_titles_on();
		top_add_cells(lines[i], COLS);
		if (!i) {
			top_pad_row(y + i);
			top_titles_off();
		}
	}
}

static void draw_events(struct ui *u)
{
	int y = LINES - pane_lines(u), i;
	const char *line;

	if (!pane_lines(u))
		return;
	move(y, 0);
	clrtoeol();
	top_titles_on();
	printw("EVENTS newest first%s%s", u->ev.status[0] ? " - " : "",
	       u->ev.status);
	top_pad_row(y);
	top_titles_off();
	for (i = 0; i < EVENT_LINES - 1; i++) {
		move(y + 1 + i, 0);
		clrtoeol();
		line = top_events_line(&u->ev, i);
		if (line)
			top_add_cells(line, COLS);
	}
}

/* The growth flag of a leak suspect in red, where the row put it. */
static void flag_colour(const struct top_row *r, const char *line, int y)
{
	const char *f;
	size_t x;

	if (!top_colour || !r->growing)
		return;
	f = strstr(line, "LEAK?");
	if (!f)
		return;
	/* its screen column: the text before it may hold wide characters */
	x = top_text_cells(line, f - line);
	if (x >= (size_t)COLS)
		return;
	attron(COLOR_PAIR(PAIR_FLAG) | A_BOLD);
	move(y, (int)x);
	top_add_cells(f, COLS - (int)x);
	attroff(COLOR_PAIR(PAIR_FLAG) | A_BOLD);
}

/* Room kept for the command line on a narrow terminal (c). */
#define CMDLINE_MIN	24

/*
 * One line of the table into line: the row's columns, with c the command
 * line after them (from the header's end on), then scrolled sideways.
 */
static void table_line(struct ui *u, const struct top_row *r, uint64_t cols,
		       char *line, size_t size)
{
	size_t len, skip, cells;

	if (r)
		len = top_format_row(r, line, size, cols, &u->order);
	else
		len = top_format_header(line, size, cols, &u->order);
	if (len > size - 1)
		len = size - 1;
	if (u->cmdline) {
		/* after the last column's whole width: a flag longer than its
		 * title does not run into the command line */
		cells = top_text_cells(line, len);
		while (cells < (size_t)top_columns_cells(cols, &u->order) &&
		       len < size - 2) {
			line[len++] = ' ';
			cells++;
		}
		line[len] = '\0';
		if (!r)
			snprintf(line + len, size - len, " COMMAND LINE");
		else if (!r->group)
			top_cmdline_read(r->t.pid, line + len + 1,
					 size - len - 1);
		if (r && !r->group && line[len + 1])
			line[len] = ' ';
		len = strlen(line);
	}
	/* hscroll counts screen cells */
	skip = top_text_fit(line, u->hscroll, &cells);
	if (skip < len)
		memmove(line, line + skip, len - skip + 1);
	else
		line[0] = '\0';
}

/* The column named name, as a set. */
static uint64_t bit(const char *name)
{
	return top_column_bit(top_column_index(name));
}

static void draw_table(struct ui *u)
{
	unsigned int show = top_table_show(&u->tb, u->smaps);
	enum top_group g = u->vo.group;
	/* what the view is about stays on a narrow terminal */
	uint64_t must = top_column_bit(u->vo.sort) |
			(g == TOP_GROUP_CGROUP ? bit("cgroup") |
			 bit("cgroup_max") : 0) |
			(g == TOP_GROUP_CONTAINER ? bit("container") : 0) |
			(g == TOP_GROUP_CONTAINER || g == TOP_GROUP_POD ?
			 bit("pod") : 0) |
			(u->smaps ? bit("pss") | bit("uss") : 0);
	int width = u->cmdline ? COLS - CMDLINE_MIN : COLS;
	/* the layout's, and the sort's if the layout hides it */
	uint64_t allowed = top_columns_shown(&u->layout, show, u->vo.sort);
	uint64_t cols = u->hscroll ? allowed :
				     top_columns_fit(allowed, must & allowed, width);
	int y = HEADER_LINES, rows = LINES - HEADER_LINES - 1 - pane_lines(u);
	char line[1024];
	size_t i, hdr_len;
	bool tagged;

	top_layout_with(&u->layout, u->vo.sort, &u->order);
	hdr_len = top_format_header(line, sizeof(line), cols, &u->order);
	if (u->hscroll >= hdr_len)
		u->hscroll = hdr_len ? hdr_len - 1 : 0;
	table_line(u, NULL, cols, line, sizeof(line));
	top_titles_on();
	move(y, 0);
	top_add_cells(line, COLS);
	top_pad_row(y);
	top_titles_off();
	/* the list scrolls under the selection */
	if (rows > 0 && u->sel >= u->scroll + rows)
		u->scroll = u->sel - rows + 1;
	if (u->sel < u->scroll)
		u->scroll = u->sel;
	if (u->scroll + rows > u->view.n)
		u->scroll = u->view.n > (size_t)rows ? u->view.n - rows : 0;
	/* Only the rows on screen: each file is a walk of page tables. */
	if (u->smaps && rows > 0)
		top_rows_smaps(u->view.rows + u->scroll,
			       u->view.n - u->scroll < (size_t)rows ?
			       u->view.n - u->scroll : (size_t)rows);
	for (i = 0; (int)i < rows; i++) {
		const struct top_row *r = &u->view.rows[u->scroll + i];

		move(y + 1 + i, 0);
		clrtoeol();
		if (u->scroll + i >= u->view.n)
			continue;
		table_line(u, r, cols, line, sizeof(line));
		tagged = !r->group && !r->thread && top_is_tagged(u, r->t.pid);
		if (u->scroll + i == u->sel) {
			attron(A_REVERSE | (tagged ? A_BOLD : 0));
			top_add_cells(line, COLS);
			top_pad_row(y + 1 + i);
			attroff(A_REVERSE | A_BOLD);
		} else if (tagged) {
			attron(top_tagged_attr());
			top_add_cells(line, COLS);
			attroff(top_tagged_attr());
			flag_colour(r, line, y + 1 + i);
		} else {
			top_add_cells(line, COLS);
			flag_colour(r, line, y + 1 + i);
		}
	}
}

/* The filter applies here too; the aggregator sorts by RSS. */
static void draw_cluster(struct ui *u)
{
	int y = HEADER_LINES, rows = LINES - HEADER_LINES - 1 - pane_lines(u);
	bool progs = u->vo.group == TOP_GROUP_PROGRAM;
	size_t n = progs ? u->cs.nprogs : u->cs.nprocs, i, shown = 0;
	char line[512];

	top_cluster_format_header(line, sizeof(line), progs);
	top_titles_on();
	move(y, 0);
	top_add_cells(line, COLS);
	top_pad_row(y);
	top_titles_off();
	if (u->scroll >= n)
		u->scroll = n ? n - 1 : 0;
	for (i = u->scroll; i < n && (int)shown < rows; i++) {
		const char *comm = progs ? u->cs.progs[i].comm :
				   u->cs.procs[i].comm;

		if (u->vo.filter[0] &&
		    !strcasestr(comm, top_filter_text(u->vo.filter)))
			continue;
		if (progs)
			top_cluster_format_prog(&u->cs.progs[i], line,
						sizeof(line));
		else
			top_cluster_format_proc(&u->cs.procs[i], line,
						sizeof(line));
		move(y + 1 + shown++, 0);
		clrtoeol();
		top_add_cells(line, COLS);
	}
	for (; (int)shown < rows; shown++) {
		move(y + 1 + shown, 0);
		clrtoeol();
	}
}

void top_ui_draw(struct ui *u)
{
	if (u->help) {
		top_help_draw(u);
	} else {
		draw_header(u);
		if (u->cluster_view)
			draw_cluster(u);
		else
			draw_table(u);
		if (detail_open(u))
			draw_detail(u);
		else
			draw_events(u);
	}
	refresh();
}
