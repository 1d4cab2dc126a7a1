/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libmemtrack: user-space access to memtrack.ko.
 *
 * Generic netlink (summary, tasks, config, the "events" multicast group) and
 * the /dev/memtrack record ring.  Only plain structures cross this interface:
 * the ABI structures of <linux/memtrack.h> and the few defined below.
 *
 * Every function that can fail returns a negative errno (or NULL with errno
 * set) and leaves a readable description in mt_errmsg().
 */
#ifndef MEMTRACK_USER_LIB_H
#define MEMTRACK_USER_LIB_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/memtrack.h>

/* Last error of an mt_* call in this thread, for messages. */
const char *mt_errmsg(void);

/*
 * The release (the VERSION file); mt_print_version() writes --version's
 * lines for prog to stdout and returns the exit status (1 if stdout failed).
 */
const char *mt_version(void);
int mt_print_version(const char *prog);
/*
 * A program's first call in main(): name is the prefix of all its messages,
 * which go through err(3) (warnx(), errx(), ...), getopt's as well.
 */
void mt_set_progname(char **argv, const char *name);

/* What a message about a missing memtrack.ko tells the user to do. */
#define MT_MODULE_HINT	"load it with: modprobe memtrack"

/* The number of elements of an array (for tables of names and the like). */
#define MT_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * CLOCK_MONOTONIC (clock.c) in nanoseconds, milliseconds and seconds: the
 * one clock of every deadline, timeout and age in the library, the
 * daemons and the tools.
 */
uint64_t mt_mono_ns(void);
int64_t mt_mono_ms(void);
double mt_mono_s(void);

/* ---- records ------------------------------------------------------------ */

/*
 * Called for each record; rec->size bytes are valid and 8-byte aligned.
 * Return 0 to go on, > 0 to stop the walk, < 0 to stop and fail with that.
 */
typedef int (*mt_record_cb)(const struct memtrack_rec_hdr *rec, void *arg);

/*
 * Walk records laid back to back in buf.  Each must have a size that is a
 * multiple of 8, at least the header (and the known structure of its type),
 * and within buf.  Returns the number of records passed to cb, or -EBADMSG
 * at the first malformed one (after the good ones before it), or cb's
 * negative return.  A positive return from cb ends the walk early.
 */
int mt_walk_records(const void *buf, size_t len, mt_record_cb cb, void *arg);

/* "mmap", "task_exit", ...; "unknown" for a type this library does not know. */
const char *mt_record_type_name(unsigned int type);
/* The smallest valid size of a record of this type (0: type unknown). */
size_t mt_record_min_size(unsigned int type);
/* The MEMTRACK_CLASS_* bit a record type belongs to (0: LOST or unknown). */
uint32_t mt_record_class(unsigned int type);

/*
 * "task,mmap,oom" -> MEMTRACK_CLASS_* bits.  Names: task mmap shm oom
 * reclaim alloc_fail rss page kmalloc all default.  -EINVAL (and
 * mt_errmsg()) on an unknown or empty name.
 */
int mt_class_parse(const char *csv, uint32_t *classes);
/* The class name of a single MEMTRACK_CLASS_* bit, NULL if none. */
const char *mt_class_name(uint32_t bit);

/*
 * The per-task counters, memtrack_counters.h's list as a table in ABI order
 * (counters.c): what every program shows of a counter comes from here.
 */
struct mt_counter {
	const char *name;		/* "min_flt": /proc/memtrack/tasks' column */
	enum memtrack_counter_unit unit;
	const char *metric;		/* memtrackd's family after "memtrack_program_" */
	const char *title;		/* memtrack-top's column */
	const char *help;		/* the family's HELP, the column's description */
};
extern const struct mt_counter mt_counters[MEMTRACK_NR_COUNTERS];
/* Counter names in ABI order ("min_flt", ...); NULL past the end. */
const char *mt_counter_name(unsigned int idx);
/* True for counters stored two's complement (net growth). */
bool mt_counter_signed(unsigned int idx);
/*
 * True for the counters only the module counts: all but min_flt and
 * maj_flt, which /proc gives too (struct memtrack_task's `detailed` says
 * whether a row has the others).
 */
bool mt_counter_needs_module(unsigned int idx);

/*
 * One record as one line (no newline) into buf, snprintf-style: returns the
 * length the whole line needs; the output is truncated (and terminated) if
 * it does not fit.  Text: "SEC.NSEC [CPU] PID/TGID TYPE key=value ...";
 * JSON: one object with the same fields.
 */
int mt_format_text(const struct memtrack_rec_hdr *rec, char *buf, size_t len);
int mt_format_json(const struct memtrack_rec_hdr *rec, char *buf, size_t len);

/* ---- UTF-8 and JSON strings (json.c) -------------------------------------- */

