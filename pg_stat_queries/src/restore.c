/*-------------------------------------------------------------------------
 *
 * restore.c
 *		Reading our statistics back: the saved file's format, its restore,
 *		and the conversion of what version 1.1 saved.
 *
 * The columns a saved row is written under (savefile.c writes them),
 * restoring the file at the first client backend, and reading once what
 * version 1.1 left in PostgreSQL's statistics file and its text file.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "utils/injection_point.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"
#include <sys/stat.h>
#include <unistd.h>

#include "pg_stat_queries.h"


/*-------------------------------------------------------------------------
 * The named columns our saved statistics file is written with.
 *
 * A column is a field of SavedEntry or SavedInfo (pg_stat_queries.h), saved
 * under a name that never changes: adding a counter is adding a column
 * here (and bumping PGSQ_SAVE_FORMAT); a field whose meaning changes gets
 * a new name.
 *-------------------------------------------------------------------------
 */

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
	ENTRY_COLUMN("planid", data.key.planid),
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
 * the restore (below) converts them.
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


/*-------------------------------------------------------------------------
 * Restoring the statistics saved at the last clean shutdown.
 *
 * Once, before any statement is tracked: the first client backend (or a
 * single-user backend), or the checkpointer at shutdown if none came.  An
 * attempt that fails with an error leaves the file and the flag for the
 * next backend, which goes on after the statements already restored: none
 * is restored twice (restore_done).  Entries version 1.1 left in
 * PostgreSQL's statistics file are converted (below, from 1.1); our own file
 * (savefile.c writes it, pg_stat_queries.h describes it) is checked whole --
 * header, versions, CRC -- before anything of it is used, then each column
 * this build knows is copied into its entry.  A file not understood is
 * ignored with one LOG line naming the file and the reason.
 *-------------------------------------------------------------------------
 */

/* A file being read: what is left of it, and why it was given up on */
typedef struct SaveReader
{
	FILE	   *file;
	off_t		left;			/* bytes before the trailer */
	const char *problem;		/* NULL while all is well */
} SaveReader;

/*
 * Where each column of the file goes in our row: an offset, or -1 for a
 * column we do not know (skipped).
 */
typedef struct ColumnMap
{
	int			count;
	int32	   *offset;
	uint32	   *size;
	Size		row_size;
} ColumnMap;

/* Read bytes, or note that the file ends too soon */
static bool
read_bytes(SaveReader *r, void *bytes, Size len)
{
	if (r->problem != NULL)
		return false;
	if ((off_t) len > r->left || fread(bytes, 1, len, r->file) != len)
	{
		r->problem = "it is truncated";
		return false;
	}
	r->left -= len;
	return true;
}

/* The offset of a column in our row by name and size, or -1 */
static int32
column_offset(const SavedColumn *ours, int our_count, const char *name,
			  uint32 size)
{
	for (int j = 0; j < our_count; j++)
	{
		/* the same name with another size is another field */
		if (strcmp(ours[j].name, name) == 0 && ours[j].size == size)
			return ours[j].offset;
	}
	return -1;
}

/*
 * Read a column list and map it onto ours, or onto the old columns we read
 * to convert (old may be NULL)
 */
static bool
read_columns(SaveReader *r, const SavedColumn *ours, int our_count,
			 const SavedColumn *old, int old_count, ColumnMap *map)
{
	uint32		n;

	if (!read_bytes(r, &n, sizeof(n)))
		return false;
	if (n > 10000)
	{
		r->problem = "its column list is damaged";
		return false;
	}
	map->count = n;
	map->offset = palloc(sizeof(int32) * Max(n, 1));
	map->size = palloc(sizeof(uint32) * Max(n, 1));
	map->row_size = 0;
	for (uint32 i = 0; i < n; i++)
	{
		uint8		len;
		char		name[PGSQ_SAVE_NAME_MAX + 1];

		if (!read_bytes(r, &len, sizeof(len)))
			return false;
		if (len == 0 || len > PGSQ_SAVE_NAME_MAX)
		{
			r->problem = "its column list is damaged";
			return false;
		}
		if (!read_bytes(r, name, len) ||
			!read_bytes(r, &map->size[i], sizeof(uint32)))
			return false;
		name[len] = '\0';
		if (map->size[i] == 0 || map->size[i] > 4096)
		{
			r->problem = "its column list is damaged";
			return false;
		}
		map->row_size += map->size[i];
		map->offset[i] = column_offset(ours, our_count, name, map->size[i]);
		if (map->offset[i] < 0 && old != NULL)
			map->offset[i] = column_offset(old, old_count, name, map->size[i]);
	}
	return true;
}

