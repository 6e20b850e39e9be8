/*-------------------------------------------------------------------------
 *
 * store.c
 *		Our entries in the cumulative statistics system's shared hash.
 *
 * Entries are a custom kind of PostgreSQL's cumulative statistics system
 * (pgstat_register_kind): they live in its partitioned shared hash, each
 * with an LWLock in its header.  This file knows how an entry is keyed,
 * found, created without a reference, started and dropped; this backend's
 * references to entries are in refs.c.  See docs/design.md for the design
 * and the locking rules.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "counters.h"
#include "lib/dshash.h"
#include "qtext.h"
#include "rare.h"
#include "store.h"
#include "usage.h"
#include "utils/timestamp.h"

/*
 * The statistics system identifies an entry by (kind, dboid, objid).  All
 * our entries use PGSQ_KEY_DBOID as dboid and fold the whole statement key
 * -- database, user, queryid, toplevel -- into the 64-bit objid.  queryid is
 * already a hash, so mixing in the rest keeps collisions as unlikely as
 * between two queryids.  The full key is kept in the entry and checked on
 * every merge.
 */
uint64
pgsq_objid(const PgsqKey *key)
{
	uint64		who = ((uint64) key->userid << 32) | key->dbid;

	return hash_combine64((uint64) key->queryid,
						  murmurhash64(who) + (key->toplevel ? 1 : 0));
}

/* The key in pgstat's shared hash of one of our entries */
PgStat_HashKey
pgsq_shared_hash_key(Oid dbid, uint64 objid)
{
	PgStat_HashKey hkey;

	memset(&hkey, 0, sizeof(hkey)); /* no padding today, but hashed whole */
	hkey.kind = PGSQ_STATS_KIND;
	hkey.dboid = dbid;
	hkey.objid = objid;
	return hkey;
}

/* Is this hash entry one of ours, and not dropped? */
bool
pgsq_is_live_entry(const PgStatShared_HashEntry *hent)
{
	return hent->key.kind == PGSQ_STATS_KIND && !hent->dropped;
}

/* Our entries' shared part, or NULL for other kinds and dropped entries */
PgsqSharedEntry *
pgsq_shared_entry_of(PgStatShared_HashEntry *hent)
{
	if (!pgsq_is_live_entry(hent))
		return NULL;
	return (PgsqSharedEntry *) dsa_get_address(pgStatLocal.dsa, hent->body);
}

/*
 * The started entry of a statement, found in the shared hash: returned with
 * its partition lock held shared (*hent) and its own lock held in mode, or
 * NULL with neither held.  Release both with pgsq_unlock_statement_entry.
 */
PgsqSharedEntry *
pgsq_lock_statement_entry(const PgsqKey *key, LWLockMode mode,
						  PgStatShared_HashEntry **hent)
{
	PgStat_HashKey hkey = pgsq_shared_hash_key(PGSQ_KEY_DBOID,
											   pgsq_objid(key));
	PgsqSharedEntry *entry;

	*hent = dshash_find(pgStatLocal.shared_hash, &hkey, false);
	if (*hent == NULL)
		return NULL;
	entry = pgsq_shared_entry_of(*hent);
	if (entry != NULL)
	{
		LWLockAcquire(&entry->header.lock, mode);
		if (entry->data.stats_since != 0 &&
			pgsq_key_equals(&entry->data.key, key))
			return entry;
		LWLockRelease(&entry->header.lock);
	}
	dshash_release_lock(pgStatLocal.shared_hash, *hent);
	return NULL;
}

/* Release what pgsq_lock_statement_entry returned */
void
pgsq_unlock_statement_entry(PgsqSharedEntry *entry,
							PgStatShared_HashEntry *hent)
{
	LWLockRelease(&entry->header.lock);
	dshash_release_lock(pgStatLocal.shared_hash, hent);
}

