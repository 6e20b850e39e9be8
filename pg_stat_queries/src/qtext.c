/*-------------------------------------------------------------------------
 *
 * qtext.c
 *		Normalized query texts in shared memory.
 *
 * Texts are kept in a DSA area of our own, indexed by a dshash keyed like
 * the statistics entries.  There is no external file during normal
 * operation and so no garbage-collection rewrite: a text is freed when its
 * entry is evicted or reset.  The bytes used are bounded by
 * pg_stat_queries.query_text_memory (reloadable); a text that does not fit
 * is not stored (its entry shows a NULL query and texts_missing counts it)
 * and is stored by a later parse of the statement once there is room.
 *
 * Across a clean shutdown the texts go to pg_stat/pg_stat_queries.texts,
 * written by the checkpointer after the last query has run and read back
 * by the startup process before the first one.  After a crash the
 * statistics system discards its entries, so the file is discarded too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "qtext.h"
#include "settings.h"
#include "store.h"

#include <sys/stat.h>
#include <unistd.h>

#include "lib/dshash.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "utils/dsa.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* Size of the DSA's first segment, inside our fixed shared memory */
#define PGSQ_TEXT_DSA_INIT_SIZE (512 * 1024)

#define PGSQ_TEXT_FILE "pg_stat/pg_stat_queries.texts"
#define PGSQ_TEXT_FILE_TMP PGSQ_TEXT_FILE ".tmp"
#define PGSQ_TEXT_FILE_MAGIC 0x50475351 /* "PGSQ" */
#define PGSQ_TEXT_FILE_VERSION 2

/* Key of the text hash: fixed layout, no padding */
typedef struct TextKey
{
	uint64		objid;
	Oid			dbid;
	Oid			userid;
} TextKey;

/* An entry of the text hash */
typedef struct TextEntry
{
	TextKey		key;
	dsa_pointer text;			/* NUL-terminated, InvalidDsaPointer if none */
	int32		len;
	int32		encoding;
	int64		queryid;
	bool		toplevel;
	TimestampTz stored_at;		/* clock when stored, read under the lock */
} TextEntry;

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

/* One record of the text file, followed by len bytes of text */
typedef struct TextFileRecord
{
	PgsqKey		key;
	TimestampTz stored_at;
	int32		encoding;
	int32		len;
} TextFileRecord;

static dshash_parameters text_hash_params = {
	sizeof(TextKey),
	sizeof(TextEntry),
	dshash_memcmp,
	dshash_memhash,
	dshash_memcpy,
	0							/* tranche id, set at startup */
};

static dsa_area *text_area = NULL;
static dshash_table *text_hash = NULL;

static void free_text(TextEntry *entry);

/* Bytes of fixed shared memory we need, DSA start included */
Size
pgsq_qtext_shmem_size(void)
{
	return add_size(MAXALIGN(offsetof(PgsqSharedState, text_dsa_place)),
					PGSQ_TEXT_DSA_INIT_SIZE);
}

/* Create the DSA area and the text hash (postmaster, once) */
void
pgsq_qtext_shmem_init(PgsqSharedState *state, bool found)
{
	dsa_area   *area;
	dshash_table *hash;

	if (found)
		return;

	state->text_tranche_id = LWLockNewTrancheId();
	area = dsa_create_in_place(state->text_dsa_place, PGSQ_TEXT_DSA_INIT_SIZE,
							   state->text_tranche_id, NULL);
	dsa_pin(area);
	text_hash_params.tranche_id = state->text_tranche_id;
	hash = dshash_create(area, &text_hash_params, NULL);
	state->text_hash_handle = dshash_get_hash_table_handle(hash);

	/* the postmaster never uses them; backends attach lazily */
	dshash_detach(hash);
	dsa_detach(area);
}

/*
 * Give back our reference to the in-place DSA at process exit.  This must
 * run before dynamic shared memory is unmapped, so it is a before_shmem_exit
 * callback, as for the statistics system's own area.
 */