/* Read a row into ours (zeroed first: missing columns stay zero) */
static bool
read_row(SaveReader *r, const ColumnMap *map, void *row, Size row_size,
		 char *scratch)
{
	memset(row, 0, row_size);
	for (int i = 0; i < map->count; i++)
	{
		char	   *to = map->offset[i] >= 0 ?
			(char *) row + map->offset[i] : scratch;

		if (!read_bytes(r, to, map->size[i]))
			return false;
	}
	return true;
}

/*
 * Check a file before anything of it is used: header, versions, and the
 * CRC of its whole contents against its trailer.  Leaves the file
 * positioned after the header, r->left the bytes up to the trailer.
 */
static bool
check_file(SaveReader *r, uint64 *entries)
{
	SaveFileHeader header;
	SaveFileTrailer trailer;
	struct stat st;
	pg_crc32c	crc;
	char		buf[8192];
	off_t		body;
	const off_t tail = sizeof(trailer.crc) + sizeof(trailer.entries);

	if (fstat(fileno(r->file), &st) != 0)
	{
		r->problem = "its size could not be read";
		return false;
	}
	r->left = st.st_size;
	if (!read_bytes(r, &header, sizeof(header)))
		return false;
	if (header.magic != PGSQ_SAVE_MAGIC)
	{
		r->problem = "it is not a pg_stat_queries statistics file";
		return false;
	}
	if (header.oldest_reader > PGSQ_SAVE_FORMAT)
	{
		r->problem = psprintf("its format %u needs a reader of format %u or later, and this build of pg_stat_queries reads format %u",
							  header.format, header.oldest_reader,
							  PGSQ_SAVE_FORMAT);
		return false;
	}
	if (header.pg_major != PG_VERSION_NUM / 100)
	{
		r->problem = psprintf("it was written by PostgreSQL %u",
							  header.pg_major);
		return false;
	}
	if (st.st_size < (off_t) sizeof(header) + tail + 1 + (off_t) sizeof(uint32))
	{
		r->problem = "it is truncated";
		return false;
	}

	/* the CRC of everything before the trailer's CRC */
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &header, sizeof(header));
	body = st.st_size - tail - (off_t) sizeof(header);
	for (off_t done = 0; done < body;)
	{
		size_t		n = Min((off_t) sizeof(buf), body - done);

		if (fread(buf, 1, n, r->file) != n)
		{
			r->problem = "it could not be read";
			return false;
		}
		COMP_CRC32C(crc, buf, n);
		done += n;
	}
	FIN_CRC32C(crc);
	if (fread(&trailer.crc, sizeof(trailer.crc), 1, r->file) != 1 ||
		fread(&trailer.entries, sizeof(trailer.entries), 1, r->file) != 1)
	{
		r->problem = "it is truncated";
		return false;
	}
	if (!EQ_CRC32C(crc, trailer.crc))
	{
		r->problem = "its checksum does not match: it is truncated or damaged";
		return false;
	}
	*entries = trailer.entries;

	if (fseeko(r->file, sizeof(header), SEEK_SET) != 0)
	{
		r->problem = "it could not be read";
		return false;
	}
	r->left = body;
	return true;
}

/*
 * Restore the statements of a checked file.  Returns the number restored;
 * r->problem says why it stopped early.
 */