/*
 * The length of the well-formed UTF-8 sequence at s (n > 0 bytes left), or
 * minus the length of the ill-formed subsequence one U+FFFD replaces: the
 * bytes before the first one that cannot continue a well-formed sequence,
 * at least one.  Overlong forms (C0, C1, E0 80..9F, F0 80..8F), surrogates
 * (ED A0..BF) and code points past U+10FFFF (F4 90.., F5..FF) are ill-formed
 * (Unicode 15, table 3-7).  For every writer of text others parse (JSON
 * here, Prometheus labels in memtrackd).
 */
int mt_utf8_seq(const unsigned char *s, size_t n);

/*
 * A string as a JSON string, for every JSON document the tools write:
 * valid UTF-8 unchanged; '"', '\' and control characters escaped (\b \f
 * \n \r \t, the others \u00XX); each ill-formed UTF-8 sequence (stray
 * continuation byte, overlong form, surrogate, cut short, F5..FF) as one
 * U+FFFD.  The output is always valid UTF-8 and valid JSON; NULL is null.
 *
 * mt_json_print(): the NUL-terminated s to f.  mt_json_snprint(): the n
 * bytes at s into buf, snprintf-style: returns the length the whole string
 * needs; the output is truncated (and terminated) if it does not fit.
 */
void mt_json_print(FILE *f, const char *s);
size_t mt_json_snprint(char *buf, size_t len, const char *s, size_t n);

/*
 * v in decimal at b (room for 21 bytes), NUL-terminated; the digits'
 * count.  For text written by the thousand lines (memtrack-top's rows,
 * /metrics), where snprintf() was much of the cost.
 */
size_t mt_fmt_u64(char *b, uint64_t v);

/* ---- /dev/memtrack -------------------------------------------------------- */

/*
 * Open /dev/memtrack (O_NONBLOCK if nonblock) and apply the filter (NULL:
 * the kernel's default).  Returns the fd or a negative errno.
 */
int mt_ring_open(const struct memtrack_filter *f, bool nonblock);
/*
 * One read(2) of whole records, walked with cb.  Returns the number of
 * records, 0 if none were ready, or a negative errno (-EAGAIN is returned
 * as 0, -EINTR as is).
 */
int mt_ring_read(int fd, mt_record_cb cb, void *arg);

/* ---- generic netlink -------------------------------------------------------- */

struct mt_handle;

struct mt_handle *mt_open(int flags);	/* flags: 0 */
void mt_close(struct mt_handle *h);

int mt_get_summary(struct mt_handle *h, struct memtrack_summary *s);
/* A process (thread false) or a thread (thread true); -ESRCH if unknown. */
int mt_get_task(struct mt_handle *h, pid_t pid, bool thread,
		struct memtrack_task *t);

struct mt_task_filter {
	pid_t tgid;			/* 0: any */
	const char *comm;		/* NULL: any */
};

/* Dumps; *out is malloc'ed (free() it), *n rows.  f may be NULL. */
int mt_dump_tasks(struct mt_handle *h, const struct mt_task_filter *f,
		  struct memtrack_task **out, size_t *n);
int mt_dump_threads(struct mt_handle *h, pid_t tgid,
		    struct memtrack_task **out, size_t *n);

#define MT_HOOK_NAME_LEN	16
#define MT_MAX_HOOK_GROUPS	16

struct mt_hook_group {
	char name[MT_HOOK_NAME_LEN];
	bool enabled;
	uint32_t attached;		/* get only */
	uint32_t total;			/* get only */
};

struct mt_config {
	int64_t retention_ms;		/* set: < 0 leaves it unchanged */
	size_t nr_hooks;		/* set: groups to switch, may be 0 */
	struct mt_hook_group hooks[MT_MAX_HOOK_GROUPS];
};

int mt_get_config(struct mt_handle *h, struct mt_config *c);
int mt_set_config(struct mt_handle *h, const struct mt_config *c);

/*
 * Events: join the "events" multicast group on a socket of its own (4 MiB
 * receive buffer, non-blocking).  Poll mt_events_fd() for POLLIN, then
 * mt_read_events() reads every message waiting and returns the number of
 * records passed to cb (0 if none), or a negative errno.  A receive buffer
 * overrun (ENOBUFS: messages lost, how many is unknown) is not an error: it
 * is counted in mt_events_overruns().
 */
int mt_subscribe(struct mt_handle *h);
int mt_events_fd(struct mt_handle *h);
int mt_read_events(struct mt_handle *h, mt_record_cb cb, void *arg);
uint64_t mt_events_overruns(struct mt_handle *h);

/*
 * Has thread tid of process pid exited (gone, or a zombie its parent has
 * not reaped yet)?  tid pid: the process (stop_world.c).
 */
bool mt_task_exited(pid_t pid, pid_t tid);

/* ---- leak tracer ------------------------------------------------------------ */

/*
 * One allocator entry point to probe: the object as the target mapped it,
 * the file offset of the entry, the API.  symbol is the ELF name it was
 * found by (a static string).
 */
struct mt_leak_probe {
	char *path;
	uint64_t offset;		/* of the entry point */
	uint32_t skip;			/* the breakpoint is at offset + skip */
	uint32_t api;			/* enum memtrack_leak_api */
	const char *symbol;
};

