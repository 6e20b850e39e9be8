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

#include "failures.h"
#include "pending.h"
#include "refs.h"
#include "scan.h"
#include "settings.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

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
#define PGSQ_STATS_COLS_1_2 58
#define PGSQ_STATS_COLS_1_1 56
#define PGSQ_STATS_COLS_1_0 53
#define PGSS_STATS_COLS_1_13 54
#define PGSS_STATS_COLS_1_12 52
#define PGSQ_CHANGED_COLS (PGSQ_STATS_COLS + 1)
#define PGSQ_CHANGED_COLS_1_2 (PGSQ_STATS_COLS_1_2 + 1)
#define PGSQ_CHANGED_COLS_1_1 (PGSQ_STATS_COLS_1_1 + 1)

/* What the row type a statistics function was declared with holds */
typedef struct RowShape
{
	bool		plan_cache_cols;	/* generic_plan_calls, custom_plan_calls */
	bool		failure_cols;	/* failed_calls and the rest (1.3) */
	bool		percentile_cols;	/* p50_exec_time... (1.1 and later) */
	int			stored_col;		/* text_stored_at's position, or -1 */
} RowShape;

/* Columns of pg_stat_queries_histogram() */
#define PGSQ_HISTOGRAM_COLS 3

/* Columns of pg_stat_queries_info() */
#define PGSQ_INFO_COLS 10

/* Error out from SQL functions when the library was not preloaded */
static void
require_store(void)
{
	if (!pgsq_store_ready())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_stat_queries must be loaded via \"shared_preload_libraries\"")));
}

PG_FUNCTION_INFO_V1(pg_stat_queries);
PG_FUNCTION_INFO_V1(pg_stat_queries_changed);
PG_FUNCTION_INFO_V1(pg_stat_queries_histogram);
PG_FUNCTION_INFO_V1(pg_stat_queries_reset);
PG_FUNCTION_INFO_V1(pg_stat_queries_info);

/* A timestamp column that is NULL while unset */
static Datum
timestamp_or_null(TimestampTz ts, bool *isnull)
{
	*isnull = (ts == 0);
	return TimestampTzGetDatum(ts);
}

/*
 * wal_bytes as numeric: from the integer directly (parsing its decimal
 * text was a twentieth of a full read); above the largest int64, which
 * never happens in practice, through the text
 */
