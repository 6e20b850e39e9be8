/*-------------------------------------------------------------------------
 *
 * scan.h
 *		Reading and resetting all entries (scan.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_SCAN_H
#define PGSQ_SCAN_H

#include "entry.h"
#include "datatype/timestamp.h"

/* Which entries a reset applies to; zero fields match everything */
typedef struct PgsqResetFilter
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
} PgsqResetFilter;

/* The percentiles the view shows: p50, p95, p99 */
#define PGSQ_VIEW_PERCENTILES 3

/*
 * An entry's data, rare counters and text, as collected for the SQL
 * functions.  The histogram is not copied (data.counters.exec_hist is left
 * empty): the view's percentiles are read from it under the entry lock.
 */
typedef struct PgsqEntryCopy
{
	PgsqEntryData data;
	double		percentiles[PGSQ_VIEW_PERCENTILES]; /* NaN: none */
	const PgsqRareCounters *rare;	/* a copy, or zeros shared by all */
	char	   *query;			/* text, palloc'd; NULL if none or not wanted */
	int			text_len;
	int			encoding;
	TimestampTz text_stored_at; /* when it was stored; 0 if none */
} PgsqEntryCopy;

extern int	pgsq_collect_entries(PgsqEntryCopy **entries, TimestampTz since,
								 bool texts, Oid text_user);
extern bool pgsq_fetch_entry(const PgsqKey *key, PgsqEntryData *data);
extern char *pgsq_fetch_text(const PgsqKey *key, int *len);
extern int64 pgsq_count_entries(void);
extern TimestampTz pgsq_reset_entries(const PgsqResetFilter *filter,
									  bool minmax_only);

#endif							/* PGSQ_SCAN_H */