static int64
restore_entries(SaveReader *r, uint64 expected)
{
	ColumnMap	info_map;
	ColumnMap	entry_map;
	SavedInfo	info;
	SavedEntry	saved;
	char	   *scratch = palloc(4096);
	char	   *text = NULL;
	int			text_size = 0;
	uint64		seen = 0;
	int64		restored = 0;
	uint32		end;

	if (!read_columns(r, pgsq_info_columns, pgsq_info_column_count,
					  NULL, 0, &info_map) ||
		!read_row(r, &info_map, &info, sizeof(info), scratch) ||
		!read_columns(r, pgsq_entry_columns, pgsq_entry_column_count,
					  pgsq_entry_old_columns, pgsq_entry_old_column_count,
					  &entry_map))
		return 0;

	/* what the statistics say about themselves */
	LWLockAcquire(pgsq_state->lock, LW_EXCLUSIVE);
	pgsq_state->stats_reset = info.stats_reset;
	LWLockRelease(pgsq_state->lock);
	pg_atomic_write_u64(&pgsq_state->dealloc, info.dealloc);
	pg_atomic_write_u64(&pgsq_state->evicted_entries, info.evicted_entries);
	pg_atomic_write_u64(&pgsq_state->texts_missing, info.texts_missing);

	for (;;)
	{
		uint8		mark;
		dsa_pointer text_chunk = InvalidDsaPointer;
		bool		created;

		if (!read_bytes(r, &mark, sizeof(mark)))
			return restored;
		if (mark == 'X')
			break;
		if (mark != 'E' ||
			!read_row(r, &entry_map, &saved, sizeof(saved), scratch))
		{
			if (r->problem == NULL)
				r->problem = "a statement is damaged";
			return restored;
		}
		seen++;
		if (saved.text_len < -1 || saved.text_len > r->left ||
			(saved.text_len >= 0 && !PG_VALID_BE_ENCODING(saved.text_encoding)) ||
			saved.data.key.queryid == INT64CONST(0) ||
			saved.data.stats_since == 0)
		{
			r->problem = "a statement is damaged";
			return restored;
		}
		/* a histogram of the old shape, from format 5 or older */
		if (saved.old_hist.used && !saved.data.counters.exec_hist.used)
			pgsq_hist_from_log3(&saved.data.counters.exec_hist,
								&saved.old_hist,
								saved.data.counters.exec.min_time,
								saved.data.counters.exec.max_time);
		if (saved.text_len >= 0)
		{
			if (saved.text_len + 1 > text_size)
			{
				text_size = Max(saved.text_len + 1, 2 * text_size);
				text = text ? repalloc(text, text_size) : palloc(text_size);
			}
			if (!read_bytes(r, text, saved.text_len))
				return restored;
		}
		/* restored by an earlier attempt, which failed after it */
		if (seen <= pgsq_state->restore_done)
			continue;
		/* max_plans = 0 keeps no plan: a plan's entry is not restored */
		if (pgsq_key_is_plan(&saved.data.key) && pgsq_max_plans == 0)
			continue;
		if (saved.text_len >= 0)
		{
			/* a text that does not fit is counted in texts_missing */
			text_chunk = pgsq_saved_text(text, saved.text_len,
										 saved.text_encoding,
										 info.texts_literal_free);
			if (DsaPointerIsValid(text_chunk))
				pgsq_text_set_stored_at(text_chunk, saved.text_stored_at);
		}
		created = pgsq_restore_entry(&saved.data,
									 saved.has_rare ? &saved.rare : NULL,
									 text_chunk);

		/*
		 * Counted as restored at once: an error from here on must not make
		 * the next attempt merge these counts a second time.
		 */
		pgsq_state->restore_done = seen;
		if (created)
			restored++;
		INJECTION_POINT("pg-stat-queries-restored-statement", NULL);
	}
	if (!read_bytes(r, &end, sizeof(end)) || end != PGSQ_SAVE_END ||
		r->left != 0 || seen != expected)
		r->problem = "its end is damaged";
	return restored;
}

/* Check and restore an open file; an error leaves it closed */
static int64
restore_open_file(SaveReader *r)
{
	uint64		expected = 0;
	int64		restored = 0;

	PG_TRY();
	{
		if (check_file(r, &expected))
			restored = restore_entries(r, expected);
	}
	PG_CATCH();
	{
		/* the file itself stays, for the next attempt */
		FreeFile(r->file);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return restored;
}

/*
 * Restore our file, if there is one, and remove it; an error leaves it in
 * place
 */
static void
restore_file(void)
{
	SaveReader	r = {NULL, 0, NULL};
	int64		restored;

	r.file = AllocateFile(PGSQ_SAVE_FILE, PG_BINARY_R);
	if (r.file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m", PGSQ_SAVE_FILE)));
		return;
	}
	restored = restore_open_file(&r);
	FreeFile(r.file);
	unlink(PGSQ_SAVE_FILE);

	if (r.problem != NULL)
		ereport(LOG,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ignoring pg_stat_queries statistics file \"%s\": %s",
						PGSQ_SAVE_FILE, r.problem),
				 restored > 0 ?
				 errdetail(INT64_FORMAT " statements read before the problem are kept.",
						   restored) : 0));
	else
		ereport(DEBUG1,
				(errmsg_internal("pg_stat_queries restored " INT64_FORMAT " statements from \"%s\"",
								 restored, PGSQ_SAVE_FILE)));
}

