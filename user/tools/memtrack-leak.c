// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak: find what a process allocates and does not free.
 *
 * Finds the allocator entry points of the target (libc, libstdc++), has
 * memtrack.ko probe them for that process (MEMTRACK_CMD_LEAK_ATTACH), and
 * every interval dumps the call stacks holding outstanding allocations:
 * the top N by bytes, with their growth since the previous report and the
 * frames symbolized (function, file:line, inlined frames).
 *
 * --fds does the same for file descriptors instead of memory: the calls
 * that open them and close() are probed, and a report lists the stacks
 * holding descriptors still open, by count.  -f follows forked children
 * (MEMTRACK_LEAK_F_CHILDREN): their stacks come in the same report, each
 * with its process id.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memtrack.h"
#include "leak_json.h"
#include "leak_mismatch.h"
#include "leak_modes.h"
#include "leak_opts.h"
#include "leak_wait.h"

static volatile sig_atomic_t stop;
static bool fds_mode;		/* --fds: stacks count descriptors */
static bool follow;		/* -f: children too, stacks show their pid */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* SIGINT, SIGTERM and SIGHUP set stop (flags: sigaction's sa_flags). */
static void catch_stop(int flags)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = flags };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* ---- growth: bytes per stack id at the previous report ------------------- */

struct prev {
	uint32_t id;
	uint64_t bytes;
};

