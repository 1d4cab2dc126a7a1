/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef MEMTRACK_USER_LIB_INTERNAL_H
#define MEMTRACK_USER_LIB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/* mt_unwind_build(), or with force_libdw libdw's CFI alone (for tests). */
struct mt_unwind_table;
int mt_unwind_build_with(const char *path, struct mt_unwind_table *t,
			 bool force_libdw);

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
