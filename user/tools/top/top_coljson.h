/* SPDX-License-Identifier: GPL-2.0 */
/* The columns' JSON values (top_coljson.c), named in top_columns.c's table. */
#ifndef MEMTRACK_TOP_COLJSON_H
#define MEMTRACK_TOP_COLJSON_H

#include <stdio.h>
#include "top_columns.h"

void top_json_text(FILE *f, const struct top_column *c,
		   const struct top_row *r);
void top_json_int(FILE *f, const struct top_column *c,
		  const struct top_row *r);
void top_json_pid(FILE *f, const struct top_column *c,
		  const struct top_row *r);
void top_json_user(FILE *f, const struct top_column *c,
		   const struct top_row *r);
void top_json_comm(FILE *f, const struct top_column *c,
		   const struct top_row *r);
void top_json_cgroup(FILE *f, const struct top_column *c,
		     const struct top_row *r);
void top_json_container(FILE *f, const struct top_column *c,
			const struct top_row *r);
void top_json_pod(FILE *f, const struct top_column *c,
		  const struct top_row *r);
void top_json_cpu(FILE *f, const struct top_column *c,
		  const struct top_row *r);
void top_json_pss(FILE *f, const struct top_column *c,
		  const struct top_row *r);
void top_json_uss(FILE *f, const struct top_column *c,
		  const struct top_row *r);
void top_json_limit(FILE *f, const struct top_column *c,
		    const struct top_row *r);
void top_json_growth(FILE *f, const struct top_column *c,
		     const struct top_row *r);
void top_json_flag(FILE *f, const struct top_column *c,
		   const struct top_row *r);

#endif
