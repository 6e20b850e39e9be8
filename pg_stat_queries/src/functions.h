/*-------------------------------------------------------------------------
 *
 * functions.h
 *		The SQL-callable functions that return statistics rows (functions.c),
 *		which the direct scan recognizes by their addresses.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_FUNCTIONS_H
#define PGSQ_FUNCTIONS_H

#include "fmgr.h"

extern PGDLLEXPORT Datum pg_stat_queries(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum pg_stat_queries_changed(PG_FUNCTION_ARGS);

#endif							/* PGSQ_FUNCTIONS_H */
