/*-------------------------------------------------------------------------
 *
 * functions.c
 *		Reading: the SQL-callable functions, the rows they return, and the
 *		scans and resets of all entries behind them.
 *
 * The last stage: copying entries for a read, resetting them, making the
 * rows of pg_stat_queries(), pg_stat_queries_changed() and the drop-in's
 * pg_stat_statements(), and the functions themselves.  The custom scan that
 * reads the same rows without a function scan is directscan.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/dshash.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "varatt.h"
#include <math.h>

#include "pg_stat_queries.h"


/*-------------------------------------------------------------------------
 * Reading and resetting all entries, for the SQL functions.
 *
 * Scans take the shared hash's partition locks shared, one at a time, and
 * each entry's lock while it is copied or changed; executing queries never
 * wait for a whole scan.  An entry's text is copied, or taken away and
 * freed, with the entry (see the locking rules in docs/design.md).
 *-------------------------------------------------------------------------
 */

/* The view's percentiles, in parts per 10,000 of the executions */
static const uint32 view_fractions[PGSQ_VIEW_PERCENTILES] = {5000, 9500, 9900};

/*
 * Copy what the view shows of an entry's data; the percentiles, if wanted,
 * are read from its histogram in place, under the entry lock the caller
 * holds.
 */
static void
copy_entry_data(PgsqEntryCopy *copy, const PgsqEntryData *data,
				bool percentiles)
{
	const PgsqMainCounters *c = &data->counters;

	copy->key = data->key;
	copy->stats_since = data->stats_since;
	copy->minmax_stats_since = data->minmax_stats_since;
	copy->plan = c->plan;
	copy->exec = c->exec;
	copy->rows = c->rows;
	copy->shared_blks_hit = c->shared_blks_hit;
	copy->last_executed = c->last_executed;
	if (percentiles && data->minmax_valid[PGSQ_EXEC])
		pgsq_hist_percentiles(&c->exec_hist, view_fractions,
							  PGSQ_VIEW_PERCENTILES, c->exec.min_time,
							  c->exec.max_time, copy->percentiles);
	else
	{
		for (int k = 0; k < PGSQ_VIEW_PERCENTILES; k++)
			copy->percentiles[k] = get_float8_nan();
	}
}

/*
 * The buffers of a read (PgsqReadSet) are kept from one read to the next in
 * this backend (in TopMemoryContext) while they are small enough: the pages
 * of memory a read touches for the first time, faulted in by the kernel,
 * were a fifth of a read of 5,000 statements.  Each buffer above
 * PGSQ_READ_BUFFERS_KEPT is freed after the read.  A read that starts while
 * another one of this backend still holds them (two scans of the view in
 * one query) gets buffers of its own, freed when it is done.
 */
#define PGSQ_READ_BUFFERS_KEPT (4 * 1024 * 1024)

static PgsqReadSet kept_set;
static bool kept_set_busy = false;

/* Make a read buffer hold at least "need" items of "item" bytes */
static void *
fit_read_buffer(void *buf, Size item, Size *size, Size need, bool keep)
{
	Size		want;

	if (*size >= need)
		return buf;
	want = Max(need, Max(*size * 2, 64));
	want = Min(want, MaxAllocHugeSize / item);
	if (want < need)
		elog(ERROR, "too many statements to read at once");
	if (buf == NULL)
		buf = MemoryContextAllocHuge(TopMemoryContext, want * item);
	else if (keep)
		buf = repalloc_huge(buf, want * item);
	else
	{
		pfree(buf);
		buf = MemoryContextAllocHuge(TopMemoryContext, want * item);
	}
	*size = want;
	return buf;
}

/* Free a read buffer if it is larger than "limit" bytes */
static void
free_read_buffer(void **buf, Size item, Size *size, Size limit)
{
	if (*buf != NULL && *size * item > limit)
	{
		pfree(*buf);
		*buf = NULL;
		*size = 0;
	}
}

