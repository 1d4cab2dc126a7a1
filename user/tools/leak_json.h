/* SPDX-License-Identifier: GPL-2.0 */
/* JSON output shared by memtrack-leak's reports (leak_json.c). */
#ifndef MEMTRACK_LEAK_JSON_H
#define MEMTRACK_LEAK_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "memtrack.h"

/* s as a JSON string, null for NULL. */
void json_str(FILE *o, const char *s);
/* One symbolized frame as a member of a frames array, after a comma if sep. */
void json_frame(FILE *o, bool sep, uint64_t addr, const struct mt_sym_frame *f);

#endif
