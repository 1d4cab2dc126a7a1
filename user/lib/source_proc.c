// SPDX-License-Identifier: LGPL-2.1
/*
 * Task rows without the module: /proc/PID/stat (identity, faults, CPU and
 * start time), status (uid and the memory split) and cgroup (the cgroup v2
 * path, whose directory inode is the cgroup id), as struct memtrack_task.
 * A process that goes away while we read it is skipped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "libmemtrack.h"
#include "internal.h"
#include "grow.h"
#include "source.h"

/*
 * Processes mostly share a few cgroups: their inodes are remembered per
 * scan, by path.  A node of pods has hundreds of cgroups whose paths share
 * their first 60 characters: a table hashed on the whole path, grown as
 * needed (a list of 64 compared in turn missed every cgroup past the 64th,
 * a stat() per process, and compared the common part at each step).
 *
 * In a cgroup namespace of its own (a pod's, on cgroup v2), another
 * process's /proc/PID/cgroup is relative to the namespace's root:
 * "/../../kubepods.slice/...".  With the host's tree mounted under
 * $MEMTRACK_ROOTFS (a node agent's), such a path is made absolute with
 * the namespace root's own path in that tree, found once per scan by its
 * inode (the inode of the cgroup2 mounted inside the namespace).
 */
struct cg_entry {
	char *path;			/* NULL: a free slot */
	uint64_t hash, ino;
};

struct cg_cache {
	char root[256];			/* where cgroup2 is mounted */
	char ns[4096];			/* the namespace root's path in it */
	bool ns_looked;			/* ns[] looked for this scan */
	size_t n, cap;			/* cap a power of 2, or 0 */
	struct cg_entry *e;
};

struct rows {
	struct memtrack_task *v;
	size_t n, cap;
	struct cg_cache cg;
	long tick_ns;
	bool no_cgroup;			/* cgroup_id left 0 */
};

/*
 * Whole small file of the process directory dfd into buf (terminated); its
 * length or a negative errno.  Relative to the directory: a path from /
 * again for each of three files was a fifth of the kernel's time.
 */
static ssize_t read_file(int dfd, const char *name, char *buf, size_t size)
{
	ssize_t len;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	if (len < 0)
		len = -errno;
	else
		buf[len] = '\0';
	close(fd);
	return len;
}

/* The cgroup2 mount point from /proc/self/mountinfo, else /sys/fs/cgroup. */
void mt_cgroup2_root(char *buf, size_t len)
{
	char line[1024], root[256], mnt[256], *sep;
	FILE *f;

	snprintf(buf, len, "/sys/fs/cgroup");
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE */
		sep = strstr(line, " - ");
		if (sep && !strncmp(sep + 3, "cgroup2 ", 8) &&
		    sscanf(line, "%*d %*d %*s %255s %255s", root, mnt) == 2 &&
		    !strcmp(root, "/")) {
			snprintf(buf, len, "%s", mnt);
			break;
		}
	}
	fclose(f);
}

void mt_cgroup_tree(char *buf, size_t len)
{
	const char *rootfs = getenv("MEMTRACK_ROOTFS");

	if (rootfs && *rootfs && strcmp(rootfs, "/"))
		snprintf(buf, len, "%s/sys/fs/cgroup", rootfs);
	else
		mt_cgroup2_root(buf, len);
}

struct ns_find {
	uint64_t ino;
	char *found;
};

static int find_ns(void *arg, const char *path, const char *rel, uint64_t id)
{
	struct ns_find *f = arg;

	(void)path;
	if (id != f->ino)
		return 0;
	f->found = strdup(rel);
	return 1;
}