/*
 * The allocator entry points (libc's malloc family, libstdc++'s operator
 * new/delete variants) in the ELF objects pid has mapped, from .dynsym and
 * .symtab: defined GLOBAL/WEAK functions, st_value turned into a file offset
 * through the PT_LOAD holding it.  Aliases at one offset count once (the
 * first API in enum order wins: e.g. glibc's aligned_alloc is memalign).
 * Where an entry starts with instructions the kernel would single-step but
 * that change no register a handler reads (endbr64, test %rdi,%rdi) and a
 * jump it emulates follows, skip says how far the breakpoint moves onto
 * the jump: one trap fewer per call, same registers and stack as at entry.
 * GNU ifuncs are skipped (the symbol is the resolver, not the allocator).
 * *out is malloc'ed: free with mt_leak_probes_free().  Returns 0, -ESRCH
 * if pid does not exist, or another negative errno.
 */
int mt_leak_find_probes(pid_t pid, struct mt_leak_probe **out, size_t *n);
/* The same in the given ELF files (unreadable ones are skipped). */
int mt_leak_find_probes_files(const char *const *paths, size_t n,
			      struct mt_leak_probe **out, size_t *nout);
/*
 * The same for the calls that open file descriptors (open, socket, pipe,
 * dup, accept, eventfd, memfd_create, ... in libc) and close().
 */
int mt_leak_find_fd_probes(pid_t pid, struct mt_leak_probe **out, size_t *n);
void mt_leak_probes_free(struct mt_leak_probe *p, size_t n);
/* "malloc", "new[]", "open", ...; "unknown" for anything else. */
const char *mt_leak_api_name(uint32_t api);
/* Whether a stack of this API holds file descriptors, not memory. */
bool mt_leak_api_is_fd(uint32_t api);

/* A dumped stack: the ABI structure with its frames in place. */
struct mt_leak_stack {
	uint32_t stack_id;
	uint32_t nr_frames;
	uint64_t bytes;
	uint64_t blocks;
	uint64_t oldest_ns;		/* CLOCK_MONOTONIC */
	uint32_t api;
	uint32_t mismatched;
	uint32_t free_api;		/* of the last mismatched free */
	uint32_t free_stack_id;
	uint64_t total_allocs;		/* freed or not */
	uint64_t total_bytes;
	pid_t tgid;			/* the process (children: MEMTRACK_LEAK_F_CHILDREN) */
	uint64_t frames[MEMTRACK_LEAK_MAX_FRAMES];	/* [0]: allocator's caller */
};

/*
 * Decode one MEMTRACK_ATTR_LEAK_STACK payload: struct memtrack_leak_stack
 * followed by exactly nr_frames u64 (nr_frames <= MEMTRACK_LEAK_MAX_FRAMES).
 * -EBADMSG (and mt_errmsg()) otherwise.
 */
int mt_leak_stack_decode(const void *data, size_t len, struct mt_leak_stack *out);

/* flags: MEMTRACK_LEAK_F_*.  -EPERM: tracing pid needs ptrace rights. */
int mt_leak_attach(struct mt_handle *h, pid_t pid,
		   const struct mt_leak_probe *probes, size_t n, uint32_t flags);
/* The probes of an attach with MEMTRACK_LEAK_F_ARM_LATER, tables sent. */
int mt_leak_arm(struct mt_handle *h, pid_t pid);
int mt_leak_detach(struct mt_handle *h, pid_t pid);
/* The session's counters; st->ended: the process is gone (last report). */
int mt_leak_stats(struct mt_handle *h, pid_t pid,
		  struct memtrack_leak_stats *st);
/*
 * Stacks with blocks at least min_age_ms old, and those of mismatched frees;
 * all: also the stacks whose blocks are all freed (their total_allocs).
 * *out malloc'ed, *n rows.
 */
int mt_leak_stacks(struct mt_handle *h, pid_t pid, uint32_t min_age_ms,
		   bool all, struct mt_leak_stack **out, size_t *n);

/*
 * Unwind tables (unwind.c): the compact CFI rows of an object's executable
 * segments, vaddr-relative, for LEAK_UNWIND.  vaddr_off: p_vaddr - p_offset
 * of the first executable segment, for the bias of a mapping.
 */
struct mt_unwind_table {
	uint64_t vstart, vend, vaddr_off;
	size_t nr;
	struct memtrack_unwind_row *rows;
};

int mt_unwind_build(const char *path, struct mt_unwind_table *t);
void mt_unwind_table_free(struct mt_unwind_table *t);
/* Send one mapping's table to the module, in chunks. */
int mt_leak_unwind(struct mt_handle *h, pid_t pid, uint64_t start,
		   uint64_t end, uint64_t bias,
		   const struct memtrack_unwind_row *rows, size_t n);
