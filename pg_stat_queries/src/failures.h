/*-------------------------------------------------------------------------
 *
 * failures.h
 *		Executions that ended in an error (failures.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_FAILURES_H
#define PGSQ_FAILURES_H

#include "entry.h"

extern void pgsq_failure_noted(int64 queryid, Oid userid, int level,
							   const char *source, int location, int len,
							   double ms);
extern void pgsq_failures_count(void);

#endif							/* PGSQ_FAILURES_H */
