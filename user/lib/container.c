// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: the container and pod a cgroup v2 path names.
 *
 * Runtimes and the kubelet name cgroups after what they run, and these
 * names are stable ABI in practice (cAdvisor, systemd and every runtime's
 * own tools parse them):
 *
 *   containerd (CRI)  .../cri-containerd-ID.scope
 *   CRI-O             .../crio-ID.scope, crio-ID (cgroupfs driver)
 *   Docker            /system.slice/docker-ID.scope, /docker/ID
 *   Podman            /machine.slice/libpod-ID.scope[/container],
 *                     .../user@UID.service/.../libpod-ID.scope (rootless),
 *                     /libpod_parent/libpod-ID
 *   runc, crun        .../runc-ID.scope, .../crun-ID.scope (systemd)
 *   machined          /machine.slice/machine-NAME.scope[/payload]
 *   LXC               /lxc.payload.NAME, /lxc/NAME
 *
 * and the kubelet puts each pod in a cgroup of its QoS class, with either
 * cgroup driver:
 *
 *   systemd   /kubepods.slice/kubepods-burstable.slice/
 *                 kubepods-burstable-pod<UID with _ for ->.slice/CONTAINER
 *             /kubepods.slice/kubepods-pod<UID>.slice/... (guaranteed)
 *   cgroupfs  /kubepods/burstable/pod<UID>/ID, /kubepods/pod<UID>/ID
 *
 * where a cgroupfs driver's container is its bare 64-digit ID: the runtime
 * is then MT_RT_UNKNOWN until its state files say (container_state.c), as
 * for ctr's /NAMESPACE/ID.  A runtime's monitor beside the container
 * (crio-conmon-ID.scope, libpod-conmon-ID.scope, lxc.monitor.NAME) is not
 * in the container: it is in the pod, if any.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libmemtrack.h"

static const char *const runtime_names[] = {
	[MT_RT_NONE] = "",
	[MT_RT_UNKNOWN] = "unknown",
	[MT_RT_CONTAINERD] = "containerd",
	[MT_RT_CRIO] = "cri-o",
	[MT_RT_DOCKER] = "docker",
	[MT_RT_PODMAN] = "podman",
	[MT_RT_RUNC] = "runc",
	[MT_RT_CRUN] = "crun",
	[MT_RT_MACHINED] = "machined",
	[MT_RT_LXC] = "lxc",
};

const char *mt_runtime_name(enum mt_runtime rt)
{
	return (unsigned int)rt < MT_ARRAY_SIZE(runtime_names) ?
	       runtime_names[rt] : "";
}

const char *mt_qos_name(enum mt_qos q)
{
	static const char *const names[] = {
		[MT_QOS_NONE] = "",
		[MT_QOS_GUARANTEED] = "guaranteed",
		[MT_QOS_BURSTABLE] = "burstable",
		[MT_QOS_BESTEFFORT] = "besteffort",
	};

	return (unsigned int)q < MT_ARRAY_SIZE(names) ? names[q] : "";
}

/* A component of the path: s[0..len), not NUL-terminated. */
struct part {
	const char *s;
	size_t len;
};

static bool is(const struct part *p, const char *word)
{
	return p->len == strlen(word) && !memcmp(p->s, word, p->len);
}

/* p starts with prefix: the rest in *rest. */
static bool cut_prefix(const struct part *p, const char *prefix,
		       struct part *rest)
{
	size_t n = strlen(prefix);

	if (p->len < n || memcmp(p->s, prefix, n))
		return false;
	rest->s = p->s + n;
	rest->len = p->len - n;
	return true;
}

static bool cut_suffix(struct part *p, const char *suffix)
{
	size_t n = strlen(suffix);

	if (p->len < n || memcmp(p->s + p->len - n, suffix, n))
		return false;
	p->len -= n;
	return true;
}

