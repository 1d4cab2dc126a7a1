/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output shared by memtrack-leak's reports (frames.c): JSON values,
 * frames (text, JSON, the name of a frame without a function) and the
 * lookup of a stack by id.
 */
#ifndef MEMTRACK_LEAK_FRAMES_H
#define MEMTRACK_LEAK_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "libmemtrack.h"

/* The file name of path. */
const char *base(const char *path);
/* The stack of v[0..n) whose id is id (ids are unique in a dump), or NULL. */
const struct mt_leak_stack *stack_by_id(const struct mt_leak_stack *v,
				       size_t n, uint32_t id);
/*
 * What names a frame with no function, the same in every run: the address
 * in its object "object+0xOFF", else addr "0xADDR".
 */
void unknown_frame_name(char *buf, size_t size, uint64_t addr,
			const struct mt_sym_frame *f);
/*
 * A stack's frames, innermost first, inlined ones with them: text lines,
 * or with json the members of a frames array.
 */
void stack_frames(FILE *o, bool json, struct mt_symbolizer *sym,
		  const struct mt_leak_stack *s);

#endif
