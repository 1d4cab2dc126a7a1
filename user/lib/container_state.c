// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: a container's names from its runtime's state on this node.
 *
 * No API server and no socket: only the files each runtime keeps for
 * itself, read-only, under rootfs (where a node agent in a pod mounted the
 * host's /run and /var/lib):
 *
 *   containerd  /run/containerd/io.containerd.runtime.v2.task/NS/ID/
 *               config.json: the OCI spec, whose annotations the CRI plugin
 *               fills (io.kubernetes.cri.container-name, sandbox-name,
 *               sandbox-namespace, container-type)
 *   CRI-O       /run/containers/storage/overlay-containers/ID/userdata/
 *               config.json (and under /var/lib/containers/storage):
 *               io.kubernetes.container.name, io.kubernetes.pod.name,
 *               io.kubernetes.pod.namespace
 *   Podman      containers/storage's overlay-containers/containers.json
 *               (rootful under /var/lib, rootless under the user's
 *               ~/.local/share): the container's names
 *   Docker      /var/lib/docker/containers/ID/config.v2.json: Name, and
 *               Config.Labels with the io.kubernetes.* names of dockershim
 *   runc, crun  /run/runc/ID/state.json ("bundle=" label), /run/crun/ID/
 *               status ("bundle"): the bundle's config.json annotations
 *
 * JSON through jansson.  A file that is missing, unreadable (an
 * unprivileged user), too large or malformed is a runtime that does not
 * know the container: the caller keeps the ID, never an error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "libmemtrack.h"

/* Runtimes' state files are a few KiB; containers.json grows with them. */
#define STATE_MAX_BYTES		(16u << 20)

/* rootfs + the path made of fmt: false when it does not fit. */
static bool state_path(char *buf, size_t len, const char *rootfs,
		       const char *fmt, ...)
{
	size_t n = 0;
	va_list ap;
	int r;

	if (rootfs && strcmp(rootfs, "/")) {
		n = strlen(rootfs);
		if (n >= len)
			return false;
		memcpy(buf, rootfs, n);
		while (n && buf[n - 1] == '/')
			n--;
	}
	va_start(ap, fmt);
	r = vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	return r >= 0 && (size_t)r < len - n;
}

static json_t *load(const char *path)
{
	struct stat st;

	if (stat(path, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > STATE_MAX_BYTES)
		return NULL;
	return json_load_file(path, 0, NULL);
}

static void set(char *dst, size_t len, const char *s)
{
	if (s && *s)
		snprintf(dst, len, "%s", s);
}

static const char *str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* The Kubernetes names in an OCI spec's annotations or Docker's labels. */
static bool kube_names(struct mt_container *c, const json_t *map)
{
	const char *sandbox;
	bool found = false;

	if (!json_is_object(map))
		return false;
	sandbox = str(map, "io.kubernetes.cri.container-type");
	if (!sandbox)
		sandbox = str(map, "io.kubernetes.cri-o.ContainerType");
	if (sandbox && !strcmp(sandbox, "sandbox")) {
		/* a pod's sandbox, whatever else it is called */
		set(c->name, sizeof(c->name), "POD");
		found = true;
	} else if (str(map, "io.kubernetes.cri.container-name")) {
		set(c->name, sizeof(c->name),
		    str(map, "io.kubernetes.cri.container-name"));
		found = true;
	} else if (str(map, "io.kubernetes.container.name")) {
		set(c->name, sizeof(c->name),
		    str(map, "io.kubernetes.container.name"));
		found = true;
	} else if (str(map, "nerdctl/name")) {
		set(c->name, sizeof(c->name), str(map, "nerdctl/name"));
		found = true;
	}
	set(c->pod, sizeof(c->pod), str(map, "io.kubernetes.cri.sandbox-name"));
	set(c->pod, sizeof(c->pod), str(map, "io.kubernetes.pod.name"));
	set(c->ns, sizeof(c->ns),
	    str(map, "io.kubernetes.cri.sandbox-namespace"));
	set(c->ns, sizeof(c->ns), str(map, "io.kubernetes.pod.namespace"));
	if (!c->pod_uid[0]) {
		set(c->pod_uid, sizeof(c->pod_uid),
		    str(map, "io.kubernetes.cri.sandbox-uid"));
		set(c->pod_uid, sizeof(c->pod_uid),
		    str(map, "io.kubernetes.pod.uid"));
	}
	return found || c->pod[0];
}

/* An OCI bundle's config.json (bundle: a host path): its annotations. */
static bool bundle_names(struct mt_container *c, const char *rootfs,
			 const char *bundle)
{
	char path[4096];
	json_t *spec;
	bool found;

	if (!bundle || bundle[0] != '/' ||
	    !state_path(path, sizeof(path), rootfs, "%s/config.json", bundle))
		return false;
	spec = load(path);
	if (!spec)
		return false;
	found = kube_names(c, json_object_get(spec, "annotations"));
	json_decref(spec);
	return found;
}

/* containerd's task bundles, one folder per containerd namespace. */
static bool containerd(struct mt_container *c, const char *rootfs)
{
	char dir[4096], bundle[4096];
	struct dirent *d;
	struct stat st;
	bool found = false;
	DIR *ns;

	if (!state_path(dir, sizeof(dir), rootfs,
			"/run/containerd/io.containerd.runtime.v2.task"))
		return false;
	ns = opendir(dir);
	if (!ns)
		return false;
	while (!found && (d = readdir(ns))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(bundle, sizeof(bundle),
			 "/run/containerd/io.containerd.runtime.v2.task/%s/%s",
			 d->d_name, c->id);
		if (!state_path(dir, sizeof(dir), rootfs, "%s", bundle) ||
		    stat(dir, &st) || !S_ISDIR(st.st_mode))
			continue;
		/* the task exists: containerd's, named or not */
		found = true;
		c->named = bundle_names(c, rootfs, bundle);
	}
	closedir(ns);
	return found;
}

/* CRI-O (and Podman's spec): containers/storage's userdata/config.json. */
static bool crio(struct mt_container *c, const char *rootfs)
{
	static const char *const roots[] = {
		"/run/containers/storage", "/var/lib/containers/storage",
	};
	char bundle[4096], path[4096];
	struct stat st;
	size_t i;

	for (i = 0; i < MT_ARRAY_SIZE(roots); i++) {
		snprintf(bundle, sizeof(bundle),
			 "%s/overlay-containers/%s/userdata", roots[i], c->id);
		if (!state_path(path, sizeof(path), rootfs, "%s/config.json",
				bundle) || stat(path, &st))
			continue;
		c->named = bundle_names(c, rootfs, bundle);
		return true;
	}
	return false;
}

/* A user's home from rootfs's /etc/passwd (a rootless Podman's storage). */
static bool home_of(const char *rootfs, uint32_t uid, char *home, size_t len)
{
	char path[4096];
	struct passwd *pw;
	bool found = false;
	FILE *f;

	if (!state_path(path, sizeof(path), rootfs, "/etc/passwd"))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && (pw = fgetpwent(f)))
		if (pw->pw_uid == uid && pw->pw_dir[0] == '/') {
			snprintf(home, len, "%s", pw->pw_dir);
			found = true;
		}
	fclose(f);
	return found;
}

/* Podman: the container's first name in containers.json. */
static bool podman(struct mt_container *c, const char *rootfs)
{
	char path[4096], home[1024];
	json_t *all, *ct;
	bool ok, found = false;
	size_t i;

	if (c->rootless)
		ok = home_of(rootfs, c->uid, home, sizeof(home)) &&
		     state_path(path, sizeof(path), rootfs, "%s/%s", home,
				".local/share/containers/storage/overlay-containers/containers.json");
	else
		ok = state_path(path, sizeof(path), rootfs, "%s",
				"/var/lib/containers/storage/overlay-containers/containers.json");
	all = ok ? load(path) : NULL;
	json_array_foreach(all, i, ct) {
		const char *name;

		if (!json_is_string(json_object_get(ct, "id")) ||
		    strcmp(str(ct, "id"), c->id))
			continue;
		found = true;
		name = json_string_value(json_array_get(
				json_object_get(ct, "names"), 0));
		if (name && *name) {
			set(c->name, sizeof(c->name), name);
			c->named = true;
		}
		break;
	}
	json_decref(all);
	return found;
}

/* Docker: config.v2.json's Name ("/web") and its Kubernetes labels. */
static bool docker(struct mt_container *c, const char *rootfs)
{
	char path[4096];
	const char *name;
	json_t *cfg;

	if (!state_path(path, sizeof(path), rootfs,
			"/var/lib/docker/containers/%s/config.v2.json", c->id))
		return false;
	cfg = load(path);
	if (!cfg)
		return false;
	name = str(cfg, "Name");
	if (name && *name) {
		set(c->name, sizeof(c->name), name + (name[0] == '/'));
		c->named = true;
	}
	if (kube_names(c, json_object_get(json_object_get(cfg, "Config"),
					  "Labels")))
		c->named = true;
	json_decref(cfg);
	return true;
}

/* runc's state.json: its "bundle=PATH" label. */
static bool runc(struct mt_container *c, const char *rootfs)
{
	char path[4096];
	json_t *state, *label;
	size_t i;

	if (!state_path(path, sizeof(path), rootfs, "/run/runc/%s/state.json",
			c->id))
		return false;
	state = load(path);
	if (!state)
		return false;
	json_array_foreach(json_object_get(json_object_get(state, "config"),
					   "labels"), i, label) {
		const char *l = json_string_value(label);

		if (l && !strncmp(l, "bundle=", 7)) {
			c->named = bundle_names(c, rootfs, l + 7);
			break;
		}
	}
	json_decref(state);
	return true;
}

/* crun's status file: its "bundle". */
static bool crun(struct mt_container *c, const char *rootfs)
{
	char path[4096];
	json_t *status;

	if (!state_path(path, sizeof(path), rootfs, "/run/crun/%s/status",
			c->id))
		return false;
	status = load(path);
	if (!status)
		return false;
	c->named = bundle_names(c, rootfs, str(status, "bundle"));
	json_decref(status);
	return true;
}

typedef bool (*lookup_fn)(struct mt_container *c, const char *rootfs);

static const lookup_fn lookups[] = {
	[MT_RT_CONTAINERD] = containerd,
	[MT_RT_CRIO] = crio,
	[MT_RT_DOCKER] = docker,
	[MT_RT_PODMAN] = podman,
	[MT_RT_RUNC] = runc,
	[MT_RT_CRUN] = crun,
};

int mt_container_names(const char *rootfs, struct mt_container *c)
{
	enum mt_runtime rt;

	if (!c->id[0] || strchr(c->id, '/') || c->id[0] == '.')
		return -ENOENT;
	if (c->runtime == MT_RT_PODMAN) {
		/* names in containers.json, Kubernetes' in the spec */
		bool known = podman(c, rootfs);
		struct mt_container k = *c;

		if (crio(&k, rootfs) && k.named) {
			*c = k;
			return 0;
		}
		return known ? 0 : -ENOENT;
	}
	if (c->runtime != MT_RT_UNKNOWN) {
		if ((unsigned int)c->runtime < MT_ARRAY_SIZE(lookups) &&
		    lookups[c->runtime] && lookups[c->runtime](c, rootfs))
			return 0;
		return -ENOENT;
	}
	for (rt = 0; rt < MT_ARRAY_SIZE(lookups); rt++) {
		if (!lookups[rt] || !lookups[rt](c, rootfs))
			continue;
		c->runtime = rt;
		return 0;
	}
	return -ENOENT;
}