static Datum
wal_bytes_datum(uint64 bytes)
{
	char		buf[32];

	if (bytes <= (uint64) PG_INT64_MAX)
		return NumericGetDatum(int64_to_numeric((int64) bytes));
	snprintf(buf, sizeof(buf), UINT64_FORMAT, bytes);
	return DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* Append the timing columns of one phase (plan or exec) */
static int
put_timing(Datum *values, int col, const PgsqTiming *t)
{
	double		stddev = 0.0;

	if (t->calls > 1)
		stddev = sqrt(t->sum_var_time / t->calls);

	values[col++] = Float8GetDatumFast(t->total_time);
	values[col++] = Float8GetDatumFast(t->min_time);
	values[col++] = Float8GetDatumFast(t->max_time);
	values[col++] = Float8GetDatumFast(t->mean_time);
	values[col++] = Float8GetDatumFast(stddev);
	return col;
}

/*
 * The query column: the collected text converted to the database encoding,
 * or NULL if none was collected.
 */
static Datum
query_text_datum(const PgsqEntryCopy *copy, bool *isnull)
{
	const char *converted;

	*isnull = (copy->query == NULL);
	if (copy->query == NULL)
		return (Datum) 0;
	converted = pg_any_to_server(copy->query, copy->text_len, copy->encoding);
	if (converted == copy->query)	/* no conversion: the length is known */
		return PointerGetDatum(cstring_to_text_with_len(converted,
														copy->text_len));
	return CStringGetTextDatum(converted);
}

/*
 * The percentile columns p50, p95, p99, computed when the entry was
 * copied: NULL without executions since the min/max reset.
 */
static int
put_percentiles(const PgsqEntryCopy *copy, Datum *values, bool *nulls, int col)
{
	for (int k = 0; k < PGSQ_VIEW_PERCENTILES; k++)
	{
		if (isnan(copy->percentiles[k]))
			nulls[col] = true;
		else
			values[col] = Float8GetDatum(copy->percentiles[k]);
		col++;
	}
	return col;
}

/*
 * Fill one row of the statistics functions.  Other users' query IDs and
 * texts are shown only to roles with pg_read_all_stats; the text is the
 * one collected, if showtext.
 */
static void
fill_row(const PgsqEntryCopy *copy, bool visible, bool showtext,
		 const RowShape *shape, Datum *values, bool *nulls)
{
	const PgsqRareCounters *r = copy->rare;
	int			col = 0;

	values[col++] = ObjectIdGetDatum(copy->key.userid);
	values[col++] = ObjectIdGetDatum(copy->key.dbid);
	values[col++] = BoolGetDatum(copy->key.toplevel);
	if (visible)
		values[col++] = Int64GetDatumFast(copy->key.queryid);
	else
		nulls[col++] = true;
	if (!showtext)
		nulls[col++] = true;
	else if (visible)
	{
		values[col] = query_text_datum(copy, &nulls[col]);
		col++;
	}
	else
		values[col++] = CStringGetTextDatum("<insufficient privilege>");

	values[col++] = Int64GetDatumFast(copy->plan.calls);
	col = put_timing(values, col, &copy->plan);
	values[col++] = Int64GetDatumFast(copy->exec.calls);
	col = put_timing(values, col, &copy->exec);
	values[col++] = Int64GetDatumFast(copy->rows);
	values[col++] = Int64GetDatumFast(copy->shared_blks_hit);
	values[col++] = Int64GetDatumFast(r->shared_blks_read);
	values[col++] = Int64GetDatumFast(r->shared_blks_dirtied);
	values[col++] = Int64GetDatumFast(r->shared_blks_written);
	values[col++] = Int64GetDatumFast(r->local_blks_hit);
	values[col++] = Int64GetDatumFast(r->local_blks_read);
	values[col++] = Int64GetDatumFast(r->local_blks_dirtied);
	values[col++] = Int64GetDatumFast(r->local_blks_written);
	values[col++] = Int64GetDatumFast(r->temp_blks_read);
	values[col++] = Int64GetDatumFast(r->temp_blks_written);
	values[col++] = Float8GetDatumFast(r->shared_blk_read_time);
	values[col++] = Float8GetDatumFast(r->shared_blk_write_time);
	values[col++] = Float8GetDatumFast(r->local_blk_read_time);
	values[col++] = Float8GetDatumFast(r->local_blk_write_time);
	values[col++] = Float8GetDatumFast(r->temp_blk_read_time);
	values[col++] = Float8GetDatumFast(r->temp_blk_write_time);
	values[col++] = Int64GetDatumFast(r->wal_records);
	values[col++] = Int64GetDatumFast(r->wal_fpi);
	values[col++] = wal_bytes_datum(r->wal_bytes);
	values[col++] = Int64GetDatumFast(r->wal_buffers_full);
	values[col++] = Int64GetDatumFast(r->jit_functions);
	values[col++] = Float8GetDatumFast(r->jit_generation_time);
	values[col++] = Int64GetDatumFast(r->jit_inlining_count);
	values[col++] = Float8GetDatumFast(r->jit_inlining_time);
	values[col++] = Int64GetDatumFast(r->jit_optimization_count);
	values[col++] = Float8GetDatumFast(r->jit_optimization_time);
	values[col++] = Int64GetDatumFast(r->jit_emission_count);
	values[col++] = Float8GetDatumFast(r->jit_emission_time);
	values[col++] = Int64GetDatumFast(r->jit_deform_count);
	values[col++] = Float8GetDatumFast(r->jit_deform_time);
	values[col++] = Int64GetDatumFast(r->parallel_workers_to_launch);
	values[col++] = Int64GetDatumFast(r->parallel_workers_launched);
	if (shape->plan_cache_cols)
	{
#ifdef PGSQ_HAS_PLAN_ORIGIN
		values[col++] = Int64GetDatumFast(r->generic_plan_calls);
		values[col++] = Int64GetDatumFast(r->custom_plan_calls);
#else
		/* PostgreSQL 18 does not tell how a plan was made */
		nulls[col++] = true;
		nulls[col++] = true;
#endif
	}
	values[col++] = TimestampTzGetDatum(copy->stats_since);
	values[col++] = TimestampTzGetDatum(copy->minmax_stats_since);
	values[col] = timestamp_or_null(copy->last_executed, &nulls[col]);
	col++;
	col = put_percentiles(copy, values, nulls, col);
	if (shape->failure_cols)
	{
		values[col++] = Int64GetDatumFast(r->failed_calls);
		values[col++] = Float8GetDatumFast(r->failed_exec_time);
		if (r->failed_calls > 0)
			values[col] = CStringGetTextDatum(unpack_sql_state(r->last_failed_sqlstate));
		else
			nulls[col] = true;
		col++;
	}
	Assert(col == (shape->failure_cols ? PGSQ_STATS_COLS :
				   shape->plan_cache_cols ? PGSQ_STATS_COLS_1_2 :
				   PGSQ_STATS_COLS_1_1));
}

/*
 * The row type a statistics function was declared with, by its number of
 * columns (all with the time a text was stored, for changes).  Errors out
 * on a type we do not know.
 */
static RowShape
check_row_type(int natts, bool changes)
{
	RowShape	shape = {false, false, false, -1};

	if (changes)
	{
		shape.stored_col = natts - 1;
		natts--;
	}
	switch (natts)
	{
		case PGSQ_STATS_COLS:
			shape.failure_cols = true;
			shape.plan_cache_cols = true;
			shape.percentile_cols = true;
			return shape;
		case PGSQ_STATS_COLS_1_2:
			shape.plan_cache_cols = true;
			shape.percentile_cols = true;
			return shape;
		case PGSS_STATS_COLS_1_13:
			shape.plan_cache_cols = true;
			if (!changes)
				return shape;
			break;
		case PGSQ_STATS_COLS_1_1:
			shape.percentile_cols = true;
			return shape;
		case PGSQ_STATS_COLS_1_0:
		case PGSS_STATS_COLS_1_12:
			if (!changes)
				return shape;
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("function returns %d columns, expected %d",
					natts + (changes ? 1 : 0),
					changes ? PGSQ_CHANGED_COLS : PGSQ_STATS_COLS),
			 errhint("Run ALTER EXTENSION pg_stat_queries UPDATE.")));
	return shape;				/* keep compiler quiet */
}

