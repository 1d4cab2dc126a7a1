/* SPDX-License-Identifier: GPL-2.0 */
/* Output shared by memtrack-leak's reports (leak_json.c): JSON, frames. */
#ifndef MEMTRACK_LEAK_JSON_H
#define MEMTRACK_LEAK_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "memtrack.h"

/* The file name of path. */
const char *base(const char *path);
/* One symbolized frame as a member of a frames array, after a comma if sep. */
void json_frame(FILE *o, bool sep, uint64_t addr, const struct mt_sym_frame *f);
/*
 * One frame as a text line: "function (file:line)", else the address in
 * its object "(object+0xOFF)", else addr; "??" for an unknown function.
 */
void text_frame(FILE *o, uint64_t addr, const struct mt_sym_frame *f);

#endif
