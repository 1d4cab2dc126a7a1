// SPDX-License-Identifier: GPL-2.0
/* A kretprobe instance's probe comes from get_kretprobe() (5.11+). */
#include <linux/kprobes.h>

static struct kretprobe *__used check(struct kretprobe_instance *ri)
{
	return get_kretprobe(ri);
}
