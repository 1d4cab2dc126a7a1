/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What memtrack-top's keys do to the selected process (top_actions.c), as
 * in htop: k/F9 a menu of signals, then a confirmation, then kill(2) (of
 * the tagged processes, when there are);
 * F7/F8 one step of nice up or down, r a nice value typed, setpriority(2).
 * Each writes the outcome (done, cancelled, or the error) into msg, for
 * the status line.
 */
#ifndef MEMTRACK_TOP_ACTIONS_H
#define MEMTRACK_TOP_ACTIONS_H

#include <stddef.h>
#include <sys/types.h>

#include "top_prompt.h"

/* pids: n processes (comm: the one's name, for n == 1) */
void top_action_signal(const pid_t *pids, size_t n, const char *comm,
		       char *msg, size_t len);
/*
 * delta: -1 (F7, more priority) or +1 (F8); 0: ask for the value (r), the
 * screen redrawn meanwhile by rd
 */
void top_action_renice(pid_t pid, const char *comm, int delta, char *msg,
		       size_t len, const struct top_redraw *rd);

#endif
