/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Telling the service manager (systemd, Type=notify) that the daemon is
 * ready: once its sockets listen and its first sample is taken, so that a
 * unit ordered after memtrackd.service finds /metrics answering; and that
 * it is stopping.  service.c; nothing happens outside systemd.
 */
#ifndef MEMTRACK_NET_SERVICE_H
#define MEMTRACK_NET_SERVICE_H

/* READY=1 with a STATUS= line for systemctl status. */
void mtn_service_ready(const char *status);
void mtn_service_stopping(void);

#endif /* MEMTRACK_NET_SERVICE_H */