/* Buffers for a new read: the kept ones if free, else new ones */
static PgsqReadSet *
start_read_set(void)
{
	PgsqReadSet *set;

	if (!kept_set_busy)
	{
		kept_set_busy = true;
		set = &kept_set;
	}
	else
		set = MemoryContextAllocZero(TopMemoryContext, sizeof(PgsqReadSet));
	set->n = 0;
	return set;
}

/*
 * Done with a read: the kept buffers are freed if too large and made free
 * for the next read, others are freed.
 */
void
pgsq_read_done(PgsqReadSet *set)
{
	Size		limit = (set == &kept_set) ? PGSQ_READ_BUFFERS_KEPT : 0;

	free_read_buffer((void **) &set->copies, sizeof(PgsqEntryCopy),
					 &set->copies_size, limit);
	free_read_buffer((void **) &set->rares, sizeof(PgsqRareCounters),
					 &set->rares_size, limit);
	free_read_buffer((void **) &set->texts, 1, &set->texts_size, limit);
	set->n = 0;
	if (set == &kept_set)
		kept_set_busy = false;
	else
		pfree(set);
}

/*
 * Copy every initialized entry changed at or after since (all of them for
 * 0), as what the view shows of it, with its rare counters, into a read
 * set; the caller passes it to pgsq_read_done when done with the copies.
 * With texts, the copy has the text of each entry of text_user (every
 * user's for InvalidOid) that was stored at or after since, or whose entry
 * is that new (a reader of changes that came before cannot have had it).
 * The percentiles are computed only if asked for (the drop-in's rows have
 * none).  Partition locks are taken shared, one at a time, and each entry's
 * lock shared while it is checked and copied; nothing else is done under
 * them: rows are made from the copies afterwards, so writers never wait
 * for them.
 */
PgsqReadSet *
pgsq_read_entries(TimestampTz since, bool texts, Oid text_user,
				  bool percentiles, bool plans)
{
	static const PgsqRareCounters no_rare;
	PgsqReadSet *set = start_read_set();
	PgsqTableScan scan;
	PgsqSharedEntry *entry;
	int			n = 0;
	int			nrare = 0;
	Size		text_used = 0;
	uint64		count = plans ? pgsq_live_plans() : pgsq_entry_count();

	PG_TRY();
	{
		/* room for every entry at once when their number is known */
		if (pgsq_entry_count_known(count) && since == 0)
			set->copies = fit_read_buffer(set->copies, sizeof(PgsqEntryCopy),
										  &set->copies_size,
										  Min(count + count / 16 + 16, (uint64) INT_MAX / 2),
										  false);

		pgsq_table_scan_begin(&scan, LW_SHARED, 0);
		while ((entry = pgsq_table_scan_next(&scan)) != NULL)
		{
			PgsqEntryCopy *copy;
			const char *bytes = NULL;

			if ((Size) n == set->copies_size)
				set->copies = fit_read_buffer(set->copies, sizeof(PgsqEntryCopy),
											  &set->copies_size, n + 1, true);
			copy = &set->copies[n];
			LWLockAcquire(&entry->lock, LW_SHARED);
			if (entry->data.stats_since == 0 || entry->data.changed_at < since ||
				pgsq_key_is_plan(&entry->data.key) != plans)
			{
				LWLockRelease(&entry->lock);
				continue;
			}
			copy_entry_data(copy, &entry->data, percentiles);

			/*
			 * Most entries have no rare counters: they share zeros, and only
			 * the others are copied (where, is set after the scan: the buffer
			 * may move as it grows).
			 */
			copy->rare = NULL;
			copy->rare_at = -1;
			if (DsaPointerIsValid(entry->rare))
			{
				if ((Size) nrare == set->rares_size)
					set->rares = fit_read_buffer(set->rares,
												 sizeof(PgsqRareCounters),
												 &set->rares_size, nrare + 1,
												 true);
				pgsq_rare_copy(entry, &set->rares[nrare]);
				copy->rare_at = nrare++;
			}

			/*
			 * When the text was stored matters to a read of changes only; for
			 * a full read (since 0) every text is wanted and stored_at is not
			 * shown, so the text's chunk is not read for it.
			 */
			copy->query = NULL;
			copy->query_text = NULL;
			copy->text_at = -1;
			copy->text_stored_at = since != 0 ? pgsq_text_stored_at(entry) : 0;
			if (texts && (text_user == InvalidOid ||
						  text_user == entry->data.key.userid) &&
				(since == 0 || copy->text_stored_at >= since ||
				 entry->data.stats_since >= since))
				bytes = pgsq_text_peek(entry, &copy->text_len, &copy->encoding,
									   &copy->text_stored_at);
			if (bytes != NULL)
			{
				/*
				 * Each text is kept as a text datum (aligned, with its length
				 * word) and a terminating NUL, so that rows can point at it
				 */
				Size		at = INTALIGN(text_used);
				char	   *dest;

				set->texts = fit_read_buffer(set->texts, 1, &set->texts_size,
											 at + VARHDRSZ + copy->text_len + 1,
											 true);
				dest = set->texts + at;
				SET_VARSIZE(dest, VARHDRSZ + copy->text_len);
				memcpy(dest + VARHDRSZ, bytes, copy->text_len);
				dest[VARHDRSZ + copy->text_len] = '\0';
				copy->text_at = (int64) at;
				text_used = at + VARHDRSZ + copy->text_len + 1;
			}
			LWLockRelease(&entry->lock);
			n++;
		}
	}
	PG_CATCH();
	{
		pgsq_read_done(set);
		PG_RE_THROW();
	}
	PG_END_TRY();

	for (int i = 0; i < n; i++)
	{
		PgsqEntryCopy *copy = &set->copies[i];

		copy->rare = copy->rare_at >= 0 ? &set->rares[copy->rare_at] : &no_rare;
		if (copy->text_at >= 0)
		{
			copy->query_text = (text *) (set->texts + copy->text_at);
			copy->query = VARDATA(copy->query_text);
		}
	}
	set->n = n;
	return set;
}

