/*-------------------------------------------------------------------------
 *
 * normalize.h
 *		Normalized query texts (normalize.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_NORMALIZE_H
#define PGSQ_NORMALIZE_H

#include "postgres.h"
#include "nodes/queryjumble.h"

extern char *pgsq_normalize(const JumbleState *jstate, const char *query,
							int query_loc, int query_len, int *out_len);
extern bool pgsq_text_has_literals(const char *query, int query_len);

#endif							/* PGSQ_NORMALIZE_H */
