/*-------------------------------------------------------------------------
 *
 * normalize.h
 *		The one rule every stored query text passes (normalize.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_NORMALIZE_H
#define PGSQ_NORMALIZE_H

#include "postgres.h"
#include "nodes/queryjumble.h"

extern char *pgsq_normalize(const JumbleState *jstate, const char *query,
							int query_loc, int query_len, int *out_len,
							int *unlocated);

#endif							/* PGSQ_NORMALIZE_H */
