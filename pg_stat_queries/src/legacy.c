/*-------------------------------------------------------------------------
 *
 * legacy.c
 *		What version 1.1 of the library saved, read once and converted.
 *
 * Version 1.1 kept its entries in PostgreSQL's own statistics file, as
 * custom statistics kind PGSQ_LEGACY_STATS_KIND, and their texts and rare
 * counters in pg_stat/pg_stat_queries.texts (format 3).  PostgreSQL reads
 * every entry of its file with the size its kind has now, and discards the
 * whole file -- every table's and database's statistics -- when a kind is
 * unknown or a size is wrong.  So the old kind stays registered with 1.1's
 * entry size, never written again; the first client backend converts the
 * entries PostgreSQL read for it into ours (savefile.c calls this module),
 * drops them, and then gives them the texts and rare counters of the old
 * text file.
 *
 * The structures below are frozen copies of 1.1's: never change them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "entrycount.h"
#include "legacy.h"
#include "qtext.h"
#include "rare.h"
#include "store.h"
#include "textsource.h"

#include <sys/stat.h>

#include "mb/pg_wchar.h"
#include "storage/fd.h"
#include "utils/memutils.h"

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
		{
			pgsq_entry_restored(pgsq_objid(&data.key));
			converted++;
		}
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
	PgStatShared_HashEntry *hent;
	PgsqSharedEntry *entry;
	dsa_pointer rare_chunk = InvalidDsaPointer;

	convert_key(&key, legacy_key);
	if (rare != NULL)
		rare_chunk = pgsq_rare_prepare(rare);

	entry = pgsq_lock_statement_entry(&key, LW_EXCLUSIVE, &hent);
	if (entry != NULL)
	{
		if (DsaPointerIsValid(text) &&
			pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_NONE)
		{
			pgsq_text_give_locked(entry, text);
			text = InvalidDsaPointer;
		}
		if (DsaPointerIsValid(rare_chunk) && !DsaPointerIsValid(entry->rare))
		{
			pgsq_rare_give(entry, rare_chunk);
			rare_chunk = InvalidDsaPointer;
		}
		pgsq_unlock_statement_entry(entry, hent);
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