/* The next of our entries in a scan begun with dshash_seq_init, or NULL */
PgsqSharedEntry *
pgsq_scan_next_entry(dshash_seq_status *hstat)
{
	PgStatShared_HashEntry *hent;

	while ((hent = dshash_seq_next(hstat)) != NULL)
	{
		PgsqSharedEntry *entry = pgsq_shared_entry_of(hent);

		if (entry != NULL)
			return entry;
	}
	return NULL;
}

/*
 * Give an entry nobody else can see yet its key and start time, and return
 * that time.
 */
static TimestampTz
start_entry_data(PgsqEntryData *data, const PgsqKey *key)
{
	/*
	 * The clock, not the statement's start time: nested statements of one
	 * long statement may create the same entry again after a reset or
	 * eviction, and stats_since tells the lives apart (pending.c).
	 */
	if (data->stats_since == 0)
		pgsq_start_data(data, key, GetCurrentTimestamp());
	return data->stats_since;
}

/*
 * Give a new (or reused dropped) entry its key and start time, so it can be
 * found and evicted, start its hints afresh and open it to texts.
 */
void
pgsq_start_entry(PgsqSharedEntry *entry, const PgsqKey *key)
{
	pg_atomic_write_u32(&entry->usage, 0);
	pg_atomic_write_u32(&entry->swept_pass, 0);

	LWLockAcquire(&entry->header.lock, LW_EXCLUSIVE);
	(void) start_entry_data(&entry->data, key);
	pgsq_text_reopen(entry);
	LWLockRelease(&entry->header.lock);
}

/*
 * Create a statement's entry, holding its first counts if given and its
 * text if valid (a chunk from pgsq_text_prepare, which becomes the entry's
 * only if CREATE_DONE), without taking a reference to it, so that this
 * backend has nothing to collect when the entry is dropped, and a drop
 * frees it at once unless another backend references it.  The entry is
 * filled while its hash partition is locked exclusively: nobody can find
 * it before, so its own lock is not needed.  usage is its clock-sweep
 * usage count (eviction.c).  A dropped entry still in the hash (some
 * backend references it) can only be reused by the statistics system
 * itself: the caller then creates the entry with a reference.  The caller
 * accounts for the new entry (eviction.c).
 */
PgsqCreateResult
pgsq_create_unreferenced(const PgsqKey *key, uint64 objid,
						 const PgsqCounters *first, uint32 usage,
						 dsa_pointer text)
{
	PgStat_HashKey hkey = pgsq_shared_hash_key(PGSQ_KEY_DBOID, objid);
	PgStatShared_HashEntry *hent;
	PgsqSharedEntry *entry;
	bool		found;
	TimestampTz now;
	dsa_pointer rare = InvalidDsaPointer;

	/* rare counts get their chunk before any lock is taken */
	if (first != NULL && first->has_rare)
	{
		rare = pgsq_rare_prepare(&first->rare);
		if (!DsaPointerIsValid(rare))
			return CREATE_REFUSED;
	}

	hent = dshash_find_or_insert(pgStatLocal.shared_hash, &hkey, &found);
	if (found)
	{
		bool		dropped = hent->dropped;

		dshash_release_lock(pgStatLocal.shared_hash, hent);
		pgsq_rare_discard(rare);
		return dropped ? CREATE_DROPPED : CREATE_EXISTS;
	}
	entry = (PgsqSharedEntry *) pgstat_init_entry(PGSQ_STATS_KIND, hent);
	if (entry == NULL)
	{
		/* pgstat's area is out of memory: do not fail the query */
		dshash_delete_entry(pgStatLocal.shared_hash, hent);
		pgsq_rare_discard(rare);
		return CREATE_REFUSED;
	}

	/*
	 * pgstat_init_entry zeroed it: it has no text.  The clock is read once,
	 * under the partition lock, for the start time, the first change and the
	 * text's: a reader of changes that did not see the entry looked at this
	 * partition before, so its own start time is earlier.
	 */
	now = start_entry_data(&entry->data, key);
	if (first != NULL)
		pgsq_fill_new_entry(&entry->data, first, now);
	if (DsaPointerIsValid(rare))
		pgsq_rare_give(entry, rare);
	pgsq_text_give_new(entry, text, now);
	pg_atomic_write_u32(&entry->usage, usage);
	dshash_release_lock(pgStatLocal.shared_hash, hent);
	return CREATE_DONE;
}

