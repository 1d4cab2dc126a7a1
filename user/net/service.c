// SPDX-License-Identifier: GPL-2.0
/*
 * memtrackd's side of systemd's readiness protocol (service.h), through
 * libsystemd's sd_notify(3): a no-op unless $NOTIFY_SOCKET is set, so the
 * same binary runs under systemd (Type=notify), another init or a shell.
 */
#include <systemd/sd-daemon.h>

#include "service.h"

void mtn_service_ready(const char *status)
{
	sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void mtn_service_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}
