/*-------------------------------------------------------------------------
 *
 * scan.h
 *		Reading and resetting all entries (scan.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_SCAN_H
#define PGSQ_SCAN_H

#include "pg_stat_queries.h"
#include "datatype/timestamp.h"

/* Which entries a reset applies to; zero fields match everything */
typedef struct PgsqResetFilter
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
} PgsqResetFilter;

extern int	pgsq_collect_entries(PgsqEntryData **entries, TimestampTz since);
extern bool pgsq_fetch_entry(const PgsqKey *key, PgsqEntryData *data);
extern int64 pgsq_count_entries(void);
extern TimestampTz pgsq_reset_entries(const PgsqResetFilter *filter,
									  bool minmax_only);

#endif							/* PGSQ_SCAN_H */
