/* SPDX-License-Identifier: GPL-2.0 */
/* memtrack-leak's mismatched releases, in every report that has them (mismatch.c). */
#ifndef MEMTRACK_LEAK_MISMATCH_H
#define MEMTRACK_LEAK_MISMATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "libmemtrack.h"

/*
 * Like valgrind's "Mismatched free() / delete / delete []": per allocating
 * stack of v[0..n) whose blocks were released by the wrong API, that stack
 * and the stack of the last such release (looked up in v).  Text: a
 * section, nothing if there is none; JSON: the member ",\"mismatches\":[...]".
 */
void print_mismatches(FILE *o, bool json, struct mt_symbolizer *sym,
		      const struct mt_leak_stack *v, size_t n);

#endif