/* Or where its .eh_frame_hdr is in the target: the module reads it there. */
int mt_leak_unwind_hdr(struct mt_handle *h, pid_t pid, uint64_t start,
		       uint64_t end, uint64_t bias, uint64_t hdr);

/*
 * The tables of a traced process's executable file mappings (unwind_maps.c):
 * mt_unwinder_sync() sends those of mappings not sent yet (after attach,
 * and again after a dlopen): the address of an object's .eh_frame_hdr, or
 * its table of rows (built once) when it has none.  Returns
 * the number of mappings sent, or a negative errno.  With h NULL it only
 * builds the tables, so that they can go right after the attach.
 */
struct mt_unwinder;
struct mt_unwinder *mt_unwinder_new(pid_t pid);
int mt_unwinder_sync(struct mt_unwinder *u, struct mt_handle *h);
void mt_unwinder_free(struct mt_unwinder *u);
/*
 * The call stack of tid, a thread of the unwinder's process stopped under
 * ptrace by the caller (unwind_walk.c): the same walk as the module's
 * (kmod/leak_unwind.c) over the same tables, else frame pointers, reading
 * its registers and memory.  pcs[0] its instruction pointer, then return
 * addresses; sps[i] the stack pointer in frame i.  Returns how many
 * (<= max), or a negative errno.
 */
int mt_unwinder_walk(struct mt_unwinder *u, pid_t tid, uint64_t *pcs,
		     uint64_t *sps, size_t max);

/*
 * Running a program under the leak tracer (leak_run.c).  mt_run_start()
 * forks and execs argv (PATH searched) ptraced by the caller, and returns
 * once it is stopped right after the exec: nothing of it has run, only the
 * program and its dynamic loader are mapped.  Returns 0, or -ENOEXEC with
 * *status the child's wait status if the exec failed (the child said why on
 * stderr).
 */
int mt_run_start(char *const argv[], pid_t *pid, int *status);
/*
 * 1 if the program execvp() would run for name is an ELF file without an
 * interpreter (static: no LD_PRELOAD reaches it), 0 if not (scripts too),
 * a negative errno if it cannot be found or read.
 */
int mt_program_is_static(const char *name);
/*
 * The allocator entry points the stopped program will have: in the program
 * itself, its ELF interpreter and every library the interpreter's --list
 * mode says it loads (a static program: the program alone).  Libraries it
 * dlopen()s later are not known yet.
 */
int mt_run_find_probes(pid_t pid, struct mt_leak_probe **out, size_t *n);
/*
 * Resume the program and forward its signals until its main thread stops
 * at its exit (returns 1: its memory is still there, to report on), or it
 * is gone without that stop (returns 0, *status its wait status: killed by
 * SIGKILL, or a thread other than the main one ended the process), or it
 * exec'd another program (returns MT_RUN_EXECED: the leak session ended with
 * the exec; mt_run_finish() lets the new program run on).
 * *fwd, when set by a signal handler, is a signal to send to the program.
 * sync->fn is called whenever the program may have mapped objects: at the
 * dynamic loader's rendezvous (startup, dlopen) while the program waits,
 * and periodically once it has threads (see leak_run.c).
 */
struct mt_run_sync {
	int (*fn)(void *arg);
	void *arg;
};

#define MT_RUN_EXECED	2
int mt_run_until_exit(pid_t pid, volatile sig_atomic_t *fwd,
		      const struct mt_run_sync *sync, int *status);
/* From the exit stop: let it go and reap it; *status its wait status. */
int mt_run_finish(pid_t pid, int *status);

/* Every outstanding block (LEAK_BLOCKS); *out malloc'ed, *n of them. */
int mt_leak_blocks(struct mt_handle *h, pid_t pid,
		   struct memtrack_leak_block **out, size_t *n);

/* --by-lib: stacks summed per (object of frames[0], api). */
struct mt_bylib_row {
	char *object;			/* path; "[unknown]" if not file-backed */
	uint32_t api;
	uint64_t bytes, blocks;		/* outstanding */
	uint64_t calls, call_bytes;	/* allocations, freed or not */
	uint32_t stacks;
};

/*
 * Rows by outstanding bytes (descending); objects from pid's maps now.
 * Only the stacks given count (LEAK_STACKS dumps those with blocks left).
 */
int mt_leak_by_lib(pid_t pid, const struct mt_leak_stack *v, size_t n,
		   struct mt_bylib_row **out, size_t *nrows);
/* The same with the objects sym knows: for a process that is gone. */
struct mt_symbolizer;
int mt_sym_by_lib(struct mt_symbolizer *sym, const struct mt_leak_stack *v,
		  size_t n, struct mt_bylib_row **out, size_t *nrows);
void mt_bylib_free(struct mt_bylib_row *rows, size_t n);

/*
 * The in-process engine (leak_preload.c): the program runs with
 * libmemtrack-preload.so (LD_PRELOAD), which records its allocations in a
 * memfd this side reads; no module, no trap.  mt_preload_new() makes the
 * state (flags: MT_PRELOAD_F_*), mt_preload_start() starts argv (PATH
 * searched) with the library lib; *status as mt_run_start()'s.
 */
