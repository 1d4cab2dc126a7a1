// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's interactive view (ncursesw): header with memory bars, the
 * process table of top_view.c, keys as in top and htop.  The terminal is
 * given back on quit, on SIGINT/SIGTERM/SIGHUP and on a crash signal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ncurses.h>
#include "top.h"
#include "top_actions.h"
#include "top_cmdline.h"
#include "top_columns.h"
#include "top_detail.h"
#include "top_leak.h"
#include "top_prompt.h"
#include "top_cluster.h"
#include "top_cluster_view.h"
#include "top_view.h"
#include "top_events.h"
#include "top_setup.h"
#include "top_smaps.h"
#include "top_text.h"
#include "top_ui.h"

#define HEADER_LINES	6		/* above the column titles */
#define EVENT_LINES	6		/* the events pane: title and 5 events */
#define DETAIL_LINES	10		/* the detail pane (Enter, l) */
/* Processes asked of the aggregator for the cluster view (largest RSS). */
#define TOP_CLUSTER_ROWS	1000

static void on_quit_signal(int sig)
{
	top_quit_signal = sig;
}

/* A crash must not leave the terminal raw: restore it, then die of it. */
static void on_crash_signal(int sig)
{
	endwin();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_signals(void)
{
	static const int quit_sigs[] = { SIGINT, SIGTERM, SIGHUP };
	static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,
					  SIGABRT };
	struct sigaction sa = { 0 };
	size_t i;

	sa.sa_handler = on_quit_signal;
	for (i = 0; i < sizeof(quit_sigs) / sizeof(quit_sigs[0]); i++)
		sigaction(quit_sigs[i], &sa, NULL);
	sa.sa_handler = on_crash_signal;
	sa.sa_flags = SA_RESETHAND;
	for (i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
		sigaction(crash_sigs[i], &sa, NULL);
}

/*
 * Colours as htop's: the memory meter's used (green), buffers (blue) and
 * cache (yellow), swap (red), column titles black on green, the growth
 * flag red.  Off with -C, NO_COLOR, or a terminal without colours: then
 * the meters draw used as '|' and buffers and cache as '#', and the
 * titles and the selection are in reverse video.
 */
enum {
	PAIR_USED = 1, PAIR_BUFFERS, PAIR_CACHE, PAIR_SWAP, PAIR_TITLES,
	PAIR_FLAG, PAIR_TAGGED,
};

static bool colour;

static void colours_init(bool mono)
{
	colour = !mono && has_colors() && start_color() == OK;
	if (!colour)
		return;
	use_default_colors();
	init_pair(PAIR_USED, COLOR_GREEN, -1);
	init_pair(PAIR_BUFFERS, COLOR_BLUE, -1);
	init_pair(PAIR_CACHE, COLOR_YELLOW, -1);
	init_pair(PAIR_SWAP, COLOR_RED, -1);
	init_pair(PAIR_TITLES, COLOR_BLACK, COLOR_GREEN);
	init_pair(PAIR_FLAG, COLOR_RED, -1);
	init_pair(PAIR_TAGGED, COLOR_YELLOW, -1);
}

/* A tagged row: bold yellow as htop's, bold without colours. */
static attr_t tagged_attr(void)
{
	return colour ? COLOR_PAIR(PAIR_TAGGED) | A_BOLD : A_BOLD;
}

/*
 * Titles: black on green; without colours bold and underlined, since the
 * selection bar is in reverse video and a bar on the first row under
 * reversed titles read as one block.
 */
static attr_t titles_attr(void)
{
	return colour ? COLOR_PAIR(PAIR_TITLES) : A_BOLD | A_UNDERLINE;
}

/*
 * Spaces from the cursor to the end of row y, in the attributes on (a
 * title or the bar across the whole width); none past it when the text
 * filled the row and the cursor went on to the next.
 */
static void pad_row(int y)
{
	int x;

	for (x = getcurx(stdscr); x < COLS && getcury(stdscr) == y; x++)
		addch(' ');
}

/* s at the cursor, cut to cells screen cells (addnstr() counts bytes). */
static void add_cells(const char *s, int cells)
{
	size_t used;

	if (cells > 0)
		addnstr(s, top_text_fit(s, cells, &used));
}

static void titles_on(void)
{
	attron(titles_attr());
}

static void titles_off(void)
{
	attroff(titles_attr());
}

struct ui {
	struct top_table tb;
	struct top_view view;
	struct top_view_opts vo;
	struct top_events ev;
	double delay;
	bool paused, help, events;
	size_t help_top;		/* the help's first line on screen */
	bool smaps;			/* PSS and USS of the rows on screen */
	size_t scroll;
	/* the selection bar: a row of the view, which follows its process
	 * (by pid) from refresh to refresh, as htop's does */
	size_t sel;
	pid_t sel_pid;			/* 0: none yet */
	/* Left/Right: characters scrolled sideways through every column;
	 * 0: the columns that fit the terminal */
	size_t hscroll;
	bool cmdline;			/* c: the command line after the columns */
	struct top_detail detail;	/* Enter, l: in place of the events */
	struct top_leak leak;		/* s: memtrack-leak on a process */
	struct top_layout layout;	/* the columns and their order (F2) */
	const char *toprc;		/* F2 saves there */
	char user_name[32];
	char message[128];		/* on the status line: see show_message */
	double message_until;		/* 0: not drawn yet */
	/* the cluster view (A): NULL until first shown */
	struct top_cluster *cluster;
	const char *cluster_server;	/* --cluster; NULL: the config's */
	bool cluster_view;
	struct top_cluster_snap cs;	/* the latest answer, a copy */
	double next;			/* when the next sample is due */
	int err;			/* a refresh's failure: the end */
	struct top_redraw redraw;	/* a prompt's: the screen goes on */
	/*
	 * tagged processes (Space, c; U untags), by pid, sorted: k and F9
	 * signal them instead of the selected one; a process gone from the
	 * table loses its tag
	 */
	pid_t *tags;
	size_t ntags, tags_cap;
};

static const char *const sort_titles[] = {
	[TOP_SORT_RSS] = "RSS", [TOP_SORT_CPU] = "%CPU",
	[TOP_SORT_TIME] = "TIME", [TOP_SORT_PID] = "PID",
	[TOP_SORT_GROWTH] = "GROWTH", [TOP_SORT_ANON] = "ANON",
	[TOP_SORT_FILE] = "FILE", [TOP_SORT_SHMEM] = "SHMEM",
	[TOP_SORT_SWAP] = "SWAP", [TOP_SORT_VIRT] = "VIRT",
	[TOP_SORT_MINFLT] = "MINFLT/s", [TOP_SORT_MAJFLT] = "MAJFLT/s",
	[TOP_SORT_PGALLOC] = "PGALLOC/s", [TOP_SORT_KMALLOC] = "KMALLOC/s",
	[TOP_SORT_NONE] = "-",
};

#define MESSAGE_S	3

/* The index of pid in the tags, or where it would go. */
static size_t tag_index(const struct ui *u, pid_t pid)
{
	size_t lo = 0, hi = u->ntags, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (u->tags[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool is_tagged(const struct ui *u, pid_t pid)
{
	size_t i = tag_index(u, pid);

	return i < u->ntags && u->tags[i] == pid;
}

/* Tags or untags pid: -ENOMEM, or 0. */
static int tag_set(struct ui *u, pid_t pid, bool on)
{
	size_t i = tag_index(u, pid);
	bool there = i < u->ntags && u->tags[i] == pid;
	pid_t *t;

	if (on == there)
		return 0;
	if (!on) {
		memmove(&u->tags[i], &u->tags[i + 1],
			(u->ntags - i - 1) * sizeof(*u->tags));
		u->ntags--;
		return 0;
	}
	if (u->ntags == u->tags_cap) {
		t = realloc(u->tags, (u->tags_cap ? 2 * u->tags_cap : 16) *
			    sizeof(*t));
		if (!t)
			return -ENOMEM;
		u->tags = t;
		u->tags_cap = u->tags_cap ? 2 * u->tags_cap : 16;
	}
	memmove(&u->tags[i + 1], &u->tags[i],
		(u->ntags - i) * sizeof(*u->tags));
	u->tags[i] = pid;
	u->ntags++;
	return 0;
}

/* After a sample: the tags of processes that are gone dropped. */
static void tags_prune(struct ui *u)
{
	size_t i, j, k = 0;
	bool *live;

	if (!u->ntags)
		return;
	live = calloc(u->ntags, sizeof(*live));
	if (!live)
		return;
	for (j = 0; j < u->tb.n; j++) {
		i = tag_index(u, u->tb.rows[j].t.pid);
		if (i < u->ntags && u->tags[i] == u->tb.rows[j].t.pid)
			live[i] = true;
	}
	for (i = 0; i < u->ntags; i++)
		if (live[i])
			u->tags[k++] = u->tags[i];
	u->ntags = k;
	free(live);
}

/*
 * One part of a meter: n cells of c, or with colours of '|' in the part's
 * colour (pair 0: the empty rest, blank either way).
 */
static void meter_part(int n, int pair, char c)
{
	bool paint = colour && pair;

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

static void toggle_group(struct ui *u, enum top_group g)
{
	u->vo.group = u->vo.group == g ? TOP_GROUP_NONE : g;
	u->scroll = 0;
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
		 u->tb.n, sort_titles[u->vo.sort],
		 u->vo.reverse ? " (rev)" : "", u->delay);
	add_cells(line, COLS);
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
		add_cells(line, COLS);
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

/* memtrack-leak's interval: the refresh delay, a second at least. */
static double leak_interval(const struct ui *u)
{
	return u->delay < 1 ? 1 : u->delay;
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
			titles_on();
		add_cells(lines[i], COLS);
		if (!i) {
			pad_row(y + i);
			titles_off();
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
	titles_on();
	printw("EVENTS newest first%s%s", u->ev.status[0] ? " - " : "",
	       u->ev.status);
	pad_row(y);
	titles_off();
	for (i = 0; i < EVENT_LINES - 1; i++) {
		move(y + 1 + i, 0);
		clrtoeol();
		line = top_events_line(&u->ev, i);
		if (line)
			add_cells(line, COLS);
	}
}

/* The growth flag of a leak suspect in red, where the row put it. */
static void flag_colour(const struct top_row *r, const char *line, int y)
{
	const char *f;
	size_t x;

	if (!colour || !r->growing)
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
	add_cells(f, COLS - (int)x);
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
		len = top_format_row(r, line, size, cols, &u->layout);
	else
		len = top_format_header(line, size, cols, &u->layout);
	if (len > size - 1)
		len = size - 1;
	if (u->cmdline) {
		/* after the last column's whole width: a flag longer than its
		 * title does not run into the command line */
		cells = top_text_cells(line, len);
		while (cells < (size_t)top_columns_cells(cols, &u->layout) &&
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

static void draw_table(struct ui *u)
{
	unsigned int show = top_table_show(&u->tb, u->smaps);
	enum top_group g = u->vo.group;
	/* what the view is about stays on a narrow terminal */
	uint64_t must = top_column_bits(NULL, u->vo.sort) |
			(g == TOP_GROUP_CGROUP ?
			 top_column_bits("CGROUP", TOP_SORT_NONE) |
			 top_column_bits("LIMIT", TOP_SORT_NONE) : 0) |
			(g == TOP_GROUP_CONTAINER ?
			 top_column_bits("CONTAINER", TOP_SORT_NONE) : 0) |
			(g == TOP_GROUP_CONTAINER || g == TOP_GROUP_POD ?
			 top_column_bits("POD", TOP_SORT_NONE) : 0) |
			(u->smaps ? top_column_bits("PSS", TOP_SORT_NONE) |
			 top_column_bits("USS", TOP_SORT_NONE) : 0);
	int width = u->cmdline ? COLS - CMDLINE_MIN : COLS;
	uint64_t allowed = top_columns_all(show) & top_layout_mask(&u->layout);
	uint64_t cols = u->hscroll ? allowed :
				     top_columns_fit(allowed, must & allowed, width);
	int y = HEADER_LINES, rows = LINES - HEADER_LINES - 1 - pane_lines(u);
	char line[1024];
	size_t i, hdr_len;
	bool tagged;

	hdr_len = top_format_header(line, sizeof(line), cols, &u->layout);
	if (u->hscroll >= hdr_len)
		u->hscroll = hdr_len ? hdr_len - 1 : 0;
	table_line(u, NULL, cols, line, sizeof(line));
	titles_on();
	move(y, 0);
	add_cells(line, COLS);
	pad_row(y);
	titles_off();
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
		tagged = !r->group && !r->thread && is_tagged(u, r->t.pid);
		if (u->scroll + i == u->sel) {
			attron(A_REVERSE | (tagged ? A_BOLD : 0));
			add_cells(line, COLS);
			pad_row(y + 1 + i);
			attroff(A_REVERSE | A_BOLD);
		} else if (tagged) {
			attron(tagged_attr());
			add_cells(line, COLS);
			attroff(tagged_attr());
			flag_colour(r, line, y + 1 + i);
		} else {
			add_cells(line, COLS);
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
	titles_on();
	move(y, 0);
	add_cells(line, COLS);
	pad_row(y);
	titles_off();
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
		add_cells(line, COLS);
	}
	for (; (int)shown < rows; shown++) {
		move(y + 1 + shown, 0);
		clrtoeol();
	}
}

/* The aggregator is asked as often as the screen is refreshed. */
static int cluster_interval_ms(const struct ui *u)
{
	return u->delay < 0.5 ? 500 : u->delay > 5 ? 5000 :
	       (int)(u->delay * 1000);
}

static void toggle_cluster(struct ui *u)
{
	char err[256];
	int e;

	if (u->cluster_view) {
		u->cluster_view = false;
		return;
	}
	if (!u->cluster) {
		u->cluster = top_cluster_new(u->cluster_server, NULL,
					     TOP_CLUSTER_ROWS, err,
					     sizeof(err));
		if (!u->cluster) {
			snprintf(u->message, sizeof(u->message),
				 "cluster view: %.100s", err);
			return;
		}
	}
	e = top_cluster_start(u->cluster, cluster_interval_ms(u));
	if (e) {
		snprintf(u->message, sizeof(u->message), "cluster view: %s",
			 strerror(-e));
		return;
	}
	u->cluster_view = true;
	u->scroll = 0;
}

static const char *const help_text[] = {
	"memtrack-top keys",
	"",
	"  q F10      quit",
	"  M          sort by RSS       P  by %CPU       N  by PID",
	"  T          by TIME, only where a TIME column can show it",
	"  < >        sort by the column left / right of the current one",
	"  F6         sort by: a menu of the columns (Up Down, Enter, Esc)",
	"  I          reverse the order",
	"  / F3       search: the selection to the first command holding the text",
	"             as it is typed (any case); F3 the next, Shift-F3 the previous",
	"  \\ F4       filter as it is typed: commands holding the text (any case);",
	"             pod=, namespace=, container=TEXT: by that name; Esc clears",
	"  u          only one user's processes; empty clears",
	"  H          threads under their process",
	"  K          kernel threads too (hidden at start)",
	"  Enter      the selected process's memory: split, counters, maps, RSS history",
	"  l          the selected process's open files",
	"  t F5       process tree",
	"  p          one row per program (all its processes summed)",
	"  W          the full command line of each process, after the columns",
	"  A          cluster view: all nodes' processes, from the aggregator",
	"             (--cluster HOST:PORT, else memtrackd.conf's); p: per program",
	"  g          one row per cgroup (its processes summed; LIMIT: memory.max)",
	"  G          one row per container, then per pod, then per process",
	"  e          events pane: OOM kills, reclaim stalls, RSS and growth alerts",
	"  X          PSS and USS columns (smaps_rollup of the rows on screen)",
	"  Z          pause / resume",
	"  space      tag / untag the selected process (and move down one)",
	"  c          tag the selected process and every process under it",
	"  U          untag all",
	"  d          refresh interval (0.1..3600 s)",
	"  s          memtrack-leak on the selected process: its top stacks in the pane",
	"  Up Down PgUp PgDn Home End  move the selection bar",
	"  Left Right scroll sideways through every column",
	"  F2 S C     setup: columns, their order, sort key, delay (F10 saves, Esc cancels)",
	"  k F9       a signal to the tagged processes, else the selected one (a menu, y)",
	"  F7 F8      nice - / + of the selected process;  r  renice to a value",
	"  h ? F1     this help: Up Down PgUp PgDn Home End scroll, q Esc h close",
	"",
};

/* The help's lines: the keys, then the flag's two with their settings. */
#define HELP_LINES	(MT_ARRAY_SIZE(help_text) + 2)

static void help_line(const struct top_table *tb, size_t i, char *buf,
		      size_t len)
{
	if (i < MT_ARRAY_SIZE(help_text))
		snprintf(buf, len, "%s", help_text[i]);
	else if (i == MT_ARRAY_SIZE(help_text))
		snprintf(buf, len,
			 "FLAG LEAK?+RATE/s: RSS's low point rose in each quarter of the last %.0f s,",
			 tb->growth.window);
	else
		snprintf(buf, len,
			 "  by %.0f bytes/s or more (--growth-window, --growth-min-rate)",
			 tb->growth.min_rate);
}

/* The lines the help can show: all but the last row, which says where. */
static size_t help_rows(void)
{
	return LINES > 1 ? (size_t)LINES - 1 : 1;
}

/* Scrolls the help by d lines, kept within it. */
static void help_scroll(struct ui *u, long d)
{
	size_t max = HELP_LINES > help_rows() ? HELP_LINES - help_rows() : 0;

	if (d < 0)
		u->help_top = (size_t)-d > u->help_top ? 0 : u->help_top + d;
	else
		u->help_top += (size_t)d;
	if (u->help_top > max)
		u->help_top = max;
}

static void draw_help(struct ui *u)
{
	size_t rows = help_rows(), i;
	char line[160];

	help_scroll(u, 0);
	erase();
	for (i = 0; i < rows && u->help_top + i < HELP_LINES; i++) {
		help_line(&u->tb, u->help_top + i, line, sizeof(line));
		move((int)i, 0);
		add_cells(line, COLS);
	}
	snprintf(line, sizeof(line),
		 "help: lines %zu-%zu of %zu; Up Down PgUp PgDn Home End scroll, q Esc h close",
		 u->help_top + 1, u->help_top + i, (size_t)HELP_LINES);
	titles_on();
	move(LINES - 1, 0);
	add_cells(line, COLS);
	pad_row(LINES - 1);
	titles_off();
}

/* A key while the help is open: true if it closes it. */
static bool help_key(struct ui *u, int c)
{
	long page = (long)help_rows();

	switch (c) {
	case 'q': case 27: case 'h': case '?': case KEY_F(1): case KEY_F(10):
		return true;
	case KEY_UP: help_scroll(u, -1); break;
	case KEY_DOWN: help_scroll(u, 1); break;
	case KEY_PPAGE: help_scroll(u, -page); break;
	case KEY_NPAGE: case ' ': help_scroll(u, page); break;
	case KEY_HOME: u->help_top = 0; break;
	case KEY_END: help_scroll(u, (long)HELP_LINES); break;
	default: break;
	}
	return false;
}

static void draw(struct ui *u)
{
	if (u->help) {
		draw_help(u);
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

/*
 * A line typed on the status line, the screen refreshed behind it: true
 * on Enter (buf may be empty), false on Esc.
 */
static bool prompt(struct ui *u, const char *what, char *buf, size_t len)
{
	return top_prompt(5, what, buf, len, &u->redraw);
}

static void ask_delay(struct ui *u)
{
	char buf[32], *end;
	double d;

	if (!prompt(u, "delay (seconds): ", buf, sizeof(buf)) || !buf[0])
		return;
	d = strtod(buf, &end);
	if (*end || end == buf || !isfinite(d) || d < 0.1 || d > 3600)
		snprintf(u->message, sizeof(u->message),
			 "not a delay from 0.1 to 3600 s: %s", buf);
	else
		u->delay = d;
	if (u->cluster_view)
		top_cluster_start(u->cluster, cluster_interval_ms(u));
}

static void ask_user(struct ui *u)
{
	char buf[32];
	struct passwd *pw;

	if (!prompt(u, "user (empty: all): ", buf, sizeof(buf)))
		return;
	if (!buf[0]) {
		u->vo.by_user = false;
		return;
	}
	pw = getpwnam(buf);
	if (!pw) {
		snprintf(u->message, sizeof(u->message), "no such user: %s", buf);
		return;
	}
	u->vo.by_user = true;
	u->vo.uid = pw->pw_uid;
	snprintf(u->user_name, sizeof(u->user_name), "%s", buf);
}

/*
 * F4 and \: htop's incremental filter.  The list narrows as the text is
 * typed (in the command, any case; pod=, namespace=, container=: in that
 * name); it starts from the filter there is, Enter keeps it and Esc
 * clears it, as htop's.
 */
static void filter_changed(void *arg, const char *buf)
{
	struct ui *u = arg;

	snprintf(u->vo.filter, sizeof(u->vo.filter), "%s", buf);
	u->scroll = 0;
}

static void ask_filter(struct ui *u)
{
	const struct top_live live = { .changed = filter_changed, .arg = u };
	char buf[sizeof(u->vo.filter)];

	memcpy(buf, u->vo.filter, sizeof(buf));
	if (!top_prompt_live(5, "Filter: ", buf, sizeof(buf), &u->redraw,
			     &live))
		filter_changed(u, "");
}

/*
 * F3 and /: htop's incremental search.  As the text is typed the selection
 * goes to the first row whose command holds it (any case); F3 to the next
 * one, Shift-F3 to the one before (round the list); Enter and Esc leave
 * the selection where it is.
 */
struct search {
	struct ui *u;
	char text[64];
	bool found;
};

/*
 * The selection to the first match from row from on, by step (+1, -1),
 * round the list: false if none.
 */
static bool search_from(struct ui *u, const char *text, size_t from,
			int step)
{
	long n = (long)u->view.n, i, k;

	for (k = 0; k < n; k++) {
		i = ((long)from + step * k) % n;
		if (i < 0)
			i += n;
		if (strcasestr(u->view.rows[i].t.comm, text)) {
			u->sel = (size_t)i;
			u->sel_pid = u->view.rows[i].t.pid;
			return true;
		}
	}
	return false;
}

static void search_changed(void *arg, const char *buf)
{
	struct search *s = arg;

	snprintf(s->text, sizeof(s->text), "%s", buf);
	s->found = !buf[0] || search_from(s->u, buf, 0, 1);
}

static bool search_key(void *arg, int c)
{
	struct search *s = arg;
	size_t n = s->u->view.n;

	if (c != KEY_F(3) && c != KEY_F(15))	/* F3, Shift-F3 */
		return false;
	if (s->text[0] && n)
		s->found = search_from(s->u, s->text, c == KEY_F(3) ?
				       s->u->sel + 1 : s->u->sel + n - 1,
				       c == KEY_F(3) ? 1 : -1);
	return true;
}

static const char *search_note(void *arg)
{
	const struct search *s = arg;

	return s->found ? NULL : "  (not found)";
}

static void ask_search(struct ui *u)
{
	struct search s = { .u = u, .found = true };
	const struct top_live live = {
		.changed = search_changed, .key = search_key,
		.note = search_note, .arg = &s,
	};
	char buf[sizeof(s.text)] = "";

	if (u->cluster_view) {
		snprintf(u->message, sizeof(u->message),
			 "the cluster view has no selection: \\ or F4 filters it");
		return;
	}
	top_prompt_live(5, "Search: ", buf, sizeof(buf), &u->redraw, &live);
}

/*
 * T: by TIME, as htop's, only where a column shows it (a sort by what the
 * screen cannot show leaves the rows in an order no one can check).
 */
static void sort_if_shown(struct ui *u, enum top_sort sort, const char *title)
{
	unsigned int show = top_table_show(&u->tb, u->smaps);
	size_t i;

	for (i = 0; i < top_nr_columns; i++)
		if (top_columns[i].sort == sort &&
		    (top_columns[i].needs & show) == top_columns[i].needs) {
			u->vo.sort = sort;
			return;
		}
	snprintf(u->message, sizeof(u->message),
		 "no %s column to sort by (F6: the columns that sort)", title);
}

/* < and >: the sortable column left or right of the current one. */
static void next_sort(struct ui *u, int dir)
{
	int i, cur = -1, n = (int)u->layout.n;
	const struct top_column *c;

	for (i = 0; i < n; i++)
		if (top_columns[u->layout.col[i]].sort == u->vo.sort)
			cur = i;
	if (cur < 0)
		cur = dir > 0 ? -1 : n;
	for (i = cur + dir; i >= 0 && i < n; i += dir) {
		c = &top_columns[u->layout.col[i]];
		if (c->sort == TOP_SORT_NONE ||
		    (c->needs & TOP_SHOW_MODULE && !u->tb.si.module))
			continue;
		u->vo.sort = c->sort;
		return;
	}
}

/*
 * F6: htop's sort-by menu, in a box at the top left: every column that
 * sorts (the module's counters only with the module), the current one
 * chosen; Up Down Home End choose, Enter sorts by it, Esc cancels.
 */
static void sort_menu(struct ui *u)
{
	int idx[TOP_MAX_COLUMNS], n = 0, sel = 0, i, c;
	const struct top_column *col;
	WINDOW *win;

	for (i = 0; i < (int)top_nr_columns && n < TOP_MAX_COLUMNS; i++) {
		col = &top_columns[i];
		if (col->sort == TOP_SORT_NONE ||
		    (col->needs & TOP_SHOW_MODULE && !u->tb.si.module))
			continue;
		if (col->sort == u->vo.sort)
			sel = n;
		idx[n++] = i;
	}
	win = newwin(n + 3, 26, 1, 1);
	if (!win)
		return;
	keypad(win, TRUE);
	wtimeout(win, -1);
	for (;;) {
		werase(win);
		box(win, 0, 0);
		mvwprintw(win, 0, 2, " Sort by ");
		for (i = 0; i < n; i++) {
			if (i == sel)
				wattron(win, A_REVERSE);
			mvwprintw(win, 1 + i, 2, "%-22s", top_columns[idx[i]].title);
			if (i == sel)
				wattroff(win, A_REVERSE);
		}
		mvwprintw(win, n + 1, 2, "Enter: sort  Esc: back");
		wrefresh(win);
		c = wgetch(win);
		if (c == KEY_UP && sel > 0)
			sel--;
		else if (c == KEY_DOWN && sel < n - 1)
			sel++;
		else if (c == KEY_HOME || c == KEY_PPAGE)
			sel = 0;
		else if (c == KEY_END || c == KEY_NPAGE)
			sel = n - 1;
		else if (c == '\n' || c == '\r' || c == KEY_ENTER)
			break;
		else if (c == 27 || c == 'q' || c == KEY_F(10) || c == ERR ||
			 top_quit_signal)
			sel = -1;
		if (sel < 0)
			break;
	}
	delwin(win);
	touchwin(stdscr);
	if (sel >= 0)
		u->vo.sort = top_columns[idx[sel]].sort;
}

/* After a refresh or a new view: the selected process's row again. */
static void follow_selection(struct ui *u)
{
	size_t i;

	for (i = 0; u->sel_pid && i < u->view.n; i++)
		if (u->view.rows[i].t.pid == u->sel_pid &&
		    !u->view.rows[i].group) {
			u->sel = i;
			return;
		}
	if (u->sel >= u->view.n)
		u->sel = u->view.n ? u->view.n - 1 : 0;
	u->sel_pid = u->view.n ? u->view.rows[u->sel].t.pid : 0;
}

static void move_selection(struct ui *u, long by)
{
	long s = (long)u->sel + by;

	/* the cluster view has no selection: its list scrolls */
	if (u->cluster_view) {
		s = (long)u->scroll + by;
		u->scroll = s < 0 ? 0 : (size_t)s;
		return;
	}
	if (s >= (long)u->view.n)
		s = (long)u->view.n - 1;
	if (s < 0)
		s = 0;
	u->sel = (size_t)s;
	u->sel_pid = u->view.n ? u->view.rows[u->sel].t.pid : 0;
}

/* The selected process for k, F7, F8, r: NULL (and why) if none. */
static const struct top_row *selected(struct ui *u)
{
	const struct top_row *r;

	if (u->cluster_view) {
		snprintf(u->message, sizeof(u->message),
			 "the cluster view's processes are other machines'");
		return NULL;
	}
	if (u->sel >= u->view.n)
		return NULL;
	r = &u->view.rows[u->sel];
	if (r->group) {
		snprintf(u->message, sizeof(u->message),
			 "a row of %u processes: select one process", r->group);
		return NULL;
	}
	return r;
}

/* k, F9: a signal to the tagged processes, else to the selected one. */
static void signal_selected(struct ui *u)
{
	const struct top_row *r;
	const char *comm = "";
	pid_t *pids;
	size_t i;

	if (!u->ntags) {
		r = selected(u);
		if (r)
			top_action_signal(&r->t.pid, 1, r->t.comm, u->message,
					  sizeof(u->message));
		return;
	}
	if (u->cluster_view) {
		selected(u);	/* says why not */
		return;
	}
	/* a copy: the menu and the kills work on the list as it is now */
	pids = malloc(u->ntags * sizeof(*pids));
	if (!pids) {
		snprintf(u->message, sizeof(u->message), "out of memory");
		return;
	}
	memcpy(pids, u->tags, u->ntags * sizeof(*pids));
	for (i = 0; u->ntags == 1 && i < u->tb.n; i++)
		if (u->tb.rows[i].t.pid == pids[0])
			comm = u->tb.rows[i].t.comm;
	top_action_signal(pids, u->ntags, comm, u->message,
			  sizeof(u->message));
	free(pids);
}

/*
 * Space: tags or untags the selected process and moves the bar down one,
 * as htop's; c: tags it and every process under it (children, theirs...).
 */
static void tag_selected(struct ui *u, bool children)
{
	const struct top_row *r = selected(u);
	pid_t *fam;
	size_t n = 1, cap, i, j;

	if (!r)
		return;
	if (r->thread) {
		snprintf(u->message, sizeof(u->message),
			 "a thread: tag its process");
		return;
	}
	if (!children) {
		if (tag_set(u, r->t.pid, !is_tagged(u, r->t.pid)))
			snprintf(u->message, sizeof(u->message), "out of memory");
		move_selection(u, 1);
		return;
	}
	/*
	 * the processes under it, breadth first, from the whole table (at
	 * most all of it, should a reading of /proc have made a loop)
	 */
	cap = u->tb.n + 1;
	fam = malloc(cap * sizeof(*fam));
	if (!fam) {
		snprintf(u->message, sizeof(u->message), "out of memory");
		return;
	}
	fam[0] = r->t.pid;
	for (i = 0; i < n; i++)
		for (j = 0; j < u->tb.n && n < cap; j++)
			if (u->tb.rows[j].t.ppid == fam[i] &&
			    u->tb.rows[j].t.pid != fam[i])
				fam[n++] = u->tb.rows[j].t.pid;
	for (i = 0; i < n; i++)
		if (tag_set(u, fam[i], true)) {
			snprintf(u->message, sizeof(u->message),
				 "out of memory");
			break;
		}
	free(fam);
}

static void renice_selected(struct ui *u, int delta)
{
	const struct top_row *r = selected(u);

	if (r)
		top_action_renice(r->t.pid, r->t.comm, delta, u->message,
				  sizeof(u->message), &u->redraw);
}

/* s: memtrack-leak on the selected process, or stopped. */
static void leak_selected(struct ui *u)
{
	const struct top_row *r;
	int err;

	if (u->detail.kind == TOP_DETAIL_LEAK) {
		top_leak_stop(&u->leak);
		u->detail.kind = TOP_DETAIL_NONE;
		return;
	}
	r = selected(u);
	if (!r)
		return;
	err = top_leak_start(&u->leak, r->t.pid, leak_interval(u));
	if (err) {
		snprintf(u->message, sizeof(u->message), "memtrack-leak: %s",
			 strerror(-err));
		return;
	}
	u->detail.kind = TOP_DETAIL_LEAK;
}

/* Another pane in its place stops memtrack-leak. */
static void detail(struct ui *u, enum top_detail_kind kind)
{
	top_leak_stop(&u->leak);
	top_detail_toggle(&u->detail, kind);
}

/* F2: the setup screen edits the layout, the sort key and the delay. */
static void setup(struct ui *u)
{
	struct top_toprc rc = {
		.layout = u->layout, .sort = u->vo.sort, .delay = u->delay,
	};

	if (!top_setup_run(&rc, u->toprc, u->message, sizeof(u->message)))
		return;		/* cancelled */
	u->layout = rc.layout;
	u->vo.sort = rc.sort;
	u->delay = rc.delay;
	u->hscroll = 0;
}

/* One key; false to quit. */
static bool key(struct ui *u, int c)
{
	int page = LINES - HEADER_LINES - 1;

	if (u->help) {
		u->help = !help_key(u, c);
		return true;
	}
	switch (c) {
	case 'q': case KEY_F(10):
		return false;
	case 'M': u->vo.sort = TOP_SORT_RSS; break;
	case 'P': u->vo.sort = TOP_SORT_CPU; break;
	case 'T': sort_if_shown(u, TOP_SORT_TIME, "TIME"); break;
	case 'N': u->vo.sort = TOP_SORT_PID; break;
	case '<': next_sort(u, -1); break;
	case '>': case '.': next_sort(u, 1); break;
	case KEY_F(6): sort_menu(u); break;
	case 'I': u->vo.reverse = !u->vo.reverse; break;
	case '/': case KEY_F(3): ask_search(u); break;
	case '\\': case KEY_F(4): ask_filter(u); break;
	case 'u': ask_user(u); break;
	case 'H': u->vo.threads = !u->vo.threads; break;
	case 'K': u->vo.kthreads = !u->vo.kthreads; break;
	case '\r': case '\n': case KEY_ENTER:
		detail(u, TOP_DETAIL_MEMORY);
		break;
	case 'l': detail(u, TOP_DETAIL_FILES); break;
	case 's': leak_selected(u); break;
	case KEY_F(2): case 'S': case 'C': setup(u); break;
	case 't': case KEY_F(5): u->vo.tree = !u->vo.tree; break;
	case 'p': toggle_group(u, TOP_GROUP_PROGRAM); break;
	case 'g': toggle_group(u, TOP_GROUP_CGROUP); break;
	case 'G':
		/* per container, per pod, per process */
		toggle_group(u, u->vo.group == TOP_GROUP_CONTAINER ?
			     TOP_GROUP_POD : u->vo.group == TOP_GROUP_POD ?
			     TOP_GROUP_NONE : TOP_GROUP_CONTAINER);
		break;
	case 'e': u->events = !u->events; break;
	case 'W': u->cmdline = !u->cmdline; break;
	case ' ': tag_selected(u, false); break;
	case 'c': tag_selected(u, true); break;
	case 'U': u->ntags = 0; break;
	case 'A': toggle_cluster(u); break;
	case 'X': u->smaps = !u->smaps; break;
	case 'Z': u->paused = !u->paused; break;
	case 'd': ask_delay(u); break;
	case 'h': case '?': case KEY_F(1): u->help = true; u->help_top = 0; break;
	case 'k': case KEY_F(9): signal_selected(u); break;
	case KEY_F(7): renice_selected(u, -1); break;
	case KEY_F(8): renice_selected(u, 1); break;
	case 'r': renice_selected(u, 0); break;
	case KEY_RIGHT: u->hscroll += 8; break;
	case KEY_LEFT: u->hscroll = u->hscroll > 8 ? u->hscroll - 8 : 0; break;
	case KEY_UP: move_selection(u, -1); break;
	case KEY_DOWN: move_selection(u, 1); break;
	case KEY_PPAGE: move_selection(u, -page); break;
	case KEY_NPAGE: move_selection(u, page); break;
	case KEY_HOME: move_selection(u, -(long)u->view.n); break;
	case KEY_END: move_selection(u, (long)u->view.n); break;
	default: break;	/* KEY_RESIZE and others: just redraw */
	}
	return true;
}

/*
 * One pass of the screen: a sample when one is due, the events and the
 * cluster's answer read, the view rebuilt and drawn.  0, or the error
 * that ends the program.
 */
static int frame(struct ui *u)
{
	bool sampled = false;
	int err;

	if (!u->paused && mt_mono_s() >= u->next) {
		err = top_table_refresh(&u->tb);
		if (err)
			return err;
		top_events_growth(&u->ev, &u->tb);
		tags_prune(u);
		u->next = mt_mono_s() + u->delay;
		sampled = true;
	}
	top_events_read(&u->ev);
	if (u->cluster_view) {
		top_cluster_snap_free(&u->cs);
		top_cluster_latest(u->cluster, &u->cs);
	}
	err = top_view_build(&u->view, &u->tb, &u->vo);
	if (err)
		return err;
	follow_selection(u);
	if (sampled)
		top_detail_sample(&u->detail, u->sel < u->view.n ?
				  &u->view.rows[u->sel] : NULL);
	draw(u);
	top_leak_poll(&u->leak);
	return 0;
}

/* A prompt's redraw: frames go on until one fails (then it ends after). */
static void prompt_frame(void *arg)
{
	struct ui *u = arg;

	if (!u->err)
		u->err = frame(u);
}

int top_ui_run(struct mt_source *src, const struct top_ui_opts *o)
{
	struct ui u = { .delay = o->delay, .events = true, .smaps = o->smaps,
			.cluster_server = o->cluster };
	double left;
	int c, err = 0;

	u.vo.sort = o->sort;
	u.vo.kthreads = o->kthreads;
	u.vo.group = o->group;
	if (o->filter)
		snprintf(u.vo.filter, sizeof(u.vo.filter), "%s", o->filter);
	u.vo.pids = o->pids;
	u.vo.npids = o->npids;
	u.vo.by_user = o->by_user;
	u.vo.uid = o->uid;
	if (o->user)
		snprintf(u.user_name, sizeof(u.user_name), "%s", o->user);
	u.layout = o->layout;
	u.toprc = o->toprc;
	top_table_init(&u.tb, src, &o->growth);
	top_events_open(&u.ev, src);
	install_signals();
	/* characters only (not LC_NUMERIC: the figures keep their '.'):
	 * ncursesw then draws UTF-8 comms and the tree's box drawing */
	setlocale(LC_CTYPE, "");
	top_columns_utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	if (!initscr()) {
		fprintf(stderr, "memtrack-top: cannot set up the terminal\n");
		return 1;
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	top_prompt_init();
	colours_init(o->mono);
	u.redraw = (struct top_redraw){ prompt_frame, &u, 250 };
	if (o->cluster)
		toggle_cluster(&u);
	while (!top_quit_signal) {
		err = frame(&u);
		if (err)
			break;
		left = u.paused ? 1 : u.next - mt_mono_s();
		/* the cluster's answers come from a thread, memtrack-leak's
		 * reports from a pipe: look soon again */
		if ((u.cluster_view || u.leak.target) && left > 0.25)
			left = 0.25;
		timeout(left > 0 ? (int)(left * 1000) + 1 : 0);
		c = getch();
		if (c != ERR) {
			u.message[0] = '\0';
			u.message_until = 0;
			if (!key(&u, c))
				break;
		}
		err = u.err;
		if (err)
			break;
	}
	endwin();
	top_leak_stop(&u.leak);
	top_cluster_free(u.cluster);
	top_cluster_snap_free(&u.cs);
	top_view_free(&u.view);
	top_table_free(&u.tb);
	free(u.tags);
	if (err) {
		fprintf(stderr, "memtrack-top: %s\n",
			err == -ENOMEM ? "out of memory" : mt_errmsg());
		return 1;
	}
	return top_quit_signal ? 128 + top_quit_signal : 0;
}
