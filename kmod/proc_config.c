// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/memtrack/config: "key value" lines.  A write carries exactly one
 * "key value" (optionally newline-terminated); anything else is refused with
 * EINVAL and changes nothing.  Keys: retention_ms (0..MAX), ring_kb (the
 * per-CPU buffer of readers opened from now on) and one per hook group, "on"
 * or "off".
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <linux/capability.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include "memtrack.h"

#define MTR_CONFIG_MAX_WRITE 64

static int mtr_config_show(struct seq_file *m, void *v)
{
	unsigned int g;

	mutex_lock(&mtr_config_lock);
	seq_printf(m, "retention_ms %u\n", READ_ONCE(mtr_retention_ms));
	seq_printf(m, "ring_kb %u\n", READ_ONCE(mtr_ring_kb));
	seq_printf(m, "rss_alert_kb %u\n", READ_ONCE(mtr_rss_alert_kb));
	seq_printf(m, "rss_growth_kbps %u\n", READ_ONCE(mtr_rss_growth_kbps));
	for (g = 0; g < mtr_nr_groups; g++)
		seq_printf(m, "%s %s\n", mtr_groups[g]->name,
			   mtr_groups[g]->enabled ? "on" : "off");
	mutex_unlock(&mtr_config_lock);
	return 0;
}

static int mtr_config_set(const char *key, const char *val)
{
	unsigned int g, ms, kb;
	bool on;

	if (!strcmp(key, "retention_ms")) {
		if (kstrtouint(val, 10, &ms) || ms > MEMTRACK_RETENTION_MS_MAX)
			return -EINVAL;
		WRITE_ONCE(mtr_retention_ms, ms);
		return 0;
	}
	if (!strcmp(key, "rss_alert_kb") || !strcmp(key, "rss_growth_kbps")) {
		if (kstrtouint(val, 10, &kb))
			return -EINVAL;
		WRITE_ONCE(*(key[4] == 'a' ? &mtr_rss_alert_kb :
			     &mtr_rss_growth_kbps), kb);
		return 0;
	}
	if (!strcmp(key, "ring_kb")) {
		if (kstrtouint(val, 10, &kb) || !mtr_ring_kb_valid(kb))
			return -EINVAL;
		WRITE_ONCE(mtr_ring_kb, kb);
		return 0;
	}
	if (!strcmp(val, "on"))
		on = true;
	else if (!strcmp(val, "off"))
		on = false;
	else
		return -EINVAL;
	for (g = 0; g < mtr_nr_groups; g++)
		if (!strcmp(key, mtr_groups[g]->name))
			return mtr_hook_group_set(mtr_groups[g], on);
	return -EINVAL;
}

static ssize_t mtr_config_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	char buf[MTR_CONFIG_MAX_WRITE];
	size_t n = len;
	char *val;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (!n || n >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, n))
		return -EFAULT;
	buf[n] = '\0';
	if (buf[n - 1] == '\n')
		buf[--n] = '\0';
	/* Exactly "key value": one space, nothing else that is not printable. */
	val = strchr(buf, ' ');
	if (!val || val == buf || !val[1] || strlen(buf) != n)
		return -EINVAL;
	*val++ = '\0';
	if (strpbrk(buf, " \t\n") || strpbrk(val, " \t\n"))
		return -EINVAL;

	mutex_lock(&mtr_config_lock);
	err = mtr_config_set(buf, val);
	mutex_unlock(&mtr_config_lock);
	return err ? err : len;
}

static int mtr_config_open(struct inode *inode, struct file *file)
{
	return single_open(file, mtr_config_show, NULL);
}

const struct proc_ops mtr_config_ops = {
	.proc_open = mtr_config_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = mtr_config_write,
};