static void
qtext_detach(int code, Datum arg)
{
	if (text_hash != NULL)
		dshash_detach(text_hash);
	if (text_area != NULL)
	{
		dsa_detach(text_area);
		dsa_release_in_place(pgsq_state->text_dsa_place);
	}
	text_hash = NULL;
	text_area = NULL;
}

/*
 * Remove the texts loaded at startup whose entries the statistics system
 * did not restore: it discards its whole file when any of it is damaged,
 * after our texts were loaded.  Keys are collected first, so that no text
 * lock is held while the statistics hash is looked up.
 */
void
pgsq_qtext_drop_orphans(void)
{
	dshash_seq_status hstat;
	TextEntry  *entry;
	TextKey    *keys;
	int			nkeys = 0;
	int			size = 64;
	int			dropped = 0;

	pgsq_qtext_attach();
	keys = palloc(size * sizeof(TextKey));
	dshash_seq_init(&hstat, text_hash, false);
	while ((entry = dshash_seq_next(&hstat)) != NULL)
	{
		if (nkeys == size)
		{
			size *= 2;
			keys = repalloc_huge(keys, size * sizeof(TextKey));
		}
		keys[nkeys++] = entry->key;
	}
	dshash_seq_term(&hstat);

	for (int i = 0; i < nkeys; i++)
	{
		PgStat_HashKey hkey = pgsq_shared_hash_key(PGSQ_KEY_DBOID,
												   keys[i].objid);
		PgStatShared_HashEntry *hent;
		bool		live;

		hent = dshash_find(pgStatLocal.shared_hash, &hkey, false);
		live = hent != NULL && pgsq_is_live_entry(hent);
		if (hent != NULL)
			dshash_release_lock(pgStatLocal.shared_hash, hent);
		if (live)
			continue;
		entry = dshash_find(text_hash, &keys[i], true);
		if (entry == NULL)
			continue;
		free_text(entry);
		dshash_delete_entry(text_hash, entry);
		dropped++;
	}
	pfree(keys);

	if (dropped > 0)
	{
		pg_atomic_fetch_add_u32(&pgsq_state->text_epoch, 1);
		ereport(LOG,
				(errmsg("pg_stat_queries removed %d query texts whose statistics were not restored",
						dropped)));
	}
}

/* Attach to the text area and hash, once per process */
void
pgsq_qtext_attach(void)
{
	MemoryContext oldcxt;

	if (text_hash != NULL)
		return;

	LWLockRegisterTranche(pgsq_state->text_tranche_id, "pg_stat_queries_text");
	text_hash_params.tranche_id = pgsq_state->text_tranche_id;

	oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	text_area = dsa_attach_in_place(pgsq_state->text_dsa_place, NULL);
	dsa_pin_mapping(text_area);
	text_hash = dshash_attach(text_area, &text_hash_params,
							  pgsq_state->text_hash_handle, NULL);
	MemoryContextSwitchTo(oldcxt);

	/* while exiting, callers detach themselves */
	if (!proc_exit_inprogress)
		before_shmem_exit(qtext_detach, 0);
}

/* The text hash key of a statement */
static TextKey
text_key(const PgsqKey *key)
{
	TextKey		tkey;

	tkey.objid = pgsq_objid(key);
	tkey.dbid = key->dbid;
	tkey.userid = key->userid;
	return tkey;
}

/* Free a text entry's chunk and account for it */
static void
free_text(TextEntry *entry)
{
	if (DsaPointerIsValid(entry->text))
	{
		dsa_free(text_area, entry->text);
		pg_atomic_sub_fetch_u64(&pgsq_state->text_bytes, entry->len + 1);
		entry->text = InvalidDsaPointer;
	}
}

/*
 * Store a statement's text unless one is there already.  The chunk is
 * allocated and filled before the partition lock is taken.  Unless the
 * caller knows the text to be new (its entry was created just now), a
 * lookup first spares the allocation when the text is there.  Returns false
 * if query_text_memory has no room for it.
 */