/* Exactly 64 lower-case hex digits: the ID every OCI runtime generates. */
static bool is_hex_id(const struct part *p)
{
	size_t i;

	if (p->len != 64)
		return false;
	for (i = 0; i < p->len; i++)
		if (!isdigit((unsigned char)p->s[i]) &&
		    (p->s[i] < 'a' || p->s[i] > 'f'))
			return false;
	return true;
}

/* A pod UID as the kubelet writes it, '_' for '-' with the systemd driver. */
static bool set_pod_uid(struct mt_container *c, const struct part *p)
{
	size_t i;

	if (p->len != MT_POD_UID_LEN - 1)
		return false;
	for (i = 0; i < p->len; i++) {
		char ch = p->s[i];
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? ch != '-' && ch != '_' : !isxdigit((unsigned char)ch))
			return false;
		c->pod_uid[i] = dash ? '-' : ch;
	}
	c->pod_uid[i] = '\0';
	return true;
}

static void set_id(struct mt_container *c, enum mt_runtime rt,
		   const struct part *id)
{
	size_t n = id->len < MT_CONTAINER_ID_LEN - 1 ? id->len :
		   MT_CONTAINER_ID_LEN - 1;

	c->runtime = rt;
	memcpy(c->id, id->s, n);
	c->id[n] = '\0';
}

/*
 * systemd's unit name escaping undone ("\x2d" for '-', as machinectl names
 * "foo-bar" machine-foo\x2dbar.scope) into a NUL-terminated name.
 */
static void unescape(char *dst, size_t len, const struct part *p)
{
	size_t i, k = 0;

	for (i = 0; i < p->len && k + 1 < len; i++) {
		if (p->s[i] == '\\' && i + 3 < p->len && p->s[i + 1] == 'x' &&
		    isxdigit((unsigned char)p->s[i + 2]) &&
		    isxdigit((unsigned char)p->s[i + 3])) {
			char hex[3] = { p->s[i + 2], p->s[i + 3], '\0' };

			dst[k++] = (char)strtoul(hex, NULL, 16);
			i += 3;
			continue;
		}
		dst[k++] = p->s[i];
	}
	dst[k] = '\0';
}

/* The kubelet's part: kubepods, the QoS class, the pod. */
static bool kube_part(struct mt_container *c, const struct part *p,
		      bool *kubepods)
{
	struct part rest = *p;

	if (is(p, "kubepods") || is(p, "kubepods.slice")) {
		*kubepods = true;
		c->qos = MT_QOS_GUARANTEED;
		return true;
	}
	if (!*kubepods)
		return false;
	if (is(p, "burstable") || is(p, "kubepods-burstable.slice")) {
		c->qos = MT_QOS_BURSTABLE;
		return true;
	}
	if (is(p, "besteffort") || is(p, "kubepods-besteffort.slice")) {
		c->qos = MT_QOS_BESTEFFORT;
		return true;
	}
	if (cut_prefix(p, "kubepods-burstable-pod", &rest) ||
	    cut_prefix(p, "kubepods-besteffort-pod", &rest) ||
	    cut_prefix(p, "kubepods-pod", &rest)) {
		if (!cut_suffix(&rest, ".slice"))
			return false;
	} else if (!cut_prefix(p, "pod", &rest)) {
		return false;
	}
	return set_pod_uid(c, &rest);
}

/* "PREFIX-ID.scope" (or "PREFIX-ID" with cgroupfs) with a 64-digit ID. */
static bool hex_unit(const struct part *p, const char *prefix, bool scope,
		     struct part *id)
{
	if (!cut_prefix(p, prefix, id))
		return false;
	if (scope && !cut_suffix(id, ".scope"))
		return false;
	return is_hex_id(id);
}

