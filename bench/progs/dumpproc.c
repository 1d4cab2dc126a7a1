/*
 * dumpproc ROUNDS: time one GET_TASKS dump of the "memtrack" generic netlink
 * family, decoded into struct memtrack_task, against reading
 * /proc/PID/{stat,statm,status} of every process (what top does), in
 * alternating rounds; prints each round and the medians.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/genetlink.h>
#include <linux/memtrack.h>

#define BUF (1 << 20)
#define MAXT 200000

static char buf[BUF];
static struct memtrack_task tasks[MAXT];

struct proc_row {
	int pid, ppid;
	char state;
	unsigned long minflt, majflt, utime, stime, vsize, rss;
	unsigned long size, resident, shared;
	unsigned long vmrss, vmswap, rssanon, rssfile;
	char comm[64];
};
static struct proc_row rows[MAXT];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int send_req(int fd, int family, int cmd, int flags, const void *attr,
		    size_t alen)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
		char a[64];
	} req = { 0 };

	req.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + alen);
	req.n.nlmsg_type = family;
	req.n.nlmsg_flags = NLM_F_REQUEST | flags;
	req.n.nlmsg_seq = 1;
	req.g.cmd = cmd;
	req.g.version = 1;
	memcpy(req.a, attr, alen);
	return send(fd, &req, req.n.nlmsg_len, 0);
}

static int resolve(int fd)
{
	char a[16] = { 0 };
	struct nlattr *na = (struct nlattr *)a;
	struct nlmsghdr *n;
	int len;

	na->nla_type = CTRL_ATTR_FAMILY_NAME;
	na->nla_len = NLA_HDRLEN + sizeof(MEMTRACK_GENL_NAME);
	strcpy(a + NLA_HDRLEN, MEMTRACK_GENL_NAME);
	if (send_req(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, a, NLA_ALIGN(na->nla_len)) < 0)
		die("send");
	len = recv(fd, buf, BUF, 0);
	n = (struct nlmsghdr *)buf;
	if (len < 0 || n->nlmsg_type == NLMSG_ERROR)
		die("resolve memtrack");
	na = (struct nlattr *)((char *)NLMSG_DATA(n) + GENL_HDRLEN);
	len = n->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	for (; len >= NLA_HDRLEN; len -= NLA_ALIGN(na->nla_len),
	     na = (struct nlattr *)((char *)na + NLA_ALIGN(na->nla_len)))
		if (na->nla_type == CTRL_ATTR_FAMILY_ID)
			return *(unsigned short *)((char *)na + NLA_HDRLEN);
	die("no family id");
	return 0;
}

/* Returns the number of tasks decoded. */
static int dump(int fd, int family)
{
	int n = 0, len;
	struct nlmsghdr *h;

	if (send_req(fd, family, MEMTRACK_CMD_GET_TASKS, NLM_F_DUMP, NULL, 0) < 0)
		die("send dump");
	for (;;) {
		len = recv(fd, buf, BUF, 0);
		if (len < 0)
			die("recv");
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			struct nlattr *na = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
			int alen = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);

			if (h->nlmsg_type == NLMSG_DONE)
				return n;
			if (h->nlmsg_type == NLMSG_ERROR)
				die("dump error");
			for (; alen >= NLA_HDRLEN; alen -= NLA_ALIGN(na->nla_len),
			     na = (struct nlattr *)((char *)na + NLA_ALIGN(na->nla_len)))
				if (na->nla_type == MEMTRACK_ATTR_TASK && n < MAXT &&
				    na->nla_len >= NLA_HDRLEN + sizeof(tasks[0]))
					memcpy(&tasks[n++], (char *)na + NLA_HDRLEN,
					       sizeof(tasks[0]));
		}
	}
}

static int slurp(const char *path, char *out, size_t max)
{
	int fd = open(path, O_RDONLY), len;

	if (fd < 0)
		return -1;
	len = read(fd, out, max - 1);
	close(fd);
	if (len < 0)
		return -1;
	out[len] = 0;
	return len;
}

static unsigned long status_kb(const char *s, const char *key)
{
	const char *p = strstr(s, key);

	return p ? strtoul(p + strlen(key), NULL, 10) : 0;
}

static int read_proc(void)
{
	char path[300], b[4096];
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int n = 0;

	while ((d = readdir(dir)) && n < MAXT) {
		struct proc_row *r = &rows[n];
		char *p;

		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		if (slurp(path, b, sizeof(b)) < 0)
			continue;
		p = strrchr(b, ')');
		r->pid = atoi(b);
		snprintf(r->comm, sizeof(r->comm), "%.*s", (int)(p - strchr(b, '(') - 1),
			 strchr(b, '(') + 1);
		sscanf(p + 2, "%c %d %*d %*d %*d %*d %*u %lu %*u %lu %*u %lu %lu %*d %*d %*d %*d %*d %*d %*u %lu %lu",
		       &r->state, &r->ppid, &r->minflt, &r->majflt, &r->utime,
		       &r->stime, &r->vsize, &r->rss);
		snprintf(path, sizeof(path), "/proc/%s/statm", d->d_name);
		if (slurp(path, b, sizeof(b)) < 0)
			continue;
		sscanf(b, "%lu %lu %lu", &r->size, &r->resident, &r->shared);
		snprintf(path, sizeof(path), "/proc/%s/status", d->d_name);
		if (slurp(path, b, sizeof(b)) < 0)
			continue;
		r->vmrss = status_kb(b, "VmRSS:");
		r->vmswap = status_kb(b, "VmSwap:");
		r->rssanon = status_kb(b, "RssAnon:");
		r->rssfile = status_kb(b, "RssFile:");
		n++;
	}
	closedir(dir);
	return n;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5, i, fd, family, nd = 0, np = 0;
	int rcv = 8 << 20;
	double td[64], tp[64], t;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (rounds > 64)
		rounds = 64;
	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	family = resolve(fd);
	for (i = 0; i < rounds; i++) {
		t = now();
		nd = dump(fd, family);
		td[i] = now() - t;
		t = now();
		np = read_proc();
		tp[i] = now() - t;
		printf("round %d: dump %d tasks %.1f ms, /proc %d processes %.1f ms\n",
		       i + 1, nd, td[i] * 1e3, np, tp[i] * 1e3);
	}
	qsort(td, rounds, sizeof(td[0]), cmpd);
	qsort(tp, rounds, sizeof(tp[0]), cmpd);
	printf("median: dump %.1f ms (%d tasks), /proc %.1f ms (%d processes), ratio %.1f\n",
	       td[rounds / 2] * 1e3, nd, tp[rounds / 2] * 1e3, np,
	       tp[rounds / 2] / td[rounds / 2]);
	return 0;
}