static int cmp_prev(const void *a, const void *b)
{
	const struct prev *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* What a report ranks and grows by: bytes, or with --fds descriptors. */
static uint64_t metric(const struct mt_leak_stack *s)
{
	return fds_mode ? s->blocks : s->bytes;
}

static int cmp_bytes(const void *a, const void *b)
{
	const struct mt_leak_stack *x = a, *y = b;

	if (metric(x) != metric(y))
		return metric(x) < metric(y) ? 1 : -1;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

static int64_t growth_of(const struct prev *p, size_t n, const struct mt_leak_stack *s)
{
	struct prev key = { .id = s->stack_id };
	const struct prev *f = p ? bsearch(&key, p, n, sizeof(*p), cmp_prev) : NULL;

	return (int64_t)metric(s) - (f ? (int64_t)f->bytes : 0);
}

/* ---- output ---------------------------------------------------------------- */

static double age_s(uint64_t now_ns, uint64_t oldest_ns)
{
	return oldest_ns && now_ns > oldest_ns ? (now_ns - oldest_ns) / 1e9 : 0;
}

struct report {
	struct mt_preload *pre;		/* the in-process engine's state, or NULL */
	struct mt_scan_stack from;	/* --scan at the exit: from exit's caller */
	FILE *o;
	enum fmt fmt;
	enum mode mode;
	pid_t pid;
	struct mt_symbolizer *sym;
	unsigned int nr;		/* reports so far */
	uint32_t min_age_ms;		/* --min-age */
	size_t top;			/* --top: stacks shown */
	struct prev *prev;		/* the previous report's, sorted by id */
	size_t nprev;
	const char *ended;		/* the last report's: "exit", "exec" */
};

/* Folded: one frame's name; ';' and ' ' separate fields: replaced. */
static void folded_frame(FILE *o, uint64_t addr, const struct mt_sym_frame *f)
{
	const char *fn = f->function;
	char buf[NAME_MAX + 24];

	/* Unknown: the address in its object, the same in every run. */
	if (!fn)
		unknown_frame_name(buf, sizeof(buf), addr, f);
	for (fn = fn ? fn : buf; *fn; fn++)
		fputc(*fn == ';' || *fn == ' ' ? '_' : *fn, o);
}

/* Folded: a stack as one line "root;...;leaf COUNT". */
static void print_folded(struct report *r, const struct mt_leak_stack *s)
{
	/* root first: outermost return address, outer inline frame first */
	bool first = true;
	uint32_t j;

	for (j = s->nr_frames; j-- > 0;) {
		const struct mt_sym_frame *f;
		int k, nf = mt_sym_lookup(r->sym, s->frames[j], true, &f);

		for (k = nf; k-- > 0;) {
			fputs(first ? "" : ";", r->o);
			first = false;
			folded_frame(r->o, s->frames[j], &f[k]);
		}
	}
	fprintf(r->o, "%s %llu\n", first ? "[unknown]" : "",
		(unsigned long long)metric(s));
}

/* Text: frame lines; JSON: the members of a frames array. */
static void print_frames(struct report *r, const struct mt_leak_stack *s)
{
	stack_frames(r->o, r->fmt == FMT_JSON, r->sym, s);
}

/* JSON: the report object's members up to its stacks array, opened. */
static void json_header(struct report *r, const struct timespec *wall,
			size_t n, uint64_t total, uint64_t blocks)
{
	fprintf(r->o, "{\"time\":%lld.%03ld,\"pid\":%d,\"report\":%u,",
		(long long)wall->tv_sec, wall->tv_nsec / 1000000, (int)r->pid,
		r->nr);
	if (r->ended)
		fprintf(r->o, "\"ended\":\"%s\",", r->ended);
	if (fds_mode)
		fprintf(r->o, "\"total_fds\":%llu,\"nr_stacks\":%zu,\"fds\":[",
			(unsigned long long)blocks, n);
	else
		fprintf(r->o, "\"total_bytes\":%llu,\"total_blocks\":%llu,"
			"\"nr_stacks\":%zu,\"stacks\":[",
			(unsigned long long)total, (unsigned long long)blocks,
			n);
}

/* Text: the report's first line, at the local time t. */
static void text_header(struct report *r, time_t t, size_t n, size_t shown,
			uint64_t total, uint64_t blocks)
{
	const char *more = n > shown ? " (top ones shown)" : "";
	char tbuf[32], at[16] = "";
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(tbuf, sizeof(tbuf), "%F %T", &tm);
	if (r->ended)
		snprintf(at, sizeof(at), " at its %s", r->ended);
	if (fds_mode)
		fprintf(r->o, "%s pid %d report %u%s: %llu descriptors open, %zu stacks%s\n",
			tbuf, (int)r->pid, r->nr, at,
			(unsigned long long)blocks, n, more);
	else
		fprintf(r->o, "%s pid %d report %u%s: %llu bytes in %llu blocks outstanding, %zu stacks%s\n",
			tbuf, (int)r->pid, r->nr, at, (unsigned long long)total,
			(unsigned long long)blocks, n, more);
}

/* JSON: a stack's members up to its frames array, opened. */
static void stack_json(FILE *o, size_t i, const struct mt_leak_stack *s,
		       double age, int64_t growth)
{
	fprintf(o, "%s{\"stack_id\":%u,\"pid\":%d,", i ? "," : "",
		s->stack_id, (int)s->tgid);
	if (fds_mode)
		fprintf(o, "\"count\":%llu,", (unsigned long long)s->blocks);
	else
		fprintf(o, "\"bytes\":%llu,\"blocks\":%llu,",
			(unsigned long long)s->bytes,
			(unsigned long long)s->blocks);
	fprintf(o, "\"oldest_s\":%.3f,\"growth\":%lld,\"api\":", age,
		(long long)growth);
	mt_json_print(o, mt_leak_api_name(s->api));
	if (fds_mode)
		fputs(",\"frames\":[", o);
	else
		fprintf(o, ",\"mismatched\":%u,\"frames\":[", s->mismatched);
}

/* Text: a stack's first line, the i-th of the report (-f: its pid too). */
static void stack_text(FILE *o, size_t i, const struct mt_leak_stack *s,
		       double age, int64_t growth)
{
	if (fds_mode) {
		fprintf(o, "  #%zu %llu fds (%s)", i + 1,
			(unsigned long long)s->blocks,
			mt_leak_api_name(s->api));
		if (follow)
			fprintf(o, " pid %d", (int)s->tgid);
		fprintf(o, ", oldest %.1fs, growth %+lld\n", age,
			(long long)growth);
		return;
	}
	if (follow)
		fprintf(o, "  pid %d:\n", (int)s->tgid);
	fprintf(o, "  #%zu %llu bytes in %llu blocks (%s), oldest %.1fs, growth %+lld%s\n",
		i + 1, (unsigned long long)s->bytes,
		(unsigned long long)s->blocks, mt_leak_api_name(s->api), age,
		(long long)growth,
		s->mismatched ? ", MISMATCHED frees seen" : "");
}

/* The i-th stack of a report, in any format, now_ns being its time. */
static void print_stack(struct report *r, size_t i,
			const struct mt_leak_stack *s, uint64_t now_ns)
{
	int64_t growth = growth_of(r->prev, r->nprev, s);
	double age = age_s(now_ns, s->oldest_ns);

	if (r->fmt == FMT_FOLDED) {
		print_folded(r, s);
		return;
	}
	if (r->fmt == FMT_JSON)
		stack_json(r->o, i, s, age, growth);
	else
		stack_text(r->o, i, s, age, growth);
	print_frames(r, s);
	if (r->fmt == FMT_JSON)
		fputs("]}", r->o);
}

/*
 * v[0..n): stacks holding blocks, sorted; v[n..n+nother): stacks that are
 * there only for a mismatched free.
 */
static void print_report(struct report *r, struct mt_leak_stack *v, size_t n,
			 size_t nother)
{
	uint64_t now = mt_mono_ns(), total = 0, blocks = 0;
	size_t i, shown = n < r->top ? n : r->top;
	struct timespec wall;

	clock_gettime(CLOCK_REALTIME, &wall);
	for (i = 0; i < n; i++) {
		total += v[i].bytes;
		blocks += v[i].blocks;
	}
	r->nr++;
	if (r->fmt == FMT_JSON)
		json_header(r, &wall, n, total, blocks);
	else if (r->fmt == FMT_TEXT)
		text_header(r, wall.tv_sec, n, shown, total, blocks);
	for (i = 0; i < shown; i++)
		print_stack(r, i, &v[i], now);
	if (r->fmt == FMT_JSON)
		fputs("]", r->o);
	if (r->fmt != FMT_FOLDED)
		print_mismatches(r->o, r->fmt == FMT_JSON, r->sym, v, n + nother);
	if (r->fmt == FMT_JSON)
		fputs("}\n", r->o);
	else if (r->fmt == FMT_TEXT)
		fputc('\n', r->o);
	fflush(r->o);
}

/* Stacks holding blocks first, in dump order; returns how many. */
static size_t split_leaks(struct mt_leak_stack *v, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (v[i].blocks) {
			struct mt_leak_stack t;

			if (i != k) {
				t = v[i];
				memmove(&v[k + 1], &v[k], (i - k) * sizeof(*v));
				v[k] = t;
			}
			k++;
		}
	return k;
}

/* One kind per report: memory or descriptors.  Returns how many are left. */
static size_t keep_kind(struct mt_leak_stack *v, size_t n)
{
	size_t i, j;

	for (i = 0, j = 0; i < n; i++)
		if (mt_leak_api_is_fd(v[i].api) == fds_mode)
			v[j++] = v[i];
	return j;
}

/* The metric per stack of v[0..n), for the next report's growth. */
static void keep_growth(struct report *r, const struct mt_leak_stack *v,
			size_t n)
{
	struct prev *np = malloc((n ? n : 1) * sizeof(*np));
	size_t i;

	if (!np)
		return;
	for (i = 0; i < n; i++) {
		np[i].id = v[i].stack_id;
		np[i].bytes = metric(&v[i]);
	}
	qsort(np, n, sizeof(*np), cmp_prev);
	free(r->prev);
	r->prev = np;
	r->nprev = n;
}

/* --scan, --by-lib: reports of their own (leak_scan.c, leak_bylib.c). */
static int mode_report(struct mt_handle *h, struct report *r,
		       const struct mt_leak_stack *v, size_t n, size_t nother)
{
	struct mode_out mo = { .o = r->o, .json = r->fmt == FMT_JSON,
			       .pid = r->pid, .nr = r->nr, .sym = r->sym,
			       .from = r->from.tid ? &r->from : NULL,
			       .pre = r->pre, .ended = r->ended };
	struct memtrack_leak_block *kb;
	size_t nb;
	int err;

	if (r->mode == MODE_SCAN) {
		err = r->pre ? mt_preload_blocks(r->pre, r->pid, &kb, &nb) :
			       mt_leak_blocks(h, r->pid, &kb, &nb);
		if (!err) {
			err = scan_report(&mo, kb, nb, v, n + nother);
			free(kb);
		}
	} else {
		/* --by-lib: also the stacks with no block left (their calls). */
		err = bylib_report(&mo, v, n + nother);
	}
	r->nr = mo.nr;
	return err < 0 ? err : 0;
}

/*
 * One report: dump, split off the mismatch-only stacks, print, keep the
 * bytes per stack for the next report's growth.
 */
static int take_report(struct mt_handle *h, struct report *r)
{
	struct mt_leak_stack *v;
	size_t n, nother;
	int err;

	/* --by-lib counts the calls of stacks whose blocks are all freed too. */
	err = r->pre ? mt_preload_stacks(r->pre, r->min_age_ms,
					 r->mode == MODE_BYLIB, &v, &n) :
		       mt_leak_stacks(h, r->pid, r->min_age_ms,
				      r->mode == MODE_BYLIB, &v, &n);
	if (err < 0)
		return err;
	n = keep_kind(v, n);
	nother = n - split_leaks(v, n);
	n -= nother;
	qsort(v, n, sizeof(*v), cmp_bytes);
	if (r->mode != MODE_STACKS)
		err = mode_report(h, r, v, n, nother);
	else
		print_report(r, v, n, nother);
	if (!err)
		keep_growth(r, v, n);
	free(v);
	return err;
}

/* The session is gone with its process (exit, exec) or with the module. */
static bool session_gone(int err)
{
	return err == -ESRCH || err == -ENOENT;
}

/*
 * What an unloaded module's requests fail with varies (the family id is
 * unknown, or the request raced the unload): ask for the family anew.
 */
static bool module_gone(void)
{
	struct mt_handle *t = mt_open(0);

	if (!t)
		return true;
	mt_close(t);
	return false;
}

/*
 * A request that failed while rmmod runs: the module's sessions end before
 * its family goes, and what the request fails with meanwhile varies (seen on
 * 5.10: EPROTONOSUPPORT with the family still there).  Wait up to a second
 * for the family to go before calling the error the tool's own.
 */
static bool module_going(void)
{
	struct timespec ms100 = { 0, 100000000 };
	int i;

	for (i = 0; i < 10; i++) {
		if (module_gone())
			return true;
		nanosleep(&ms100, NULL);
	}
	return module_gone();
}

static volatile sig_atomic_t fwd_sig;

/*
 * With a command: signals sent to memtrack-leak go to the program, which
 * then exits (and is reported on) as it would have.  Signals from the
 * terminal (SI_KERNEL) already reached it: it is in the same process group.
 */
static void on_signal_fwd(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code != SI_KERNEL)
		fwd_sig = sig;
}

static int wait_status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/* Let a launched program run on untraced and reap it: its exit status. */
static int run_finish(pid_t pid)
{
	int st;

	if (mt_run_finish(pid, &st) < 0) {
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		return 1;
	}
	return wait_status_code(st);
}

/* ---- the session: set up, run, undone --------------------------------- */

/* What main sets up for the tracing, and undoes at the end. */
struct session {
	const struct leak_opts *opt;
	struct report r;
	struct mt_leak_probe *probes;
	size_t nprobes;
	struct mt_unwinder *unw;
	struct mt_preload *pre;		/* -- COMMAND in-process */
	struct mt_inject *inj;		/* -p in-process: its state is r.pre */
	struct mt_handle *h;
	bool attached;			/* the module's probes are on r.pid */
	bool running;			/* a launched command, not reaped yet */
};

/* The program mapped objects (or may have): send their unwind tables. */
static int resync(void *arg)
{
	struct session *s = arg;
	int err = mt_unwinder_sync(s->unw, s->h);

	if (err < 0 && err != -ESRCH)
		fprintf(stderr, "%s: warning: unwind tables: %s\n", prog, mt_errmsg());
	return err;
}

/* -o FILE, or standard output.  0, or -1 with a message. */
static int open_output(struct session *s)
{
	const char *output = s->opt->output;

	if (!output) {
		s->r.o = stdout;
		return 0;
	}
	s->r.o = fopen(output, "we");
	if (!s->r.o) {
		fprintf(stderr, "%s: %s: %s\n", prog, output, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * From before the fork: a signal while the tracer sets up is forwarded
 * once the program runs, instead of killing the tracer and leaving the
 * program to run on untraced.
 */
static void forward_signals(void)
{
	struct sigaction sa = { 0 };

	sa.sa_sigaction = on_signal_fwd;
	sa.sa_flags = SA_SIGINFO;	/* no SA_RESTART: wake waitpid */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
}

/*
 * -- COMMAND: start it, stopped before its first allocation.  0, or the
 * exit status to end with at once (nothing to undo).
 */
static int launch(struct session *s)
{
	int st;

	forward_signals();
	/* Before any socket is open: the program must not inherit one. */
	if (mt_run_start(s->opt->cmd, &s->r.pid, &st) < 0) {
		if (st)
			return wait_status_code(st);
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		return 1;
	}
	s->running = true;
	return 0;
}

/* -p PID: the process exists.  0, or 1 to end with at once. */
static int find_process(struct session *s)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/%ld", s->opt->pid);
	if (access(proc, F_OK)) {
		fprintf(stderr, "%s: no such process: %ld\n", prog, s->opt->pid);
		return 1;
	}
	s->r.pid = (pid_t)s->opt->pid;
	return 0;
}

/* What to probe: the allocators, or with --fds the descriptor calls. */
static int find_probes(struct session *s)
{
	pid_t pid = s->r.pid;
	int err;

	if (s->opt->cmd)
		err = mt_run_find_probes(pid, &s->probes, &s->nprobes);
	else if (fds_mode)
		err = mt_leak_find_fd_probes(pid, &s->probes, &s->nprobes);
	else
		err = mt_leak_find_probes(pid, &s->probes, &s->nprobes);
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", prog,
			err == -EACCES || err == -EPERM ?
			"permission denied: tracing the process needs the rights of ptrace" :
			mt_errmsg());
		return -1;
	}
	if (!s->nprobes) {
		fprintf(stderr, "%s: %d maps no %s this tool knows (libc%s)\n",
			prog, (int)pid, fds_mode ? "descriptor call" : "allocator",
			fds_mode ? "" : ", libstdc++");
		return -1;
	}
	return 0;
}

/* Open the module, have it probe the process, send the unwind tables. */
static int attach(struct session *s)
{
	s->h = mt_open(0);
	if (!s->h) {
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		return -1;
	}
	/* A command's libraries are mapped only at its exit report. */
	if (!s->opt->cmd) {
		s->r.sym = mt_sym_open(s->r.pid);
		if (!s->r.sym) {
			fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
			return -1;
		}
	}

	/*
	 * -p: from the attach on, a stop signal ends the session with a detach
	 * (report_loop() sees stop first thing).  Until report_loop() caught
	 * them, one sent while the tables went in was lost where it was
	 * ignored (a job started with & by a script: SIGINT and SIGQUIT
	 * ignored) or killed the tool.  SA_RESTART: the requests below go on.
	 */
	if (!s->opt->cmd)
		catch_stop(SA_RESTART);
	/* Built before the attach: the session waits for them unarmed. */
	s->unw = mt_unwinder_new(s->r.pid);
	if (!s->unw || mt_unwinder_sync(s->unw, NULL) < 0)
		fprintf(stderr, "%s: warning: unwind tables: %s\n", prog, mt_errmsg());
	if (mt_leak_attach(s->h, s->r.pid, s->probes, s->nprobes,
			   MEMTRACK_LEAK_F_ARM_LATER |
			   (follow ? MEMTRACK_LEAK_F_CHILDREN : 0)) < 0) {
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		return -1;
	}
	s->attached = true;
	/* The tables go in before the probes: no stack is taken without. */
	if (s->unw && mt_unwinder_sync(s->unw, s->h) < 0)
		fprintf(stderr, "%s: warning: unwind tables: %s\n", prog, mt_errmsg());
	if (mt_leak_arm(s->h, s->r.pid) < 0) {
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		return -1;
	}
	return 0;
}

/*
 * At the exit: the stack pointer of the frame that called exit() (glibc's
 * exit, or __run_exit_handlers it may jump to), from which the exiting
 * thread tid's stack holds the program's roots.  pcs, sps: its n frames,
 * innermost first (from the in-process engine's state, or a walk of the
 * thread stopped at its exit).
 */
static void exit_caller(struct report *r, pid_t tid, const uint64_t *pcs,
			const uint64_t *sps, int n)
{
	const struct mt_sym_frame *f;
	int i, k, nf;

	r->from.tid = tid;
	r->from.sp = 0;
	for (i = 0; i + 1 < n; i++) {
		nf = mt_sym_lookup(r->sym, pcs[i], true, &f);
		for (k = 0; k < nf; k++)
			if (f[k].function &&
			    (!strcmp(f[k].function, "exit") ||
			     !strcmp(f[k].function, "__GI_exit") ||
			     !strcmp(f[k].function, "__run_exit_handlers")))
				r->from.sp = sps[i + 1];
	}
	if (!r->from.sp)
		r->from.tid = 0;
}

/* --scan at the command's exit stop: its stack from exit's caller up. */
static void exit_stop_caller(struct session *s)
{
	uint64_t pcs[MEMTRACK_LEAK_MAX_FRAMES], sps[MEMTRACK_LEAK_MAX_FRAMES];
	int n = -1;

	if (s->unw)
		n = mt_unwinder_walk(s->unw, s->r.pid, pcs, sps,
				     MEMTRACK_LEAK_MAX_FRAMES);
	if (n < 0)
		fprintf(stderr, "%s: warning: the exit's stack: %s\n", prog,
			s->unw ? mt_errmsg() : "no unwind tables");
	exit_caller(&s->r, s->r.pid, pcs, sps, n);
	/* the program is in its exit stop, ours: the scan leaves it there */
	s->r.from.traced = true;
	if (!s->r.from.tid)
		s->r.from = (struct mt_scan_stack){ s->r.pid, 0, true };
}

/* At the command's exit stop: its report, then the detach. */
static void final_report(struct session *s)
{
	int err;

	s->r.sym = mt_sym_open(s->r.pid);
	if (s->r.sym && s->opt->mode == MODE_SCAN)
		exit_stop_caller(s);
	if (!s->r.sym)
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
	else if (take_report(s->h, &s->r) < 0)
		fprintf(stderr, "%s: final report: %s\n", prog,
			module_going() ? "memtrack.ko was unloaded" :
			mt_errmsg());
	if ((err = mt_leak_detach(s->h, s->r.pid)) < 0 && !session_gone(err))
		fprintf(stderr, "%s: detach: %s\n", prog, mt_errmsg());
	s->attached = false;
}

/* -- COMMAND: run it to its exit, report once; its exit status. */
static int run_command(struct session *s)
{
	const char *name = s->opt->cmd[0];
	pid_t pid = s->r.pid;
	int err, st;

	err = mt_run_until_exit(pid, &fwd_sig,
				s->unw ? &(struct mt_run_sync){ resync, s } : NULL,
				&st);
	s->running = err != 0;
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		return 1;
	}
	if (err == MT_RUN_EXECED) {
		fprintf(stderr, "%s: %s exec'd another program: the session ended with it; no report\n",
			prog, name);
		s->attached = false;
		s->running = false;
		return run_finish(pid);
	}
	if (!err) {
		fprintf(stderr, "%s: %s ended without stopping at its exit (%s %d): no report\n",
			prog, name, WIFSIGNALED(st) ? "signal" : "status",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		s->attached = false;
		return wait_status_code(st);
	}
	final_report(s);
	/* Its exit status is ours, report or not: errors are on stderr. */
	s->running = false;
	return run_finish(pid);
}

/* ---- -- COMMAND in-process: libmemtrack-preload.so ---------------------- */

/*
 * The library beside the tool: ../lib/ in the build tree, ../lib/memtrack/
 * where make install puts it; MEMTRACK_PRELOAD_LIB names another.
 */
static int preload_lib(char *buf, size_t len)
{
	static const char *const rel[] = {
		"/../lib/libmemtrack-preload.so",
		"/../lib/memtrack/libmemtrack-preload.so",
	};
	const char *env = getenv("MEMTRACK_PRELOAD_LIB");
	char exe[PATH_MAX], *slash;
	ssize_t n;
	size_t i;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	for (i = 0; i < MT_ARRAY_SIZE(rel); i++) {
		if (snprintf(buf, len, "%s%s", exe, rel[i]) >= (int)len)
			continue;
		if (!access(buf, R_OK))
			return 0;
	}
	fprintf(stderr, "%s: libmemtrack-preload.so is not installed beside %s (set MEMTRACK_PRELOAD_LIB, or use --engine uprobe)\n",
		prog, exe);
	return -1;
}

/* --scan at the exit the library waits in: the stack it noted there. */
static void preload_exit_caller(struct report *r)
{
	uint64_t pcs[MEMTRACK_LEAK_MAX_FRAMES], sps[MEMTRACK_LEAK_MAX_FRAMES];
	pid_t tid = 0;
	int n;

	n = mt_preload_exit_stack(r->pre, &tid, pcs, sps,
				  MEMTRACK_LEAK_MAX_FRAMES);
	exit_caller(r, tid, pcs, sps, n);
}

/* The report at the program's end (--scan: its exit), from its state. */
static void preload_report(struct session *s)
{
	struct memtrack_leak_stats st;

	mt_sym_close(s->r.sym);
	s->r.sym = mt_preload_symbolizer(s->pre);
	if (s->r.sym && s->opt->mode == MODE_SCAN)
		preload_exit_caller(&s->r);
	if (!s->r.sym)
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
	else if (take_report(NULL, &s->r) < 0)
		fprintf(stderr, "%s: final report: %s\n", prog, mt_errmsg());
	mt_preload_stats(s->pre, &st);
	if (st.dropped_allocs || st.dropped_stacks)
		fprintf(stderr, "%s: warning: %llu allocations and %llu stacks not recorded: the state was full\n",
			prog, (unsigned long long)st.dropped_allocs,
			(unsigned long long)st.dropped_stacks);
}

/* -- COMMAND, in-process: run it to its end, report once; its status. */
static int run_preload(struct session *s)
{
	uint32_t flags = (follow ? MT_PRELOAD_F_FOLLOW : 0) |
			 (fds_mode ? MT_PRELOAD_F_FDS : 0) |
			 (s->opt->mode == MODE_SCAN ? MT_PRELOAD_F_EXIT_WAIT : 0);
	bool scanned = false;
	char lib[PATH_MAX];
	int err, st;

	if (preload_lib(lib, sizeof(lib)) < 0)
		return 1;
	s->pre = mt_preload_new(flags);
	if (!s->pre) {
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		return 1;
	}
	forward_signals();
	if (mt_preload_start(s->pre, lib, s->opt->cmd, &s->r.pid, &st) < 0) {
		if (st)
			return wait_status_code(st);
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		return 1;
	}
	s->r.pre = s->pre;
	/* --scan: at its exit, after its handlers, the program waits for it */
	while ((err = mt_preload_wait(s->pre, s->r.pid, &fwd_sig, &st)) ==
	       MT_PRELOAD_AT_EXIT) {
		preload_report(s);
		scanned = true;
		mt_preload_resume(s->pre);
	}
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		return 1;
	}
	if (mt_preload_execed(s->pre)) {
		fprintf(stderr, "%s: %s exec'd another program: the session ended with it; no report\n",
			prog, s->opt->cmd[0]);
		return wait_status_code(st);
	}
	if (s->opt->mode == MODE_SCAN && !scanned)
		fprintf(stderr, "%s: %s ended without reaching its exit (%s %d): no scan\n",
			prog, s->opt->cmd[0], WIFSIGNALED(st) ? "signal" : "status",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	else if (!scanned)
		preload_report(s);
	return wait_status_code(st);
}

/* ---- -p PID in-process: libmemtrack-preload.so injected -------------------- */

static int inject_ended(struct session *s, const char *what);

/* Whether pid is exiting: gone, or a zombie within a second. */
static bool exiting(pid_t pid)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (mt_task_exited(pid, pid))
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * -p with the injected engine: 0 attached; 1 to end with at once; 3 the
 * target exited meanwhile (its last report given); -1 to trace with
 * uprobes instead (a static program, seccomp refusing it).
 */
static int inject(struct session *s)
{
	uint32_t flags = (follow ? MT_PRELOAD_F_FOLLOW : 0) |
			 (fds_mode ? MT_PRELOAD_F_FDS : 0);
	struct mt_inject_stats st;
	char lib[PATH_MAX];
	int err;

	if (preload_lib(lib, sizeof(lib)) < 0)
		return 1;
	/*
	 * As attach() does: a stop signal from here on ends the session with
	 * a detach, once the attach is whole (inject_loop() sees stop first
	 * thing).  Its waits are bounded polls that go on after a handler.
	 */
	catch_stop(SA_RESTART);
	err = mt_inject_attach(s->r.pid, lib, flags, &s->inj, &st);
	if (err == -ENOEXEC || err == -EACCES) {
		fprintf(stderr, "%s: %s; tracing it with uprobes instead (--engine uprobe)\n",
			prog, mt_errmsg());
		return -1;
	}
	if (err) {
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		return 1;
	}
	s->r.pre = mt_inject_state(s->inj);
	mt_preload_live_fds(s->r.pre, fds_mode);
	s->r.sym = mt_sym_open(s->r.pid);
	if (!s->r.sym) {
		/* exiting since the attach (its maps going or gone): say so */
		if (exiting(s->r.pid))
			return inject_ended(s, "exit");
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		return 1;
	}
	fprintf(stderr, "%s: tracing %d in-process: libmemtrack-preload.so %s, %u calls redirected to it (%u threads stopped %.1f ms); a report every %.1fs, Ctrl-C to stop\n",
		prog, (int)s->r.pid, st.loaded ? "injected" : "reused",
		st.slots, st.threads, st.stop_ns / 1e6,
		s->opt->interval_ms / 1000.0);
	return 0;
}

/*
 * The injected target exited or exec'd: the state is the tool's, as the
 * process left it.  A last report of what it held (not a scan: the memory
 * went with it), with the objects its library saw.  3.
 */
static int inject_ended(struct session *s, const char *what)
{
	long pid = s->opt->pid;
	bool exec = !strcmp(what, "exec");

	if (s->opt->mode == MODE_SCAN) {
		fprintf(stderr, "%s: process %ld %s: its memory went with it, so no scan at the end (a command run under memtrack-leak is scanned at its exit)\n",
			prog, pid, exec ? "exec'd another program" : "exited");
		return 3;
	}
	fprintf(stderr, "%s: process %ld %s; what it held at its %s:\n",
		prog, pid, exec ? "exec'd another program" : "exited", what);
	mt_sym_close(s->r.sym);
	s->r.sym = mt_preload_symbolizer(s->r.pre);
	s->r.ended = what;
	if (!s->r.sym || take_report(NULL, &s->r) < 0)
		fprintf(stderr, "%s: last report: %s\n", prog, mt_errmsg());
	return 3;
}

/* -p injected: a report every interval, as report_loop() does. */
static int inject_loop(struct session *s)
{
	const struct leak_opts *o = s->opt;
	const char *why = NULL;
	int err;

	catch_stop(0);
	while (!stop && (!o->count || s->r.nr < o->count)) {
		err = wait_inject(s->inj, s->r.pid, o->interval_ms, &stop, &why);
		if (stop)
			break;
		if (err == WAIT_ENDED)
			return inject_ended(s, why);
		if (err == WAIT_GONE) {
			fprintf(stderr, "%s: process %ld: the session ended in it (it closed memtrack's descriptors)\n",
				prog, o->pid);
			return 3;
		}
		if (err < 0 || take_report(NULL, &s->r) < 0) {
			fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
			return 1;
		}
	}
	return 0;
}

/* The slots restored, the library inert; rc, or 1 if that failed. */
static int inject_detach(struct session *s, int rc)
{
	struct mt_inject_stats st;

	if (rc != 3 && mt_inject_detach(s->inj, &st) < 0) {
		fprintf(stderr, "%s: detach: %s\n", prog, mt_errmsg());
		return rc ? rc : 1;
	}
	if (rc != 3 && s->r.fmt == FMT_TEXT)
		fprintf(stderr, "%s: detached from %d: %u calls given back (%u threads stopped %.1f ms)\n",
			prog, (int)s->r.pid, st.slots, st.threads,
			st.stop_ns / 1e6);
	return rc;
}

/* Whether -- COMMAND runs in-process: the default, unless it is static. */
static bool use_preload(const struct leak_opts *o)
{
	if (!o->cmd || o->engine != ENGINE_PRELOAD)
		return false;
	if (mt_program_is_static(o->cmd[0]) == 1) {
		fprintf(stderr, "%s: %s is statically linked: a preloaded library cannot reach it; tracing it with uprobes (--engine uprobe)\n",
			prog, o->cmd[0]);
		return false;
	}
	return true;
}

/*
 * Why the session of process pid is gone, on stderr.  An exit or exec
 * ends it with a last report instead; this is an unload (whose sessions go
 * a moment before its netlink family does) or a detach by someone else.
 */
/* Where the process runs, when it is in a container or pod. */
static void say_container(long pid)
{
	struct mt_container c;
	char what[600];

	if (mt_container_of_pid(pid, NULL, &c) <= 0)
		return;
	mt_container_describe(&c, what, sizeof(what));
	fprintf(stderr, "%s: %ld is in %s\n", prog, pid, what);
}

static void say_session_ended(long pid)
{
	if (module_going())
		fprintf(stderr, "%s: process %ld: the session ended: memtrack.ko was unloaded\n",
			prog, pid);
	else if (mt_task_exited((pid_t)pid, (pid_t)pid))
		fprintf(stderr, "%s: process %ld exited; its session ended with it\n",
			prog, pid);
	else
		fprintf(stderr, "%s: process %ld: the session ended (another process detached it)\n",
			prog, pid);
}

/*
 * -p PID: the process exited or exec'd; the module kept its tables as they
 * were then.  The last report, of what it held at that moment (the stack
 * report and --by-lib: a scan needs the memory, which went with it), and
 * the detach.  3: the session ended with its process.
 */
static int last_report(struct session *s, uint32_t why)
{
	const char *what = why == MEMTRACK_LEAK_ENDED_EXEC ? "exec" : "exit";
	long pid = s->opt->pid;
	int err;

	/* Its objects are gone, or another program's: no maps read again. */
	mt_sym_freeze(s->r.sym);
	if (s->opt->mode == MODE_SCAN) {
		fprintf(stderr, "%s: process %ld %s: its memory went with it, so no scan at the end (a command run under memtrack-leak is scanned at its exit)\n",
			prog, pid, why == MEMTRACK_LEAK_ENDED_EXEC ?
			"exec'd another program" : "exited");
	} else {
		fprintf(stderr, "%s: process %ld %s; what it held at its %s:\n",
			prog, pid, why == MEMTRACK_LEAK_ENDED_EXEC ?
			"exec'd another program" : "exited", what);
		s->r.ended = what;
		if (take_report(s->h, &s->r) < 0)
			fprintf(stderr, "%s: last report: %s\n", prog,
				module_going() ? "memtrack.ko was unloaded" :
				mt_errmsg());
	}
	err = mt_leak_detach(s->h, s->r.pid);
	if (err < 0 && !session_gone(err))
		fprintf(stderr, "%s: detach: %s\n", prog, mt_errmsg());
	s->attached = false;
	return 3;
}

/*
 * -p PID: a report every interval until a signal, -n reports, or the end
 * of the session (3, after a last report).
 */
static int report_loop(struct session *s)
{
	const struct leak_opts *o = s->opt;
	struct memtrack_leak_stats st;
	int err;

	catch_stop(0);
	if (s->r.fmt == FMT_TEXT)
		fprintf(stderr, "%s: tracing %ld: %zu probes; a report every %.1fs, Ctrl-C to stop\n",
			prog, o->pid, s->nprobes, o->interval_ms / 1000.0);

	while (!stop && (!o->count || s->r.nr < o->count)) {
		err = wait_report(s->h, s->r.pid, o->interval_ms, &stop, &st);
		if (stop)
			break;
		if (err == WAIT_ENDED)
			return last_report(s, st.ended);
		if (err < 0) {
			say_session_ended(o->pid);
			s->attached = false;
			return 3;
		}
		/*
		 * Objects mapped since (dlopen); their calls are unwound from
		 * now on.  A session gone (exit, exec, unload) is not a table's
		 * fault: the report below fails too and says why.
		 */
		err = s->unw ? mt_unwinder_sync(s->unw, s->h) : 0;
		if (err < 0 && !session_gone(err) && !module_gone())
			fprintf(stderr, "%s: warning: unwind tables: %s\n", prog, mt_errmsg());
		err = take_report(s->h, &s->r);
		if (err < 0 && (session_gone(err) || module_going())) {
			say_session_ended(o->pid);
			s->attached = false;
			return 3;
		}
		if (err < 0) {
			fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
			return 1;
		}
	}
	return 0;
}

/* Undo the session: rc, or 1 if the detach or closing -o FILE failed. */
static int finish(struct session *s, int rc)
{
	int err, st;

	if (s->attached && (err = mt_leak_detach(s->h, s->r.pid)) < 0 &&
	    !session_gone(err) && rc == 0) {
		fprintf(stderr, "%s: detach: %s\n", prog, mt_errmsg());
		rc = 1;
	}
	if (s->running) {
		/* Failed before it ran: it must not run untraced. */
		kill(s->r.pid, SIGKILL);
		waitpid(s->r.pid, &st, 0);
	}
	if (s->r.o && s->r.o != stdout && fclose(s->r.o)) {
		fprintf(stderr, "%s: %s: %s\n", prog, s->opt->output,
			strerror(errno));
		rc = 1;
	}
	if (s->inj)
		rc = inject_detach(s, rc);
	mt_inject_free(s->inj);
	free(s->r.prev);
	mt_unwinder_free(s->unw);
	mt_sym_close(s->r.sym);
	mt_leak_probes_free(s->probes, s->nprobes);
	mt_preload_free(s->pre);
	mt_close(s->h);
	return rc;
}

int main(int argc, char **argv)
{
	struct leak_opts opt;
	struct session s = { .opt = &opt };
	int rc;

	parse_args(&opt, argc, argv);
	fds_mode = opt.fds;
	follow = opt.follow;
	s.r = (struct report){ .fmt = opt.fmt, .mode = opt.mode,
			       .min_age_ms = (uint32_t)opt.min_age_ms,
			       .top = (size_t)opt.top };
	if (open_output(&s) < 0)
		return 1;
	if (use_preload(&opt))
		return finish(&s, run_preload(&s));
	if (opt.cmd && opt.fds) {
		fprintf(stderr, "%s: --fds with a command needs the preload engine\n",
			prog);
		return 1;
	}
	/* Up to here nothing is to undo: errors end at once. */
	rc = opt.cmd ? launch(&s) : find_process(&s);
	if (rc)
		return rc;
	if (opt.pid)
		say_container(opt.pid);
	if (opt.pid && opt.engine == ENGINE_INJECT) {
		rc = inject(&s);
		if (rc >= 0)
			return finish(&s, rc ? rc : inject_loop(&s));
		mt_inject_free(s.inj);
		s.inj = NULL;
	}
	if (find_probes(&s) < 0 || attach(&s) < 0)
		rc = 1;
	else
		rc = opt.cmd ? run_command(&s) : report_loop(&s);
	return finish(&s, rc);
}
