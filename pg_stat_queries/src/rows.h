/*-------------------------------------------------------------------------
 *
 * rows.h
 *		The rows of the statistics functions, made from entry copies (rows.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_ROWS_H
#define PGSQ_ROWS_H

#include "scan.h"
#include "utils/timestamp.h"

/*
 * Columns of pg_stat_queries(): pg_stat_statements 1.13's, then ours; the
 * function also serves the SQL definitions of our earlier versions and of
 * the drop-in.  Those of pg_stat_statements 1.13 (on PostgreSQL 19) are the
 * first columns of ours; our versions 1.0 and 1.1 and pg_stat_statements
 * 1.12 lack generic_plan_calls and custom_plan_calls, and take the first
 * columns of the rest; versions before 1.3 lack the failed executions'
 * columns, the last ones.  pg_stat_queries_changed() has one more, when
 * the text was stored.
 */
#define PGSQ_STATS_COLS 61
#define PGSQ_CHANGED_COLS (PGSQ_STATS_COLS + 1)

/* The query column's position (from 0) in every row type */
#define PGSQ_QUERY_COL 4

/* What the row type a statistics function was declared with holds */
typedef struct PgsqRowShape
{
	bool		plan_cache_cols;	/* generic_plan_calls, custom_plan_calls */
	bool		failure_cols;	/* failed_calls and the rest (1.3) */
	bool		percentile_cols;	/* p50_exec_time... (1.1 and later) */
	int			percentile_col; /* p50_exec_time's position, or -1 */
	int			stored_col;		/* text_stored_at's position, or -1 */
	int			natts;
} PgsqRowShape;

/*
 * Who reads, and what a read's rows show: made once per read by
 * pgsq_start_rows
 */
typedef struct PgsqRowReader
{
	PgsqRowShape shape;
	Oid			userid;			/* the caller */
	bool		see_all;		/* has pg_read_all_stats */
	bool		showtext;
	const bool *wanted;			/* columns to fill; NULL: all */
} PgsqRowReader;

extern void pgsq_require_store(void);
extern bool pgsq_row_shape(int natts, bool changes, PgsqRowShape *shape);
extern void pgsq_start_rows(PgsqRowReader *reader, int natts, bool changes,
							bool showtext);
extern bool pgsq_row_shown(const PgsqRowReader *reader,
						   const PgsqEntryCopy *copy);
extern void pgsq_fill_row(const PgsqRowReader *reader,
						  const PgsqEntryCopy *copy, Datum *values,
						  bool *nulls);
extern PgsqReadSet *pgsq_read_rows(const PgsqRowReader *reader,
								   TimestampTz since);

/* A timestamp column that is NULL while unset */
static inline Datum
pgsq_timestamp_or_null(TimestampTz ts, bool *isnull)
{
	*isnull = (ts == 0);
	return TimestampTzGetDatum(ts);
}

#endif							/* PGSQ_ROWS_H */