#define MT_PRELOAD_F_FOLLOW	(1U << 0)	/* -f: forked children too */
#define MT_PRELOAD_F_FDS	(1U << 1)	/* descriptors, not memory */
#define MT_PRELOAD_F_EXIT_WAIT	(1U << 2)	/* stop at exit for a scan */

struct mt_preload;
struct mt_preload *mt_preload_new(uint32_t flags);
void mt_preload_free(struct mt_preload *p);
int mt_preload_start(struct mt_preload *p, const char *lib,
		     char *const argv[], pid_t *pid, int *status);
/*
 * Until the program ends (returns 0, *status its wait status) or, with
 * MT_PRELOAD_F_EXIT_WAIT, waits in its exit for mt_preload_resume()
 * (returns MT_PRELOAD_AT_EXIT: its memory is there to scan).  *fwd, set by
 * a signal handler, is a signal to pass on to it.
 */
#define MT_PRELOAD_AT_EXIT	1
int mt_preload_wait(struct mt_preload *p, pid_t pid,
		    volatile sig_atomic_t *fwd, int *status);
void mt_preload_resume(struct mt_preload *p);
/* Whether the program exec'd another (whose run is not traced). */
bool mt_preload_execed(struct mt_preload *p);
/* As mt_leak_stacks() and mt_leak_blocks(), from the state. */
int mt_preload_stacks(struct mt_preload *p, uint32_t min_age_ms, bool all,
		      struct mt_leak_stack **out, size_t *n);
int mt_preload_blocks(struct mt_preload *p, pid_t pid,
		      struct memtrack_leak_block **out, size_t *n);
/* As mt_leak_by_lib(), with the objects the program had. */
int mt_preload_by_lib(struct mt_preload *p, const struct mt_leak_stack *v,
		      size_t n, struct mt_bylib_row **out, size_t *nrows);
/* A symbolizer of the objects the program had (mt_sym_open_objects()). */
struct mt_symbolizer *mt_preload_symbolizer(struct mt_preload *p);
/*
 * At the exit (MT_PRELOAD_AT_EXIT): the exiting thread, and its frames'
 * return addresses and stack pointers, innermost first; how many.
 */
int mt_preload_exit_stack(struct mt_preload *p, pid_t *tid, uint64_t *pcs,
			  uint64_t *sps, size_t max);
/* Counters of the run: allocs, frees, unknown and mismatched frees, ... */
int mt_preload_stats(struct mt_preload *p, struct memtrack_leak_stats *st);
/*
 * A state made elsewhere (an injected library's), its memfd fd (owned
 * from now on); the blocks' clock, which the tool keeps (every
 * MTP_CLOCK_MS while the program runs).
 */
struct mt_preload *mt_preload_open_fd(int fd, pid_t target, uint32_t flags);
void mt_preload_tick(struct mt_preload *p);
/* --fds of a live process: descriptors it no longer has left out. */
void mt_preload_live_fds(struct mt_preload *p, bool on);

/*
 * memtrack-leak -p's in-process engine (inject.c): libmemtrack-preload.so
 * (lib) loaded into the running process pid with ptrace, its calls'
 * slots pointed at its hooks; flags MT_PRELOAD_F_FOLLOW, _FDS.  Returns
 * 0, or a negative errno with mt_errmsg() saying why, the process left as
 * it was: -ENOEXEC (statically linked, not glibc: use the uprobe engine),
 * -EPERM (no ptrace rights), -EACCES (seccomp forbids it), -EAGAIN (no
 * safe point), -EBUSY (traced already), -ESRCH (gone).  The state is the
 * session's (mt_inject_state()).  mt_inject_detach() restores the slots
 * and waits (2 s at most) for the library to release the state; the
 * library stays loaded, inert.  mt_inject_free() closes the tool's side:
 * a session still on then ends in the target by itself.
 */
struct mt_inject;
struct mt_inject_stats {
	uint64_t stop_ns;		/* the threads stopped, from first to last */
	unsigned int threads;		/* stopped */
	unsigned int tries;		/* stops until a safe point */
	unsigned int slots;		/* GOT slots taken (restored) */
	bool loaded;			/* the library loaded now, not reused */
	bool let_go;			/* the threads ran meanwhile (a lock) */
};

int mt_inject_attach(pid_t pid, const char *lib, uint32_t flags,
		     struct mt_inject **out, struct mt_inject_stats *st);
struct mt_preload *mt_inject_state(struct mt_inject *in);
int mt_inject_detach(struct mt_inject *in, struct mt_inject_stats *st);
void mt_inject_free(struct mt_inject *in);
/*
 * Between reports (inject_wait.c): up to ms milliseconds, keeping the
 * state's clock; less if *stop is set or the session ends: the process
 * exited or exec'd (the state is as it left it), or the session ended
 * in the target (GONE: the program closed the library's descriptors).
 */
