// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload: what each thread keeps (struct pl_thread), apart
 * so that everything below the core can see whether its thread is busy.
 */
#include "state.h"

__thread struct pl_thread pl_self PL_TLS;
