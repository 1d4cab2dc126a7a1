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
#include <getopt.h>
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
#include "leak_modes.h"

static const char *prog = "memtrack-leak";
static volatile sig_atomic_t stop;
static bool fds_mode;		/* --fds: stacks count descriptors */
static bool follow;		/* -f: children too, stacks show their pid */

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s -p PID [options]\n"
"       %s [options] -- COMMAND [ARGS...]\n"
"Report the call stacks of PID holding memory it allocated and has not freed,\n"
"or run COMMAND traced from its first allocation and report once, at its exit.\n"
"Blocks freed by the wrong API (new[] by delete, malloc by delete, ...) are\n"
"reported too, with the allocating and the freeing stack.\n"
"\n"
"  -p, --pid PID         process to trace (needs the rights of ptrace on it)\n"
"  -i, --interval SEC    seconds between reports (default 10)\n"
"  -n, --count COUNT     stop after COUNT reports (default: until Ctrl-C)\n"
"      --min-age SEC     only allocations at least SEC seconds old (default 0)\n"
"      --top N           stacks per report, by outstanding bytes (default 10)\n"
"  -j, --json            one JSON document per report\n"
"      --folded          folded stacks \"root;...;leaf BYTES\" per line (flame graphs)\n"
"      --scan            classify the outstanding blocks like valgrind memcheck:\n"
"                        definitely/indirectly/possibly lost, still reachable\n"
"                        (stops PID's threads with ptrace while it reads their\n"
"                        registers, stacks, data/bss, TLS and heap)\n"
"      --by-lib          outstanding bytes and allocator calls per calling\n"
"                        object (frames[0]'s ELF file) and API\n"
"      --fds             file descriptors still open instead of memory, by count\n"
"  -f, --follow-forks    trace the children PID forks too, until they exec\n"
"  -o, --output FILE     write reports to FILE instead of standard output\n"
"  -h, --help            this text\n"
"\n"
"Exit status: 0; 1 on errors; 2 on usage errors; 3 when the session ends\n"
"under -p (the process exited or exec'd, or memtrack.ko was unloaded).  With\n"
"COMMAND: the command's own exit status, or 128+N if signal N killed it (127:\n"
"it could not be run).  SIGTERM, SIGHUP, SIGINT and SIGQUIT sent to\n"
"memtrack-leak are passed on to COMMAND; -i and -n do not apply to it.\n"
"\n"
"--scan (-p only) knows only blocks allocated since the attach.  Older blocks may\n"
"hold pointers, so the whole [heap] outside known blocks counts as a root,\n"
"like data and bss: a block only an older, unreachable one points to shows\n"
"as reachable, never as lost.  Other anonymous mappings (older mmap-ed\n"
"blocks, other arenas) are not roots.\n", prog, prog);
}

static void die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	exit(2);
}

/* A positive decimal number of seconds (fractions allowed) -> ms. */
static long long parse_seconds(const char *s, const char *opt, bool zero_ok)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v != v || v < 0 || v > 1e9 ||
	    (!zero_ok && v * 1000 < 1)) {
		fprintf(stderr, "%s: %s: invalid number of seconds '%s'\n",
			prog, opt, s);
		fprintf(stderr, "Try '%s --help'.\n", prog);
		exit(2);
	}
	return (long long)(v * 1000 + 0.5);
}

static long parse_count(const char *s, const char *opt, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "%s: %s: invalid number '%s'\n", prog, opt, s);
		fprintf(stderr, "Try '%s --help'.\n", prog);
		exit(2);
	}
	return v;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

enum fmt { FMT_TEXT, FMT_JSON, FMT_FOLDED };
enum mode { MODE_STACKS, MODE_SCAN, MODE_BYLIB };