/* What emit_row needs to make the rows of one call */
typedef struct RowEmitter
{
	ReturnSetInfo *rsinfo;
	RowShape	shape;
	Oid			userid;			/* the caller */
	bool		see_all;		/* has pg_read_all_stats */
	bool		showtext;
} RowEmitter;

/*
 * Make one entry's row (pgsq_scan_entries calls it for each, under a
 * partition lock of the statistics system's hash: it takes none)
 */
static void
emit_row(const PgsqEntryCopy *copy, void *arg)
{
	RowEmitter *em = (RowEmitter *) arg;
	Datum		values[PGSQ_CHANGED_COLS] = {0};
	bool		nulls[PGSQ_CHANGED_COLS] = {0};
	bool		visible = em->see_all || copy->key.userid == em->userid;

	/*
	 * Created but never executed nor planned: nothing to show, unless it
	 * failed and the row type has the failures (the drop-in's rows stay
	 * pg_stat_statements')
	 */
	if (copy->plan.calls + copy->exec.calls == 0 &&
		!(em->shape.failure_cols && copy->rare->failed_calls > 0))
		return;

	fill_row(copy, visible, em->showtext, &em->shape, values, nulls);
	if (em->shape.stored_col >= 0)
		values[em->shape.stored_col] =
			timestamp_or_null(visible ? copy->text_stored_at : 0,
							  &nulls[em->shape.stored_col]);
	tuplestore_putvalues(em->rsinfo->setResult, em->rsinfo->setDesc, values,
						 nulls);
}

/*
 * The rows of pg_stat_queries() and pg_stat_queries_changed(): entries
 * changed at or after since (all for 0), texts stored at or after since.
 */
static void
emit_statistics(FunctionCallInfo fcinfo, TimestampTz since, bool showtext)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			userid = GetUserId();
	bool		see_all = has_privs_of_role(userid, ROLE_PG_READ_ALL_STATS);
	RowEmitter	emitter;

	require_store();
	pgsq_failures_count();
	pgsq_flush_own_pending();

	InitMaterializedSRF(fcinfo, 0);
	emitter.rsinfo = rsinfo;
	emitter.shape = check_row_type(rsinfo->setDesc->natts, since != 0);
	emitter.userid = userid;
	emitter.see_all = see_all;
	emitter.showtext = showtext;

	/*
	 * A text stored before since goes to a collector anyway when the entry
	 * itself is newer: unmerged entries are not shown, so the collector's
	 * previous read cannot have had it (scan.c).
	 */
	pgsq_scan_entries(since, showtext, see_all ? InvalidOid : userid,
					  emitter.shape.percentile_cols, emit_row, &emitter);
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

	require_store();
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

	require_store();
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

	require_store();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	/* this session's own refused executions are part of the count */
	pgsq_flush_refused();

	LWLockAcquire(pgsq_state->lock, LW_SHARED);
	stats_reset = pgsq_state->stats_reset;
	LWLockRelease(pgsq_state->lock);

	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->dealloc));
	values[col++] = TimestampTzGetDatum(stats_reset);
	values[col++] = Int64GetDatum(pgsq_count_entries());
	values[col++] = Int64GetDatum(pgsq_max);
	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->evicted_entries));
	values[col] = timestamp_or_null((TimestampTz) pg_atomic_read_u64(&pgsq_state->last_eviction_time),
									&nulls[col]);
	col++;
	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->text_bytes));
	values[col++] = Int64GetDatum((int64) pgsq_query_text_memory * 1024);
	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->texts_missing));
	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->refused));
	Assert(col == PGSQ_INFO_COLS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