static bool
store_text(const PgsqKey *key, const char *text, int len, int encoding,
		   bool is_new, TimestampTz stored_at)
{
	TextKey		tkey = text_key(key);
	uint64		limit = (uint64) pgsq_query_text_memory * 1024;
	uint64		used;
	dsa_pointer chunk;
	TextEntry  *entry;
	bool		found;

	pgsq_qtext_attach();

	entry = is_new ? NULL : dshash_find(text_hash, &tkey, false);
	if (entry != NULL)
	{
		bool		has = DsaPointerIsValid(entry->text);

		dshash_release_lock(text_hash, entry);
		if (has)
			return true;
	}

	used = pg_atomic_add_fetch_u64(&pgsq_state->text_bytes, len + 1);
	if (used > limit)
	{
		pg_atomic_sub_fetch_u64(&pgsq_state->text_bytes, len + 1);
		pg_atomic_add_fetch_u64(&pgsq_state->texts_missing, 1);
		return false;
	}
	chunk = dsa_allocate_extended(text_area, len + 1, DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(chunk))
	{
		pg_atomic_sub_fetch_u64(&pgsq_state->text_bytes, len + 1);
		pg_atomic_add_fetch_u64(&pgsq_state->texts_missing, 1);
		return false;
	}
	memcpy(dsa_get_address(text_area, chunk), text, len);
	((char *) dsa_get_address(text_area, chunk))[len] = '\0';

	entry = dshash_find_or_insert(text_hash, &tkey, &found);
	if (found && DsaPointerIsValid(entry->text))
	{
		/* somebody was faster */
		dshash_release_lock(text_hash, entry);
		dsa_free(text_area, chunk);
		pg_atomic_sub_fetch_u64(&pgsq_state->text_bytes, len + 1);
		return true;
	}
	entry->text = chunk;
	entry->len = len;
	entry->encoding = encoding;
	entry->queryid = key->queryid;
	entry->toplevel = key->toplevel;

	/*
	 * Read under the partition lock: a reader of changed texts that did not
	 * see this one started before it was stored.
	 */
	entry->stored_at = stored_at != 0 ? stored_at : GetCurrentTimestamp();
	dshash_release_lock(text_hash, entry);
	return true;
}

/*
 * Store a statement's text unless one is there already, noting the time.
 * Returns false if query_text_memory has no room for it.
 */
bool
pgsq_qtext_store(const PgsqKey *key, const char *text, int len, int encoding,
				 bool is_new)
{
	return store_text(key, text, len, encoding, is_new, 0);
}

/*
 * A palloc'd copy of a statement's text if one was stored at or after
 * since (0: at any time), else NULL.  *stored_at, if given, is set to when
 * the text was stored, or 0 if none is.
 */
char *
pgsq_qtext_fetch(const PgsqKey *key, TimestampTz since, int *encoding,
				 TimestampTz *stored_at)
{
	TextKey		tkey = text_key(key);
	TextEntry  *entry;
	char	   *result = NULL;

	if (stored_at)
		*stored_at = 0;
	pgsq_qtext_attach();
	entry = dshash_find(text_hash, &tkey, false);
	if (entry == NULL)
		return NULL;
	if (DsaPointerIsValid(entry->text) && entry->queryid == key->queryid &&
		entry->toplevel == key->toplevel)
	{
		if (stored_at)
			*stored_at = entry->stored_at;
		if (entry->stored_at >= since)
		{
			result = pnstrdup(dsa_get_address(text_area, entry->text),
							  entry->len);
			*encoding = entry->encoding;
		}
	}
	dshash_release_lock(text_hash, entry);
	return result;
}

/* Remove a statement's text */
void
pgsq_qtext_remove(const PgsqKey *key)
{
	TextKey		tkey = text_key(key);
	TextEntry  *entry;

	pgsq_qtext_attach();
	entry = dshash_find(text_hash, &tkey, true);
	if (entry == NULL)
		return;
	free_text(entry);
	dshash_delete_entry(text_hash, entry);
	pg_atomic_fetch_add_u32(&pgsq_state->text_epoch, 1);
}

