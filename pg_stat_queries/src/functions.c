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

#include "pending.h"
#include "qtext.h"
#include "refs.h"
#include "scan.h"
#include "settings.h"

#include <math.h>

#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

/* Columns of pg_stat_queries(): pg_stat_statements 1.12's, then ours */
#define PGSQ_STATS_COLS 53
#define PGSS_STATS_COLS 52

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
PG_FUNCTION_INFO_V1(pg_stat_queries_reset);
PG_FUNCTION_INFO_V1(pg_stat_queries_info);

/* A timestamp column that is NULL while unset */
static Datum
timestamp_or_null(TimestampTz ts, bool *isnull)
{
	*isnull = (ts == 0);
	return TimestampTzGetDatum(ts);
}

/* Append the timing columns of one phase (plan or exec) */
static int
put_timing(Datum *values, int col, const PgsqCounters *c, int phase)
{
	double		stddev = 0.0;

	if (c->calls[phase] > 1)
		stddev = sqrt(c->sum_var_time[phase] / c->calls[phase]);

	values[col++] = Float8GetDatumFast(c->total_time[phase]);
	values[col++] = Float8GetDatumFast(c->min_time[phase]);
	values[col++] = Float8GetDatumFast(c->max_time[phase]);
	values[col++] = Float8GetDatumFast(c->mean_time[phase]);
	values[col++] = Float8GetDatumFast(stddev);
	return col;
}

/* The query column: text converted to the database encoding, or NULL */
static Datum
query_text_datum(const PgsqKey *key, bool *isnull)
{
	int			encoding;
	char	   *text = pgsq_qtext_fetch(key, &encoding);
	char	   *converted;

	*isnull = (text == NULL);
	if (text == NULL)
		return (Datum) 0;
	converted = pg_any_to_server(text, strlen(text), encoding);
	return CStringGetTextDatum(converted);
}

/* pg_stat_queries(showtext boolean): one row per statement */
Datum
pg_stat_queries(PG_FUNCTION_ARGS)
{
	bool		showtext = PG_GETARG_BOOL(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			userid = GetUserId();
	bool		see_all = has_privs_of_role(userid, ROLE_PG_READ_ALL_STATS);
	PgsqEntryData *entries;
	int			count;

	require_store();
	pgsq_flush_own_pending();

	InitMaterializedSRF(fcinfo, 0);
	/* pg_stat_statements() of the drop-in takes the first 1.12 columns */
	if (rsinfo->setDesc->natts != PGSQ_STATS_COLS &&
		rsinfo->setDesc->natts != PGSS_STATS_COLS)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("pg_stat_queries() returns %d columns, expected %d",
						rsinfo->setDesc->natts, PGSQ_STATS_COLS),
				 errhint("Run ALTER EXTENSION pg_stat_queries UPDATE.")));

	count = pgsq_collect_entries(&entries);
	for (int i = 0; i < count; i++)
	{
		const PgsqEntryData *e = &entries[i];
		const PgsqCounters *c = &e->counters;
		Datum		values[PGSQ_STATS_COLS] = {0};
		bool		nulls[PGSQ_STATS_COLS] = {0};
		bool		visible = see_all || e->key.userid == userid;
		int			col = 0;
		char		buf[32];

		/* created but never executed nor planned: nothing to show */
		if (c->calls[PGSQ_PLAN] + c->calls[PGSQ_EXEC] == 0)
			continue;

		values[col++] = ObjectIdGetDatum(e->key.userid);
		values[col++] = ObjectIdGetDatum(e->key.dbid);
		values[col++] = BoolGetDatum(e->key.toplevel);
		if (visible)
			values[col++] = Int64GetDatumFast(e->key.queryid);
		else
			nulls[col++] = true;
		if (!showtext)
			nulls[col++] = true;
		else if (visible)
		{
			values[col] = query_text_datum(&e->key, &nulls[col]);
			col++;
		}
		else
			values[col++] = CStringGetTextDatum("<insufficient privilege>");

		values[col++] = Int64GetDatumFast(c->calls[PGSQ_PLAN]);
		col = put_timing(values, col, c, PGSQ_PLAN);
		values[col++] = Int64GetDatumFast(c->calls[PGSQ_EXEC]);
		col = put_timing(values, col, c, PGSQ_EXEC);
		values[col++] = Int64GetDatumFast(c->rows);
		values[col++] = Int64GetDatumFast(c->shared_blks_hit);
		values[col++] = Int64GetDatumFast(c->shared_blks_read);
		values[col++] = Int64GetDatumFast(c->shared_blks_dirtied);
		values[col++] = Int64GetDatumFast(c->shared_blks_written);
		values[col++] = Int64GetDatumFast(c->local_blks_hit);
		values[col++] = Int64GetDatumFast(c->local_blks_read);
		values[col++] = Int64GetDatumFast(c->local_blks_dirtied);
		values[col++] = Int64GetDatumFast(c->local_blks_written);
		values[col++] = Int64GetDatumFast(c->temp_blks_read);
		values[col++] = Int64GetDatumFast(c->temp_blks_written);
		values[col++] = Float8GetDatumFast(c->shared_blk_read_time);
		values[col++] = Float8GetDatumFast(c->shared_blk_write_time);
		values[col++] = Float8GetDatumFast(c->local_blk_read_time);
		values[col++] = Float8GetDatumFast(c->local_blk_write_time);
		values[col++] = Float8GetDatumFast(c->temp_blk_read_time);
		values[col++] = Float8GetDatumFast(c->temp_blk_write_time);
		values[col++] = Int64GetDatumFast(c->wal_records);
		values[col++] = Int64GetDatumFast(c->wal_fpi);
		snprintf(buf, sizeof(buf), UINT64_FORMAT, c->wal_bytes);
		values[col++] = DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
											ObjectIdGetDatum(InvalidOid),
											Int32GetDatum(-1));
		values[col++] = Int64GetDatumFast(c->wal_buffers_full);
		values[col++] = Int64GetDatumFast(c->jit_functions);
		values[col++] = Float8GetDatumFast(c->jit_generation_time);
		values[col++] = Int64GetDatumFast(c->jit_inlining_count);
		values[col++] = Float8GetDatumFast(c->jit_inlining_time);
		values[col++] = Int64GetDatumFast(c->jit_optimization_count);
		values[col++] = Float8GetDatumFast(c->jit_optimization_time);
		values[col++] = Int64GetDatumFast(c->jit_emission_count);
		values[col++] = Float8GetDatumFast(c->jit_emission_time);
		values[col++] = Int64GetDatumFast(c->jit_deform_count);
		values[col++] = Float8GetDatumFast(c->jit_deform_time);
		values[col++] = Int64GetDatumFast(c->parallel_workers_to_launch);
		values[col++] = Int64GetDatumFast(c->parallel_workers_launched);
		values[col++] = TimestampTzGetDatum(e->stats_since);
		values[col++] = TimestampTzGetDatum(e->minmax_stats_since);
		values[col] = timestamp_or_null(c->last_executed, &nulls[col]);
		col++;
		Assert(col == PGSQ_STATS_COLS);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(entries);
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
