// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top's interactive view (ncursesw): the loop (a sample when one
 * is due, the screen drawn, a key read) and what each key does; the
 * terminal is given back on quit, on SIGINT/SIGTERM/SIGHUP and on a crash
 * signal (top_term.c).
 */
#include <err.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include "top_cluster.h"
#include "top_prompt.h"
#include "top_setup.h"
#include "top_ui_int.h"

static void toggle_group(struct ui *u, enum top_group g)
{
	u->vo.group = u->vo.group == g ? TOP_GROUP_NONE : g;
	u->scroll = 0;
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
		u->help = !top_help_key(u, c);
		return true;
	}
	switch (c) {
	case 'q': case KEY_F(10):
		return false;
	case 'M': top_sort_if_shown(u, "rss"); break;
	case 'P': top_sort_if_shown(u, "cpu_pct"); break;
	case 'T': top_sort_if_shown(u, "time"); break;
	case 'N': top_sort_if_shown(u, "pid"); break;
	case '<': top_next_sort(u, -1); break;
	case '>': case '.': top_next_sort(u, 1); break;
	case KEY_F(6): top_sort_menu(u); break;
	case 'I': u->vo.reverse = !u->vo.reverse; break;
	case '/': case KEY_F(3): top_ask_search(u); break;
	case '\\': case KEY_F(4): top_ask_filter(u); break;
	case 'u': top_ask_user(u); break;
	case 'H': u->vo.threads = !u->vo.threads; break;
	case 'K': u->vo.kthreads = !u->vo.kthreads; break;
	case '\r': case '\n': case KEY_ENTER:
		top_detail_show(u, TOP_DETAIL_MEMORY);
		break;
	case 'l': top_detail_show(u, TOP_DETAIL_FILES); break;
	case 's': top_leak_selected(u); break;
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
	case ' ': top_tag_selected(u, false); break;
	case 'c': top_tag_selected(u, true); break;
	case 'U': u->ntags = 0; break;
	case 'A': toggle_cluster(u); break;
	case 'X': u->smaps = !u->smaps; break;
	case 'Z': u->paused = !u->paused; break;
	case 'd':
		top_ask_delay(u);
		if (u->cluster_view)
			top_cluster_start(u->cluster, cluster_interval_ms(u));
		break;
	case 'h': case '?': case KEY_F(1): u->help = true; u->help_top = 0; break;
	case 'k': case KEY_F(9): top_signal_selected(u); break;
	case KEY_F(7): top_renice_selected(u, -1); break;
	case KEY_F(8): top_renice_selected(u, 1); break;
	case 'r': top_renice_selected(u, 0); break;
	case KEY_RIGHT: u->hscroll += 8; break;
	case KEY_LEFT: u->hscroll = u->hscroll > 8 ? u->hscroll - 8 : 0; break;
	case KEY_UP: top_move_selection(u, -1); break;
	case KEY_DOWN: top_move_selection(u, 1); break;
	case KEY_PPAGE: top_move_selection(u, -page); break;
	case KEY_NPAGE: top_move_selection(u, page); break;
	case KEY_HOME: top_move_selection(u, -(long)u->view.n); break;
	case KEY_END: top_move_selection(u, (long)u->view.n); break;
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
		top_tags_prune(u);
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
	top_follow_selection(u);
	if (sampled)
		top_detail_sample(&u->detail, u->sel < u->view.n ?
				  &u->view.rows[u->sel] : NULL);
	top_ui_draw(u);
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
	top_term_signals();
	/* characters only (not LC_NUMERIC: the figures keep their '.'):
	 * ncursesw then draws UTF-8 comms and the tree's box drawing */
	setlocale(LC_CTYPE, "");
	top_columns_utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	if (!initscr()) {
		warnx("cannot set up the terminal");
		return 1;
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	top_prompt_init();
	top_term_colours(o->mono);
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
		warnx("%s", err == -ENOMEM ? "out of memory" : mt_errmsg());
		return 1;
	}
	return top_quit_signal ? 128 + top_quit_signal : 0;
}
