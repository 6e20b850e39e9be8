/*-------------------------------------------------------------------------
 *
 * savefile.c
 *		Our statistics across a clean shutdown, in a file of our own.
 *
 * Our entries are never written to PostgreSQL's statistics file (the kind
 * is registered with write_to_file = false): that file is read back with
 * the entry sizes of the libraries loaded at startup, and one counter added
 * by a new build of ours would make PostgreSQL discard every statistic of
 * the server.  The checkpointer writes ours, at its last flush of
 * statistics, to pg_stat/pg_stat_queries.stat: a temporary file, fsync,
 * rename.  The first client backend (or the checkpointer, should none come
 * before the next shutdown) restores it, converts what version 1.1 left
 * (legacy.c), and removes it.
 *
 * The file describes itself, so that any build reads what any other wrote:
 *
 *	header		magic, format version, oldest format version able to read
 *				the file, PostgreSQL major version
 *	info		its columns (name, size), then one row: stats_reset, ...
 *	entries		their columns, then per statement a row and its text
 *	trailer		end mark, number of statements, CRC-32C of all before it
 *
 * A column is a field of SavedEntry or SavedInfo, saved under a name that
 * never changes.  A reader copies the columns it knows by name and size and
 * skips the others; a counter the file lacks starts at zero.  Adding a
 * counter is therefore adding a column, and an older build still reads the
 * newer file (without that counter).  A field whose meaning changes gets a
 * new name; a change an older reader would get wrong raises
 * PGSQ_SAVE_OLDEST_READER, and those readers ignore the file.  A file not
 * understood (unknown format, another PostgreSQL major version, a CRC that
 * does not match: truncated or damaged) is ignored whole, with one LOG line
 * naming the file and the reason.
 *
 * After a crash PostgreSQL discards its statistics; so do we: the startup
 * process removes our file unless PostgreSQL's file is there, which exists
 * only after a clean shutdown.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "eviction.h"
#include "legacy.h"
#include "qtext.h"
#include "rare.h"
#include "savefile.h"
#include "settings.h"
#include "store.h"

#include <sys/stat.h>
#include <unistd.h>

#include "lib/dshash.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#define PGSQ_SAVE_FILE "pg_stat/pg_stat_queries.stat"
#define PGSQ_SAVE_FILE_TMP PGSQ_SAVE_FILE ".tmp"
#define PGSQ_SAVE_MAGIC 0x50475351	/* "PGSQ" */
#define PGSQ_SAVE_END 0x454E4451	/* "QDNE" */

/*
 * Format version of the files this build writes, and the oldest reader's
 * version that understands them.  Format 3 was 1.1's text file (legacy.c);
 * 4 is the first of this file; 5 added generic_plan_calls and
 * custom_plan_calls.  Bump PGSQ_SAVE_FORMAT with any change of
 * columns; raise PGSQ_SAVE_OLDEST_READER only for a change that older
 * builds would misread.
 */
#ifndef PGSQ_TEST_EXTRA_COUNTER
#define PGSQ_SAVE_FORMAT 5
#else
#define PGSQ_SAVE_FORMAT 6		/* test/t/012_upgrade.pl's newer build */
#endif
#define PGSQ_SAVE_OLDEST_READER 4

/* Longest column name */
#define PGSQ_SAVE_NAME_MAX 63

/* One statement as saved: what the entry holds, its rare counters, text */
typedef struct SavedEntry
{
	PgsqEntryData data;
	bool		has_rare;
	PgsqRareCounters rare;
	int32		text_len;		/* -1: no text */
	int32		text_encoding;
	TimestampTz text_stored_at;
} SavedEntry;

/* What the statistics say about themselves (pg_stat_queries_info) */
typedef struct SavedInfo
{
	TimestampTz stats_reset;
	uint64		dealloc;
	uint64		evicted_entries;
	uint64		texts_missing;
} SavedInfo;

/* A column: a field of a row saved under a name */
typedef struct SavedColumn
{
	const char *name;
	uint32		offset;
	uint32		size;
} SavedColumn;

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
static const SavedColumn entry_columns[] = {
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
	/* 43 buckets, three per doubling (histogram.h) */
	ENTRY_COLUMN("exec_hist.log3", data.counters.exec_hist),
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
	ENTRY_COLUMN("text_len", text_len),
	ENTRY_COLUMN("text_encoding", text_encoding),
	ENTRY_COLUMN("text_stored_at", text_stored_at),
#ifdef PGSQ_TEST_EXTRA_COUNTER
	ENTRY_COLUMN("test_extra", data.test_extra),
#endif
};

/* The columns of the info row */
static const SavedColumn info_columns[] = {
	COLUMN(SavedInfo, "stats_reset", stats_reset),
	COLUMN(SavedInfo, "dealloc", dealloc),
	COLUMN(SavedInfo, "evicted_entries", evicted_entries),
	COLUMN(SavedInfo, "texts_missing", texts_missing),
};

