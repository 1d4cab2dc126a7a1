// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/memtrack/config: "key value" lines, in the forms the file shows.  A
 * write carries exactly one "key value" (optionally newline-terminated);
 * anything else is refused with EINVAL and changes nothing.  The keys and
 * their ranges are config.c's; hook groups take "on" or "off".
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <linux/capability.h>
#include <linux/kernel.h>
#include <linux/ctype.h>
#include <linux/string.h>
#include "mtr.h"

#define MTR_CONFIG_MAX_WRITE 64

static int mtr_config_show(struct seq_file *m, void *v)
{
	unsigned int k, g;

	mutex_lock(&mtr_config_lock);
	for (k = 0; k < MTR_CFG_NR; k++)
		seq_printf(m, "%s %u\n", mtr_config_keys[k].name,
			   READ_ONCE(*mtr_config_keys[k].var));
	for (g = 0; g < mtr_nr_groups; g++)
		seq_printf(m, "%s %s\n", mtr_groups[g]->name,
			   mtr_groups[g]->enabled ? "on" : "off");
	mutex_unlock(&mtr_config_lock);
	return 0;
}

/*
 * Exactly the form the file shows: decimal digits, no sign, no leading zero
 * (kstrtouint() alone would also take "+5" and "0005").
 */
static int mtr_parse_decimal(const char *s, unsigned int *v)
{
	const char *p;

	if (!*s || (s[0] == '0' && s[1]))
		return -EINVAL;
	for (p = s; *p; p++)
		if (!isdigit(*p))
			return -EINVAL;
	return kstrtouint(s, 10, v);
}

static int mtr_config_parse(const char *key, const char *val,
			    struct mtr_config_req *req)
{
	unsigned int v;
	int k, g;

	k = mtr_config_key_index(key);
	if (k >= 0) {
		if (mtr_parse_decimal(val, &v))
			return -EINVAL;
		return mtr_config_req_value(req, k, v);
	}
	g = mtr_config_group_index(key);
	if (g < 0)
		return -EINVAL;
	if (!strcmp(val, "on"))
		return mtr_config_req_group(req, g, true);
	if (!strcmp(val, "off"))
		return mtr_config_req_group(req, g, false);
	return -EINVAL;
}

static ssize_t mtr_config_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	struct mtr_config_req req;
	char buf[MTR_CONFIG_MAX_WRITE];
	size_t n = len;
	char *val;
	int err;

	if (!file_ns_capable(file, &init_user_ns, MTR_CONFIG_CAP) ||
	    !capable(MTR_CONFIG_CAP))
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

	mtr_config_req_init(&req);
	/* Every refusal of what was written is EINVAL, whatever its reason. */
	if (mtr_config_parse(buf, val, &req))
		return -EINVAL;
	err = mtr_config_apply(&req);
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