enum { MT_INJECT_ON, MT_INJECT_EXITED, MT_INJECT_EXECED, MT_INJECT_GONE };
int mt_inject_wait(struct mt_inject *in, long long ms,
		   volatile sig_atomic_t *stop);

/* ---- symbols of a live process (libdw) ------------------------------------ */

/* One source-level frame; a return address may give several (inlining). */
struct mt_sym_frame {
	const char *function;		/* demangled; NULL if unknown */
	const char *file;		/* NULL if no line information */
	int line;			/* 0 if unknown */
	bool inlined;			/* inlined into the next frame */
	const char *module;		/* object path; NULL if unmapped or unreadable */
	/*
	 * With module: the address looked up (a return address less 1) in
	 * the object's ELF file, the runtime address less the load bias:
	 * what addr2line -e MODULE and objdump take.
	 */
	uint64_t offset;
};

struct mt_symbolizer;

/* The modules pid has mapped now.  NULL with errno (and mt_errmsg()). */
struct mt_symbolizer *mt_sym_open(pid_t pid);
/* An object a process had mapped: its path and load bias. */
struct mt_sym_object {
	const char *path;
	uint64_t base;
};
/* The objects of a list instead (the process may be gone). */
struct mt_symbolizer *mt_sym_open_objects(const struct mt_sym_object *o,
					  size_t n);
void mt_sym_close(struct mt_symbolizer *s);
/*
 * The process is gone or runs another program: lookups no longer read its
 * maps again for objects mapped since (they would be another program's).
 */
void mt_sym_freeze(struct mt_symbolizer *s);
/*
 * The frames of addr, innermost first (inlined ones, then the function that
 * holds them).  ret_addr: addr is a return address, look up addr - 1.
 * Results are cached and valid until mt_sym_close().  Returns the number
 * of frames (>= 1: an unknown address gives one frame of NULLs).
 */
int mt_sym_lookup(struct mt_symbolizer *s, uint64_t addr, bool ret_addr,
		  const struct mt_sym_frame **frames);

/* ---- leak scan ------------------------------------------------------------- */

/*
 * memtrack-leak --scan: leak classes of outstanding blocks, as valgrind
 * memcheck and LeakSanitizer define them, from a snapshot of the target's
 * memory.  scan.c classifies (pure, no I/O); scan_proc.c takes the snapshot
 * of a live process.
 */
enum mt_scan_class {
	MT_SCAN_DEFINITE,	/* no pointer to it anywhere it could be found */
	MT_SCAN_INDIRECT,	/* lost, but pointed to by a lost block */
	MT_SCAN_POSSIBLE,	/* reached, but only through an interior pointer */
	MT_SCAN_REACHABLE,	/* a chain of start pointers from a root */
	MT_SCAN_NR_CLASSES
};

struct mt_scan_block {
	uint64_t addr;
	uint64_t size;
	uint32_t stack_id;
	uint32_t api;
	enum mt_scan_class cls;		/* set by mt_scan_classify() */
};

/*
 * A copy of target memory at addr.  Words of a root region are roots,
 * except those inside a known block (the [heap] holds blocks allocated
 * before the tracer attached, which may point to known ones, next to the
 * known blocks themselves); other regions only supply block contents.
 * data need not be aligned; only 8-byte aligned target words are pointers.
 */
struct mt_scan_region {
	uint64_t addr;
	uint64_t len;
	const unsigned char *data;
	bool root;
};

/*
 * Classify blocks[] (any order; sorted by address on return) given the
 * regions (any order, not overlapping).  Bytes of a block no region
 * covers count as holding no pointers.  Returns 0 or -ENOMEM.
 */
int mt_scan_classify(struct mt_scan_block *blocks, size_t nblocks,
		     const struct mt_scan_region *regions, size_t nregions);
const char *mt_scan_class_name(enum mt_scan_class c);

/*
 * A snapshot of pid's memory for the scan: each thread stopped with
 * PTRACE_SEIZE + PTRACE_INTERRUPT, its registers read, then the roots
 * (every rw mapping, as memcheck's; each live thread's stack from its sp
 * up; a stack glibc cached for reuse from its TLS up; the registers)
 * copied with process_vm_readv; then the threads are let go.
 */
struct mt_scan_snapshot {
	struct mt_scan_region *regions;
	size_t nregions;
	unsigned int nthreads;
};

/*
 * from (or NULL): one thread whose stack is a root only from sp up (not
 * from its stack pointer): at the program's exit, the frames of exit()
 * hold nothing of the program's, only what its dead frames left there.
 * traced: that thread is in a ptrace stop of the caller's (the uprobe
 * engine's exit stop), read as it is and left stopped.
 */
struct mt_scan_stack {
	pid_t tid;
	uint64_t sp;
	bool traced;		/* tid is in a ptrace stop of the caller's */
};

int mt_scan_snapshot_take(pid_t pid, const struct mt_scan_block *blocks,
			  size_t nblocks, const struct mt_scan_stack *from,
			  struct mt_scan_snapshot *snap);