/* A runtime's own cgroup name: the container's ID (or name) in c. */
static bool runtime_part(struct mt_container *c, const struct part *p,
			 const struct part *prev)
{
	static const struct {
		const char *prefix;
		enum mt_runtime rt;
	} scopes[] = {
		{ "cri-containerd-", MT_RT_CONTAINERD },
		{ "crio-", MT_RT_CRIO },
		{ "docker-", MT_RT_DOCKER },
		{ "libpod-", MT_RT_PODMAN },
		{ "runc-", MT_RT_RUNC },
		{ "crun-", MT_RT_CRUN },
	};
	struct part id, name = *p;
	size_t i;

	for (i = 0; i < MT_ARRAY_SIZE(scopes); i++)
		if (hex_unit(p, scopes[i].prefix, true, &id)) {
			set_id(c, scopes[i].rt, &id);
			return true;
		}
	/* the cgroupfs forms of CRI-O and Podman */
	if (hex_unit(p, "crio-", false, &id)) {
		set_id(c, MT_RT_CRIO, &id);
		return true;
	}
	if (hex_unit(p, "libpod-", false, &id)) {
		set_id(c, MT_RT_PODMAN, &id);
		return true;
	}
	if (cut_prefix(p, "machine-", &name) && cut_suffix(&name, ".scope") &&
	    name.len) {
		c->runtime = MT_RT_MACHINED;
		unescape(c->id, sizeof(c->id), &name);
		return true;
	}
	if ((cut_prefix(p, "lxc.payload.", &name) ||
	     (prev && is(prev, "lxc") && (name = *p, true))) && name.len) {
		c->runtime = MT_RT_LXC;
		set_id(c, MT_RT_LXC, &name);
		return true;
	}
	if (is_hex_id(p)) {
		set_id(c, prev && is(prev, "docker") ? MT_RT_DOCKER :
		       MT_RT_UNKNOWN, p);
		return true;
	}
	return false;
}

/* The user of a rootless container: "user-UID.slice" on its path. */
static void user_part(struct mt_container *c, const struct part *p)
{
	struct part rest;
	char num[16];
	char *end;
	unsigned long uid;

	if (!cut_prefix(p, "user-", &rest) || !cut_suffix(&rest, ".slice") ||
	    !rest.len || rest.len >= sizeof(num))
		return;
	memcpy(num, rest.s, rest.len);
	num[rest.len] = '\0';
	uid = strtoul(num, &end, 10);
	if (*end || !isdigit((unsigned char)num[0]))
		return;
	c->uid = uid;
	c->rootless = true;
}

/* The default display name: the ID's first 12 digits, or the machine's. */
static void default_name(struct mt_container *c)
{
	if (c->runtime == MT_RT_MACHINED || c->runtime == MT_RT_LXC)
		snprintf(c->name, sizeof(c->name), "%s", c->id);
	else
		snprintf(c->name, sizeof(c->name), "%.12s", c->id);
}

int mt_container_from_cgroup(const char *path, struct mt_container *c)
{
	struct part p, prev = { NULL, 0 };
	bool kubepods = false, have_prev = false;
	const char *s = path;

	memset(c, 0, sizeof(*c));
	while (s && *s) {
		const char *slash;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		slash = strchr(s, '/');
		p.s = s;
		p.len = slash ? (size_t)(slash - s) : strlen(s);
		s = slash;
		/* a container's own subtree (Podman's "container",
		 * machined's "payload") stays the container's */
		if (c->runtime == MT_RT_NONE &&
		    !kube_part(c, &p, &kubepods)) {
			if (!runtime_part(c, &p, have_prev ? &prev : NULL))
				user_part(c, &p);
		}
		prev = p;
		have_prev = true;
	}
	if (c->runtime == MT_RT_NONE && !c->pod_uid[0]) {
		memset(c, 0, sizeof(*c));
		return 0;
	}
	if (c->runtime == MT_RT_NONE)
		c->qos = c->qos ? c->qos : MT_QOS_GUARANTEED;
	else if (!c->pod_uid[0])
		c->qos = MT_QOS_NONE;
	if (c->runtime != MT_RT_PODMAN && c->runtime != MT_RT_UNKNOWN)
		c->rootless = false;
	if (!c->rootless)
		c->uid = 0;
	default_name(c);
	return 1;
}