/* Our cgroup namespace's root in c->root's tree, "" if not found. */
static void find_ns_root(struct cg_cache *c)
{
	struct ns_find f = { 0 };
	char mine[256];
	struct stat st;

	c->ns_looked = true;
	c->ns[0] = '\0';
	mt_cgroup2_root(mine, sizeof(mine));
	if (!strcmp(mine, c->root) || stat(mine, &st))
		return;
	f.ino = st.st_ino;
	mt_cgroup_walk(c->root, find_ns, &f);
	if (f.found)
		snprintf(c->ns, sizeof(c->ns), "%s", f.found);
	free(f.found);
}

/*
 * ns + rel ("/../x/y") into out with each ".." taking the component before
 * it away: false if it goes above the root or does not fit.
 */
static bool cg_join(const char *ns, const char *rel, char *out, size_t len)
{
	size_t n = snprintf(out, len, "%s", ns);
	const char *p = rel;

	if (n >= len)
		return false;
	while (*p) {
		const char *end;
		size_t k;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchrnul(p, '/');
		k = end - p;
		if (k == 2 && !strncmp(p, "..", 2)) {
			char *slash = strrchr(out, '/');

			if (!slash)
				return false;	/* above the root */
			*slash = '\0';
			n = slash - out;
		} else if (!(k == 1 && *p == '.')) {
			if (n + 1 + k >= len)
				return false;
			out[n++] = '/';
			memcpy(out + n, p, k);
			n += k;
			out[n] = '\0';
		}
		p = end;
	}
	return true;
}

/* FNV-1a, 64 bits. */
static uint64_t cg_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

static struct cg_entry *cg_slot(struct cg_entry *e, size_t cap,
				const char *path, uint64_t h)
{
	size_t i = h & (cap - 1);

	while (e[i].path && (e[i].hash != h || strcmp(e[i].path, path)))
		i = (i + 1) & (cap - 1);
	return &e[i];
}

/* Room for one more, at most half full; false without memory. */
static bool cg_reserve(struct cg_cache *c)
{
	size_t cap = c->cap ? 2 * c->cap : 64, i;
	struct cg_entry *e;

	if (2 * (c->n + 1) <= c->cap)
		return true;
	e = calloc(cap, sizeof(*e));
	if (!e)
		return false;
	for (i = 0; i < c->cap; i++)
		if (c->e[i].path)
			*cg_slot(e, cap, c->e[i].path, c->e[i].hash) = c->e[i];
	free(c->e);
	c->e = e;
	c->cap = cap;
	return true;
}

static uint64_t cg_ino(struct cg_cache *c, const char *path)
{
	char full[4096], abs[4096];
	uint64_t h = cg_hash(path);
	struct cg_entry *e;
	struct stat st;

	if (c->cap) {
		e = cg_slot(c->e, c->cap, path, h);
		if (e->path)
			return e->ino;
	}
	if (!strncmp(path, "/..", 3) && (path[3] == '/' || !path[3])) {
		if (!c->ns_looked)
			find_ns_root(c);
		if (!c->ns[0] || !cg_join(c->ns, path, abs, sizeof(abs)))
			return 0;	/* outside what we can see */
		snprintf(full, sizeof(full), "%s%s", c->root, abs);
	} else {
		snprintf(full, sizeof(full), "%s%s", c->root, path);
	}
	if (stat(full, &st))
		return 0;
	if (cg_reserve(c)) {
		e = cg_slot(c->e, c->cap, path, h);
		e->path = strdup(path);
		if (e->path) {
			e->hash = h;
			e->ino = st.st_ino;
			c->n++;
		}
	}
	return st.st_ino;
}

static void cg_free(struct cg_cache *c)
{
	size_t i;

	for (i = 0; i < c->cap; i++)
		free(c->e[i].path);
	free(c->e);
	c->e = NULL;
	c->n = c->cap = 0;
}

/* "0::/path" of /proc/.../cgroup; 0 without cgroup v2. */
static uint64_t read_cgroup(struct rows *r, int dfd)
{
	char buf[4096], *p, *nl;

	if (read_file(dfd, "cgroup", buf, sizeof(buf)) <= 0)
		return 0;
	for (p = buf; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(p, "0::", 3))
			return cg_ino(&r->cg, p + 3);
	}
	return 0;
}