void mt_scan_snapshot_free(struct mt_scan_snapshot *snap);

/* ---- data source for a top: the module, or /proc without it ------------- */

/*
 * The same rows and system figures from memtrack.ko when it is loaded, and
 * from /proc otherwise (or when MT_SOURCE_PROC forces it).  With /proc,
 * task rows have detailed == 0 and only the fault counters, identity, memory
 * sizes and CPU/start times filled, as /proc/PID/stat and status give them;
 * exited processes are not kept.
 */
#define MT_SOURCE_PROC		(1 << 0)	/* never the module */
/* The module or nothing: NULL (errno, mt_errmsg()) when it is not there. */
#define MT_SOURCE_MODULE	(1 << 1)
/* /proc task rows without cgroup_id (left 0): no /proc/PID/cgroup read. */
#define MT_SOURCE_NO_CGROUP	(1 << 2)

struct mt_source;

struct mt_source *mt_source_open(int flags);
void mt_source_close(struct mt_source *src);
bool mt_source_is_module(const struct mt_source *src);
/* "memtrack module" or "/proc", for a header. */
const char *mt_source_name(const struct mt_source *src);

struct mt_sysinfo {
	/*
	 * From the module; without it, the system memory fields from
	 * /proc/meminfo, and reclaim_scanned, reclaim_reclaimed,
	 * direct_reclaim_stalls, page_allocs, page_frees and oom_kills from
	 * /proc/vmstat, counted since boot, not since load.  Every other
	 * field is then 0: unavailable.
	 */
	struct memtrack_summary sum;
	bool module;			/* false: the /proc figures above */
	uint64_t swap_total;		/* bytes, /proc/meminfo in both cases */
	uint64_t buffers;
	uint64_t mem_available;		/* bytes, /proc/meminfo in both cases */
	/* /proc/vmstat pgfault and pgmajfault, without the module only */
	uint64_t pgfault, pgmajfault;
};

int mt_source_sysinfo(struct mt_source *src, struct mt_sysinfo *si);
/* Rows of every process, or of tgid's threads; *out malloc'ed, *n rows. */
int mt_source_tasks(struct mt_source *src, struct memtrack_task **out,
		    size_t *n);
int mt_source_threads(struct mt_source *src, pid_t tgid,
		      struct memtrack_task **out, size_t *n);
/*
 * The module's handle, NULL on /proc: valid until the next call on src,
 * which may replace it (below).
 */
struct mt_handle *mt_source_handle(struct mt_source *src);
/*
 * The module's records (mt_subscribe(), mt_events_fd(), mt_read_events())
 * through the source, so that they survive a reload: -errno if joining
 * fails (CAP_SYS_ADMIN).  mt_source_events_fd(): -1 when not subscribed.
 */
int mt_source_subscribe(struct mt_source *src);
int mt_source_events_fd(struct mt_source *src);
int mt_source_read_events(struct mt_source *src, mt_record_cb cb, void *arg);
bool mt_source_subscribed(const struct mt_source *src);
/*
 * Recovery from a module reload, for every client: a request that fails on
 * the module makes the source open the module anew (a new netlink family
 * id: requests need no privilege) and retry once; a subscription is joined
 * again if it can be (else mt_source_subscribed() turns false).  The count
 * of such reopenings, for a client that tells its user.
 */
unsigned int mt_source_reopened(const struct mt_source *src);
/*
 * A row of a kernel thread (kthreadd, kworker/...)?  Reads /proc/PID/stat
 * for a live row without an address space only: callers keep the answer
 * per process.
 */
bool mt_task_is_kthread(const struct memtrack_task *t);
/* Where cgroup v2 is mounted ("/sys/fs/cgroup" if not found). */
void mt_cgroup2_root(char *buf, size_t len);
/*
 * The host's cgroup tree: $MEMTRACK_ROOTFS/sys/fs/cgroup when set (a node
 * agent in a container, the host's / mounted there), else mt_cgroup2_root().
 */
void mt_cgroup_tree(char *buf, size_t len);
/*
 * Every directory of the cgroup tree at root, root first, each before what
 * is under it, not crossing into another mount: fn gets its path, the
 * path under root ("" for root itself, else "/a/b") and its cgroup id
 * (the directory's inode).  fn returns non-zero to stop.  Unreadable
 * directories are skipped.  0, or -errno if root cannot be opened.
 */
typedef int (*mt_cgroup_visit_fn)(void *arg, const char *path,
				  const char *rel, uint64_t id);
int mt_cgroup_walk(const char *root, mt_cgroup_visit_fn fn, void *arg);

/* ---- containers and pods: who a cgroup belongs to ----------------------- */

/*
 * The runtimes whose cgroup paths are known (container.c), and an ID found
 * in a path that names no runtime (the kubelet's cgroupfs driver, ctr's
 * /NAMESPACE/ID): MT_RT_UNKNOWN until a runtime's state files name it.
 */
