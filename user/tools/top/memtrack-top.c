// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-top: a memory-first top.  Who holds memory, who grows, who
 * allocates and who faults, from memtrack.ko when it is loaded and from
 * /proc otherwise.  This file only starts it: the command line
 * (top_opts.c), toprc's settings, then the batch loop (top_run.c) or the
 * interactive view (top_ui.c).
 *
 *   memtrack-top [-d SECONDS] [-o SORT] [--pss] [--proc]       interactive
 *                [--cluster HOST:PORT|prometheus:URL]
 *   memtrack-top -b [-n ITERATIONS] [-d SECONDS] [--json] [-o SORT]
 *                   [--top ROWS] [--pss] [--proc]
 *   memtrack-top -b --cluster HOST:PORT|prometheus:URL [-n ITERATIONS]
 *                   [-d SECONDS] [--json] [--top ROWS]
 */
#include <err.h>
#include <locale.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>
#include "top_columns.h"
#include "top_opts.h"
#include "top_run.h"
#include "top_toprc.h"
#include "top_ui.h"

/*
 * toprc's settings: its columns (the batch's too), and for the interactive
 * view its sort and delay where -o and -d did not set them.  -1 after
 * saying why the file is wrong.
 */
static int load_toprc(const struct top_opts *o, struct top_ui_opts *uo)
{
	static char path[4096];
	struct top_toprc rc = { .sort = o->sort, .delay = o->delay };
	char err[4200];

	top_layout_default(&rc.layout);
	uo->layout = rc.layout;
	if (top_toprc_path(path, sizeof(path)))
		return 0;
	uo->toprc = path;
	if (top_toprc_load(path, &rc, err, sizeof(err))) {
		warnx("%s", err);
		return -1;
	}
	uo->layout = rc.layout;
	if (rc.has_delay && !o->delay_set)
		uo->delay = rc.delay;
	if (rc.has_sort && !o->sort_set)
		uo->sort = rc.sort;
	return 0;
}

/*
 * -o KEY of a column the module counts, on /proc: no row has a value
 * there, so the sort would order nothing; refused as a key that is no
 * column is (toprc's sort, a saved choice, is kept for when it can show).
 */
static int check_sort_source(const struct top_opts *o,
			     const struct mt_source *src)
{
	const struct top_column *c = &top_columns[o->sort];

	if (!o->sort_set || o->cluster || !(c->needs & TOP_SHOW_MODULE) ||
	    mt_source_is_module(src))
		return 0;
	warnx("-o %s: counted by the memtrack module only, and %s", o->sort_key,
	      o->proc ? "--proc reads /proc" :
	      "it is not loaded (modprobe memtrack)");
	return 2;
}

int main(int argc, char **argv)
{
	struct mt_source *src;
	struct top_ui_opts uo;
	struct top_opts o;
	int rc;

	mt_set_progname(argv, "memtrack-top");
	rc = top_opts_parse(argc, argv, &o);
	if (rc)
		return rc;
	/* the terminal's character set: text is fitted in screen cells
	 * (top_text.c), -b's columns too */
	setlocale(LC_CTYPE, "");
	/*
	 * Every refresh builds arrays of megabytes (the dump's rows): keep
	 * their pages in the heap rather than unmap them and fault them in,
	 * zeroed, again the next time.
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	if (!o.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		warnx("not a terminal: use -b for batch output");
		return 2;
	}
	if (!o.batch && o.iterations) {
		warnx("-n needs -b");
		return 2;
	}
	if (o.batch && o.cluster)
		return top_run_cluster_batch(&o);
	uo = (struct top_ui_opts){
		.delay = o.delay, .sort = o.sort, .smaps = o.smaps,
		.kthreads = o.kthreads, .group = o.group,
		.filter = o.filter, .pids = o.pids, .npids = o.npids,
		.by_user = o.by_user, .uid = o.uid, .user = o.user,
		.cluster = o.cluster, .growth = o.growth,
		/* https://no-color.org: set and not empty */
		.mono = o.mono || (getenv("NO_COLOR") &&
				   getenv("NO_COLOR")[0]),
	};
	if (load_toprc(&o, &uo))
		return 2;
	src = mt_source_open(o.proc ? MT_SOURCE_PROC : 0);
	if (!src) {
		warnx("%s", mt_errmsg());
		return 1;
	}
	rc = check_sort_source(&o, src);
	if (!rc && o.batch)
		rc = top_run_batch(src, &o, &uo.layout);
	else if (!rc)
		rc = top_ui_run(src, &uo);
	mt_source_close(src);
	free(o.pids);
	return rc;
}