/*
 * Attempts by client backends that may fail in a row before the next waits
 * a pause, the first pause and the longest: a restore failing for good
 * then costs a connection a read of the file at most every few minutes.
 */
#define PGSQ_RESTORE_TRIES 3
#define PGSQ_RESTORE_PAUSE_MIN_MS 10000
#define PGSQ_RESTORE_PAUSE_MAX_MS 300000

/* This process claimed the restore (restore_pending is PGSQ_RESTORE_CLAIMED) */
static bool restore_claimed = false;

/* Whether this process may take over a claim left by another one */
static bool restore_take_over = false;

/*
 * Restore, once this process holds the claim: entries version 1.1 left in
 * PostgreSQL's file are converted, and given the texts of its file.  If 1.1
 * ran last, a file of ours is older than what it saved (a downgrade, then
 * an upgrade again): it is ignored.  Run guarded (pgsq_run_guarded): an
 * error leaves our file in place and restore_done saying how many of its
 * statements are already back; pgsq_restore_saved gives the claim back.
 *
 * The claim is a state of restore_pending, not a lock: restoring runs code
 * that catches errors of its own (normalization), which resets the
 * interrupt holdoff count an LWLock held across it relies on.
 */
static void
restore_claimed_file(void *arg)
{
	uint32		expected = PGSQ_RESTORE_PENDING;
	struct stat st;

	/* another process is restoring: this one goes on without waiting */
	if (!pg_atomic_compare_exchange_u32(&pgsq_state->restore_pending,
										&expected, PGSQ_RESTORE_CLAIMED) &&
		!(expected == PGSQ_RESTORE_CLAIMED && restore_take_over))
		return;
	restore_claimed = true;

	if (!pgsq_state->restore_legacy_ran)
		pgsq_state->restore_legacy_ran = pgsq_legacy_convert_entries() > 0;
	if (pgsq_legacy_read_texts())
		pgsq_state->restore_legacy_ran = true;
	if (!pgsq_state->restore_legacy_ran)
		restore_file();
	else if (stat(PGSQ_SAVE_FILE, &st) == 0)
	{
		ereport(LOG,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ignoring pg_stat_queries statistics file \"%s\": it is older than the statistics of version 1.1 restored with it",
						PGSQ_SAVE_FILE)));
		unlink(PGSQ_SAVE_FILE);
	}
	pg_atomic_write_u32(&pgsq_state->restore_pending, PGSQ_RESTORE_DONE);
	restore_claimed = false;
}

/*
 * Restore what was saved at the last clean shutdown, once: the first client
 * or single-user backend, before it tracks anything, or the checkpointer at
 * shutdown if no client backend came.  An error costs only this attempt: it
 * is logged, and a later backend goes on from there.  After
 * PGSQ_RESTORE_TRIES attempts failed in a row, client backends wait a
 * pause between attempts (doubled up to PGSQ_RESTORE_PAUSE_MAX_MS), so that
 * a restore that keeps failing does not cost every connection a read of
 * the file and a line of the log.  take_over: no other process can be
 * restoring (shutdown, single-user mode), so a claim left by a process
 * that exited while restoring (FATAL) is taken over, and no pause holds.
 * Returns whether nothing is left to restore.
 */
bool
pgsq_restore_saved(bool take_over)
{
	uint32		failures;

	if (pgsq_state == NULL ||
		pg_atomic_read_u32(&pgsq_state->restore_pending) == PGSQ_RESTORE_DONE)
		return true;
	failures = pg_atomic_read_u32(&pgsq_state->restore_failures);
	if (!take_over && failures >= PGSQ_RESTORE_TRIES &&
		(uint64) GetCurrentTimestamp() <
		pg_atomic_read_u64(&pgsq_state->restore_retry_at))
		return false;
	restore_take_over = take_over;
	if (!pgsq_run_guarded(restore_claimed_file, NULL,
						  "restore the statistics saved at the last shutdown") &&
		restore_claimed)
	{
		int			shift;
		int64		pause_ms;

		/* the next attempt after a pause, once this one failed too often */
		failures = pg_atomic_add_fetch_u32(&pgsq_state->restore_failures, 1);
		if (failures >= PGSQ_RESTORE_TRIES)
		{
			shift = (int) Min(failures - PGSQ_RESTORE_TRIES, 8);
			pause_ms = Min((int64) PGSQ_RESTORE_PAUSE_MIN_MS << shift,
						   PGSQ_RESTORE_PAUSE_MAX_MS);
			pg_atomic_write_u64(&pgsq_state->restore_retry_at,
								(uint64) TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
																	 pause_ms));
		}
		/* give the claim back, for the next attempt */
		pg_atomic_write_u32(&pgsq_state->restore_pending, PGSQ_RESTORE_PENDING);
		restore_claimed = false;
	}
	return pg_atomic_read_u32(&pgsq_state->restore_pending) == PGSQ_RESTORE_DONE;
}


