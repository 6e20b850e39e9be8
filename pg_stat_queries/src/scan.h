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
 * An entry's counters, rare counters and text, as collected for the SQL
 * functions: what the view shows, not the histogram (about 1 kB, which a
 * full read of many entries would copy for three numbers), whose
 * percentiles are read under the entry lock instead.
 */
typedef struct PgsqEntryCopy
{
	PgsqKey		key;
	TimestampTz stats_since;
	TimestampTz minmax_stats_since;
	PgsqTiming	plan;
	PgsqTiming	exec;
	int64		rows;
	int64		shared_blks_hit;
	TimestampTz last_executed;
	double		percentiles[PGSQ_VIEW_PERCENTILES]; /* NaN: none */
	const PgsqRareCounters *rare;	/* a copy, or zeros shared by all */
	const char *query;			/* text, NUL-terminated; NULL if none or not
								 * wanted */
	const text *query_text;		/* the same as a text datum */
	int			rare_at;		/* scan.c's: where the copies are kept */
	int64		text_at;
	int			text_len;
	int			encoding;
	TimestampTz text_stored_at; /* when it was stored; 0 if none */
} PgsqEntryCopy;

/*
 * The copies of one read (pgsq_read_entries), valid until pgsq_read_done;
 * the rest is scan.c's
 */
typedef struct PgsqReadSet
{
	PgsqEntryCopy *copies;
	int			n;
	Size		copies_size;
	PgsqRareCounters *rares;
	Size		rares_size;
	char	   *texts;
	Size		texts_size;
} PgsqReadSet;

extern PgsqReadSet *pgsq_read_entries(TimestampTz since, bool texts,
									  Oid text_user, bool percentiles);
extern void pgsq_read_done(PgsqReadSet *set);
extern bool pgsq_fetch_entry(const PgsqKey *key, PgsqEntryData *data);
extern char *pgsq_fetch_text(const PgsqKey *key, int *len);
extern TimestampTz pgsq_reset_entries(const PgsqResetFilter *filter,
									  bool minmax_only);

#endif							/* PGSQ_SCAN_H */
