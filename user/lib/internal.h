/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef MEMTRACK_USER_LIB_INTERNAL_H
#define MEMTRACK_USER_LIB_INTERNAL_H

/* Set mt_errmsg() and return err. */
int mt_seterr(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