/*-------------------------------------------------------------------------
 * What version 1.1 of the library saved, read once and converted.
 *
 * Version 1.1 kept its entries in PostgreSQL's own statistics file, as
 * custom statistics kind PGSQ_LEGACY_STATS_KIND, and their texts and rare
 * counters in pg_stat/pg_stat_queries.texts (format 3).  PostgreSQL reads
 * every entry of its file with the size its kind has now, and discards the
 * whole file -- every table's and database's statistics -- when a kind is
 * unknown or a size is wrong.  So the old kind stays registered with 1.1's
 * entry size, never written again; the first client backend converts the
 * entries PostgreSQL read for it into ours (savefile.c calls this part),
 * drops them, and then gives them the texts and rare counters of the old
 * text file.
 *
 * The structures below are frozen copies of 1.1's: never change them.
 *-------------------------------------------------------------------------
 */

#define LEGACY_TEXT_FILE "pg_stat/pg_stat_queries.texts"
#define LEGACY_TEXT_FILE_MAGIC 0x50475351	/* "PGSQ" */
#define LEGACY_TEXT_FILE_VERSION 3

/* 1.1's PgsqTiming */
typedef struct LegacyTiming
{
	int64		calls;
	double		total_time;
	double		min_time;
	double		max_time;
	double		mean_time;
	double		sum_var_time;
} LegacyTiming;

/* 1.1's PgsqHistogram */
typedef struct LegacyHistogram
{
	int16		base;
	bool		collapsed;
	bool		used;
	uint32		counts[43];
} LegacyHistogram;

/* 1.1's PgsqKey */
typedef struct LegacyKey
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
	bool		toplevel;
} LegacyKey;

/* 1.1's PgsqEntryData (its layout 3), as the statistics file holds it */
typedef struct LegacyEntryData
{
	LegacyKey	key;
	TimestampTz stats_since;
	TimestampTz changed_at;
	bool		minmax_valid[2];	/* plan, exec */
	uint32		layout;
	LegacyTiming exec;
	int64		rows;
	int64		shared_blks_hit;
	TimestampTz last_executed;
	LegacyHistogram exec_hist;
	LegacyTiming plan;
	TimestampTz minmax_stats_since;
} LegacyEntryData;

/* A 1.1 entry in the statistics system's hash */
typedef struct LegacySharedEntry
{
	PgStatShared_Common header;
	LegacyEntryData data;
} LegacySharedEntry;

/* 1.1's PgsqRareCounters, in its text file */
typedef struct LegacyRareCounters
{
	int64		wal_records;
	int64		wal_fpi;
	uint64		wal_bytes;
	int64		wal_buffers_full;
	int64		shared_blks_read;
	int64		shared_blks_dirtied;
	int64		shared_blks_written;
	int64		local_blks_hit;
	int64		local_blks_read;
	int64		local_blks_dirtied;
	int64		local_blks_written;
	int64		temp_blks_read;
	int64		temp_blks_written;
	double		shared_blk_read_time;
	double		shared_blk_write_time;
	double		local_blk_read_time;
	double		local_blk_write_time;
	double		temp_blk_read_time;
	double		temp_blk_write_time;
	int64		jit_functions;
	double		jit_generation_time;
	int64		jit_inlining_count;
	double		jit_inlining_time;
	int64		jit_optimization_count;
	double		jit_optimization_time;
	int64		jit_emission_count;
	double		jit_emission_time;
	int64		jit_deform_count;
	double		jit_deform_time;
	int64		parallel_workers_to_launch;
	int64		parallel_workers_launched;
} LegacyRareCounters;

/* Header of 1.1's text file */
typedef struct LegacyTextHeader
{
	uint32		magic;
	uint32		version;
	uint32		pg_major;
	TimestampTz stats_reset;
	uint64		dealloc;
	uint64		evicted_entries;
	uint64		texts_missing;
} LegacyTextHeader;

