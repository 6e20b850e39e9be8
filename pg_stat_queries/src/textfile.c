/*-------------------------------------------------------------------------
 *
 * textfile.c
 *		The query text file, which keeps texts and rare counters across a
 *		clean shutdown.
 *
 * The checkpointer writes every entry's text and rare counters (rare.c:
 * the statistics system writes only what is inside the entry) to
 * pg_stat/pg_stat_queries.texts at its last flush of statistics, right
 * before the statistics system writes its own file.  The startup process
 * reads it back before the statistics system restores its entries, and
 * keeps them aside in shared memory; the first client backend gives them
 * to their entries and frees those whose entries were not restored.  After a crash the
 * statistics system discards its entries, so the text file is discarded
 * too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "qtext.h"
#include "rare.h"
#include "settings.h"
#include "store.h"
#include "textfile.h"

#include <sys/stat.h>
#include <unistd.h>

#include "lib/dshash.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "utils/dsa.h"
#include "utils/memutils.h"

#define PGSQ_TEXT_FILE "pg_stat/pg_stat_queries.texts"
#define PGSQ_TEXT_FILE_TMP PGSQ_TEXT_FILE ".tmp"
#define PGSQ_TEXT_FILE_MAGIC 0x50475351 /* "PGSQ" */
#define PGSQ_TEXT_FILE_VERSION 3

/* A text and rare counters read at startup, waiting for their entry */
typedef struct LoadedText
{
	PgsqKey		key;
	dsa_pointer text;			/* or InvalidDsaPointer */
	dsa_pointer rare;			/* or InvalidDsaPointer */
} LoadedText;

/* The texts read at startup (PgsqSharedState.loaded_texts) */
typedef struct LoadedTexts
{
	int			count;
	int			size;
	LoadedText	texts[FLEXIBLE_ARRAY_MEMBER];
} LoadedTexts;

/* Header of the text file */
typedef struct TextFileHeader
{
	uint32		magic;
	uint32		version;
	uint32		pg_major;
	TimestampTz stats_reset;
	uint64		dealloc;
	uint64		evicted_entries;
	uint64		texts_missing;
} TextFileHeader;

/*
 * One record of the text file, followed by len bytes of text (none if len
 * is -1: the entry has no text) and, if has_rare, its PgsqRareCounters
 */
typedef struct TextFileRecord
{
	PgsqKey		key;
	TimestampTz stored_at;
	int32		encoding;
	int32		len;
	int32		has_rare;
} TextFileRecord;

/*
 * Give each text read at startup to its entry, restored by the statistics
 * system meanwhile; free those whose entries were not restored (it discards
 * its whole file when any of it is damaged).  The first client backend
 * does it, before any statement is tracked.
 */
void
pgsq_textfile_give_loaded(void)
{
	dsa_pointer loaded_ptr;
	LoadedTexts *loaded;
	dsa_area   *area;
	int			dropped = 0;

	LWLockAcquire(pgsq_state->lock, LW_EXCLUSIVE);
	loaded_ptr = pgsq_state->loaded_texts;
	pgsq_state->loaded_texts = InvalidDsaPointer;
	LWLockRelease(pgsq_state->lock);
	if (!DsaPointerIsValid(loaded_ptr))
		return;

	area = pgsq_text_area();
	loaded = (LoadedTexts *) dsa_get_address(area, loaded_ptr);
	for (int i = 0; i < loaded->count; i++)
	{
		LoadedText *lt = &loaded->texts[i];
		PgStatShared_HashEntry *hent;
		PgsqSharedEntry *entry;
		bool		given = false;

		entry = pgsq_lock_statement_entry(&lt->key, LW_EXCLUSIVE, &hent);
		if (entry != NULL)
		{
			/* it keeps the time it was stored at before the shutdown */
			if (DsaPointerIsValid(lt->text) &&
				pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_NONE)
			{
				pgsq_text_give_locked(entry, lt->text);
				given = true;
			}
			/* nothing was merged into a restored entry before this */
			if (DsaPointerIsValid(lt->rare) && !DsaPointerIsValid(entry->rare))
			{
				pgsq_rare_give(entry, lt->rare);
				lt->rare = InvalidDsaPointer;
			}
			pgsq_unlock_statement_entry(entry, hent);
		}
		pgsq_rare_discard(lt->rare);
		if (!given && DsaPointerIsValid(lt->text))
		{
			pgsq_text_discard(lt->text);
			dropped++;
		}
	}
	dsa_free(area, loaded_ptr);

	if (dropped > 0)
		ereport(LOG,
				(errmsg("pg_stat_queries removed %d query texts whose statistics were not restored",
						dropped)));
}

/*
 * Keep a text and rare counters read at startup for their entry, growing
 * the list as needed.  Returns false if there is no memory for the list:
 * they are not kept.
 */