/*
 * Close an entry to be dropped, its lock held exclusively: free its rare
 * counters, and take its text (which closes it to texts, see qtext.h) for
 * the caller to discard once the lock is released.
 */
dsa_pointer
pgsq_close_entry(PgsqSharedEntry *entry)
{
	pgsq_rare_release(entry);
	return pgsq_text_take(entry);
}

/*
 * Entries this backend dropped so far, its own references to them released:
 * a reference remembered before is stale once this count moved (refs.c).
 */
uint64		pgsq_local_drops = 0;

/*
 * Drop an entry from this backend.  Returns false if other backends still
 * hold references to the entry.
 */
bool
pgsq_drop_entry(Oid dboid, uint64 objid)
{
	pgsq_local_drops++;
	return pgsq_drop_stats_entry(PGSQ_STATS_KIND, dboid, objid);
}

/*
 * Put back a statement saved across a clean shutdown (savefile.c): its
 * counters, rare counters (or NULL) and text (or InvalidDsaPointer, else a
 * chunk from pgsq_text_prepare with its time set, now the entry's or
 * discarded).  Normally the entry is new; should it exist (a background
 * worker ran the statement before the restore), the saved counts are
 * merged into it.  The caller accounts for a new entry (eviction.c).
 * Returns true if a new entry was created; false if it was merged, or not
 * restored (out of memory, a dropped entry in the way, a colliding key).
 */
bool
pgsq_restore_entry(const PgsqEntryData *data, const PgsqRareCounters *rare,
				   dsa_pointer text)
{
	PgStat_HashKey hkey = pgsq_shared_hash_key(PGSQ_KEY_DBOID,
											   pgsq_objid(&data->key));
	PgStatShared_HashEntry *hent;
	PgsqSharedEntry *entry;
	bool		found;
	dsa_pointer rare_chunk = InvalidDsaPointer;
	PgsqCounters counts;

	/* rare counts get their chunk before any lock is taken */
	if (rare != NULL)
	{
		rare_chunk = pgsq_rare_prepare(rare);
		if (!DsaPointerIsValid(rare_chunk))
		{
			pgsq_text_discard(text);
			return false;
		}
	}

	hent = dshash_find_or_insert(pgStatLocal.shared_hash, &hkey, &found);
	if (!found)
	{
		entry = (PgsqSharedEntry *) pgstat_init_entry(PGSQ_STATS_KIND, hent);
		if (entry == NULL)
		{
			dshash_delete_entry(pgStatLocal.shared_hash, hent);
			pgsq_rare_discard(rare_chunk);
			pgsq_text_discard(text);
			return false;
		}
		entry->data = *data;
		if (DsaPointerIsValid(rare_chunk))
			pgsq_rare_give(entry, rare_chunk);
		if (DsaPointerIsValid(text))
			pgsq_text_give_locked(entry, text);
		dshash_release_lock(pgStatLocal.shared_hash, hent);
		return true;
	}
	dshash_release_lock(pgStatLocal.shared_hash, hent);
	pgsq_rare_discard(rare_chunk);

	/* there already: add the saved counts to it */
	entry = pgsq_lock_statement_entry(&data->key, LW_EXCLUSIVE, &hent);
	if (entry != NULL)
	{
		memset(&counts, 0, sizeof(counts));
		counts.main = data->counters;
		counts.has_rare = rare != NULL;
		if (rare != NULL)
			counts.rare = *rare;
		(void) pgsq_merge_locked(entry, &data->key, &counts);
		if (DsaPointerIsValid(text) &&
			pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_NONE)
		{
			pgsq_text_give_locked(entry, text);
			text = InvalidDsaPointer;
		}
		pgsq_unlock_statement_entry(entry, hent);
	}
	pgsq_text_discard(text);
	return false;
}

