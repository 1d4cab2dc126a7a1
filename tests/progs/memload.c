// SPDX-License-Identifier: GPL-2.0
/*
 * memload: a workload that changes its memory exactly as told, one command
 * per stdin line, answering "ok ..." on stdout after each, so a test can
 * measure between steps.  Every mapping is touched page by page.
 *
 *   anon BYTES          private anonymous mmap (no huge pages)
 *   thp BYTES           private anonymous mmap of BYTES aligned to the huge
 *                       page size, madvise(MADV_HUGEPAGE): a THP fault per
 *                       huge page where the kernel has one to give
 *   file PATH BYTES     private read-only mmap of a file, every page read
 *   shared BYTES        MAP_SHARED|MAP_ANONYMOUS (shmem)
 *   sysv BYTES          SysV shm segment: shmget + shmat (removed on detach)
 *   brk BYTES           grow the heap with sbrk
 *   pop                 undo the newest of the above (munmap/shmdt/sbrk)
 *   mmaps N             N pairs of one-page mmap + munmap
 *   threads N           N threads; thread i (1..N) does i*10 mmap+munmap
 *                       pairs, then maps and touches i*16 pages (i*10+1
 *                       mmaps, i*10 munmaps in all), then waits for "exit"
 *   exit                end (threads included)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

enum kind { K_MMAP, K_SYSV, K_BRK };

struct region {
	enum kind kind;
	char *addr;
	size_t len;
};

static struct region stack[64];
static int depth;
static long page;

static void die(const char *what)
{
	printf("error %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

static void touch(char *p, size_t len, int write)
{
	volatile char sink;
	size_t off;

	for (off = 0; off < len; off += page) {
		if (write)
			p[off] = 1;
		else
			sink = p[off];
	}
	(void)sink;
}

static void push(enum kind kind, void *addr, size_t len)
{
	if (depth == (int)(sizeof(stack) / sizeof(stack[0]))) {
		errno = ENOSPC;
		die("push");
	}
	stack[depth].kind = kind;
	stack[depth].addr = addr;
	stack[depth].len = len;
	depth++;
}

static void do_map(size_t len, int flags)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	/* One fault per 4 KiB page, so fault counts are exact. */
	madvise(p, len, MADV_NOHUGEPAGE);
	touch(p, len, 1);
	push(K_MMAP, p, len);
}

/* The PMD's size (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size). */
static size_t huge_size(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size",
			"r");
	unsigned long n = 0;

	if (!f || fscanf(f, "%lu", &n) != 1 || !n)
		die("hpage_pmd_size");
	fclose(f);
	return n;
}

static void do_thp(size_t len)
{
	size_t huge = huge_size();
	char *p = mmap(NULL, len + huge, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *at;

	if (p == MAP_FAILED)
		die("mmap");
	at = (char *)(((unsigned long)p + huge - 1) & ~(huge - 1));
	if (madvise(at, len, MADV_HUGEPAGE))
		die("madvise");
	touch(at, len, 1);
	push(K_MMAP, p, len + huge);
}

static void do_file(const char *path, size_t len)
{
	int fd = open(path, O_RDONLY);
	char *p;

	if (fd < 0)
		die("open");
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		die("mmap file");
	close(fd);
	touch(p, len, 0);
	push(K_MMAP, p, len);
}

static void do_sysv(size_t len)
{
	int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
	char *p;

	if (id < 0)
		die("shmget");
	p = shmat(id, NULL, 0);
	if (p == (void *)-1)
		die("shmat");
	shmctl(id, IPC_RMID, NULL);
	touch(p, len, 1);
	push(K_SYSV, p, len);
}

static void do_brk(size_t len)
{
	char *p = sbrk(len);

	if (p == (void *)-1)
		die("sbrk");
	madvise((char *)(((unsigned long)p + page - 1) & ~(page - 1)),
		len & ~(page - 1), MADV_NOHUGEPAGE);
	touch(p, len, 1);
	push(K_BRK, p, len);
}

static void do_pop(void)
{
	struct region *r;

	if (!depth) {
		errno = ENOENT;
		die("pop");
	}
	r = &stack[--depth];
	if (r->kind == K_MMAP && munmap(r->addr, r->len))
		die("munmap");
	if (r->kind == K_SYSV && shmdt(r->addr))
		die("shmdt");
	if (r->kind == K_BRK && sbrk(-(long)r->len) == (void *)-1)
		die("sbrk");
}

static void mmap_pairs(long n)
{
	while (n-- > 0) {
		void *p = mmap(NULL, page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		if (munmap(p, page))
			die("munmap");
	}
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int threads_ready, threads_release;

static void *worker(void *arg)
{
	long i = (long)arg;
	size_t len = i * 16 * page;
	char *p;

	/* mmap, not malloc: a thread's first malloc maps an arena. */
	mmap_pairs(i * 10);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	touch(p, len, 1);
	pthread_mutex_lock(&lock);
	threads_ready++;
	pthread_cond_broadcast(&cond);
	while (!threads_release)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return p;
}

static void start_threads(long n)
{
	pthread_t t;
	long i;

	for (i = 1; i <= n; i++)
		if (pthread_create(&t, NULL, worker, (void *)i))
			die("pthread_create");
	pthread_mutex_lock(&lock);
	while (threads_ready < n)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

int main(void)
{
	char line[4096], arg1[4096];
	long n;

	page = sysconf(_SC_PAGESIZE);
	printf("ok pid %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "anon %ld", &n) == 1)
			do_map(n, MAP_PRIVATE | MAP_ANONYMOUS);
		else if (sscanf(line, "thp %ld", &n) == 1)
			do_thp(n);
		else if (sscanf(line, "file %4095s %ld", arg1, &n) == 2)
			do_file(arg1, n);
		else if (sscanf(line, "shared %ld", &n) == 1)
			do_map(n, MAP_SHARED | MAP_ANONYMOUS);
		else if (sscanf(line, "sysv %ld", &n) == 1)
			do_sysv(n);
		else if (sscanf(line, "brk %ld", &n) == 1)
			do_brk(n);
		else if (!strcmp(line, "pop\n"))
			do_pop();
		else if (sscanf(line, "mmaps %ld", &n) == 1)
			mmap_pairs(n);
		else if (sscanf(line, "threads %ld", &n) == 1)
			start_threads(n);
		else if (!strcmp(line, "exit\n"))
			break;
		else {
			printf("error unknown command: %s", line);
			fflush(stdout);
			return 2;
		}
		printf("ok\n");
		fflush(stdout);
	}
	pthread_mutex_lock(&lock);
	threads_release = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return 0;
}