/*
 * Fields 4 (ppid) to last of a stat line (proc(5)'s numbers), into f[4..]:
 * by hand, as sscanf() was a tenth of a /proc refresh.  p is just past
 * the comm's ")" (the comm may hold ") ": the caller finds the last one).
 * False if the line is short or not numbers.
 */
static bool stat_fields(const char *p, unsigned long long *f, int last)
{
	unsigned long long x;
	bool neg;
	int k;

	if (*p++ != ' ' || !*p++)
		return false;		/* the state: one character */
	for (k = 4; k <= last; k++) {
		while (*p == ' ')
			p++;
		neg = *p == '-';
		p += neg;
		if (*p < '0' || *p > '9')
			return false;
		for (x = 0; *p >= '0' && *p <= '9'; p++)
			x = x * 10 + (unsigned int)(*p - '0');
		f[k] = neg ? -x : x;
	}
	return true;
}

static int read_stat(struct rows *r, int dfd, struct memtrack_task *t)
{
	char buf[1024], *open_paren, *close_paren;
	unsigned long long f[24];
	size_t len;

	if (read_file(dfd, "stat", buf, sizeof(buf)) <= 0)
		return -ENOENT;
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return -EBADMSG;
	len = close_paren - open_paren - 1;
	if (len >= sizeof(t->comm))
		len = sizeof(t->comm) - 1;
	memcpy(t->comm, open_paren + 1, len);
	/* ppid(4) ... minflt(10) majflt(12) utime(14) stime(15) ...
	 * num_threads(20) starttime(22) vsize(23) */
	if (!stat_fields(close_paren + 1, f, 23))
		return -EBADMSG;
	t->ppid = (int)f[4];
	t->threads = (int)f[20];
	t->counters[MEMTRACK_CTR_MIN_FLT] = f[10];
	t->counters[MEMTRACK_CTR_MAJ_FLT] = f[12];
	t->utime_ns = f[14] * r->tick_ns;
	t->stime_ns = f[15] * r->tick_ns;
	t->start_ns = f[22] * r->tick_ns;
	t->mm.vm_total = f[23];
	return 0;
}

struct status_field {
	const char *name;
	size_t len, off;
};

#define MM(f)	offsetof(struct memtrack_task, mm.f)
#define FIELD(name, f)	{ name, sizeof(name) - 1, MM(f) }
static const struct status_field status_fields[] = {
	FIELD("RssAnon:", rss_anon),
	FIELD("RssFile:", rss_file),
	FIELD("RssShmem:", rss_shmem),
	FIELD("VmSwap:", swap),
	FIELD("VmHWM:", rss_peak),
	FIELD("VmData:", vm_data),
	FIELD("VmStk:", vm_stack),
	FIELD("VmExe:", vm_exec),
	FIELD("VmLib:", vm_exec),
	FIELD("VmPTE:", pgtables),
};

static int read_status(int dfd, struct memtrack_task *t)
{
	char buf[4096], *p, *nl;
	unsigned long long v;
	size_t i, n;

	if (read_file(dfd, "status", buf, sizeof(buf)) <= 0)
		return -ENOENT;
	for (p = buf; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		/* Most of the 50-odd lines are none of ours. */
		if (*p != 'R' && *p != 'V' && *p != 'U')
			continue;
		if (!strncmp(p, "Uid:", 4)) {
			t->uid = strtoul(p + 4, NULL, 10);
			continue;
		}
		for (i = 0; i < sizeof(status_fields) / sizeof(status_fields[0]); i++) {
			n = status_fields[i].len;
			if (p[1] != status_fields[i].name[1] ||
			    strncmp(p, status_fields[i].name, n))
				continue;
			v = strtoull(p + n, NULL, 10);
			*(__u64 *)((char *)t + status_fields[i].off) += v << 10;
			break;
		}
	}
	return 0;
}