enum mt_runtime {
	MT_RT_NONE,			/* not a container */
	MT_RT_UNKNOWN,
	MT_RT_CONTAINERD,
	MT_RT_CRIO,
	MT_RT_DOCKER,
	MT_RT_PODMAN,
	MT_RT_RUNC,
	MT_RT_CRUN,
	MT_RT_MACHINED,			/* systemd-nspawn, machinectl */
	MT_RT_LXC,
};

/* The kubelet's QoS class of a pod (its cgroup's parent). */
enum mt_qos {
	MT_QOS_NONE,
	MT_QOS_GUARANTEED,
	MT_QOS_BURSTABLE,
	MT_QOS_BESTEFFORT,
};

#define MT_CONTAINER_ID_LEN	65	/* 64 hex digits, or a machine's name */
#define MT_POD_UID_LEN		37	/* 8-4-4-4-12 */

struct mt_container {
	enum mt_runtime runtime;
	enum mt_qos qos;
	char id[MT_CONTAINER_ID_LEN];	/* "" for a pod's own cgroup */
	char pod_uid[MT_POD_UID_LEN];	/* "" outside Kubernetes */
	uint32_t uid;			/* rootless: the user-UID.slice's */
	bool rootless;
	/*
	 * From the runtime's state files (mt_container_names()); else the
	 * name is the ID's first 12 digits (as docker ps shows it) or the
	 * machine's, and pod and namespace are "".  "POD" names a pod's
	 * sandbox (pause) container, as the kubelet and cAdvisor do.
	 */
	char name[128];
	char pod[254];
	char ns[64];
	bool named;			/* names found in state files */
};

/*
 * Parse a cgroup v2 path (from the cgroup root: "/kubepods.slice/...") into
 * the container and pod it names: 1 when it is one (or a pod's own cgroup),
 * 0 when it is not.  Never reads a file.
 */
int mt_container_from_cgroup(const char *path, struct mt_container *c);
/*
 * The names from the runtime's state files under rootfs ("" or "/" for
 * this system's): the container's, its pod's and namespace; 0, or -ENOENT
 * when no runtime knows it (c keeps its ID names).  Reads only the files of
 * c's runtime (of every runtime for MT_RT_UNKNOWN, setting it).
 */
int mt_container_names(const char *rootfs, struct mt_container *c);
const char *mt_runtime_name(enum mt_runtime rt);
const char *mt_qos_name(enum mt_qos q);

/*
 * The container and pod of process pid, from /proc/PID/cgroup and the
 * runtime's state under rootfs (NULL: $MEMTRACK_ROOTFS, else /): 1 when it
 * is in one, 0 when not, -errno when its cgroup cannot be read.
 */
int mt_container_of_pid(pid_t pid, const char *rootfs,
			struct mt_container *c);
/* "web (containerd 0123456789ab) in pod prod/shop-7d9f" and the like. */
void mt_container_describe(const struct mt_container *c, char *buf,
			   size_t len);

/*
 * Containers by cgroup id, for a tool that shows rows sample after sample:
 * a cgroup's path is found by one walk of the cgroup tree when an unknown
 * id appears (at most one walk per sample), names read once per container.
 * What no lookup asked for in two samples is forgotten; at most
 * MT_CONTAINERS_MAX cgroups are kept (past that, lookups answer NULL).
 * rootfs NULL: $MEMTRACK_ROOTFS, else "/" (the host's filesystem where a
 * node agent in a container mounted it: its /sys/fs/cgroup, /run, /var).
 */
#define MT_CONTAINERS_MAX	65536

struct mt_containers;

struct mt_containers_stats {
	uint64_t walks;			/* of the cgroup tree */
	uint64_t name_reads;		/* mt_container_names() calls */
	size_t cgroups, containers;	/* kept now */
};

struct mt_containers *mt_containers_new(const char *rootfs);
void mt_containers_free(struct mt_containers *cs);
/* NULL: not a container (or unknown); valid until mt_containers_next(). */
const struct mt_container *mt_containers_find(struct mt_containers *cs,
					      uint64_t cgroup_id);
/* A new sample begins: forget what the last two did not look up. */
void mt_containers_next(struct mt_containers *cs);
/*
 * A walk of mt_containers_tree() made by the caller for its own reasons
 * (memtrack-top's cgroup paths), shared so that a sample walks a tree of
 * hundreds of cgroups once, not twice: mt_containers_saw() for each
 * directory, as mt_cgroup_walk() gives them (non-zero: stop, the bound is
 * reached), then mt_containers_walked() when the whole tree was seen.
 */
const char *mt_containers_tree(const struct mt_containers *cs);
int mt_containers_saw(struct mt_containers *cs, const char *rel, uint64_t id);
void mt_containers_walked(struct mt_containers *cs);
void mt_containers_get_stats(const struct mt_containers *cs,
			     struct mt_containers_stats *st);

#endif /* MEMTRACK_USER_LIB_H */