/* A record of 1.1's text file: then len bytes, then rare counters if any */
typedef struct LegacyTextRecord
{
	LegacyKey	key;
	TimestampTz stored_at;
	int32		encoding;
	int32		len;
	int32		has_rare;
} LegacyTextRecord;

/* The sizes 1.1 wrote, measured on its build (x86-64 and alike) */
StaticAssertDecl(sizeof(LegacyEntryData) == 352,
				 "1.1's entry data was 352 bytes");
StaticAssertDecl(sizeof(LegacyRareCounters) == 248,
				 "1.1's rare counters were 248 bytes");
StaticAssertDecl(sizeof(LegacyTextRecord) == 48,
				 "1.1's text file records were 48 bytes");

/* 1.1's histogram is the three-per-doubling one histogram.c converts */
StaticAssertDecl(sizeof(LegacyHistogram) == sizeof(PgsqHistogramLog3),
				 "1.1's histogram must be what pgsq_hist_from_log3 reads");

/*
 * The old kind: read from PostgreSQL's statistics file with 1.1's size,
 * never written.  Nothing else uses its entries.
 */
static const PgStat_KindInfo legacy_kind_info = {
	.name = "pg_stat_queries 1.1",
	.fixed_amount = false,
	.accessed_across_databases = true,
	.write_to_file = false,
	.shared_size = sizeof(LegacySharedEntry),
	.shared_data_off = offsetof(LegacySharedEntry, data),
	.shared_data_len = sizeof(LegacyEntryData),
};

/* Register the old kind (_PG_init) */
void
pgsq_legacy_register(void)
{
	pgstat_register_kind(PGSQ_LEGACY_STATS_KIND, &legacy_kind_info);
}

/* 1.1's timing summary as ours */
static void
convert_timing(PgsqTiming *to, const LegacyTiming *from)
{
	to->calls = from->calls;
	to->total_time = from->total_time;
	to->min_time = from->min_time;
	to->max_time = from->max_time;
	to->mean_time = from->mean_time;
	to->sum_var_time = from->sum_var_time;
}

/* 1.1's statement key as ours */
static void
convert_key(PgsqKey *to, const LegacyKey *from)
{
	memset(to, 0, sizeof(*to));
	to->userid = from->userid;
	to->dbid = from->dbid;
	to->queryid = from->queryid;
	to->toplevel = from->toplevel;
}

/* 1.1's entry data as ours */
static void
convert_entry(PgsqEntryData *to, const LegacyEntryData *from)
{
	memset(to, 0, sizeof(*to));
	convert_key(&to->key, &from->key);
	to->stats_since = from->stats_since;
	to->changed_at = from->changed_at;
	to->minmax_valid[PGSQ_PLAN] = from->minmax_valid[0];
	to->minmax_valid[PGSQ_EXEC] = from->minmax_valid[1];
	convert_timing(&to->counters.exec, &from->exec);
	to->counters.rows = from->rows;
	to->counters.shared_blks_hit = from->shared_blks_hit;
	to->counters.last_executed = from->last_executed;
	{
		PgsqHistogramLog3 old;

		old.base = from->exec_hist.base;
		old.collapsed = from->exec_hist.collapsed;
		old.used = from->exec_hist.used;
		memcpy(old.counts, from->exec_hist.counts, sizeof(old.counts));
		pgsq_hist_from_log3(&to->counters.exec_hist, &old,
							from->exec.min_time, from->exec.max_time);
	}
	convert_timing(&to->counters.plan, &from->plan);
	to->minmax_stats_since = from->minmax_stats_since;
}