/* Remove every text, one partition at a time */
void
pgsq_qtext_remove_all(void)
{
	dshash_seq_status hstat;
	TextEntry  *entry;

	pgsq_qtext_attach();
	dshash_seq_init(&hstat, text_hash, true);
	while ((entry = dshash_seq_next(&hstat)) != NULL)
	{
		free_text(entry);
		dshash_delete_current(&hstat);
	}
	dshash_seq_term(&hstat);
	pg_atomic_fetch_add_u32(&pgsq_state->text_epoch, 1);
}

/* Write all texts to the text file; checkpointer, at clean shutdown */
static void
save_texts_at_shutdown(int code, Datum arg)
{
	FILE	   *file;
	TextFileHeader header;
	dshash_seq_status hstat;
	TextEntry  *entry;

	if (code != 0 || !pgsq_save)
	{
		unlink(PGSQ_TEXT_FILE);
		return;
	}

	pgsq_qtext_attach();
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

	dshash_seq_init(&hstat, text_hash, false);
	while ((entry = dshash_seq_next(&hstat)) != NULL)
	{
		TextFileRecord rec;

		if (!DsaPointerIsValid(entry->text))
			continue;
		memset(&rec, 0, sizeof(rec));
		rec.key.userid = entry->key.userid;
		rec.key.dbid = entry->key.dbid;
		rec.key.queryid = entry->queryid;
		rec.key.toplevel = entry->toplevel;
		rec.stored_at = entry->stored_at;
		rec.encoding = entry->encoding;
		rec.len = entry->len;
		if (fwrite(&rec, sizeof(rec), 1, file) != 1 ||
			fwrite(dsa_get_address(text_area, entry->text), 1, rec.len, file) != (size_t) rec.len)
		{
			dshash_seq_term(&hstat);
			goto error;
		}
	}
	dshash_seq_term(&hstat);

	if (FreeFile(file) != 0)
	{
		file = NULL;
		goto error;
	}
	(void) durable_rename(PGSQ_TEXT_FILE_TMP, PGSQ_TEXT_FILE, LOG);
	qtext_detach(0, 0);
	return;

error:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("could not write file \"%s\": %m", PGSQ_TEXT_FILE_TMP)));
	if (file)
		FreeFile(file);
	unlink(PGSQ_TEXT_FILE_TMP);
	qtext_detach(0, 0);
}

/* Read the text file back; startup process, before any query runs */
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
		if (left < (off_t) sizeof(rec) ||
			fread(&rec, sizeof(rec), 1, file) != 1)
			goto corrupt;
		left -= sizeof(rec);
		if (rec.len < 0 || rec.len > left || rec.len >= MaxAllocSize ||
			!PG_VALID_BE_ENCODING(rec.encoding))
			goto corrupt;
		left -= rec.len;
		if (rec.len + 1 > bufsize)
		{
			bufsize = Max(rec.len + 1, 2 * bufsize);
			buf = buf ? repalloc(buf, bufsize) : palloc(bufsize);
		}
		if (fread(buf, 1, rec.len, file) != (size_t) rec.len)
			goto corrupt;
		(void) store_text(&rec.key, buf, rec.len, rec.encoding, true,
						  rec.stored_at);
	}

	FreeFile(file);
	unlink(PGSQ_TEXT_FILE);
	return;

corrupt:
	ereport(LOG,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("ignoring invalid pg_stat_queries text file \"%s\"",
					PGSQ_TEXT_FILE)));
	FreeFile(file);
	unlink(PGSQ_TEXT_FILE);
}

/* Per-process setup: the startup process loads, the checkpointer saves */
void
pgsq_qtext_init_backend(void)
{
	if (pgsq_state == NULL)
		return;
	if (MyBackendType == B_STARTUP)
		load_texts_at_startup();
	else if (MyBackendType == B_CHECKPOINTER)
		before_shmem_exit(save_texts_at_shutdown, 0);
}