static struct memtrack_task *new_row(struct rows *r)
{
	if (mt_grow((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v), 256))
		return NULL;
	memset(&r->v[r->n], 0, sizeof(r->v[0]));
	return &r->v[r->n];
}

/* One row from dfd (/proc/PID or /proc/TGID/task/TID); gone: skipped. */
static int add_row(struct rows *r, int dfd, pid_t pid, pid_t tgid,
		   bool thread)
{
	struct memtrack_task *t = new_row(r);

	if (!t)
		return mt_seterr(-ENOMEM, "out of memory");
	t->pid = pid;
	t->tgid = tgid;
	if (read_stat(r, dfd, t) || read_status(dfd, t))
		return 0;
	if (thread)
		t->threads = 1;
	if (!r->no_cgroup)
		t->cgroup_id = read_cgroup(r, dfd);
	r->n++;
	return 0;
}

static int scan(struct rows *r, const char *dir, pid_t tgid)
{
	struct dirent *d;
	int err = 0, dfd;
	pid_t pid;
	DIR *dp;

	dp = opendir(dir);
	if (!dp)
		return mt_seterr(-errno, "%s: %s", dir, strerror(errno));
	r->tick_ns = 1000000000L / sysconf(_SC_CLK_TCK);
	mt_cgroup_tree(r->cg.root, sizeof(r->cg.root));
	r->cg.ns_looked = false;
	while (!err && (d = readdir(dp))) {
		pid = atoi(d->d_name);
		if (pid <= 0)
			continue;
		dfd = openat(dirfd(dp), d->d_name,
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;	/* gone meanwhile */
		err = add_row(r, dfd, pid, tgid ? tgid : pid, tgid);
		close(dfd);
	}
	closedir(dp);
	cg_free(&r->cg);
	return err;
}

static int finish(struct rows *r, int err, struct memtrack_task **out,
		  size_t *n)
{
	if (err) {
		free(r->v);
		return err;
	}
	*out = r->v;
	*n = r->n;
	return 0;
}

int mt_proc_tasks(struct memtrack_task **out, size_t *n, bool no_cgroup)
{
	struct rows r = { .no_cgroup = no_cgroup };

	return finish(&r, scan(&r, "/proc", 0), out, n);
}

int mt_proc_threads(pid_t tgid, struct memtrack_task **out, size_t *n)
{
	struct rows r = { 0 };
	char dir[64];
	int err;

	snprintf(dir, sizeof(dir), "/proc/%d/task", tgid);
	err = scan(&r, dir, tgid);
	if (err == -ENOENT)
		err = mt_seterr(-ESRCH, "no process %d", tgid);
	return finish(&r, err, out, n);
}

#define PF_KTHREAD	0x00200000	/* include/linux/sched.h */

/* /proc/PID/stat's flags (field 9) say kernel thread; false if gone. */
static bool proc_kthread(int32_t pid)
{
	char path[32], buf[1024], *p;
	unsigned long long f[10];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(AT_FDCWD, path, buf, sizeof(buf)) <= 0)
		return false;
	/* the comm may hold ") ": the fields start after the last one */
	p = strrchr(buf, ')');
	return p && stat_fields(p + 1, f, 9) && (f[9] & PF_KTHREAD);
}

/*
 * Neither source marks kernel threads: a row without an address space is
 * checked against /proc/PID/stat's PF_KTHREAD (not its parent, which in a
 * pid namespace can be any process); an exited row without one is a
 * kernel thread's, since the module's rows keep the mm at exit.  A live
 * row whose /proc entry is gone is taken for a process.
 */
bool mt_task_is_kthread(const struct memtrack_task *t)
{
	if (t->mm.vm_total)
		return false;
	return t->exited || proc_kthread(t->tgid);
}