/*
 * Copy one statement's entry data into *data; false if it has no
 * initialized entry.
 */
bool
pgsq_fetch_entry(const PgsqKey *key, PgsqEntryData *data)
{
	PgsqSharedEntry *entry = pgsq_lock_statement_entry(key, LW_SHARED);

	if (entry == NULL)
		return false;
	*data = entry->data;
	pgsq_unlock_statement_entry(entry);
	return true;
}

/* Does an entry's key pass a reset filter? */
static bool
filter_matches(const PgsqResetFilter *filter, const PgsqEntryData *data)
{
	if (data->stats_since == 0)
	{
		/* not yet merged into, so its key is unknown: only a full reset */
		return filter->userid == InvalidOid && filter->dbid == InvalidOid &&
			filter->queryid == 0;
	}
	return (filter->userid == InvalidOid || filter->userid == data->key.userid) &&
		(filter->dbid == InvalidOid || filter->dbid == data->key.dbid) &&
		(filter->queryid == 0 || filter->queryid == data->key.queryid);
}

/*
 * Drop the entries that match a filter, partition by partition (each locked
 * exclusively while its entries are looked at), each under its own lock,
 * and free their texts once no lock is held.  Returns how many it dropped.
 */
static int64
drop_matching(const PgsqResetFilter *filter)
{
	PgsqTableScan scan;
	PgsqSharedEntry *entry;
	int64		count = 0;
	dsa_pointer texts[64];
	int			ntexts = 0;

	pgsq_table_scan_begin(&scan, LW_EXCLUSIVE, 0);
	while ((entry = pgsq_table_scan_next(&scan)) != NULL)
	{
		LWLockAcquire(&entry->lock, LW_EXCLUSIVE);
		if (filter_matches(filter, &entry->data))
		{
			dsa_pointer text = pgsq_drop_locked(scan.part, entry);

			count++;
			if (DsaPointerIsValid(text))
				texts[ntexts++] = text;
		}
		LWLockRelease(&entry->lock);
		if (ntexts == lengthof(texts))
		{
			/* our text area's locks are taken with no other held */
			int			part = scan.part;

			pgsq_table_scan_end(&scan);
			while (ntexts > 0)
				pgsq_text_discard(texts[--ntexts]);
			pgsq_table_scan_begin(&scan, LW_EXCLUSIVE, part);
		}
	}
	while (ntexts > 0)
		pgsq_text_discard(texts[--ntexts]);
	return count;
}

