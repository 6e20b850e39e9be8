/*-------------------------------------------------------------------------
 *
 * functions.c
 *		SQL-callable functions: the statistics, reset and info.
 *
 * Each function first merges this backend's own pending counters, so a
 * session always sees (and resets) its own statements.  They are marked
 * PARALLEL RESTRICTED in SQL for that reason: a parallel worker has no
 * access to the leader's pending counters.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "entrycount.h"
#include "functions.h"
#include "pending.h"
#include "refs.h"
#include "rows.h"
#include "settings.h"

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

/* Columns of pg_stat_queries_histogram() */
#define PGSQ_HISTOGRAM_COLS 3

/* Columns of pg_stat_queries_info() */
#define PGSQ_INFO_COLS 10

PG_FUNCTION_INFO_V1(pg_stat_queries);
PG_FUNCTION_INFO_V1(pg_stat_queries_changed);
PG_FUNCTION_INFO_V1(pg_stat_queries_histogram);
PG_FUNCTION_INFO_V1(pg_stat_queries_reset);
PG_FUNCTION_INFO_V1(pg_stat_queries_info);

/*
 * Put one read's rows into the function's tuplestore (the copies' texts
 * are copied into the rows, so the read is done at the end)
 */
static void
put_rows(ReturnSetInfo *rsinfo, const PgsqRowReader *reader,
		 const PgsqReadSet *set)
{
	Datum		values[PGSQ_CHANGED_COLS];
	bool		nulls[PGSQ_CHANGED_COLS];

	for (int i = 0; i < set->n; i++)
	{
		const PgsqEntryCopy *copy = &set->copies[i];

		if (!pgsq_row_shown(reader, copy))
			continue;
		memset(values, 0, sizeof(values));
		memset(nulls, 0, sizeof(nulls));
		pgsq_fill_row(reader, copy, values, nulls);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
							 nulls);
	}
}

/*
 * The rows of pg_stat_queries() and pg_stat_queries_changed(): entries
 * changed at or after since (all for 0), texts stored at or after since.
 */
static void
emit_statistics(FunctionCallInfo fcinfo, TimestampTz since, bool showtext)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	PgsqRowReader reader;
	PgsqReadSet *set;

	InitMaterializedSRF(fcinfo, 0);
	pgsq_start_rows(&reader, rsinfo->setDesc->natts, since != 0, showtext);
	set = pgsq_read_rows(&reader, since);
	PG_TRY();
	{
		put_rows(rsinfo, &reader, set);
	}
	PG_FINALLY();
	{
		pgsq_read_done(set);
	}
	PG_END_TRY();
}

/* pg_stat_queries(showtext boolean): one row per statement */
Datum
pg_stat_queries(PG_FUNCTION_ARGS)
{
	emit_statistics(fcinfo, 0, PG_GETARG_BOOL(0));
	return (Datum) 0;
}

/*
 * pg_stat_queries_changed(since timestamptz, showtext boolean): the rows of
 * statements whose counters changed at or after since, with the texts
 * stored at or after it or of entries first merged at or after it, and
 * when each text was stored.
 */
Datum
pg_stat_queries_changed(PG_FUNCTION_ARGS)
{
	TimestampTz since = PG_GETARG_TIMESTAMPTZ(0);

	/* 0 means "everything" inside; any real time is after it */
	emit_statistics(fcinfo, Max(since, 1), PG_GETARG_BOOL(1));
	return (Datum) 0;
}

/*
 * pg_stat_queries_histogram(userid, dbid, queryid, toplevel): the non-empty
 * buckets of a statement's execution times, since its min/max reset.  Other
 * users' statements are shown only to roles with pg_read_all_stats, as
 * their query IDs are.
 */
Datum
pg_stat_queries_histogram(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	PgsqKey		key;
	PgsqEntryData data;
	PgsqHistBucket buckets[PGSQ_HIST_BUCKETS];
	int			n;

	pgsq_require_store();
	memset(&key, 0, sizeof(key));
	key.userid = PG_GETARG_OID(0);
	key.dbid = PG_GETARG_OID(1);
	key.queryid = PG_GETARG_INT64(2);
	key.toplevel = PG_GETARG_BOOL(3);

	InitMaterializedSRF(fcinfo, 0);
	if (key.userid != GetUserId() &&
		!has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS))
		return (Datum) 0;

	pgsq_flush_own_pending();
	if (!pgsq_fetch_entry(&key, &data) || !data.minmax_valid[PGSQ_EXEC])
		return (Datum) 0;

	n = pgsq_hist_buckets(&data.counters.exec_hist,
						  data.counters.exec.min_time, buckets);
	for (int i = 0; i < n; i++)
	{
		Datum		values[PGSQ_HISTOGRAM_COLS];
		bool		nulls[PGSQ_HISTOGRAM_COLS] = {0};

		values[0] = Float8GetDatum(buckets[i].lower_ms);
		values[1] = Float8GetDatum(buckets[i].upper_ms);
		values[2] = Int64GetDatum((int64) buckets[i].count);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * pg_stat_queries_reset(userid, dbid, queryid, minmax_only): forget the
 * matching statements (zero matches all), or only their min/max times.
 */
Datum
pg_stat_queries_reset(PG_FUNCTION_ARGS)
{
	PgsqResetFilter filter;
	bool		minmax_only = PG_GETARG_BOOL(3);

	pgsq_require_store();
	filter.userid = PG_GETARG_OID(0);
	filter.dbid = PG_GETARG_OID(1);
	filter.queryid = PG_GETARG_INT64(2);

	pgsq_flush_own_pending();
	PG_RETURN_TIMESTAMPTZ(pgsq_reset_entries(&filter, minmax_only));
}

/* pg_stat_queries_info(): one row about the store as a whole */
Datum
pg_stat_queries_info(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[PGSQ_INFO_COLS] = {0};
	bool		nulls[PGSQ_INFO_COLS] = {0};
	TimestampTz stats_reset;
	int			col = 0;

	pgsq_require_store();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	/* this session's own refused executions are part of the count */
	pgsq_flush_refused();

	LWLockAcquire(pgsq_state->lock, LW_SHARED);
	stats_reset = pgsq_state->stats_reset;
	LWLockRelease(pgsq_state->lock);

	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->dealloc));
	values[col++] = TimestampTzGetDatum(stats_reset);
	values[col++] = Int64GetDatum((int64) pgsq_live_entries());
	values[col++] = Int64GetDatum(pgsq_max);
	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->evicted_entries));
	values[col] = pgsq_timestamp_or_null((TimestampTz) pg_atomic_read_u64(&pgsq_state->last_eviction_time),
										 &nulls[col]);
	col++;
	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->text_bytes));
	values[col++] = Int64GetDatum((int64) pgsq_query_text_memory * 1024);
	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->texts_missing));
	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->refused));
	Assert(col == PGSQ_INFO_COLS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