/* 1.1's rare counters as ours */
static void
convert_rare(PgsqRareCounters *to, const LegacyRareCounters *from)
{
	memset(to, 0, sizeof(*to));
	to->wal_records = from->wal_records;
	to->wal_fpi = from->wal_fpi;
	to->wal_bytes = from->wal_bytes;
	to->wal_buffers_full = from->wal_buffers_full;
	to->shared_blks_read = from->shared_blks_read;
	to->shared_blks_dirtied = from->shared_blks_dirtied;
	to->shared_blks_written = from->shared_blks_written;
	to->local_blks_hit = from->local_blks_hit;
	to->local_blks_read = from->local_blks_read;
	to->local_blks_dirtied = from->local_blks_dirtied;
	to->local_blks_written = from->local_blks_written;
	to->temp_blks_read = from->temp_blks_read;
	to->temp_blks_written = from->temp_blks_written;
	to->shared_blk_read_time = from->shared_blk_read_time;
	to->shared_blk_write_time = from->shared_blk_write_time;
	to->local_blk_read_time = from->local_blk_read_time;
	to->local_blk_write_time = from->local_blk_write_time;
	to->temp_blk_read_time = from->temp_blk_read_time;
	to->temp_blk_write_time = from->temp_blk_write_time;
	to->jit_functions = from->jit_functions;
	to->jit_generation_time = from->jit_generation_time;
	to->jit_inlining_count = from->jit_inlining_count;
	to->jit_inlining_time = from->jit_inlining_time;
	to->jit_optimization_count = from->jit_optimization_count;
	to->jit_optimization_time = from->jit_optimization_time;
	to->jit_emission_count = from->jit_emission_count;
	to->jit_emission_time = from->jit_emission_time;
	to->jit_deform_count = from->jit_deform_count;
	to->jit_deform_time = from->jit_deform_time;
	to->parallel_workers_to_launch = from->parallel_workers_to_launch;
	to->parallel_workers_launched = from->parallel_workers_launched;
}

/* Old entries taken out of the hash, to convert once the scan is over */
typedef struct LegacyTaken
{
	List	   *entries;		/* of LegacyEntryData copies */
	int64		unusable;		/* of an older layout or keying */
} LegacyTaken;

/*
 * pgstat_drop_matching_entries callback: take every entry of the old kind,
 * keeping a copy of those 1.1 started (layout 3, keyed as ours); older
 * versions' entries, keyed by database, cannot be converted.
 */
static bool
take_legacy_entry(PgStatShared_HashEntry *hent, Datum arg)
{
	LegacyTaken *taken = (LegacyTaken *) DatumGetPointer(arg);
	LegacySharedEntry *entry;

	if (hent->key.kind != PGSQ_LEGACY_STATS_KIND)
		return false;
	entry = (LegacySharedEntry *) dsa_get_address(pgStatLocal.dsa, hent->body);
	if (hent->key.dboid == InvalidOid && entry->data.layout == 3 &&
		entry->data.key.queryid != INT64CONST(0) &&
		entry->data.stats_since != 0)
	{
		LegacyEntryData *copy = palloc(sizeof(LegacyEntryData));

		memcpy(copy, &entry->data, sizeof(LegacyEntryData));
		taken->entries = lappend(taken->entries, copy);
	}
	else
		taken->unusable++;
	return true;
}

/*
 * Convert the entries PostgreSQL restored for the old kind into ours and
 * drop them; returns how many became ours.  Client backend or checkpointer,
 * once, before any statement is tracked.
 */
int64
pgsq_legacy_convert_entries(void)
{
	LegacyTaken taken = {NIL, 0};
	int64		converted = 0;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "pg_stat_queries legacy",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);

	pgstat_drop_matching_entries(take_legacy_entry, PointerGetDatum(&taken));
	foreach_ptr(LegacyEntryData, legacy, taken.entries)
	{
		PgsqEntryData data;

		convert_entry(&data, legacy);
		if (pgsq_restore_entry(&data, NULL, InvalidDsaPointer))
			converted++;
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);

	if (converted > 0 || taken.unusable > 0)
		ereport(LOG,
				(errmsg("pg_stat_queries converted " INT64_FORMAT " statement entries saved by version 1.1 in the statistics file",
						converted),
				 taken.unusable > 0 ?
				 errdetail(INT64_FORMAT " entries saved by an earlier version were dropped.",
						   taken.unusable) : 0));
	return converted;
}

/* Give a text and rare counters of the old text file to their entry */
static void
give_to_entry(const LegacyKey *legacy_key, dsa_pointer text,
			  const PgsqRareCounters *rare)
{
	PgsqKey		key;
	PgsqSharedEntry *entry;
	dsa_pointer rare_chunk = InvalidDsaPointer;

	convert_key(&key, legacy_key);
	if (rare != NULL)
		rare_chunk = pgsq_rare_prepare(rare);

	entry = pgsq_lock_statement_entry(&key, LW_EXCLUSIVE);
	if (entry != NULL)
	{
		if (DsaPointerIsValid(text) &&
			pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_NONE)
		{
			pgsq_text_give_locked(entry, text);
			text = InvalidDsaPointer;
		}
		/* a closed entry (being evicted) would never free it */
		if (DsaPointerIsValid(rare_chunk) && !DsaPointerIsValid(entry->rare) &&
			!pgsq_text_closed(entry))
		{
			pgsq_rare_give(entry, rare_chunk);
			rare_chunk = InvalidDsaPointer;
		}
		pgsq_unlock_statement_entry(entry);
	}
	pgsq_text_discard(text);
	pgsq_rare_discard(rare_chunk);
}