/*
 * Reset entries that match the filter: drop them, or with minmax_only
 * clear their min/max times.  Executing queries never wait for the whole
 * reset: partitions are processed one at a time, and a backend whose
 * entry disappears simply creates a new one.
 */
TimestampTz
pgsq_reset_entries(const PgsqResetFilter *filter, bool minmax_only)
{
	TimestampTz now = GetCurrentTimestamp();
	bool		full = filter->userid == InvalidOid &&
		filter->dbid == InvalidOid && filter->queryid == 0;

	if (minmax_only)
	{
		PgsqTableScan scan;
		PgsqSharedEntry *entry;

		pgsq_table_scan_begin(&scan, LW_SHARED, 0);
		while ((entry = pgsq_table_scan_next(&scan)) != NULL)
		{
			LWLockAcquire(&entry->lock, LW_EXCLUSIVE);
			if (entry->data.stats_since != 0 &&
				filter_matches(filter, &entry->data))
			{
				for (int phase = 0; phase < PGSQ_NUM_PHASES; phase++)
				{
					PgsqTiming *t = PGSQ_TIMING(&entry->data.counters, phase);

					t->min_time = 0;
					t->max_time = 0;
					entry->data.minmax_valid[phase] = false;
				}
				memset(&entry->data.counters.exec_hist, 0,
					   sizeof(entry->data.counters.exec_hist));
				entry->data.minmax_stats_since = now;
				entry->data.changed_at = GetCurrentTimestamp();
			}
			LWLockRelease(&entry->lock);
		}
		return now;
	}
	else
	{
		int64		dropped;

		/* counts kept aside before this reset must not outlive it */
		pg_atomic_add_fetch_u64(&pgsq_state->reset_count, 1);
		if (full)
			pgsq_sweep_after_full_reset();
		dropped = drop_matching(filter);
		pgsq_entries_removed(dropped);
		pg_atomic_add_fetch_u64(&pgsq_state->resets_done, 1);

		if (full)
		{
			LWLockAcquire(pgsq_state->lock, LW_EXCLUSIVE);
			pgsq_state->stats_reset = now;
			LWLockRelease(pgsq_state->lock);
			pg_atomic_write_u64(&pgsq_state->dealloc, 0);
			pg_atomic_write_u64(&pgsq_state->evicted_entries, 0);
			pg_atomic_write_u64(&pgsq_state->texts_missing, 0);
			pg_atomic_add_fetch_u64(&pgsq_state->full_resets, 1);
			pg_atomic_write_u64(&pgsq_state->refused, 0);
			pgsq_plans_untracked_reset();
			pg_atomic_write_u64(&pgsq_state->last_eviction_time, 0);
		}
	}
	return now;
}


/*-------------------------------------------------------------------------
 * The rows of the statistics functions, made from entry copies.
 *
 * pg_stat_queries(), pg_stat_queries_changed() and the drop-in's
 * pg_stat_statements() return the same rows, whether through their
 * functions (below) or through the custom scan that reads them
 * directly (directscan.c): which columns a row type has, which entries
 * have a row, who may see which query ID and text, and the values.
 *-------------------------------------------------------------------------
 */

/* The other row types' numbers of columns (see pg_stat_queries.h) */
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
 * have had it (pgsq_read_entries).
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
							 percentiles, false);
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


/*-------------------------------------------------------------------------
 * SQL-callable functions: the statistics, reset and info.
 *
 * Each function first merges this backend's own pending counters, so a
 * session always sees (and resets) its own statements.  They are marked
 * PARALLEL RESTRICTED in SQL for that reason: a parallel worker has no
 * access to the leader's pending counters.
 *-------------------------------------------------------------------------
 */