/* The file's header */
typedef struct SaveFileHeader
{
	uint32		magic;
	uint32		format;
	uint32		oldest_reader;
	uint32		pg_major;
} SaveFileHeader;

/* The file's trailer; the CRC covers every byte before it */
typedef struct SaveFileTrailer
{
	uint32		end;
	uint32		crc;
	uint64		entries;
} SaveFileTrailer;

/*
 * ---------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------------
 */

/* A file being written, with the CRC of what was written so far */
typedef struct SaveWriter
{
	FILE	   *file;
	pg_crc32c	crc;
	bool		failed;
} SaveWriter;

/* Write bytes, adding them to the CRC */
static void
write_bytes(SaveWriter *w, const void *bytes, Size len)
{
	if (w->failed || len == 0)
		return;
	COMP_CRC32C(w->crc, bytes, len);
	if (fwrite(bytes, 1, len, w->file) != len)
		w->failed = true;
}

/* Write a column list: count, then each name's length, name and size */
static void
write_columns(SaveWriter *w, const SavedColumn *columns, int count)
{
	uint32		n = count;

	write_bytes(w, &n, sizeof(n));
	for (int i = 0; i < count; i++)
	{
		uint8		len = strlen(columns[i].name);

		write_bytes(w, &len, sizeof(len));
		write_bytes(w, columns[i].name, len);
		write_bytes(w, &columns[i].size, sizeof(columns[i].size));
	}
}

/* Write a row: each column's field in turn */
static void
write_row(SaveWriter *w, const void *row, const SavedColumn *columns,
		  int count)
{
	for (int i = 0; i < count; i++)
		write_bytes(w, (const char *) row + columns[i].offset,
					columns[i].size);
}

/* Write one started entry, whose lock the caller holds */
static void
write_entry(SaveWriter *w, PgsqSharedEntry *entry)
{
	SavedEntry	saved;
	const char *text = NULL;

	memset(&saved, 0, sizeof(saved));
	saved.data = entry->data;
	saved.has_rare = DsaPointerIsValid(entry->rare);
	pgsq_rare_copy(entry, &saved.rare);
	saved.text_len = -1;
	if (pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_STORED)
	{
		int			len;
		int			encoding;

		text = pgsq_text_bytes(entry->text, &len, &encoding,
							   &saved.text_stored_at);

		saved.text_len = len;
		saved.text_encoding = encoding;
	}
	write_row(w, &saved, entry_columns, lengthof(entry_columns));
	if (saved.text_len > 0)
		write_bytes(w, text, saved.text_len);
}

/*
 * Write every entry to our file: the checkpointer, at its last flush of
 * statistics, right before the statistics system writes its own file.
 * Nothing else runs then, but entry locks are taken as the locking rules
 * say.
 */
void
pgsq_savefile_write(void)
{
	SaveWriter	w = {NULL, 0, false};
	SaveFileHeader header;
	SaveFileTrailer trailer;
	SavedInfo	info;
	dshash_seq_status hstat;
	PgsqSharedEntry *entry;
	uint64		entries = 0;

	if (!pgsq_save)
	{
		unlink(PGSQ_SAVE_FILE);
		return;
	}

	w.file = AllocateFile(PGSQ_SAVE_FILE_TMP, PG_BINARY_W);
	if (w.file == NULL)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\" for writing: %m",
						PGSQ_SAVE_FILE_TMP)));
		return;
	}
	INIT_CRC32C(w.crc);

	memset(&header, 0, sizeof(header));
	header.magic = PGSQ_SAVE_MAGIC;
	header.format = PGSQ_SAVE_FORMAT;
	header.oldest_reader = PGSQ_SAVE_OLDEST_READER;
	header.pg_major = PG_VERSION_NUM / 100;
	write_bytes(&w, &header, sizeof(header));

	memset(&info, 0, sizeof(info));
	LWLockAcquire(pgsq_state->lock, LW_SHARED);
	info.stats_reset = pgsq_state->stats_reset;
	LWLockRelease(pgsq_state->lock);
	info.dealloc = pg_atomic_read_u64(&pgsq_state->dealloc);
	info.evicted_entries = pg_atomic_read_u64(&pgsq_state->evicted_entries);
	info.texts_missing = pg_atomic_read_u64(&pgsq_state->texts_missing);
	write_columns(&w, info_columns, lengthof(info_columns));
	write_row(&w, &info, info_columns, lengthof(info_columns));

	write_columns(&w, entry_columns, lengthof(entry_columns));
	dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
	while (!w.failed && (entry = pgsq_scan_next_entry(&hstat)) != NULL)
	{
		LWLockAcquire(&entry->header.lock, LW_SHARED);
		if (entry->data.stats_since != 0)
		{
			write_bytes(&w, "E", 1);
			write_entry(&w, entry);
			entries++;
		}
		LWLockRelease(&entry->header.lock);
	}
	dshash_seq_term(&hstat);

	/* the trailer's CRC covers everything before it, its end mark included */
	write_bytes(&w, "X", 1);
	trailer.end = PGSQ_SAVE_END;
	write_bytes(&w, &trailer.end, sizeof(trailer.end));
	FIN_CRC32C(w.crc);
	trailer.crc = w.crc;
	trailer.entries = entries;
	if (!w.failed &&
		(fwrite(&trailer.crc, sizeof(trailer.crc), 1, w.file) != 1 ||
		 fwrite(&trailer.entries, sizeof(trailer.entries), 1, w.file) != 1))
		w.failed = true;

	if (FreeFile(w.file) != 0)
		w.failed = true;
	if (w.failed)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", PGSQ_SAVE_FILE_TMP)));
		unlink(PGSQ_SAVE_FILE_TMP);
		return;
	}
	/* fsync the file, rename it, fsync the directory */
	(void) durable_rename(PGSQ_SAVE_FILE_TMP, PGSQ_SAVE_FILE, LOG);
}