/*
 * A dropped entry stays in the shared hash until its last reference is
 * released.  PostgreSQL 18 leaks it there if it was reused (reinitialized)
 * by a new statement with the same key and dropped again while an older
 * reference was still held: the release of that older reference sees a
 * newer generation and leaves the entry alone, with no reference left.
 * Eviction drops and reuses keys often enough to hit this.  Such an orphan
 * costs one entry's memory until its key is reused; it cannot be told
 * apart safely from an entry whose last referrer is about to free it, so we
 * free orphans only at shutdown, in the checkpointer, when no backend is
 * left (the statistics file must not see them).
 */
#define PGSQ_ORPHANS_MAX 256

/* An orphan to free */
typedef struct Orphan
{
	Oid			dboid;
	uint64		objid;
} Orphan;

/* Is this a dropped entry of ours that nobody references? */
static bool
is_orphan(PgStatShared_HashEntry *hent)
{
	return hent->key.kind == PGSQ_STATS_KIND && hent->dropped &&
		pg_atomic_read_u32(&hent->refcount) == 0;
}

/*
 * Free orphaned entries: revive each one (the statistics system reuses a
 * dropped entry when asked to create its key) and drop it again, this time
 * as its only referrer, which frees it.  If the key is live again, leave it.
 */
static void
free_orphans(const Orphan *orphans, int count)
{
	for (int i = 0; i < count; i++)
	{
		bool		created;

		(void) pgstat_get_entry_ref(PGSQ_STATS_KIND, orphans[i].dboid,
									orphans[i].objid, true, &created);
		if (created)
			(void) pgsq_drop_entry(orphans[i].dboid, orphans[i].objid);
	}
}

/* Free every orphaned entry; only at shutdown, when no backend is left */
void
pgsq_free_all_orphans(void)
{
	Orphan	   *orphans = palloc(PGSQ_ORPHANS_MAX * sizeof(Orphan));
	int			count;

	do
	{
		dshash_seq_status hstat;
		PgStatShared_HashEntry *hent;

		count = 0;
		dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
		while ((hent = dshash_seq_next(&hstat)) != NULL && count < PGSQ_ORPHANS_MAX)
		{
			if (!is_orphan(hent))
				continue;
			orphans[count].dboid = hent->key.dboid;
			orphans[count].objid = hent->key.objid;
			count++;
		}
		dshash_seq_term(&hstat);
		free_orphans(orphans, count);
	} while (count == PGSQ_ORPHANS_MAX);
	pfree(orphans);
}

/*
 * Merge counters of a statement into its shared entry, under the entry
 * lock, unless they were counted for another life of it (counted_for, its
 * stats_since then; 0 if unknown): then they are discarded.  Returns false
 * if nowait and the lock was not available.
 */
bool
pgsq_merge_into_entry(PgsqSharedEntry *entry, const PgsqKey *key,
					  const PgsqCounters *counters, TimestampTz counted_for,
					  bool nowait)
{
	int64		calls_before;

	if (nowait)
	{
		if (!LWLockConditionalAcquire(&entry->header.lock, LW_EXCLUSIVE))
			return false;
	}
	else
		LWLockAcquire(&entry->header.lock, LW_EXCLUSIVE);
	if (pgsq_other_life(counted_for, entry->data.stats_since) ||
		pgsq_text_closed(entry))
	{
		/* another life of the entry, or one being dropped */
		LWLockRelease(&entry->header.lock);
		return true;
	}
	calls_before = pgsq_merge_locked(entry, key, counters);
	LWLockRelease(&entry->header.lock);

	pgsq_touch_entry(entry, counters->main.exec.calls, calls_before);
	return true;
}
