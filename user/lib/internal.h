/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef MEMTRACK_USER_LIB_INTERNAL_H
#define MEMTRACK_USER_LIB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

/* Set mt_errmsg() and return err. */
int mt_seterr(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Generic netlink requests (netlink.c), shared with leak.c.  req_msg()
 * starts a message for cmd (flags: NLM_F_DUMP or 0); req_run() sends it
 * (consumed) and calls r->parse for each reply until ACK, error or DONE.
 */
struct mt_handle;
struct nl_msg;
struct nlattr;

struct req {
	struct mt_handle *h;
	/* called for each reply; a negative return fails the request */
	int (*parse)(struct req *r, struct nlattr **tb);
	void *arg;
	int err;			/* first negative errno */
	bool done;
};

struct nl_msg *req_msg(struct mt_handle *h, int cmd, int flags);
/* The same with room for size bytes (0: libnl's default, a page). */
struct nl_msg *req_msg_size(struct mt_handle *h, int cmd, int flags,
			    size_t size);
int req_run(struct mt_handle *h, struct nl_msg *msg, struct req *r);
/* Copy a binary attribute of at least size bytes; longer is a newer kernel. */
int req_get_struct(struct nlattr *a, void *dst, size_t size, const char *what);

/*
 * A request about process pid: req_msg_size() with MEMTRACK_ATTR_TGID put
 * (NULL: out of memory, mt_errmsg() set).  req_leak_run() (leak.c) is
 * req_run() with the leak tracer's refusals about pid spelled out.
 */
struct nl_msg *req_tgid_msg(struct mt_handle *h, int cmd, int flags,
			    pid_t pid, size_t size);
int req_leak_run(struct mt_handle *h, struct nl_msg *msg, pid_t pid,
		 struct req *r);

/*
 * Every thread of process pid stopped under ptrace (stop_world.c): seized
 * with opts (PTRACE_O_*), interrupted, waited for, its registers read;
 * traced: a thread the caller has stopped already (left as it is).
 * Returns 0, or a negative errno with mt_errmsg() set (-ESRCH: the
 * process is gone; -EPERM: no rights); the threads seized so far are
 * still to be released.  mt_world_release() lets every seized thread go,
 * handing back the signal it had stopped for, if any.
 */
struct mt_thread {
	pid_t tid;
	int sig;			/* signal to hand back at the release */
	bool seized, stopped, gone;
	bool ours;			/* stopped by the caller: left stopped */
	bool running;			/* let go again, still seized */
	bool called;			/* a remote call ran on it */
	mt_regs_t regs;
};

struct mt_world {
	pid_t pid;
	struct mt_thread *v;
	size_t n, cap;
	uint64_t since_ns;		/* the first interrupt (CLOCK_MONOTONIC) */
};

int mt_world_stop(pid_t pid, pid_t traced, unsigned long opts,
		  struct mt_world *w);
/* The stopped threads but except run on, still seized (a lock they hold). */
void mt_world_let_go(struct mt_world *w, pid_t except);
void mt_world_release(struct mt_world *w);

/*
 * fn(w, arg) with every thread of process pid stopped (mt_world_stop()
 * with opts), on a thread made for it whose exit lets them all go at
 * once: a thread run on by fn (mt_remote_call()) included, the signal it
 * or any other had stopped for handed back.  Returns fn's result, or the
 * stop's error; mt_errmsg() set in the caller.
 */
typedef int mt_world_fn(struct mt_world *w, void *arg);
int mt_world_run(pid_t pid, unsigned long opts, mt_world_fn *fn, void *arg);

/*
 * A function called in a thread t of process pid, stopped by
 * mt_world_stop() with PTRACE_O_TRACESYSGOOD (remote_call.c): fn(args),
 * data (len bytes) copied below the thread's stack first and its address
 * passed as argument data_arg (-1: none).  Returns once the thread is back
 * in the state it was stopped in (t->regs: that state, a system call it
 * was in made to restart), 0; or a negative errno with mt_errmsg() set
 * (-ETIMEDOUT after timeout_ns: the thread is still in the call, and will
 * go back by itself when it returns).  *sysret: the result of the first
 * system call sys the function made (sys -1: none wanted).  on_block(arg)
 * is called once if the thread waits for another (a futex, a yield): the
 * caller lets the others run.  restore_rt: libc's __restore_rt in the
 * target.
 */
struct mt_remote {
	pid_t pid;
	struct mt_thread *t;
	uint64_t restore_rt;
	uint64_t timeout_ns;
	void (*on_block)(void *arg);
	void *arg;
	bool let_go;			/* on_block was called */
	long last_entry;		/* the system call entered last */
	uint64_t data;			/* where the last call's data went */
};

struct mt_remote_args {
	uint64_t fn;
	uint64_t args[4];
	int nargs;
	int data_arg;
	const void *data;
	size_t len;
	long sys;
};

int mt_remote_call(struct mt_remote *rc, const struct mt_remote_args *a,
		   int64_t *sysret);
/* len bytes of pid's memory at addr (0, or a negative errno). */
int mt_remote_peek(pid_t pid, uint64_t addr, void *buf, size_t len);

/*
 * Defined functions and objects of the ELF file path by name (elfsyms.c):
 * .dynsym, .symtab and the .symtab of its debug file (/usr/lib/debug/.build-id)
 * if there is one; a name also matches its compiler clones (name.part.0).
 * out[i]: names[i]'s st_value and st_size, 0 if not found;
 * *load_vaddr: the p_vaddr of the PT_LOAD at file offset 0 (the load bias
 * is its mapping's start less that).  0, or a negative errno.
 */
struct mt_elf_sym {
	uint64_t value, size;
};

int mt_elf_syms(const char *path, const char *const *names, size_t n,
		struct mt_elf_sym *out, uint64_t *load_vaddr);

/*
 * Would the seccomp filters of pid (stopped, seized) let each system call
 * use[i] (number and arguments) through (seccomp_check.c)?  0 with
 * *denied the first one refused (killed, trapped, an error...) or NULL;
 * a negative errno if the filters cannot be read (CAP_SYS_ADMIN).
 */
struct mt_syscall_use {
	long nr;
	uint64_t args[6];
	const char *name;
};

int mt_seccomp_check(pid_t pid, const struct mt_syscall_use *use, size_t n,
		     const struct mt_syscall_use **denied);

/* An injected session's process, and its pidfd (-2: not opened yet). */
struct mt_inject;
pid_t mt_inject_pid(struct mt_inject *in);
int *mt_inject_pidfd(struct mt_inject *in);

/* The state's header, for the injector (leak_preload.c). */
struct mt_preload;
struct mtp_header;
struct mtp_header *mt_preload_header(struct mt_preload *p);

/*
 * /proc/PID/maps (procmaps.c), every mapping in its order.  path is "" for
 * an anonymous mapping, "[heap]", "[stack]"... as maps gives them, and a
 * deleted file's path without its " (deleted)": deleted says so.
 * mt_procmaps_read() returns 0, or -ESRCH (no such process) or another
 * negative errno with mt_errmsg() set to "/proc/PID/maps: reason".
 */
struct mt_procmap {
	uint64_t start, end, offset, inode;
	unsigned int dev_major, dev_minor;
	char perms[5];			/* "r-xp" */
	bool deleted;
	char *path;
};

int mt_procmaps_read(pid_t pid, struct mt_procmap **out, size_t *n);
void mt_procmaps_free(struct mt_procmap *v, size_t n);
/* The objects a symbolizer knows, as mappings (start, end, path only). */
struct mt_symbolizer;
int mt_sym_objects(struct mt_symbolizer *s, struct mt_procmap **out,
		   size_t *n);

/* The table of an executable file mapping m (built once), and its bias. */
struct mt_unwinder;
const struct mt_unwind_table *mt_unwinder_table(struct mt_unwinder *u,
						const struct mt_procmap *m,
						uint64_t *bias);

/*
 * Walks of the stacks of many stopped threads of one process
 * (unwind_walk.c), over the unwinder's tables (all built at the open) and
 * one read of its maps: mt_walker_stack() as mt_unwinder_walk(), from the
 * registers given.
 */
struct mt_walker;
int mt_walker_open(struct mt_unwinder *u, pid_t pid, struct mt_walker **out);
int mt_walker_stack(struct mt_walker *w, const mt_regs_t *regs,
		    uint64_t *pcs, uint64_t *sps, size_t max);
void mt_walker_close(struct mt_walker *w);

/*
 * mt_unwind_build() (MT_CFI_AUTO: .eh_frame and, where there is one, the
 * .debug_frame of the object or its debug file), or from libdw's CFI
 * alone (MT_CFI_LIBDW, for tests), or from .eh_frame alone in one pass
 * (MT_CFI_EH: quick, no debug file read; the injector's walks).
 */
enum mt_cfi_src { MT_CFI_AUTO, MT_CFI_LIBDW, MT_CFI_EH };
struct mt_unwind_table;
int mt_unwind_build_with(const char *path, struct mt_unwind_table *t,
			 enum mt_cfi_src from);
/* The unwinder's tables built with MT_CFI_EH from now on. */
void mt_unwinder_eh_only(struct mt_unwinder *u);

/* --by-lib over given mappings (bylib.c): the module's or the preload's. */
struct mt_leak_stack;
struct mt_bylib_row;
int mt_by_lib_segs(const struct mt_procmap *segs, size_t nsegs,
		   const struct mt_leak_stack *v, size_t n,
		   struct mt_bylib_row **out, size_t *nrows);

/*
 * The loader's rendezvous breakpoint (leak_rendezvous.c), in a ptraced,
 * stopped program.  mt_rdv_insert() sets it at ld.so's _dl_debug_state
 * (b->on false: no loader, nothing set); mt_rdv_hit() tells whether a
 * SIGTRAP stop is at it; mt_rdv_step() runs the instruction under it and
 * re-arms it: 0, 1 (the program ended: *status) or 2 (another event
 * stop: *status), or a negative errno; a signal that came meanwhile is in
 * b->pending.  mt_rdv_remove() takes it out of the program's memory.
 */
struct mt_rdv {
	uint64_t addr;
	long orig;			/* the word it replaced a byte of */
	int pending;
	bool on;
};

int mt_rdv_insert(pid_t pid, struct mt_rdv *b);
int mt_rdv_hit(pid_t pid, struct mt_rdv *b);
int mt_rdv_step(pid_t pid, struct mt_rdv *b, int *status);
int mt_rdv_remove(pid_t pid, struct mt_rdv *b);

#endif
