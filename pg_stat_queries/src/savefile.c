/*-------------------------------------------------------------------------
 *
 * savefile.c
 *		Writing our statistics at a clean shutdown, to a file of our own.
 *
 * Our entries are never written to PostgreSQL's statistics file (the kind
 * is registered with write_to_file = false): that file is read back with
 * the entry sizes of the libraries loaded at startup, and one counter added
 * by a new build of ours would make PostgreSQL discard every statistic of
 * the server.  At a clean shutdown only, the process that writes
 * PostgreSQL's file (the checkpointer, or a single-user backend) writes
 * ours first, at its last flush of statistics, to
 * pg_stat/pg_stat_queries.stat: a temporary file, fsync, rename.  An error
 * there is caught and logged: it costs our file, never PostgreSQL's.  The
 * first client backend (or the checkpointer, should none come before the
 * next shutdown) restores it, converts what version 1.1 left (restore.c),
 * and removes it.
 *
 * restore.c reads it back; pg_stat_queries.h and restore.c define what it
 * holds.  The file describes itself, so that any build reads what any
 * other wrote:
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

#include "lib/dshash.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/injection_point.h"
#include <sys/stat.h>
#include <unistd.h>

#include "pg_stat_queries.h"

/* A file being written, with the CRC of what was written so far */
typedef struct SaveWriter
{
	FILE	   *file;
	pg_crc32c	crc;
	bool		failed;
	int			failed_errno;	/* errno of the first failure */
} SaveWriter;

/* Note a failed write, keeping the errno of the first one for the report */
static void
write_failed(SaveWriter *w)
{
	if (!w->failed)
		w->failed_errno = errno != 0 ? errno : EIO;
	w->failed = true;
}

/* Write bytes, adding them to the CRC */
static void
write_bytes(SaveWriter *w, const void *bytes, Size len)
{
	if (w->failed || len == 0)
		return;
	COMP_CRC32C(w->crc, bytes, len);
	if (fwrite(bytes, 1, len, w->file) != len)
		write_failed(w);
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
	write_row(w, &saved, pgsq_entry_columns, pgsq_entry_column_count);
	if (saved.text_len > 0)
		write_bytes(w, text, saved.text_len);
}

/* Write the whole file's contents to an open file */
static void
write_contents(SaveWriter *w)
{
	SaveFileHeader header;
	SaveFileTrailer trailer;
	SavedInfo	info;
	PgsqTableScan scan;
	PgsqSharedEntry *entry;
	uint64		entries = 0;
	bool		save_plans;

	INIT_CRC32C(w->crc);

	memset(&header, 0, sizeof(header));
	header.magic = PGSQ_SAVE_MAGIC;
	header.format = PGSQ_SAVE_FORMAT;

	/*
	 * Builds before plans had entries would take a plan's row for its
	 * statement's, and merge the two: a file holding plans is for readers of
	 * format 8 and later only.  With max_plans = 0 no plan is kept, nor saved
	 * (plans from before that was set, or restored, are left out), so that an
	 * older build can read the file: how to downgrade.
	 */
	save_plans = pgsq_max_plans > 0 && pgsq_live_plans() > 0;
	header.oldest_reader = save_plans ?
		PGSQ_SAVE_OLDEST_PLANS_READER : PGSQ_SAVE_OLDEST_READER;
	header.pg_major = PG_VERSION_NUM / 100;
	write_bytes(w, &header, sizeof(header));

	/* a failure here leaves a temporary file begun, never our file */
	INJECTION_POINT("pg-stat-queries-save", NULL);

	memset(&info, 0, sizeof(info));
	LWLockAcquire(pgsq_state->lock, LW_SHARED);
	info.stats_reset = pgsq_state->stats_reset;
	LWLockRelease(pgsq_state->lock);
	info.dealloc = pg_atomic_read_u64(&pgsq_state->dealloc);
	info.evicted_entries = pg_atomic_read_u64(&pgsq_state->evicted_entries);
	info.texts_missing = pg_atomic_read_u64(&pgsq_state->texts_missing);
	info.texts_literal_free = true;
	write_columns(w, pgsq_info_columns, pgsq_info_column_count);
	write_row(w, &info, pgsq_info_columns, pgsq_info_column_count);

	write_columns(w, pgsq_entry_columns, pgsq_entry_column_count);
	pgsq_table_scan_begin(&scan, LW_SHARED, 0);
	while (!w->failed && (entry = pgsq_table_scan_next(&scan)) != NULL)
	{
		LWLockAcquire(&entry->lock, LW_SHARED);
		if (entry->data.stats_since != 0 &&
			(save_plans || !pgsq_key_is_plan(&entry->data.key)))
		{
			write_bytes(w, "E", 1);
			write_entry(w, entry);
			entries++;
		}
		LWLockRelease(&entry->lock);
	}
	pgsq_table_scan_end(&scan);

	/* the trailer's CRC covers everything before it, its end mark included */
	write_bytes(w, "X", 1);
	trailer.end = PGSQ_SAVE_END;
	write_bytes(w, &trailer.end, sizeof(trailer.end));
	FIN_CRC32C(w->crc);
	trailer.crc = w->crc;
	trailer.entries = entries;
	if (!w->failed &&
		(fwrite(&trailer.crc, sizeof(trailer.crc), 1, w->file) != 1 ||
		 fwrite(&trailer.entries, sizeof(trailer.entries), 1, w->file) != 1))
		write_failed(w);
}

/*
 * Write every entry to our file, in a temporary file renamed over it once
 * complete: at the last flush of statistics of a clean shutdown (see
 * pgsq_savefile_at_shutdown).  Nothing else runs then, but entry locks are
 * taken as the locking rules say.  An error leaves no temporary file.
 */
void
pgsq_savefile_write(void)
{
	SaveWriter	w = {NULL, 0, false, 0};

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
	PG_TRY();
	{
		write_contents(&w);
	}
	PG_CATCH();
	{
		FreeFile(w.file);
		unlink(PGSQ_SAVE_FILE_TMP);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (FreeFile(w.file) != 0)
		write_failed(&w);
	if (w.failed)
	{
		/* %m reports the failure's errno, not that of the calls since */
		errno = w.failed_errno;
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

/* pgsq_savefile_write, as a guarded step */
static void
write_step(void *arg)
{
	pgsq_savefile_write();
}

/*
 * The last flush of statistics of a clean shutdown, in the process about to
 * write PostgreSQL's statistics file (the checkpointer, or a single-user
 * backend): restore what no backend came to restore, write our file.  Each
 * step runs guarded (pgsq_run_guarded): an error is logged and costs at
 * most our file, never PostgreSQL's, which is written right after.  If the
 * saved statistics could not be restored, their file is left as it is:
 * written now, it would lack them.
 */
void
pgsq_savefile_at_shutdown(void)
{
	bool		restored = pgsq_restore_saved(true);

	if (!restored)
		ereport(LOG,
				(errmsg("pg_stat_queries keeps its statistics file \"%s\" as it is, as it could not be restored",
						PGSQ_SAVE_FILE),
				 errdetail("The statistics counted since the server started are not saved.")));
	else
		(void) pgsq_run_guarded(write_step, NULL, "write its statistics file");
}
