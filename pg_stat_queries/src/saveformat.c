/*-------------------------------------------------------------------------
 *
 * saveformat.c
 *		The named columns our saved statistics file is written with.
 *
 * A column is a field of SavedEntry or SavedInfo (saveformat.h), saved
 * under a name that never changes: adding a counter is adding a column
 * here (and bumping PGSQ_SAVE_FORMAT); a field whose meaning changes gets
 * a new name.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "saveformat.h"

#define COLUMN(type, name, field) \
	{name, offsetof(type, field), sizeof(((type *) 0)->field)}
#define ENTRY_COLUMN(name, field) COLUMN(SavedEntry, name, field)
#define TIMING_COLUMNS(phase, field) \
	ENTRY_COLUMN(phase ".calls", data.counters.field.calls), \
	ENTRY_COLUMN(phase ".total_time", data.counters.field.total_time), \
	ENTRY_COLUMN(phase ".min_time", data.counters.field.min_time), \
	ENTRY_COLUMN(phase ".max_time", data.counters.field.max_time), \
	ENTRY_COLUMN(phase ".mean_time", data.counters.field.mean_time), \
	ENTRY_COLUMN(phase ".sum_var_time", data.counters.field.sum_var_time)
#define RARE_COLUMN(field) ENTRY_COLUMN(#field, rare.field)

/* The columns of a statement; names are forever */
const SavedColumn pgsq_entry_columns[] = {
	ENTRY_COLUMN("userid", data.key.userid),
	ENTRY_COLUMN("dbid", data.key.dbid),
	ENTRY_COLUMN("queryid", data.key.queryid),
	ENTRY_COLUMN("toplevel", data.key.toplevel),
	ENTRY_COLUMN("stats_since", data.stats_since),
	ENTRY_COLUMN("changed_at", data.changed_at),
	ENTRY_COLUMN("minmax_stats_since", data.minmax_stats_since),
	ENTRY_COLUMN("plan.minmax_valid", data.minmax_valid[PGSQ_PLAN]),
	ENTRY_COLUMN("exec.minmax_valid", data.minmax_valid[PGSQ_EXEC]),
	TIMING_COLUMNS("plan", plan),
	TIMING_COLUMNS("exec", exec),
	ENTRY_COLUMN("rows", data.counters.rows),
	ENTRY_COLUMN("shared_blks_hit", data.counters.shared_blks_hit),
	ENTRY_COLUMN("last_executed", data.counters.last_executed),
	/* 242 buckets, eighteen per doubling (histogram.h) */
	ENTRY_COLUMN("exec_hist.log18", data.counters.exec_hist),
	ENTRY_COLUMN("has_rare", has_rare),
	RARE_COLUMN(wal_records),
	RARE_COLUMN(wal_fpi),
	RARE_COLUMN(wal_bytes),
	RARE_COLUMN(wal_buffers_full),
	RARE_COLUMN(shared_blks_read),
	RARE_COLUMN(shared_blks_dirtied),
	RARE_COLUMN(shared_blks_written),
	RARE_COLUMN(local_blks_hit),
	RARE_COLUMN(local_blks_read),
	RARE_COLUMN(local_blks_dirtied),
	RARE_COLUMN(local_blks_written),
	RARE_COLUMN(temp_blks_read),
	RARE_COLUMN(temp_blks_written),
	RARE_COLUMN(shared_blk_read_time),
	RARE_COLUMN(shared_blk_write_time),
	RARE_COLUMN(local_blk_read_time),
	RARE_COLUMN(local_blk_write_time),
	RARE_COLUMN(temp_blk_read_time),
	RARE_COLUMN(temp_blk_write_time),
	RARE_COLUMN(jit_functions),
	RARE_COLUMN(jit_generation_time),
	RARE_COLUMN(jit_inlining_count),
	RARE_COLUMN(jit_inlining_time),
	RARE_COLUMN(jit_optimization_count),
	RARE_COLUMN(jit_optimization_time),
	RARE_COLUMN(jit_emission_count),
	RARE_COLUMN(jit_emission_time),
	RARE_COLUMN(jit_deform_count),
	RARE_COLUMN(jit_deform_time),
	RARE_COLUMN(parallel_workers_to_launch),
	RARE_COLUMN(parallel_workers_launched),
	RARE_COLUMN(generic_plan_calls),
	RARE_COLUMN(custom_plan_calls),
	RARE_COLUMN(failed_calls),
	RARE_COLUMN(failed_exec_time),
	RARE_COLUMN(last_failed_at),
	RARE_COLUMN(last_failed_sqlstate),
	ENTRY_COLUMN("text_len", text_len),
	ENTRY_COLUMN("text_encoding", text_encoding),
	ENTRY_COLUMN("text_stored_at", text_stored_at),
#ifdef PGSQ_TEST_EXTRA_COUNTER
	ENTRY_COLUMN("test_extra", data.test_extra),
#endif
};

/*
 * Columns older formats wrote and this build reads but no longer writes:
 * restore.c converts them.
 */
const SavedColumn pgsq_entry_old_columns[] = {
	/* 43 buckets, three per doubling, until format 5 */
	ENTRY_COLUMN("exec_hist.log3", old_hist),
};

/* The columns of the info row */
const SavedColumn pgsq_info_columns[] = {
	COLUMN(SavedInfo, "stats_reset", stats_reset),
	COLUMN(SavedInfo, "dealloc", dealloc),
	COLUMN(SavedInfo, "evicted_entries", evicted_entries),
	COLUMN(SavedInfo, "texts_missing", texts_missing),
	COLUMN(SavedInfo, "texts_literal_free", texts_literal_free),
};

/* The file's header */

const int	pgsq_entry_column_count = lengthof(pgsq_entry_columns);
const int	pgsq_info_column_count = lengthof(pgsq_info_columns);
const int	pgsq_entry_old_column_count = lengthof(pgsq_entry_old_columns);