static bool
add_loaded(const PgsqKey *key, dsa_pointer text, dsa_pointer rare)
{
	dsa_area   *area = pgsq_text_area();
	dsa_pointer loaded_ptr;
	LoadedTexts *loaded;

	LWLockAcquire(pgsq_state->lock, LW_EXCLUSIVE);
	loaded_ptr = pgsq_state->loaded_texts;
	loaded = DsaPointerIsValid(loaded_ptr) ?
		(LoadedTexts *) dsa_get_address(area, loaded_ptr) : NULL;

	if (loaded == NULL || loaded->count == loaded->size)
	{
		int			size = loaded == NULL ? 256 : loaded->size * 2;
		dsa_pointer grown;
		LoadedTexts *bigger;

		grown = dsa_allocate_extended(area,
									  offsetof(LoadedTexts, texts) +
									  size * sizeof(LoadedText),
									  DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);
		if (!DsaPointerIsValid(grown))
		{
			LWLockRelease(pgsq_state->lock);
			return false;
		}
		bigger = (LoadedTexts *) dsa_get_address(area, grown);
		bigger->size = size;
		bigger->count = 0;
		if (loaded != NULL)
		{
			bigger->count = loaded->count;
			memcpy(bigger->texts, loaded->texts,
				   loaded->count * sizeof(LoadedText));
			dsa_free(area, loaded_ptr);
		}
		loaded = bigger;
		pgsq_state->loaded_texts = grown;
	}
	loaded->texts[loaded->count].key = *key;
	loaded->texts[loaded->count].text = text;

	loaded->texts[loaded->count].rare = rare;

	loaded->count++;
	LWLockRelease(pgsq_state->lock);
	return true;
}

/*
 * Write one statement's text and rare counters, either of which may be
 * invalid, to the text file; false on a write error
 */
static bool
write_record(FILE *file, const PgsqKey *key, dsa_pointer text,
			 dsa_pointer rare)
{
	TextFileRecord rec;
	const char *bytes = NULL;
	int			len = -1;
	int			encoding = PG_SQL_ASCII;

	memset(&rec, 0, sizeof(rec));
	rec.key = *key;
	if (DsaPointerIsValid(text))
		bytes = pgsq_text_bytes(text, &len, &encoding, &rec.stored_at);
	rec.encoding = encoding;
	rec.len = len;
	rec.has_rare = DsaPointerIsValid(rare);
	if (fwrite(&rec, sizeof(rec), 1, file) != 1)
		return false;
	if (len > 0 && fwrite(bytes, 1, len, file) != (size_t) len)
		return false;
	return !rec.has_rare ||
		fwrite(pgsq_rare_read(rare), sizeof(PgsqRareCounters), 1, file) == 1;
}

/*
 * Write all texts to the text file: the checkpointer, at its last flush of
 * statistics, right before the statistics system writes its file.  Texts
 * read at startup and not yet given to entries (no client backend came)
 * are written too.  Nothing else runs then, but entry locks are taken as
 * the locking rules say.
 */
void
pgsq_textfile_save(void)
{
	FILE	   *file;
	TextFileHeader header;
	dshash_seq_status hstat;
	PgsqSharedEntry *entry;
	dsa_pointer loaded_ptr;
	bool		failed = false;

	if (!pgsq_save)
	{
		unlink(PGSQ_TEXT_FILE);
		return;
	}

	file = AllocateFile(PGSQ_TEXT_FILE_TMP, PG_BINARY_W);
	if (file == NULL)
		goto error;

	memset(&header, 0, sizeof(header));
	header.magic = PGSQ_TEXT_FILE_MAGIC;
	header.version = PGSQ_TEXT_FILE_VERSION;
	header.pg_major = PG_VERSION_NUM / 100;
	header.stats_reset = pgsq_state->stats_reset;
	header.dealloc = pg_atomic_read_u64(&pgsq_state->dealloc);
	header.evicted_entries = pg_atomic_read_u64(&pgsq_state->evicted_entries);
	header.texts_missing = pg_atomic_read_u64(&pgsq_state->texts_missing);
	if (fwrite(&header, sizeof(header), 1, file) != 1)
		goto error;

	dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
	while (!failed && (entry = pgsq_scan_next_entry(&hstat)) != NULL)
	{
		LWLockAcquire(&entry->header.lock, LW_SHARED);
		if (entry->data.stats_since != 0)
		{
			dsa_pointer text = InvalidDsaPointer;

			if (pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_STORED)
				text = entry->text;

			if (DsaPointerIsValid(text) || DsaPointerIsValid(entry->rare))
				failed = !write_record(file, &entry->data.key, text,
									   entry->rare);
		}
		LWLockRelease(&entry->header.lock);
	}
	dshash_seq_term(&hstat);
	if (failed)
		goto error;

	/* only the first client backend frees it, and none runs any more */
	LWLockAcquire(pgsq_state->lock, LW_SHARED);
	loaded_ptr = pgsq_state->loaded_texts;
	LWLockRelease(pgsq_state->lock);
	if (DsaPointerIsValid(loaded_ptr))
	{
		LoadedTexts *loaded = (LoadedTexts *)
			dsa_get_address(pgsq_text_area(), loaded_ptr);

		for (int i = 0; i < loaded->count; i++)
		{
			LoadedText *lt = &loaded->texts[i];

			if (!write_record(file, &lt->key, lt->text, lt->rare))
				goto error;
		}
	}

	if (FreeFile(file) != 0)
	{
		file = NULL;
		goto error;
	}
	(void) durable_rename(PGSQ_TEXT_FILE_TMP, PGSQ_TEXT_FILE, LOG);
	return;

error:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("could not write file \"%s\": %m", PGSQ_TEXT_FILE_TMP)));
	if (file)
		FreeFile(file);
	unlink(PGSQ_TEXT_FILE_TMP);
}

