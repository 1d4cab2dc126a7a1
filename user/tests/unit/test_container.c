// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libmemtrack's containers (container.c, container_state.c,
 * containers.c):
 *
 * - every cgroup path form of container.c's comment, with both kubelet
 *   cgroup drivers and the three QoS classes: exact runtime, ID, pod UID,
 *   QoS, rootless user; paths that are not containers (system services,
 *   a runtime's monitor, IDs one digit short or with upper case) are not;
 * - names from each runtime's state files, written in the runtimes'
 *   formats into a scratch root (ROOT, the test's argument): containerd's
 *   CRI annotations (a sandbox is "POD"), CRI-O's, Docker's config.v2.json
 *   (Name and dockershim's labels), Podman's containers.json rootful and
 *   rootless (home from the root's /etc/passwd), runc's state.json and
 *   crun's status leading to the bundle, an unknown runtime found by
 *   trying each; malformed, truncated and unreadable files and a path in
 *   an ID keep the ID names and change nothing;
 * - the cache on a cgroup tree under ROOT/sys/fs/cgroup: one walk and one
 *   read of names per new container, none for a known one, a cgroup made
 *   later found by one more walk, what two samples did not ask for
 *   forgotten;
 * - the walk of a cgroup tree (cgroup_walk.c) every cache and tool uses.
 *
 * Prints "PASS name" or "FAIL name: why"; exits 1 if any failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libmemtrack.h"

static int failures;
static const char *root;

static void check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS %s\n", name);
		return;
	}
	failures++;
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

#define ID_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define UID  "3f1c2a4e-8d1b-4c3e-9f0a-1b2c3d4e5f60"
#define UIDU "3f1c2a4e_8d1b_4c3e_9f0a_1b2c3d4e5f60"

static const struct path_case {
	const char *name, *path;
	int ret;
	enum mt_runtime rt;
	const char *id, *pod_uid;
	enum mt_qos qos;
	uint32_t uid;
} paths[] = {
	{ "containerd-systemd-burstable",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	  UIDU ".slice/cri-containerd-" ID_A ".scope",
	  1, MT_RT_CONTAINERD, ID_A, UID, MT_QOS_BURSTABLE, 0 },
	{ "containerd-systemd-guaranteed",
	  "/kubepods.slice/kubepods-pod" UIDU ".slice/cri-containerd-" ID_A
	  ".scope", 1, MT_RT_CONTAINERD, ID_A, UID, MT_QOS_GUARANTEED, 0 },
	{ "crio-systemd-besteffort",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
	  UIDU ".slice/crio-" ID_B ".scope",
	  1, MT_RT_CRIO, ID_B, UID, MT_QOS_BESTEFFORT, 0 },
	{ "cgroupfs-burstable",
	  "/kubepods/burstable/pod" UID "/" ID_A,
	  1, MT_RT_UNKNOWN, ID_A, UID, MT_QOS_BURSTABLE, 0 },
	{ "cgroupfs-guaranteed",
	  "/kubepods/pod" UID "/" ID_B,
	  1, MT_RT_UNKNOWN, ID_B, UID, MT_QOS_GUARANTEED, 0 },
	{ "cgroupfs-besteffort-crio",
	  "/kubepods/besteffort/pod" UID "/crio-" ID_B,
	  1, MT_RT_CRIO, ID_B, UID, MT_QOS_BESTEFFORT, 0 },
	{ "pod-own-cgroup",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	  UIDU ".slice", 1, MT_RT_NONE, "", UID, MT_QOS_BURSTABLE, 0 },
	{ "crio-conmon-is-the-pod-not-the-container",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	  UIDU ".slice/crio-conmon-" ID_B ".scope",
	  1, MT_RT_NONE, "", UID, MT_QOS_BURSTABLE, 0 },
	{ "docker-systemd", "/system.slice/docker-" ID_A ".scope",
	  1, MT_RT_DOCKER, ID_A, "", MT_QOS_NONE, 0 },
	{ "docker-cgroupfs", "/docker/" ID_A,
	  1, MT_RT_DOCKER, ID_A, "", MT_QOS_NONE, 0 },
	{ "podman-rootful", "/machine.slice/libpod-" ID_B ".scope/container",
	  1, MT_RT_PODMAN, ID_B, "", MT_QOS_NONE, 0 },
	{ "podman-rootless",
	  "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-"
	  ID_B ".scope", 1, MT_RT_PODMAN, ID_B, "", MT_QOS_NONE, 1000 },
	{ "podman-cgroupfs", "/libpod_parent/libpod-" ID_A,
	  1, MT_RT_PODMAN, ID_A, "", MT_QOS_NONE, 0 },
	{ "podman-conmon-is-not",
	  "/machine.slice/libpod-conmon-" ID_B ".scope",
	  0, MT_RT_NONE, "", "", MT_QOS_NONE, 0 },
	{ "runc-systemd", "/system.slice/runc-" ID_A ".scope",
	  1, MT_RT_RUNC, ID_A, "", MT_QOS_NONE, 0 },
	{ "crun-systemd", "/system.slice/crun-" ID_A ".scope",
	  1, MT_RT_CRUN, ID_A, "", MT_QOS_NONE, 0 },
	{ "ctr-namespace-id", "/default/" ID_B,
	  1, MT_RT_UNKNOWN, ID_B, "", MT_QOS_NONE, 0 },
	{ "machined-escaped", "/machine.slice/machine-web\\x2d1.scope/payload",
	  1, MT_RT_MACHINED, "web-1", "", MT_QOS_NONE, 0 },
	{ "lxc-payload", "/lxc.payload.db1/init.scope",
	  1, MT_RT_LXC, "db1", "", MT_QOS_NONE, 0 },
	{ "lxc-old", "/lxc/db2", 1, MT_RT_LXC, "db2", "", MT_QOS_NONE, 0 },
	{ "lxc-monitor-is-not", "/lxc.monitor.db1",
	  0, MT_RT_NONE, "", "", MT_QOS_NONE, 0 },
	{ "service-is-not", "/system.slice/ssh.service",
	  0, MT_RT_NONE, "", "", MT_QOS_NONE, 0 },
	{ "user-session-is-not",
	  "/user.slice/user-1000.slice/session-3.scope",
	  0, MT_RT_NONE, "", "", MT_QOS_NONE, 0 },
	{ "root-is-not", "/", 0, MT_RT_NONE, "", "", MT_QOS_NONE, 0 },
	{ "kubepods-alone-is-not", "/kubepods.slice/kubepods-burstable.slice",
	  0, MT_RT_NONE, "", "", MT_QOS_NONE, 0 },
	{ "short-id-is-not", "/docker/" "0123456789abcdef0123456789abcdef"
	  "0123456789abcdef0123456789abcde",
	  0, MT_RT_NONE, "", "", MT_QOS_NONE, 0 },
	{ "upper-case-id-is-not", "/system.slice/docker-"
	  "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"
	  ".scope", 0, MT_RT_NONE, "", "", MT_QOS_NONE, 0 },
	{ "bad-pod-uid-is-not", "/kubepods/burstable/pod3f1c2a4e-8d1b",
	  0, MT_RT_NONE, "", "", MT_QOS_NONE, 0 },
	{ "pod-outside-kubepods-is-not", "/pod" UID,
	  0, MT_RT_NONE, "", "", MT_QOS_NONE, 0 },
};

static void test_paths(void)
{
	size_t i;

	for (i = 0; i < MT_ARRAY_SIZE(paths); i++) {
		const struct path_case *p = &paths[i];
		struct mt_container c;
		int r = mt_container_from_cgroup(p->path, &c);

		check(r == p->ret && c.runtime == p->rt &&
		      !strcmp(c.id, p->id) && !strcmp(c.pod_uid, p->pod_uid) &&
		      c.qos == p->qos && c.uid == p->uid &&
		      c.rootless == (p->uid != 0) && !c.named,
		      p->name, "%s: got %d %s id=%s pod=%s qos=%s uid=%u",
		      p->path, r, mt_runtime_name(c.runtime), c.id, c.pod_uid,
		      mt_qos_name(c.qos), c.uid);
	}
}

/* ROOT/rel made with its folders, holding text. */
static void put(const char *rel, const char *fmt, ...)
{
	char path[4096], *slash;
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* A container of runtime rt and ID id, named from ROOT's state. */
static struct mt_container named(enum mt_runtime rt, const char *id,
				 int *ret)
{
	struct mt_container c;

	memset(&c, 0, sizeof(c));
	c.runtime = rt;
	snprintf(c.id, sizeof(c.id), "%s", id);
	snprintf(c.name, sizeof(c.name), "%.12s", id);
	*ret = mt_container_names(root, &c);
	return c;
}

static void expect(const char *test, const struct mt_container *c, int ret,
		   int want_ret, enum mt_runtime rt, const char *name,
		   const char *pod, const char *ns, bool is_named)
{
	check(ret == want_ret && c->runtime == rt && !strcmp(c->name, name) &&
	      !strcmp(c->pod, pod) && !strcmp(c->ns, ns) &&
	      c->named == is_named, test,
	      "got %d %s name=%s pod=%s ns=%s named=%d", ret,
	      mt_runtime_name(c->runtime), c->name, c->pod, c->ns, c->named);
}

#define TASK "run/containerd/io.containerd.runtime.v2.task"

static void test_names(void)
{
	struct mt_container c;
	int r;

	/* containerd: a container and its pod's sandbox */
	put(TASK "/k8s.io/" ID_A "/config.json",
	    "{\"ociVersion\":\"1.1.0\",\"annotations\":{"
	    "\"io.kubernetes.cri.container-type\":\"container\","
	    "\"io.kubernetes.cri.container-name\":\"web\","
	    "\"io.kubernetes.cri.sandbox-name\":\"shop-7d9f\","
	    "\"io.kubernetes.cri.sandbox-namespace\":\"prod\","
	    "\"io.kubernetes.cri.sandbox-uid\":\"" UID "\"}}");
	put(TASK "/k8s.io/" ID_B "/config.json",
	    "{\"annotations\":{"
	    "\"io.kubernetes.cri.container-type\":\"sandbox\","
	    "\"io.kubernetes.cri.sandbox-name\":\"shop-7d9f\","
	    "\"io.kubernetes.cri.sandbox-namespace\":\"prod\"}}");
	c = named(MT_RT_CONTAINERD, ID_A, &r);
	expect("names-containerd", &c, r, 0, MT_RT_CONTAINERD, "web",
	       "shop-7d9f", "prod", true);
	check(!strcmp(c.pod_uid, UID), "names-containerd-pod-uid", "%s",
	      c.pod_uid);
	c = named(MT_RT_CONTAINERD, ID_B, &r);
	expect("names-containerd-sandbox-is-POD", &c, r, 0, MT_RT_CONTAINERD,
	       "POD", "shop-7d9f", "prod", true);
	/* the cgroupfs driver's bare ID: found by trying the runtimes */
	c = named(MT_RT_UNKNOWN, ID_A, &r);
	expect("names-unknown-runtime-found", &c, r, 0, MT_RT_CONTAINERD,
	       "web", "shop-7d9f", "prod", true);
	c = named(MT_RT_CRIO, ID_A, &r);
	expect("names-wrong-runtime-keeps-id", &c, r, -ENOENT, MT_RT_CRIO,
	       "0123456789ab", "", "", false);
}

#define ID_C "1111111111111111111111111111111111111111111111111111111111111111"
#define ID_D "2222222222222222222222222222222222222222222222222222222222222222"
#define ID_E "3333333333333333333333333333333333333333333333333333333333333333"
#define ID_F "4444444444444444444444444444444444444444444444444444444444444444"
#define ID_G "5555555555555555555555555555555555555555555555555555555555555555"
#define ID_H "6666666666666666666666666666666666666666666666666666666666666666"
#define STORAGE "var/lib/containers/storage/overlay-containers"

static void test_names_others(void)
{
	struct mt_container c;
	int r;

	/* CRI-O: its run root */
	put("run/containers/storage/overlay-containers/" ID_B
	    "/userdata/config.json",
	    "{\"annotations\":{\"io.kubernetes.container.name\":\"api\","
	    "\"io.kubernetes.cri-o.ContainerType\":\"container\","
	    "\"io.kubernetes.pod.name\":\"api-5c\","
	    "\"io.kubernetes.pod.namespace\":\"kube-system\","
	    "\"io.kubernetes.pod.uid\":\"" UID "\"}}");
	c = named(MT_RT_CRIO, ID_B, &r);
	expect("names-crio", &c, r, 0, MT_RT_CRIO, "api", "api-5c",
	       "kube-system", true);
	check(!strcmp(c.pod_uid, UID), "names-crio-pod-uid", "%s", c.pod_uid);

	/* Docker: its name, and dockershim's labels */
	put("var/lib/docker/containers/" ID_C "/config.v2.json",
	    "{\"ID\":\"" ID_C "\",\"Name\":\"/redis-cache\","
	    "\"Config\":{\"Labels\":{\"maintainer\":\"x\"}}}");
	c = named(MT_RT_DOCKER, ID_C, &r);
	expect("names-docker", &c, r, 0, MT_RT_DOCKER, "redis-cache", "", "",
	       true);
	put("var/lib/docker/containers/" ID_D "/config.v2.json",
	    "{\"Name\":\"/k8s_web_shop-7d9f_prod_" UID "_0\","
	    "\"Config\":{\"Labels\":{"
	    "\"io.kubernetes.container.name\":\"web\","
	    "\"io.kubernetes.pod.name\":\"shop-7d9f\","
	    "\"io.kubernetes.pod.namespace\":\"prod\"}}}");
	c = named(MT_RT_DOCKER, ID_D, &r);
	expect("names-dockershim", &c, r, 0, MT_RT_DOCKER, "web", "shop-7d9f",
	       "prod", true);

	/* Podman rootful, and rootless under the user's home */
	put(STORAGE "/containers.json",
	    "[{\"id\":\"" ID_A "\",\"names\":[\"other\"]},"
	    "{\"id\":\"" ID_E "\",\"names\":[\"nginx-test\",\"alias\"],"
	    "\"image\":\"abc\"}]");
	c = named(MT_RT_PODMAN, ID_E, &r);
	expect("names-podman", &c, r, 0, MT_RT_PODMAN, "nginx-test", "", "",
	       true);
	put("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"
	    "ann:x:1000:1000:Ann:/home/ann:/bin/sh\n");
	put("home/ann/.local/share/containers/storage/overlay-containers/"
	    "containers.json",
	    "[{\"id\":\"" ID_F "\",\"names\":[\"anns-db\"]}]");
	c = named(MT_RT_PODMAN, ID_F, &r);
	c.rootless = true;
	c.uid = 1000;
	snprintf(c.name, sizeof(c.name), "%.12s", c.id);
	r = mt_container_names(root, &c);
	expect("names-podman-rootless", &c, r, 0, MT_RT_PODMAN, "anns-db",
	       "", "", true);
	c.uid = 1001;
	c.named = false;
	snprintf(c.name, sizeof(c.name), "%.12s", c.id);
	r = mt_container_names(root, &c);
	expect("names-podman-rootless-unknown-user", &c, r, -ENOENT,
	       MT_RT_PODMAN, "444444444444", "", "", false);

	/* runc and crun: the bundle their state names */
	put("srv/bundles/b1/config.json",
	    "{\"annotations\":{\"io.kubernetes.cri.container-name\":\"job\","
	    "\"io.kubernetes.cri.sandbox-name\":\"batch-1\","
	    "\"io.kubernetes.cri.sandbox-namespace\":\"jobs\"}}");
	put("run/runc/" ID_G "/state.json",
	    "{\"id\":\"" ID_G "\",\"config\":{\"labels\":[\"x=y\","
	    "\"bundle=/srv/bundles/b1\"]}}");
	c = named(MT_RT_UNKNOWN, ID_G, &r);
	expect("names-runc-bundle", &c, r, 0, MT_RT_RUNC, "job", "batch-1",
	       "jobs", true);
	put("srv/bundles/b2/config.json", "{\"ociVersion\":\"1.0.2\"}");
	put("run/crun/" ID_H "/status",
	    "{\"pid\":42,\"bundle\":\"/srv/bundles/b2\",\"owner\":\"\"}");
	c = named(MT_RT_CRUN, ID_H, &r);
	expect("names-crun-bundle-without-names", &c, r, 0, MT_RT_CRUN,
	       "666666666666", "", "", false);

	/* bad state: no error, the ID names kept */
	put("var/lib/docker/containers/" ID_A "/config.v2.json",
	    "{\"Name\":\"/half");
	c = named(MT_RT_DOCKER, ID_A, &r);
	expect("names-truncated-json", &c, r, -ENOENT, MT_RT_DOCKER,
	       "0123456789ab", "", "", false);
	put("var/lib/docker/containers/" ID_B "/config.v2.json",
	    "[\"Name\", 3, {\"Config\": null}]");
	c = named(MT_RT_DOCKER, ID_B, &r);
	expect("names-json-of-another-shape", &c, r, 0, MT_RT_DOCKER,
	       "fedcba987654", "", "", false);
	put("run/runc/" ID_A "/state.json",
	    "{\"config\":{\"labels\":[\"bundle=../../etc\", 7]}}");
	c = named(MT_RT_RUNC, ID_A, &r);
	expect("names-relative-bundle-ignored", &c, r, 0, MT_RT_RUNC,
	       "0123456789ab", "", "", false);
	if (geteuid()) {
		char path[4096];

		snprintf(path, sizeof(path),
			 "%s/var/lib/docker/containers/%s/config.v2.json",
			 root, ID_C);
		chmod(path, 0);
		c = named(MT_RT_DOCKER, ID_C, &r);
		expect("names-unreadable", &c, r, -ENOENT, MT_RT_DOCKER,
		       "111111111111", "", "", false);
		chmod(path, 0644);
	}
	c = named(MT_RT_UNKNOWN, "../../etc", &r);
	check(r == -ENOENT && c.runtime == MT_RT_UNKNOWN,
	      "names-path-in-id-refused", "got %d", r);
	c = named(MT_RT_UNKNOWN, "77777777777777777777777777777777"
		  "77777777777777777777777777777777", &r);
	check(r == -ENOENT, "names-of-no-runtime", "got %d %s", r,
	      mt_runtime_name(c.runtime));
}

/* ROOT/sys/fs/cgroup/rel made; its inode. */
static uint64_t cgroup(const char *rel)
{
	char path[4096], *slash;
	struct stat st;

	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/%s/", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	if (stat(path, &st)) {
		perror(path);
		exit(2);
	}
	return st.st_ino;
}

static void test_cache(void)
{
	struct mt_containers_stats st;
	const struct mt_container *c;
	struct mt_containers *cs;
	uint64_t web, sshd, late;
	int i;

	web = cgroup("kubepods.slice/kubepods-burstable.slice/"
		     "kubepods-burstable-pod" UIDU ".slice/cri-containerd-"
		     ID_A ".scope");
	sshd = cgroup("system.slice/ssh.service");
	setenv("MEMTRACK_ROOTFS", root, 1);
	cs = mt_containers_new(NULL);
	if (!cs) {
		check(false, "cache-new", "%s", strerror(errno));
		return;
	}
	c = mt_containers_find(cs, web);
	check(c && !strcmp(c->name, "web") && !strcmp(c->pod, "shop-7d9f") &&
	      !strcmp(c->ns, "prod") && c->qos == MT_QOS_BURSTABLE,
	      "cache-finds-names", "%s", c ? c->name : "NULL");
	check(!mt_containers_find(cs, sshd), "cache-service-is-no-container",
	      "found");
	mt_containers_get_stats(cs, &st);
	/* the container and its pod's own cgroup */
	check(st.walks == 1 && st.name_reads == 1 && st.containers == 2,
	      "cache-one-walk-one-read", "walks %llu reads %llu containers %zu",
	      (unsigned long long)st.walks,
	      (unsigned long long)st.name_reads, st.containers);
	for (i = 0; i < 5; i++) {
		mt_containers_next(cs);
		mt_containers_find(cs, web);
		mt_containers_find(cs, sshd);
	}
	mt_containers_get_stats(cs, &st);
	check(st.walks == 1 && st.name_reads == 1 && st.cgroups == 2,
	      "cache-known-read-no-more",
	      "walks %llu reads %llu cgroups %zu",
	      (unsigned long long)st.walks,
	      (unsigned long long)st.name_reads, st.cgroups);
	late = cgroup("system.slice/docker-" ID_D ".scope");
	mt_containers_next(cs);
	c = mt_containers_find(cs, late);
	mt_containers_find(cs, web);
	mt_containers_get_stats(cs, &st);
	check(c && !strcmp(c->name, "web") && c->runtime == MT_RT_DOCKER &&
	      !strcmp(c->pod, "shop-7d9f") && st.walks == 2 &&
	      st.name_reads == 2, "cache-new-cgroup-one-more-walk",
	      "%s walks %llu reads %llu", c ? c->name : "NULL",
	      (unsigned long long)st.walks,
	      (unsigned long long)st.name_reads);
	/* what no sample asked for since the walk's (the docker cgroup's
	 * too) forgotten when the third begins */
	for (i = 0; i < 3; i++) {
		mt_containers_next(cs);
		mt_containers_find(cs, web);
	}
	mt_containers_get_stats(cs, &st);
	check(st.cgroups == 1 && st.containers == 1, "cache-forgets-unused",
	      "cgroups %zu containers %zu", st.cgroups, st.containers);
	/* an id in no tree: one walk, then none for MISSING_RETRY samples */
	mt_containers_next(cs);
	check(!mt_containers_find(cs, 123456789), "cache-id-in-no-tree",
	      "found");
	for (i = 0; i < 10; i++) {
		mt_containers_next(cs);
		mt_containers_find(cs, 123456789);
	}
	mt_containers_get_stats(cs, &st);
	check(st.walks == 3, "cache-missing-id-walks-seldom", "walks %llu",
	      (unsigned long long)st.walks);
	mt_containers_free(cs);
}

/*
 * Hundreds of cgroups, half of them forgotten and asked for again: the
 * table's deletions move entries along their probe runs, and a moved
 * entry's old slot must keep nothing (it kept its container, which the
 * next entry put there then shared: the bench's 200 containers ended in
 * a double free).  Each cgroup still finds its own container, a service
 * none, and the cache frees cleanly.
 */
static void test_cache_churn(void)
{
	enum { N = 300 };
	static uint64_t ids[N];
	static char cids[N][65];
	struct mt_containers *cs;
	int i, round, bad = 0;
	char path[160];

	for (i = 0; i < N; i++) {
		snprintf(cids[i], sizeof(cids[i]), "%064x", 0xc0de00 + i);
		if (i % 3)
			snprintf(path, sizeof(path),
				 "churn.slice/docker-%.64s.scope", cids[i]);
		else
			snprintf(path, sizeof(path),
				 "churn.slice/svc-%d.service", i);
		ids[i] = cgroup(path);
	}
	cs = mt_containers_new(NULL);
	if (!cs) {
		check(false, "cache-churn-new", "%s", strerror(errno));
		return;
	}
	for (round = 0; round < 8; round++) {
		mt_containers_next(cs);
		for (i = 0; i < N; i++) {
			const struct mt_container *c;

			/* the odd ones unasked in rounds 2-5: forgotten */
			if (i % 2 && round >= 2 && round < 6)
				continue;
			c = mt_containers_find(cs, ids[i]);
			if (i % 3 ? !c || strcmp(c->id, cids[i]) : c != NULL)
				bad++;
		}
	}
	check(!bad, "cache-churn-each-finds-its-own",
	      "%d lookups wrong of %d", bad, 8 * N);
	mt_containers_free(cs);
}

static int saw(void *arg, const char *path, const char *rel, uint64_t id)
{
	(void)path;
	return mt_containers_saw(arg, rel, id);
}

/*
 * A walk made by the caller (memtrack-top's, for cgroup paths) and given to
 * the cache: its lookups of what that walk saw walk no more, and names are
 * read once as before; a cgroup made after it is walked for as always.
 */
static void test_cache_shared_walk(void)
{
	struct mt_containers_stats st;
	const struct mt_container *c;
	struct mt_containers *cs;
	uint64_t web, late;

	web = cgroup("kubepods.slice/kubepods-burstable.slice/"
		     "kubepods-burstable-pod" UIDU ".slice/cri-containerd-"
		     ID_A ".scope");
	cs = mt_containers_new(NULL);
	if (!cs) {
		check(false, "shared-walk-new", "%s", strerror(errno));
		return;
	}
	check(mt_cgroup_walk(mt_containers_tree(cs), saw, cs) == 0,
	      "shared-walk-of-its-tree", "%s", mt_containers_tree(cs));
	mt_containers_walked(cs);
	c = mt_containers_find(cs, web);
	mt_containers_get_stats(cs, &st);
	check(c && !strcmp(c->name, "web") && !strcmp(c->pod, "shop-7d9f") &&
	      st.walks == 1 && st.name_reads == 1, "shared-walk-is-the-only-one",
	      "%s walks %llu reads %llu", c ? c->name : "NULL",
	      (unsigned long long)st.walks,
	      (unsigned long long)st.name_reads);
	late = cgroup("late.slice/docker-" ID_D ".scope");
	mt_containers_next(cs);
	c = mt_containers_find(cs, late);
	mt_containers_get_stats(cs, &st);
	check(c && c->runtime == MT_RT_DOCKER && st.walks == 2,
	      "shared-walk-then-own-for-a-new-cgroup", "%s walks %llu",
	      c ? c->name : "NULL", (unsigned long long)st.walks);
	mt_containers_free(cs);
}

/* The walk's visits, as "rel id" lines in order; stop after stop_at. */
struct walk_log {
	char text[4096];
	size_t len;
	int n, stop_at;
};

static int log_visit(void *arg, const char *path, const char *rel,
		     uint64_t id)
{
	struct walk_log *w = arg;
	struct stat st;

	/* the id is the directory's inode, as the module's rows give it */
	if (stat(path, &st) || st.st_ino != id)
		id = 0;
	w->len += snprintf(w->text + w->len, sizeof(w->text) - w->len,
			   "%s %s\n", rel[0] ? rel : "(root)",
			   id ? "ino" : "WRONG-ID");
	return ++w->n == w->stop_at;
}

/*
 * mt_cgroup_walk() on a tree of directories, files and a symlink to a
 * directory: every directory once, each before what is under it, with
 * its path under the root and its inode; no file, the symlink not
 * followed; a visitor's non-zero stops it at once; a missing root is an
 * error.  The order among siblings is readdir's: compared as sets per
 * level, the pre-order checked by position.
 */
static void test_walk(void)
{
	char top[4096], path[4200];
	struct walk_log w = { .stop_at = -1 };
	const char *want[] = { "(root) ino", "/a ino", "/a/b ino",
			       "/a/b/c ino", "/d ino" };
	char *line, *save;
	int i, found = 0, pos[5] = { -1, -1, -1, -1, -1 }, k = 0;
	FILE *f;

	snprintf(top, sizeof(top), "%s/walk", root);
	mkdir(top, 0755);
	snprintf(path, sizeof(path), "%s/a", top);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/a/b", top);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/a/b/c", top);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/d", top);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/a/memory.max", top);
	f = fopen(path, "w");
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/d/link", top);
	if (symlink("../a", path) && errno != EEXIST)
		perror(path);
	check(!mt_cgroup_walk(top, log_visit, &w), "walk-ok", "failed");
	for (line = strtok_r(w.text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), k++)
		for (i = 0; i < 5; i++)
			if (!strcmp(line, want[i]) && pos[i] < 0) {
				pos[i] = k;
				found++;
			}
	check(w.n == 5 && found == 5, "walk-every-directory-once-no-file-no-link",
	      "%d visits, %d expected of 5", w.n, found);
	check(pos[0] == 0 && pos[1] < pos[2] && pos[2] < pos[3],
	      "walk-parents-first", "positions %d %d %d %d", pos[0], pos[1],
	      pos[2], pos[3]);
	memset(&w, 0, sizeof(w));
	w.stop_at = 2;
	mt_cgroup_walk(top, log_visit, &w);
	check(w.n == 2, "walk-stops-when-asked", "%d visits", w.n);
	snprintf(path, sizeof(path), "%s/no-such", top);
	check(mt_cgroup_walk(path, log_visit, &w) == -ENOENT,
	      "walk-missing-root", "not -ENOENT");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
		return 2;
	}
	root = argv[1];
	test_paths();
	test_names();
	test_names_others();
	test_cache();
	test_cache_churn();
	test_cache_shared_walk();
	test_walk();
	return failures ? 1 : 0;
}