/*
 * ---------------------------------------------------------------------------
 * Reading
 * ---------------------------------------------------------------------------
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

/* Read a column list and map it onto ours */
static bool
read_columns(SaveReader *r, const SavedColumn *ours, int our_count,
			 ColumnMap *map)
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
		map->offset[i] = -1;
		for (int j = 0; j < our_count; j++)
		{
			/* the same name with another size is another field */
			if (strcmp(ours[j].name, name) == 0 &&
				ours[j].size == map->size[i])
				map->offset[i] = ours[j].offset;
		}
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

	if (!read_columns(r, info_columns, lengthof(info_columns), &info_map) ||
		!read_row(r, &info_map, &info, sizeof(info), scratch) ||
		!read_columns(r, entry_columns, lengthof(entry_columns), &entry_map))
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
		if (saved.text_len >= 0)
		{
			if (saved.text_len + 1 > text_size)
			{
				text_size = Max(saved.text_len + 1, 2 * text_size);
				text = text ? repalloc(text, text_size) : palloc(text_size);
			}
			if (!read_bytes(r, text, saved.text_len))
				return restored;
			/* a text that does not fit is counted in texts_missing */
			text_chunk = pgsq_text_prepare(text, saved.text_len,
										   saved.text_encoding);
			if (DsaPointerIsValid(text_chunk))
				pgsq_text_set_stored_at(text_chunk, saved.text_stored_at);
		}
		if (pgsq_restore_entry(&saved.data,
							   saved.has_rare ? &saved.rare : NULL,
							   text_chunk))
		{
			pgsq_entry_restored(pgsq_objid(&saved.data.key));
			restored++;
		}
	}
	if (!read_bytes(r, &end, sizeof(end)) || end != PGSQ_SAVE_END ||
		r->left != 0 || seen != expected)
		r->problem = "its end is damaged";
	return restored;
}

/* Restore our file, if there is one, and remove it */
static void
restore_file(void)
{
	SaveReader	r = {NULL, 0, NULL};
	uint64		expected = 0;
	int64		restored = 0;

	r.file = AllocateFile(PGSQ_SAVE_FILE, PG_BINARY_R);
	if (r.file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m", PGSQ_SAVE_FILE)));
		return;
	}
	if (check_file(&r, &expected))
		restored = restore_entries(&r, expected);
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
 * Restore what was saved at the last clean shutdown, once: the first client
 * backend, before it tracks anything, or the checkpointer at shutdown if no
 * client backend came.  Entries version 1.1 left in PostgreSQL's file are
 * converted, and given the texts of its file.  If 1.1 ran last, a file of
 * ours is older than what it saved (a downgrade, then an upgrade again):
 * it is ignored.
 */
void
pgsq_savefile_restore(void)
{
	MemoryContext cxt;
	MemoryContext old;
	bool		legacy_ran;
	struct stat st;

	if (pgsq_state == NULL ||
		pg_atomic_read_u32(&pgsq_state->restore_pending) == 0 ||
		pg_atomic_exchange_u32(&pgsq_state->restore_pending, 0) == 0)
		return;

	cxt = AllocSetContextCreate(TopMemoryContext, "pg_stat_queries restore",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	legacy_ran = pgsq_legacy_convert_entries() > 0;
	legacy_ran |= pgsq_legacy_read_texts();
	if (!legacy_ran)
		restore_file();
	else if (stat(PGSQ_SAVE_FILE, &st) == 0)
	{
		ereport(LOG,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ignoring pg_stat_queries statistics file \"%s\": it is older than the statistics of version 1.1 restored with it",
						PGSQ_SAVE_FILE)));
		unlink(PGSQ_SAVE_FILE);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/*
 * At startup (startup process, before the statistics system restores its
 * file): our file is kept only if PostgreSQL's is there, that is after a
 * clean shutdown, and only if saving is on.
 */
void
pgsq_savefile_at_startup(void)
{
	struct stat st;

	if (!pgsq_save || stat(PGSTAT_STAT_PERMANENT_FILENAME, &st) != 0)
	{
		unlink(PGSQ_SAVE_FILE);
		pgsq_legacy_discard_texts();
	}
}
