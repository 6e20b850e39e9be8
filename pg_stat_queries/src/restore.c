/*-------------------------------------------------------------------------
 *
 * restore.c
 *		Restoring the statistics saved at the last clean shutdown.
 *
 * Once, before any statement is tracked: the first client backend (or a
 * single-user backend), or the checkpointer at shutdown if none came.  An
 * attempt that fails with an error leaves the file and the flag for the
 * next backend, which goes on after the statements already restored: none
 * is restored twice (restore_done).  Entries version 1.1 left in
 * PostgreSQL's statistics file are converted (legacy.c); our own file
 * (savefile.c writes it, saveformat.h describes it) is checked whole --
 * header, versions, CRC -- before anything of it is used, then each column
 * this build knows is copied into its entry.  A file not understood is
 * ignored with one LOG line naming the file and the reason.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "entrycount.h"
#include "guard.h"
#include "legacy.h"
#include "qtext.h"
#include "restore.h"
#include "saveformat.h"
#include "store.h"
#include "textsource.h"

#include <sys/stat.h>
#include <unistd.h>

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "utils/injection_point.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

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
		{
			pgsq_entry_restored(pgsq_objid(&saved.data.key));
			restored++;
		}
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
 * is logged, and a later backend goes on from there.  take_over: no other
 * process can be restoring (shutdown, single-user mode), so a claim left by
 * a process that exited while restoring (FATAL) is taken over.  Returns
 * whether nothing is left to restore.
 */
bool
pgsq_restore_saved(bool take_over)
{
	if (pgsq_state == NULL ||
		pg_atomic_read_u32(&pgsq_state->restore_pending) == PGSQ_RESTORE_DONE)
		return true;
	restore_take_over = take_over;
	if (!pgsq_run_guarded(restore_claimed_file, NULL,
						  "restore the statistics saved at the last shutdown") &&
		restore_claimed)
	{
		/* give the claim back, for the next attempt */
		pg_atomic_write_u32(&pgsq_state->restore_pending, PGSQ_RESTORE_PENDING);
		restore_claimed = false;
	}
	return pg_atomic_read_u32(&pgsq_state->restore_pending) == PGSQ_RESTORE_DONE;
}

