/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text measured in screen cells, not bytes (top_text.c): a comm's "ö" is
 * two bytes and one cell, "🐘" four bytes and two cells, "日" three and
 * two.  Every place that fits, cuts, pads or scrolls text uses these.
 */
#ifndef MEMTRACK_TOP_TEXT_H
#define MEMTRACK_TOP_TEXT_H

#include <stddef.h>

/* The cells of s's first n bytes (a byte that is not UTF-8: one cell). */
size_t top_text_cells(const char *s, size_t n);
/*
 * The bytes of s's longest prefix of at most cells cells, never half a
 * character; its cells in *used.
 */
size_t top_text_fit(const char *s, size_t cells, size_t *used);

#endif
