// SPDX-License-Identifier: GPL-2.0
/*
 * The "events" multicast group: records relayed to whoever listens, in
 * messages of whole records.
 *
 * Apart from the family (netlink.c) because it is no command but a reader
 * of the rings with a work item of its own, started and stopped with the
 * family.
 */
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "mtr.h"
#include "netlink.h"

#define MTR_RELAY_INTERVAL	(HZ / 50)
/* Messages per relay pass, so one pass cannot hog the workqueue. */
#define MTR_RELAY_MAX_MSGS	64

/*
 * While anyone listens to "events", one reader collects records and a work
 * item relays them as they come; nobody listening costs one check per tick.
 */
static struct mtr_reader *mtr_relay_reader;
static void *mtr_relay_buf;
static void mtr_relay_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(mtr_relay_work, mtr_relay_fn);

#define MTR_RELAY_BUF_SIZE \
	(NLMSG_GOODSIZE - NLMSG_HDRLEN - GENL_HDRLEN - NLA_HDRLEN)

static int mtr_relay_start(void)
{
	struct memtrack_filter f = { .classes = MEMTRACK_CLASS_DEFAULT };
	struct mtr_reader *r;

	r = mtr_reader_create((size_t)mtr_ring_kb * 1024);
	if (!r)
		return -ENOMEM;
	if (mtr_reader_set_filter(r, &f)) {
		mtr_reader_destroy(r);
		return -EINVAL;
	}
	mtr_relay_reader = r;
	return 0;
}

static void mtr_relay_stop(void)
{
	if (mtr_relay_reader)
		mtr_reader_destroy(mtr_relay_reader);
	mtr_relay_reader = NULL;
}

/* One message of whole records; false when there was nothing to send. */
static bool mtr_relay_one(void)
{
	struct sk_buff *msg;
	size_t n;
	void *hdr;

	n = mtr_reader_drain(mtr_relay_reader, mtr_relay_buf,
			     MTR_RELAY_BUF_SIZE);
	if (!n)
		return false;
	msg = genlmsg_new(nla_total_size(n), GFP_KERNEL);
	if (!msg)
		return false;
	hdr = mtr_nl_event_put(msg, MEMTRACK_CMD_EVENT);
	if (!hdr || nla_put(msg, MEMTRACK_ATTR_RECORDS, n, mtr_relay_buf)) {
		nlmsg_free(msg);
		return false;
	}
	genlmsg_end(msg, hdr);
	/* -ESRCH: the last listener just left; the next tick notices. */
	mtr_nl_multicast(msg, MTR_MCGRP_EVENTS);
	return true;
}

static void mtr_relay_fn(struct work_struct *work)
{
	unsigned int i;

	if (!mtr_nl_has_listeners(MTR_MCGRP_EVENTS)) {
		mtr_relay_stop();
	} else if (mtr_relay_reader || !mtr_relay_start()) {
		for (i = 0; i < MTR_RELAY_MAX_MSGS && mtr_relay_one(); i++)
			;
	}
	schedule_delayed_work(&mtr_relay_work, MTR_RELAY_INTERVAL);
}

/* After the family is registered: the relay multicasts on it. */
int mtr_nl_relay_init(void)
{
	mtr_relay_buf = kmalloc(MTR_RELAY_BUF_SIZE, GFP_KERNEL);
	if (!mtr_relay_buf)
		return -ENOMEM;
	schedule_delayed_work(&mtr_relay_work, MTR_RELAY_INTERVAL);
	return 0;
}

/* Before the family is unregistered: no multicast may follow. */
void mtr_nl_relay_exit(void)
{
	cancel_delayed_work_sync(&mtr_relay_work);
	mtr_relay_stop();
	kfree(mtr_relay_buf);
}