/* Columns of pg_stat_queries_histogram() */
#define PGSQ_HISTOGRAM_COLS 3

/* Columns of pg_stat_queries_info() */
#define PGSQ_INFO_COLS 13

PG_FUNCTION_INFO_V1(pg_stat_queries);
PG_FUNCTION_INFO_V1(pg_stat_queries_changed);
PG_FUNCTION_INFO_V1(pg_stat_queries_histogram);
PG_FUNCTION_INFO_V1(pg_stat_queries_reset);
PG_FUNCTION_INFO_V1(pg_stat_queries_info);
PG_FUNCTION_INFO_V1(pg_stat_queries_plans);

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
	values[col++] = Int64GetDatum((int64) pgsq_live_of_class(false));
	values[col++] = Int64GetDatum(pgsq_max);
	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->evicted_entries));
	values[col] = pgsq_timestamp_or_null((TimestampTz) pg_atomic_read_u64(&pgsq_state->last_eviction_time),
										 &nulls[col]);
	col++;
	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->text_bytes));
	values[col++] = Int64GetDatum((int64) pgsq_query_text_memory * 1024);
	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->texts_missing));
	values[col++] = Int64GetDatum(pg_atomic_read_u64(&pgsq_state->refused));
	/* the plans' columns, from version 1.4 */
	if (tupdesc->natts >= PGSQ_INFO_COLS)
	{
		values[col++] = Int64GetDatum((int64) pgsq_live_plans());
		values[col++] = Int64GetDatum(pgsq_max_plans);
		values[col++] = Int64GetDatum((int64) pgsq_plans_untracked());
	}
	Assert(col <= PGSQ_INFO_COLS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* Columns of pg_stat_queries_plans() */
#define PGSQ_PLANS_COLS 20

/*
 * pg_stat_queries_plans(showtext boolean, since timestamptz): one row per
 * plan of a statement, as pg_stat_queries shows statements (the same
 * privileges: other users' query IDs, plan IDs and plans only to roles with
 * pg_read_all_stats); with since, only the plans whose counters changed at
 * or after it, as pg_stat_queries_changed() does for statements.
 */
Datum
pg_stat_queries_plans(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		showtext = PG_ARGISNULL(0) ? true : PG_GETARG_BOOL(0);
	TimestampTz since = PG_ARGISNULL(1) ? 0 : Max(PG_GETARG_TIMESTAMPTZ(1), 1);
	Oid			userid = GetUserId();
	bool		see_all = has_privs_of_role(userid, ROLE_PG_READ_ALL_STATS);
	PgsqReadSet *set;

	pgsq_require_store();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != PGSQ_PLANS_COLS)
		elog(ERROR, "incorrect number of output arguments");
	pgsq_flush_own_pending();
	set = pgsq_read_entries(since, showtext, see_all ? InvalidOid : userid,
							true, true);
	PG_TRY();
	{
		for (int i = 0; i < set->n; i++)
		{
			const PgsqEntryCopy *copy = &set->copies[i];
			const PgsqRareCounters *r = copy->rare;
			bool		visible = see_all || copy->key.userid == userid;
			Datum		values[PGSQ_PLANS_COLS] = {0};
			bool		nulls[PGSQ_PLANS_COLS] = {0};
			int			col = 0;

			if (copy->exec.calls == 0)
				continue;
			values[col++] = ObjectIdGetDatum(copy->key.userid);
			values[col++] = ObjectIdGetDatum(copy->key.dbid);
			if (visible)
				values[col++] = Int64GetDatumFast(copy->key.queryid);
			else
				nulls[col++] = true;
			values[col++] = BoolGetDatum(copy->key.toplevel);
			if (visible)
				values[col++] = Int64GetDatumFast(copy->key.planid);
			else
				nulls[col++] = true;
			values[col++] = Int64GetDatumFast(copy->exec.calls);
			col = put_timing(values, col, &copy->exec);
			col = put_percentiles(copy, values, nulls, col);
			values[col++] = Int64GetDatumFast(copy->rows);
			values[col++] = Int64GetDatumFast(copy->shared_blks_hit);
			values[col++] = Int64GetDatumFast(r->shared_blks_read);
			values[col++] = TimestampTzGetDatum(copy->stats_since);
			values[col] = pgsq_timestamp_or_null(copy->last_executed,
												 &nulls[col]);
			col++;
			if (showtext && visible)
				values[col] = query_text_datum(copy, &nulls[col]);
			else
				nulls[col] = true;
			col++;
			Assert(col == PGSQ_PLANS_COLS);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
								 nulls);
		}
	}
	PG_FINALLY();
	{
		pgsq_read_done(set);
	}
	PG_END_TRY();
	return (Datum) 0;
}

