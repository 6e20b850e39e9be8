/*-------------------------------------------------------------------------
 *
 * rows.c
 *		The rows of the statistics functions, made from entry copies.
 *
 * pg_stat_queries(), pg_stat_queries_changed() and the drop-in's
 * pg_stat_statements() return the same rows, whether through their
 * functions (functions.c) or through the custom scan that reads them
 * directly (directscan.c): which columns a row type has, which entries
 * have a row, who may see which query ID and text, and the values.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "failures.h"
#include "pending.h"
#include "rows.h"

#include <math.h>

#include "catalog/pg_authid.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

/* The other row types' numbers of columns (see rows.h) */
#define PGSQ_STATS_COLS_1_2 58
#define PGSQ_STATS_COLS_1_1 56
#define PGSQ_STATS_COLS_1_0 53
#define PGSS_STATS_COLS_1_13 54
#define PGSS_STATS_COLS_1_12 52

/* Error out from SQL functions when the library was not preloaded */
void
pgsq_require_store(void)
{
	if (!pgsq_store_ready())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_stat_queries must be loaded via \"shared_preload_libraries\"")));
}

/*
 * The shape of a row type with natts columns (all with the time a text was
 * stored, for changes); false if we do not know it.
 */
bool
pgsq_row_shape(int natts, bool changes, PgsqRowShape *shape)
{
	int			cols = changes ? natts - 1 : natts;

	memset(shape, 0, sizeof(*shape));
	shape->natts = natts;
	shape->stored_col = changes ? natts - 1 : -1;
	switch (cols)
	{
		case PGSQ_STATS_COLS:
			shape->failure_cols = true;
			shape->plan_cache_cols = true;
			shape->percentile_cols = true;
			break;
		case PGSQ_STATS_COLS_1_2:
			shape->plan_cache_cols = true;
			shape->percentile_cols = true;
			break;
		case PGSS_STATS_COLS_1_13:
			if (changes)
				return false;
			shape->plan_cache_cols = true;
			break;
		case PGSQ_STATS_COLS_1_1:
			shape->percentile_cols = true;
			break;
		case PGSQ_STATS_COLS_1_0:
		case PGSS_STATS_COLS_1_12:
			if (changes)
				return false;
			break;
		default:
			return false;
	}

	/* the percentiles follow the three timestamps ending the 1.12 columns */
	shape->percentile_col = -1;
	if (shape->percentile_cols)
		shape->percentile_col = PGSS_STATS_COLS_1_12 + 1 +
			(shape->plan_cache_cols ? 2 : 0);
	return true;
}

/*
 * Start the rows of one read of a function whose row type has natts
 * columns: who reads, with which privileges.  Errors out on a row type we
 * do not know.
 */
void
pgsq_start_rows(PgsqRowReader *reader, int natts, bool changes,
				bool showtext)
{
	pgsq_require_store();
	if (!pgsq_row_shape(natts, changes, &reader->shape))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("function returns %d columns, expected %d",
						natts, changes ? PGSQ_CHANGED_COLS : PGSQ_STATS_COLS),
				 errhint("Run ALTER EXTENSION pg_stat_queries UPDATE.")));
	reader->userid = GetUserId();
	reader->see_all = has_privs_of_role(reader->userid,
										ROLE_PG_READ_ALL_STATS);
	reader->showtext = showtext;
	reader->wanted = NULL;
}

/* Is column col to be filled? */
static inline bool
wanted(const PgsqRowReader *reader, int col)
{
	return reader->wanted == NULL || reader->wanted[col];
}

/*
 * Read the entries for rows: first this backend's own failures and pending
 * counters, so a session always sees its own statements; texts and
 * percentiles only if their columns are wanted.  Entries changed at or
 * after since (all for 0), texts stored at or after it; a text stored
 * before goes to a collector anyway when the entry itself is newer:
 * unmerged entries are not shown, so the collector's previous read cannot
 * have had it (scan.c).
 */
