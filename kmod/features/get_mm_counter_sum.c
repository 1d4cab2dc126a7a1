// SPDX-License-Identifier: GPL-2.0
/* RSS counters are percpu_counters with an exact-sum reader (6.2+). */
#include <linux/mm.h>

static unsigned long __used check(struct mm_struct *mm)
{
	return get_mm_counter_sum(mm, MM_ANONPAGES);
}
