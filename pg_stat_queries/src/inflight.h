/*-------------------------------------------------------------------------
 *
 * inflight.h
 *		What parse analysis saw of the statements in flight (inflight.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_INFLIGHT_H
#define PGSQ_INFLIGHT_H

#include "postgres.h"
#include "nodes/queryjumble.h"

extern void pgsq_inflight_remember(int level, int64 queryid, const char *stmt,
								   int location, int stmt_len,
								   const JumbleState *jstate);
extern char *pgsq_inflight_normalized(int level, int64 queryid,
									  const char *stmt, int location,
									  int stmt_len, int *out_len,
									  bool *found);

#endif							/* PGSQ_INFLIGHT_H */