/*
 * Read 1.1's text file, if there is one, giving its texts and rare counters
 * to the entries converted from the old kind, and remove it.  A damaged
 * file is ignored with a LOG line; what was given before the damage stays.
 * Returns whether there was one: 1.1 was the last to run.
 */
bool
pgsq_legacy_read_texts(void)
{
	FILE	   *file;
	LegacyTextHeader header;
	LegacyTextRecord rec;
	struct stat st;
	char	   *buf = NULL;
	int			bufsize = 0;
	off_t		left;
	const char *problem = NULL;

	file = AllocateFile(LEGACY_TEXT_FILE, PG_BINARY_R);
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", LEGACY_TEXT_FILE)));
		return errno != ENOENT;
	}

	/* every length read is checked against what is left of the file */
	if (fstat(fileno(file), &st) != 0)
		problem = "could not read its size";
	else if (st.st_size < (off_t) sizeof(header) ||
			 fread(&header, sizeof(header), 1, file) != 1)
		problem = "it is truncated";
	else if (header.magic != LEGACY_TEXT_FILE_MAGIC ||
			 header.version != LEGACY_TEXT_FILE_VERSION)
		problem = "its format is unknown";
	else if (header.pg_major != PG_VERSION_NUM / 100)
		problem = "it was written by another major version of PostgreSQL";
	left = problem ? 0 : st.st_size - (off_t) sizeof(header);

	while (problem == NULL && left > 0)
	{
		LegacyRareCounters legacy_rare;
		PgsqRareCounters rare;
		dsa_pointer text = InvalidDsaPointer;

		if (left < (off_t) sizeof(rec) ||
			fread(&rec, sizeof(rec), 1, file) != 1)
		{
			problem = "it is truncated";
			break;
		}
		left -= sizeof(rec);
		if (rec.len < -1 || rec.len > left ||
			(rec.len >= 0 && (Size) rec.len >= MaxAllocSize) ||
			!PG_VALID_BE_ENCODING(rec.encoding) ||
			(rec.has_rare != 0 && rec.has_rare != 1))
		{
			problem = "a record is damaged";
			break;
		}
		if (rec.len >= 0)
		{
			left -= rec.len;
			if (rec.len + 1 > bufsize)
			{
				bufsize = Max(rec.len + 1, 2 * bufsize);
				buf = buf ? repalloc(buf, bufsize) : palloc(bufsize);
			}
			if (fread(buf, 1, rec.len, file) != (size_t) rec.len)
			{
				problem = "it is truncated";
				break;
			}
			text = pgsq_saved_text(buf, rec.len, rec.encoding, false);

			if (DsaPointerIsValid(text))
				pgsq_text_set_stored_at(text, rec.stored_at);
		}
		if (rec.has_rare)
		{
			if (left < (off_t) sizeof(legacy_rare) ||
				fread(&legacy_rare, sizeof(legacy_rare), 1, file) != 1)
			{
				pgsq_text_discard(text);
				problem = "it is truncated";
				break;
			}
			left -= sizeof(legacy_rare);
			convert_rare(&rare, &legacy_rare);
		}
		give_to_entry(&rec.key, text, rec.has_rare ? &rare : NULL);
	}

	if (problem != NULL)
		ereport(LOG,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ignoring pg_stat_queries file \"%s\": %s",
						LEGACY_TEXT_FILE, problem)));
	else
	{
		/*
		 * What the statistics of 1.1 said about themselves, but dealloc: 1.1
		 * counted every pass of the sweep, ours the passes that evicted.
		 */
		LWLockAcquire(pgsq_state->lock, LW_EXCLUSIVE);
		pgsq_state->stats_reset = header.stats_reset;
		LWLockRelease(pgsq_state->lock);
		pg_atomic_write_u64(&pgsq_state->evicted_entries, header.evicted_entries);
		pg_atomic_write_u64(&pgsq_state->texts_missing, header.texts_missing);
	}
	FreeFile(file);
	unlink(LEGACY_TEXT_FILE);
	if (buf)
		pfree(buf);
	return true;
}

/* Remove 1.1's text file, whose entries are gone (startup process) */
void
pgsq_legacy_discard_texts(void)
{
	unlink(LEGACY_TEXT_FILE);
}
