// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/memtrack: a stream of records.  Every opener is a reader of its own
 * (ring.c), so two readers both see every record.  read() returns whole
 * records only: a read too short for the next one (a LOST record too) is
 * EINVAL, and a read of 0 bytes returns 0 at once.  poll() and O_NONBLOCK
 * work; ioctls choose the event classes and a pid/tgid filter and report
 * the reader's counts.  An open file holds a module reference, so rmmod is
 * refused (EBUSY) until readers close.
 */
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include "mtr.h"

static int mtr_dev_open(struct inode *inode, struct file *file)
{
	struct mtr_reader *r = mtr_reader_create((size_t)READ_ONCE(mtr_ring_kb) << 10);

	if (!r)
		return -ENOMEM;
	file->private_data = r;
	return stream_open(inode, file);
}

static int mtr_dev_release(struct inode *inode, struct file *file)
{
	mtr_reader_destroy(file->private_data);
	return 0;
}

static ssize_t mtr_dev_read(struct file *file, char __user *buf, size_t len,
			    loff_t *ppos)
{
	struct mtr_reader *r = file->private_data;
	ssize_t n;

	/* As a pipe: no room asked for, nothing read, nothing waited for. */
	if (!len)
		return 0;
	for (;;) {
		n = mtr_reader_read_user(r, buf, len);
		if (n)
			return n;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		/*
		 * 0 means the reader was empty, but a record may have come
		 * since: never go round again without letting a signal in.
		 */
		if (signal_pending(current))
			return -ERESTARTSYS;
		mtr_reader_want_wakeup(r);
		if (wait_event_interruptible(*mtr_reader_waitq(r),
					     !mtr_reader_empty(r)))
			return -ERESTARTSYS;
		cond_resched();
	}
}

static __poll_t mtr_dev_poll(struct file *file, poll_table *wait)
{
	struct mtr_reader *r = file->private_data;

	poll_wait(file, mtr_reader_waitq(r), wait);
	mtr_reader_want_wakeup(r);
	return mtr_reader_empty(r) ? 0 : EPOLLIN | EPOLLRDNORM;
}

static long mtr_dev_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct mtr_reader *r = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct memtrack_ring_stats st;
	struct memtrack_filter f;

	switch (cmd) {
	case MEMTRACK_IOC_GET_VERSION:
		return put_user((u32)MEMTRACK_ABI_VERSION, (u32 __user *)uarg);
	case MEMTRACK_IOC_SET_FILTER:
		if (copy_from_user(&f, uarg, sizeof(f)))
			return -EFAULT;
		return mtr_reader_set_filter(r, &f);
	case MEMTRACK_IOC_GET_FILTER:
		mtr_reader_get_filter(r, &f);
		return copy_to_user(uarg, &f, sizeof(f)) ? -EFAULT : 0;
	case MEMTRACK_IOC_GET_STATS:
		mtr_reader_stats(r, &st);
		return copy_to_user(uarg, &st, sizeof(st)) ? -EFAULT : 0;
	}
	return -ENOTTY;
}

static const struct file_operations mtr_dev_fops = {
	.owner = THIS_MODULE,
	.open = mtr_dev_open,
	.release = mtr_dev_release,
	.read = mtr_dev_read,
	.poll = mtr_dev_poll,
	.unlocked_ioctl = mtr_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/* Root only by default; the udev rule may grant a group. */
static struct miscdevice mtr_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = MTR_NAME,
	.fops = &mtr_dev_fops,
	.mode = 0600,
};

int mtr_dev_init(void)
{
	return misc_register(&mtr_miscdev);
}

void mtr_dev_exit(void)
{
	misc_deregister(&mtr_miscdev);
}