PgsqReadSet *
pgsq_read_rows(const PgsqRowReader *reader, TimestampTz since)
{
	bool		percentiles = false;

	pgsq_failures_count();
	pgsq_flush_own_pending();
	for (int k = 0; k < PGSQ_VIEW_PERCENTILES; k++)
		if (reader->shape.percentile_col >= 0 &&
			wanted(reader, reader->shape.percentile_col + k))
			percentiles = true;
	return pgsq_read_entries(since,
							 reader->showtext && wanted(reader, PGSQ_QUERY_COL),
							 reader->see_all ? InvalidOid : reader->userid,
							 percentiles);
}

/*
 * Does an entry have a row?  Not if created but never executed nor
 * planned, unless it failed and the row type has the failures (the
 * drop-in's rows stay pg_stat_statements').
 */
bool
pgsq_row_shown(const PgsqRowReader *reader, const PgsqEntryCopy *copy)
{
	return copy->plan.calls + copy->exec.calls > 0 ||
		(reader->shape.failure_cols && copy->rare->failed_calls > 0);
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
 * or NULL if none was collected.  Without conversion, the read's own copy
 * of the text is the datum.
 */
static Datum
query_text_datum(const PgsqEntryCopy *copy, bool *isnull)
{
	const char *converted;

	*isnull = (copy->query == NULL);
	if (copy->query == NULL)
		return (Datum) 0;
	converted = pg_any_to_server(copy->query, copy->text_len, copy->encoding);
	if (converted == copy->query)
		return PointerGetDatum(copy->query_text);
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
 * Fill one row: PGSQ_CHANGED_COLS values and nulls, zeroed at first, of
 * which the row type's first natts are its columns.  Other users' query IDs
 * and texts are shown only to roles with pg_read_all_stats; the text is
 * the one collected, if showtext.  Columns not wanted are left NULL where
 * making their value costs more than a copy.
 */
void
pgsq_fill_row(const PgsqRowReader *reader, const PgsqEntryCopy *copy,
			  Datum *values, bool *nulls)
{
	const PgsqRowShape *shape = &reader->shape;
	const PgsqRareCounters *r = copy->rare;
	bool		visible = reader->see_all || copy->key.userid == reader->userid;
	int			col = 0;

	values[col++] = ObjectIdGetDatum(copy->key.userid);
	values[col++] = ObjectIdGetDatum(copy->key.dbid);
	values[col++] = BoolGetDatum(copy->key.toplevel);
	if (visible)
		values[col++] = Int64GetDatumFast(copy->key.queryid);
	else
		nulls[col++] = true;
	Assert(col == PGSQ_QUERY_COL);
	if (!reader->showtext || !wanted(reader, col))
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
	if (wanted(reader, col))
		values[col] = wal_bytes_datum(r->wal_bytes);
	else
		nulls[col] = true;
	col++;
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

	/*
	 * Every row type but the drop-in's has last_executed and all but the
	 * first the percentiles; the drop-in's end before them (the row is made
	 * of the first natts values)
	 */
	values[col] = pgsq_timestamp_or_null(copy->last_executed, &nulls[col]);
	col++;
	Assert(shape->percentile_col < 0 || col == shape->percentile_col);
	col = put_percentiles(copy, values, nulls, col);
	if (shape->failure_cols)
	{
		values[col++] = Int64GetDatumFast(r->failed_calls);
		values[col++] = Float8GetDatumFast(r->failed_exec_time);
		if (r->failed_calls > 0 && wanted(reader, col))
			values[col] = CStringGetTextDatum(unpack_sql_state(r->last_failed_sqlstate));
		else
			nulls[col] = true;
		col++;
	}
	Assert(col >= (shape->stored_col >= 0 ? shape->natts - 1 : shape->natts));
	if (shape->stored_col >= 0)
		values[shape->stored_col] =
			pgsq_timestamp_or_null(visible ? copy->text_stored_at : 0,
								   &nulls[shape->stored_col]);
}