struct report {
	FILE *o;
	enum fmt fmt;
	enum mode mode;
	pid_t pid;
	struct mt_symbolizer *sym;
	unsigned int nr;
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

/* Text: frame lines; JSON: the members of a frames array. */
static void print_frames(struct report *r, const struct mt_leak_stack *s)
{
	stack_frames(r->o, r->fmt == FMT_JSON, r->sym, s);
}

/*
 * Like valgrind's "Mismatched free() / delete / delete []": per allocating
 * stack whose blocks were released by the wrong API, that stack and the
 * stack of the last such release.  Not in folded output (bytes only).
 */
static void print_mismatches(struct report *r, const struct mt_leak_stack *v,
			     size_t n)
{
	const struct mt_leak_stack *fs;
	size_t i, k, nr = 0;
	FILE *o = r->o;

	for (i = 0; i < n; i++)
		nr += v[i].mismatched > 0;
	if (r->fmt == FMT_FOLDED || (r->fmt == FMT_TEXT && !nr))
		return;
	if (r->fmt == FMT_JSON)
		fputs(",\"mismatches\":[", o);
	else
		fprintf(o, "  Mismatched free() / delete / delete []: %zu allocating stack%s\n",
			nr, nr == 1 ? "" : "s");
	for (i = 0, nr = 0; i < n; i++) {
		const struct mt_leak_stack *s = &v[i];

		if (!s->mismatched)
			continue;
		fs = NULL;
		for (k = 0; s->free_stack_id && k < n; k++)
			if (v[k].stack_id == s->free_stack_id)
				fs = &v[k];
		if (r->fmt == FMT_JSON) {
			fprintf(o, "%s{\"alloc_stack_id\":%u,\"alloc_api\":",
				nr++ ? "," : "", s->stack_id);
			mt_json_print(o, mt_leak_api_name(s->api));
			fputs(",\"free_api\":", o);
			mt_json_print(o, mt_leak_api_name(s->free_api));
			fprintf(o, ",\"count\":%u,\"free_stack_id\":%u,\"alloc_frames\":[",
				s->mismatched, fs ? fs->stack_id : 0);
			print_frames(r, s);
			fputs("],\"free_frames\":[", o);
			if (fs)
				print_frames(r, fs);
			fputs("]}", o);
			continue;
		}
		fprintf(o, "  ! %u block%s allocated by %s, freed by %s\n"
			"      allocated at:\n", s->mismatched,
			s->mismatched == 1 ? "" : "s", mt_leak_api_name(s->api),
			mt_leak_api_name(s->free_api));
		print_frames(r, s);
		fputs("      freed (last time) at:\n", o);
		if (fs)
			print_frames(r, fs);
		else
			fputs("        (stack not recorded)\n", o);
	}
	if (r->fmt == FMT_JSON)
		fputc(']', o);
}

/*
 * v[0..n): stacks holding blocks, sorted; v[n..n+nother): stacks that are
 * there only for a mismatched free.
 */
static void print_report(struct report *r, struct mt_leak_stack *v, size_t n,
			 size_t nother, size_t top, const struct prev *prev,
			 size_t nprev)
{
	uint64_t now = mono_ns(), total = 0, blocks = 0;
	size_t i, shown = n < top ? n : top;
	struct timespec wall;
	FILE *o = r->o;

	clock_gettime(CLOCK_REALTIME, &wall);
	for (i = 0; i < n; i++) {
		total += v[i].bytes;
		blocks += v[i].blocks;
	}
	r->nr++;
	if (r->fmt == FMT_JSON && fds_mode)
		fprintf(o, "{\"time\":%lld.%03ld,\"pid\":%d,\"report\":%u,"
			"\"total_fds\":%llu,\"nr_stacks\":%zu,\"fds\":[",
			(long long)wall.tv_sec, wall.tv_nsec / 1000000, (int)r->pid,
			r->nr, (unsigned long long)blocks, n);
	else if (r->fmt == FMT_JSON)
		fprintf(o, "{\"time\":%lld.%03ld,\"pid\":%d,\"report\":%u,"
			"\"total_bytes\":%llu,\"total_blocks\":%llu,\"nr_stacks\":%zu,"
			"\"stacks\":[",
			(long long)wall.tv_sec, wall.tv_nsec / 1000000, (int)r->pid,
			r->nr, (unsigned long long)total,
			(unsigned long long)blocks, n);
	else if (r->fmt == FMT_TEXT) {
		char tbuf[32];
		struct tm tm;

		localtime_r(&wall.tv_sec, &tm);
		strftime(tbuf, sizeof(tbuf), "%F %T", &tm);
		if (fds_mode)
			fprintf(o, "%s pid %d report %u: %llu descriptors open, %zu stacks%s\n",
				tbuf, (int)r->pid, r->nr,
				(unsigned long long)blocks, n,
				n > shown ? " (top ones shown)" : "");
		else
			fprintf(o, "%s pid %d report %u: %llu bytes in %llu blocks outstanding, %zu stacks%s\n",
				tbuf, (int)r->pid, r->nr,
				(unsigned long long)total,
				(unsigned long long)blocks, n,
				n > shown ? " (top ones shown)" : "");
	}
	for (i = 0; i < shown; i++) {
		const struct mt_leak_stack *s = &v[i];
		int64_t growth = growth_of(prev, nprev, s);
		uint32_t j;

		if (r->fmt == FMT_JSON && fds_mode) {
			fprintf(o, "%s{\"stack_id\":%u,\"pid\":%d,\"count\":%llu,"
				"\"oldest_s\":%.3f,\"growth\":%lld,\"api\":",
				i ? "," : "", s->stack_id, (int)s->tgid,
				(unsigned long long)s->blocks,
				age_s(now, s->oldest_ns), (long long)growth);
			mt_json_print(o, mt_leak_api_name(s->api));
			fputs(",\"frames\":[", o);
		} else if (r->fmt == FMT_JSON) {
			fprintf(o, "%s{\"stack_id\":%u,\"pid\":%d,\"bytes\":%llu,\"blocks\":%llu,"
				"\"oldest_s\":%.3f,\"growth\":%lld,\"api\":",
				i ? "," : "", s->stack_id, (int)s->tgid,
				(unsigned long long)s->bytes,
				(unsigned long long)s->blocks,
				age_s(now, s->oldest_ns), (long long)growth);
			mt_json_print(o, mt_leak_api_name(s->api));
			fprintf(o, ",\"mismatched\":%u,\"frames\":[", s->mismatched);
		} else if (r->fmt == FMT_TEXT && fds_mode) {
			fprintf(o, "  #%zu %llu fds (%s)",
				i + 1, (unsigned long long)s->blocks,
				mt_leak_api_name(s->api));
			if (follow)
				fprintf(o, " pid %d", (int)s->tgid);
			fprintf(o, ", oldest %.1fs, growth %+lld\n",
				age_s(now, s->oldest_ns), (long long)growth);
		} else if (r->fmt == FMT_TEXT) {
			if (follow)
				fprintf(o, "  pid %d:\n", (int)s->tgid);
			fprintf(o, "  #%zu %llu bytes in %llu blocks (%s), oldest %.1fs, growth %+lld%s\n",
				i + 1, (unsigned long long)s->bytes,
				(unsigned long long)s->blocks,
				mt_leak_api_name(s->api), age_s(now, s->oldest_ns),
				(long long)growth,
				s->mismatched ? ", MISMATCHED frees seen" : "");
		}
		if (r->fmt == FMT_FOLDED) {
			/* root first: outermost return address, outer inline frame first */
			bool first = true;

			for (j = s->nr_frames; j-- > 0;) {
				const struct mt_sym_frame *f;
				int k, nf = mt_sym_lookup(r->sym, s->frames[j], true, &f);

				for (k = nf; k-- > 0;) {
					fputs(first ? "" : ";", o);
					first = false;
					folded_frame(o, s->frames[j], &f[k]);
				}
			}
			fprintf(o, "%s %llu\n", first ? "[unknown]" : "",
				(unsigned long long)metric(s));
			continue;
		}
		print_frames(r, s);
		if (r->fmt == FMT_JSON)
			fputs("]}", o);
	}
	if (r->fmt == FMT_JSON)
		fputs("]", o);
	print_mismatches(r, v, n + nother);
	if (r->fmt == FMT_JSON)
		fputs("}\n", o);
	else if (r->fmt == FMT_TEXT)
		fputc('\n', o);
	fflush(o);
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

/* Sleep ms unless a signal asks to stop. */
static void nap(long long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (!stop && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * One report: dump, split off the mismatch-only stacks, print, keep the
 * bytes per stack for the next report's growth.
 */
static int take_report(struct mt_handle *h, struct report *r,
		       uint32_t min_age_ms, size_t top, struct prev **prev,
		       size_t *nprev)
{
	struct mt_leak_stack *v;
	struct prev *np;
	size_t n, i, j, nother;
	int err;

	/* --by-lib counts the calls of stacks whose blocks are all freed too. */
	err = mt_leak_stacks(h, r->pid, min_age_ms, r->mode == MODE_BYLIB,
			     &v, &n);
	if (err < 0)
		return err;
	/* One kind per report: memory or descriptors. */
	for (i = 0, j = 0; i < n; i++)
		if (mt_leak_api_is_fd(v[i].api) == fds_mode)
			v[j++] = v[i];
	n = j;
	nother = n - split_leaks(v, n);
	n -= nother;
	qsort(v, n, sizeof(*v), cmp_bytes);
	if (r->mode != MODE_STACKS) {
		struct mode_out mo = { .o = r->o, .json = r->fmt == FMT_JSON,
				       .pid = r->pid, .nr = r->nr, .sym = r->sym };

		/* --by-lib: also the stacks with no block left (their calls). */
		err = r->mode == MODE_SCAN ? scan_report(&mo, h, v, n) :
					     bylib_report(&mo, v, n + nother);
		r->nr = mo.nr;
		if (err < 0) {
			free(v);
			return err;
		}
	} else {
		print_report(r, v, n, nother, top, *prev, *nprev);
	}
	np = malloc((n ? n : 1) * sizeof(*np));
	if (np) {
		for (i = 0; i < n; i++) {
			np[i].id = v[i].stack_id;
			np[i].bytes = metric(&v[i]);
		}
		qsort(np, n, sizeof(*np), cmp_prev);
		free(*prev);
		*prev = np;
		*nprev = n;
	}
	free(v);
	return 0;
}

/* The session is gone with its process (exit, exec) or with the module. */
static bool session_gone(int err)
{
	return err == -ESRCH || err == -ENOENT;
}

/* Gone, or a zombie its parent has not reaped yet. */
static bool exited(pid_t pid)
{
	char path[64], buf[512], *s;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return true;
	buf[len] = '\0';
	s = strrchr(buf, ')');		/* the name may hold anything */
	return !s || s[1] != ' ' || s[2] == 'Z' || s[2] == 'X';
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

struct resync_arg {
	struct mt_unwinder *u;
	struct mt_handle *h;
};

/* The program mapped objects (or may have): send their unwind tables. */
static int resync(void *arg)
{
	struct resync_arg *a = arg;
	int err = mt_unwinder_sync(a->u, a->h);

	if (err < 0 && err != -ESRCH)
		fprintf(stderr, "%s: warning: unwind tables: %s\n", prog, mt_errmsg());
	return err;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "min-age", required_argument, NULL, 'a' },
		{ "top", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "folded", no_argument, NULL, 'F' },
		{ "fds", no_argument, NULL, 'D' },
		{ "follow-forks", no_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "scan", no_argument, NULL, 'S' },
		{ "by-lib", no_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	long long interval_ms = 10000, min_age_ms = 0;
	long count = 0, top = 10, pid = 0;
	const char *output = NULL;
	struct report r = { .fmt = FMT_TEXT };
	struct mt_leak_probe *probes = NULL;
	struct mt_unwinder *unw = NULL;
	struct resync_arg rs = { 0 };
	struct prev *prev = NULL;
	size_t nprobes = 0, nprev = 0;
	struct mt_handle *h = NULL;
	struct sigaction sa = { 0 };
	char **cmd = NULL, proc[64];
	int c, err, st, rc = 0;
	bool attached = false, periodic = false, running = false;
	enum mode mode = MODE_STACKS;

	while ((c = getopt_long(argc, argv, "+p:i:n:jfo:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid = parse_count(optarg, "-p", 1, INT_MAX);
			break;
		case 'i':
			interval_ms = parse_seconds(optarg, "-i", false);
			periodic = true;
			break;
		case 'n':
			count = parse_count(optarg, "-n", 1, INT_MAX);
			periodic = true;
			break;
		case 'a':
			min_age_ms = parse_seconds(optarg, "--min-age", true);
			if (min_age_ms > UINT32_MAX)
				die_usage("--min-age: '%s' is too long", optarg);
			break;
		case 't':
			top = parse_count(optarg, "--top", 1, INT_MAX);
			break;
		case 'j':
			if (r.fmt == FMT_FOLDED)
				die_usage("%s", "--json and --folded exclude each other");
			r.fmt = FMT_JSON;
			break;
		case 'D':
			fds_mode = true;
			break;
		case 'f':
			follow = true;
			break;
		case 'F':
			if (r.fmt == FMT_JSON)
				die_usage("%s", "--json and --folded exclude each other");
			r.fmt = FMT_FOLDED;
			break;
		case 'o':
			output = optarg;
			break;
		case 'S':
		case 'B':
			if (mode != MODE_STACKS)
				die_usage("%s", "--scan and --by-lib exclude each other");
			mode = c == 'S' ? MODE_SCAN : MODE_BYLIB;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return 2;
		}
	}
	if (optind < argc) {
		if (pid)
			die_usage("unexpected argument '%s'", argv[optind]);
		cmd = &argv[optind];
	}
	if (!pid && !cmd)
		die_usage("%s", "-p PID or -- COMMAND is required");
	if (cmd && periodic)
		die_usage("%s", "-i and -n are for -p: a command gets one report, at its exit");
	/* At its exit stop the command is ptraced by us: no second seize. */
	if (cmd && mode == MODE_SCAN)
		die_usage("%s", "--scan is for -p");
	if (cmd && fds_mode)
		die_usage("%s", "--fds is for -p");
	if (fds_mode && mode != MODE_STACKS)
		die_usage("%s", "--fds goes with neither --scan nor --by-lib");
	if (mode != MODE_STACKS && r.fmt == FMT_FOLDED)
		die_usage("%s", "--folded goes with neither --scan nor --by-lib");
	r.mode = mode;

	if (output) {
		r.o = fopen(output, "we");
		if (!r.o) {
			fprintf(stderr, "%s: %s: %s\n", prog, output, strerror(errno));
			return 1;
		}
	} else {
		r.o = stdout;
	}

	if (cmd) {
		/*
		 * From before the fork: a signal while the tracer sets up is
		 * forwarded once the program runs, instead of killing the
		 * tracer and leaving the program to run on untraced.
		 */
		sa.sa_sigaction = on_signal_fwd;
		sa.sa_flags = SA_SIGINFO;	/* no SA_RESTART: wake waitpid */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sigaction(SIGQUIT, &sa, NULL);
		/* Before any socket is open: the program must not inherit one. */
		err = mt_run_start(cmd, &r.pid, &st);
		if (err < 0) {
			if (st)
				return wait_status_code(st);
			fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
			return 1;
		}
		running = true;
		err = mt_run_find_probes(r.pid, &probes, &nprobes);
	} else {
		snprintf(proc, sizeof(proc), "/proc/%ld", pid);
		if (access(proc, F_OK)) {
			fprintf(stderr, "%s: no such process: %ld\n", prog, pid);
			return 1;
		}
		r.pid = (pid_t)pid;
		err = fds_mode ? mt_leak_find_fd_probes(r.pid, &probes, &nprobes) :
				 mt_leak_find_probes(r.pid, &probes, &nprobes);
	}
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", prog,
			err == -EACCES || err == -EPERM ?
			"permission denied: tracing the process needs the rights of ptrace" :
			mt_errmsg());
		rc = 1;
		goto out;
	}
	if (!nprobes) {
		fprintf(stderr, "%s: %d maps no %s this tool knows (libc%s)\n",
			prog, (int)r.pid, fds_mode ? "descriptor call" : "allocator",
			fds_mode ? "" : ", libstdc++");
		rc = 1;
		goto out;
	}
	h = mt_open(0);
	if (!h) {
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		rc = 1;
		goto out;
	}
	/* A command's libraries are mapped only at its exit report. */
	if (!cmd) {
		r.sym = mt_sym_open(r.pid);
		if (!r.sym) {
			fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
			rc = 1;
			goto out;
		}
	}

	/*
	 * Tables are built before the attach and sent right after it: stacks
	 * taken in between stop at the first frame without a frame pointer.
	 */
	unw = mt_unwinder_new(r.pid);
	if (!unw || mt_unwinder_sync(unw, NULL) < 0)
		fprintf(stderr, "%s: warning: unwind tables: %s\n", prog, mt_errmsg());
	err = mt_leak_attach(h, r.pid, probes, nprobes,
			     follow ? MEMTRACK_LEAK_F_CHILDREN : 0);
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		rc = 1;
		goto out;
	}
	attached = true;
	if (unw && mt_unwinder_sync(unw, h) < 0)
		fprintf(stderr, "%s: warning: unwind tables: %s\n", prog, mt_errmsg());
	if (cmd) {
		rs.u = unw;
		rs.h = h;
		err = mt_run_until_exit(r.pid, &fwd_sig,
					unw ? &(struct mt_run_sync){ resync, &rs } : NULL,
					&st);
		running = err != 0;
		if (err < 0) {
			fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
			rc = 1;
			goto out;
		}
		if (err == MT_RUN_EXECED) {
			fprintf(stderr, "%s: %s exec'd another program: the session ended with it; no report\n",
				prog, cmd[0]);
			attached = false;
			running = false;
			rc = run_finish(r.pid);
			goto out;
		}
		if (!err) {
			fprintf(stderr, "%s: %s ended without stopping at its exit (%s %d): no report\n",
				prog, cmd[0], WIFSIGNALED(st) ? "signal" : "status",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			attached = false;
			rc = wait_status_code(st);
			goto out;
		}
		r.sym = mt_sym_open(r.pid);
		if (!r.sym)
			fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
		else if ((err = take_report(h, &r, (uint32_t)min_age_ms,
					    (size_t)top, &prev, &nprev)) < 0)
			fprintf(stderr, "%s: final report: %s\n", prog,
				module_gone() ? "memtrack.ko was unloaded" :
				mt_errmsg());
		if ((err = mt_leak_detach(h, r.pid)) < 0 && !session_gone(err))
			fprintf(stderr, "%s: detach: %s\n", prog, mt_errmsg());
		attached = false;
		/* Its exit status is ours, report or not: errors are on stderr. */
		running = false;
		rc = run_finish(r.pid);
		goto out;
	}

	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (r.fmt == FMT_TEXT)
		fprintf(stderr, "%s: tracing %ld: %zu probes; a report every %.1fs, Ctrl-C to stop\n",
			prog, pid, nprobes, interval_ms / 1000.0);

	while (!stop && (!count || r.nr < count)) {
		nap(interval_ms);
		if (stop)
			break;
		/*
		 * Objects mapped since (dlopen); their calls are unwound from
		 * now on.  A session gone (exit, exec, unload) is not a table's
		 * fault: the report below fails too and says why.
		 */
		err = unw ? mt_unwinder_sync(unw, h) : 0;
		if (err < 0 && !session_gone(err) && !module_gone())
			fprintf(stderr, "%s: warning: unwind tables: %s\n", prog, mt_errmsg());
		err = take_report(h, &r, (uint32_t)min_age_ms, (size_t)top,
				  &prev, &nprev);
		if (err < 0 && (session_gone(err) || module_gone())) {
			if (module_gone())
				fprintf(stderr, "%s: process %ld: the session ended: memtrack.ko was unloaded\n",
					prog, pid);
			else if (exited(r.pid))
				fprintf(stderr, "%s: process %ld exited; its session ended with it\n",
					prog, pid);
			else
				fprintf(stderr, "%s: process %ld: the session ended (it exec'd another program)\n",
					prog, pid);
			attached = false;
			rc = 3;
			break;
		}
		if (err < 0) {
			fprintf(stderr, "%s: %s\n", prog, mt_errmsg());
			rc = 1;
			break;
		}
	}
out:
	if (attached && (err = mt_leak_detach(h, r.pid)) < 0 &&
	    !session_gone(err) && rc == 0) {
		fprintf(stderr, "%s: detach: %s\n", prog, mt_errmsg());
		rc = 1;
	}
	if (running) {
		/* Failed before it ran: it must not run untraced. */
		kill(r.pid, SIGKILL);
		waitpid(r.pid, &st, 0);
	}
	if (r.o && r.o != stdout && fclose(r.o)) {
		fprintf(stderr, "%s: %s: %s\n", prog, output, strerror(errno));
		rc = 1;
	}
	free(prev);
	mt_unwinder_free(unw);
	mt_sym_close(r.sym);
	mt_leak_probes_free(probes, nprobes);
	mt_close(h);
	return rc;
}