/*
 * Read the text file back; startup process, before the statistics system
 * restores its entries and before any query runs.  The texts wait in
 * loaded_texts for the first client backend to give them to their entries.
 */
static void
load_texts_at_startup(void)
{
	FILE	   *file;
	TextFileHeader header;
	TextFileRecord rec;
	struct stat st;
	char	   *buf = NULL;
	int			bufsize = 0;
	off_t		left;

	/*
	 * The statistics file exists only after a clean shutdown; without it the
	 * entries are gone, and so must their texts be.
	 */
	if (!pgsq_save || stat(PGSTAT_STAT_PERMANENT_FILENAME, &st) != 0)
	{
		unlink(PGSQ_TEXT_FILE);
		return;
	}

	file = AllocateFile(PGSQ_TEXT_FILE, PG_BINARY_R);
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", PGSQ_TEXT_FILE)));
		return;
	}

	/* every length read is checked against what is left of the file */
	if (fstat(fileno(file), &st) != 0)
		goto corrupt;
	left = st.st_size;

	if (left < (off_t) sizeof(header) ||
		fread(&header, sizeof(header), 1, file) != 1 ||
		header.magic != PGSQ_TEXT_FILE_MAGIC ||
		header.version != PGSQ_TEXT_FILE_VERSION ||
		header.pg_major != PG_VERSION_NUM / 100)
		goto corrupt;

	pgsq_state->stats_reset = header.stats_reset;
	pg_atomic_write_u64(&pgsq_state->dealloc, header.dealloc);
	pg_atomic_write_u64(&pgsq_state->evicted_entries, header.evicted_entries);
	pg_atomic_write_u64(&pgsq_state->texts_missing, header.texts_missing);

	left -= sizeof(header);

	while (left > 0)
	{
		dsa_pointer text = InvalidDsaPointer;
		dsa_pointer rare = InvalidDsaPointer;
		PgsqRareCounters rare_counts;

		if (left < (off_t) sizeof(rec) ||
			fread(&rec, sizeof(rec), 1, file) != 1)
			goto corrupt;
		left -= sizeof(rec);
		if (rec.len < -1 || rec.len > left ||
			(rec.len >= 0 && (Size) rec.len >= MaxAllocSize) ||
			!PG_VALID_BE_ENCODING(rec.encoding) ||
			(rec.has_rare != 0 && rec.has_rare != 1))
			goto corrupt;
		if (rec.len >= 0)
		{
			left -= rec.len;
			if (rec.len + 1 > bufsize)
			{
				bufsize = Max(rec.len + 1, 2 * bufsize);
				buf = buf ? repalloc(buf, bufsize) : palloc(bufsize);
			}
			if (fread(buf, 1, rec.len, file) != (size_t) rec.len)
				goto corrupt;
		}
		if (rec.has_rare)
		{
			if (left < (off_t) sizeof(rare_counts) ||
				fread(&rare_counts, sizeof(rare_counts), 1, file) != 1)
				goto corrupt;
			left -= sizeof(rare_counts);
		}

		/* a text that does not fit is counted in texts_missing */
		if (rec.len >= 0)
		{
			text = pgsq_text_prepare(buf, rec.len, rec.encoding);

			if (DsaPointerIsValid(text))
				pgsq_text_set_stored_at(text, rec.stored_at);
		}
		if (rec.has_rare)
		{
			rare = pgsq_rare_prepare(&rare_counts);
			if (!DsaPointerIsValid(rare))
				ereport(LOG,
						(errmsg("pg_stat_queries could not restore rare counters of a statement: out of shared memory")));
		}
		if (!DsaPointerIsValid(text) && !DsaPointerIsValid(rare))
			continue;
		if (!add_loaded(&rec.key, text, rare))
		{
			if (DsaPointerIsValid(text))
				pg_atomic_add_fetch_u64(&pgsq_state->texts_missing, 1);
			pgsq_text_discard(text);
			pgsq_rare_discard(rare);
		}
	}

	FreeFile(file);
	unlink(PGSQ_TEXT_FILE);
	if (buf)
		pfree(buf);
	return;

corrupt:
	ereport(LOG,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("ignoring invalid pg_stat_queries text file \"%s\"",
					PGSQ_TEXT_FILE)));
	FreeFile(file);
	unlink(PGSQ_TEXT_FILE);
	/* the startup process lives on through recovery, a standby's for good */
	if (buf)
		pfree(buf);
}

/* Per-process setup: the startup process loads the texts */
void
pgsq_textfile_init_backend(void)
{
	if (pgsq_state == NULL)
		return;
	if (MyBackendType == B_STARTUP)
		load_texts_at_startup();
}