/* Columns of pg_stat_queries_consistency() */
#define PGSQ_CONSISTENCY_COLS 11

PG_FUNCTION_INFO_V1(pg_stat_queries_consistency);

/*
 * pg_stat_queries_consistency(): the exact counts kept in shared memory
 * beside what a walk of our entries finds, for tests (TAP test 020): live
 * statements' and plans' entries counted and found (not dropped, closed
 * ones included: they stay counted until their closer drops them), the
 * closed entries found, the text bytes counted (query_text_bytes) and the
 * len + 1 of every text an entry holds, the texts found, the room
 * claimed beyond the live entries, and where the ring of ids stands (its
 * head and tail positions: TAP test 023).  The walk takes the partitions one at a
 * time, so the two sides agree exactly only while nothing else runs
 * statements.
 */
Datum
pg_stat_queries_consistency(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[PGSQ_CONSISTENCY_COLS] = {0};
	bool		nulls[PGSQ_CONSISTENCY_COLS] = {0};
	PgsqTableScan scan;
	PgsqSharedEntry *entry;
	int64		found[2] = {0, 0};
	int64		closed = 0;
	int64		texts = 0;
	int64		text_bytes = 0;
	uint64		live[2];
	uint64		claimed;
	int			col = 0;

	pgsq_require_store();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	pgsq_flush_own_pending();
	pgsq_table_scan_begin(&scan, LW_SHARED, 0);
	while ((entry = pgsq_table_scan_next(&scan)) != NULL)
	{
		int			len;
		int			encoding;
		TimestampTz stored_at;

		LWLockAcquire(&entry->lock, LW_SHARED);
		found[pgsq_key_is_plan(&entry->data.key) ? 1 : 0]++;
		if (pgsq_text_closed(entry))
			closed++;
		else if (pgsq_text_peek(entry, &len, &encoding, &stored_at) != NULL)
		{
			texts++;
			text_bytes += len + 1;
		}
		LWLockRelease(&entry->lock);
	}

	live[0] = pgsq_live_of_class(false);
	live[1] = pgsq_live_of_class(true);
	claimed = pg_atomic_read_u64(&pgsq_entry_counts->claimed[0]) +
		pg_atomic_read_u64(&pgsq_entry_counts->claimed[1]);

	values[col++] = Int64GetDatum((int64) live[0]);
	values[col++] = Int64GetDatum(found[0]);
	values[col++] = Int64GetDatum((int64) live[1]);
	values[col++] = Int64GetDatum(found[1]);
	values[col++] = Int64GetDatum(closed);
	values[col++] = Int64GetDatum((int64) pg_atomic_read_u64(&pgsq_state->text_bytes));
	values[col++] = Int64GetDatum(text_bytes);
	values[col++] = Int64GetDatum(texts);
	values[col++] = Int64GetDatum((int64) (claimed - live[0] - live[1]));
	values[col++] = Int64GetDatum((int64) pgsq_ring_head());
	values[col++] = Int64GetDatum((int64) pgsq_ring_tail());
	Assert(col == PGSQ_CONSISTENCY_COLS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
