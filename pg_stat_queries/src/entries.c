/*-------------------------------------------------------------------------
 *
 * entries.c
 *		Shared entries: our entries in the statistics system's hash, their
 *		number and bound, and the ring of their ids.
 *
 * How an entry is keyed, found, created, linked, closed and dropped; the
 * running count kept within the bound and the exact count of live entries;
 * the ring of our entries' ids that the clock sweep (eviction.c) turns.
 * Usage counts are inline, in pg_stat_queries.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "lib/dshash.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/shmem.h"
#include "utils/injection_point.h"
#include "utils/timestamp.h"

#include "pg_stat_queries.h"


/*-------------------------------------------------------------------------
 * Our entries in the cumulative statistics system's shared hash.
 *
 * Entries are a custom kind of PostgreSQL's cumulative statistics system
 * (pgstat_register_kind): they live in its partitioned shared hash, each
 * with an LWLock in its header.  This file knows how an entry is keyed,
 * found, created without a reference, started and dropped; this backend's
 * references to entries are in merge.c.  See docs/design.md for the design
 * and the locking rules.
 *-------------------------------------------------------------------------
 */

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
	uint64		objid = hash_combine64((uint64) key->queryid,
									   murmurhash64(who) + (key->toplevel ? 1 : 0));

	/* a statement's id is as before plans had entries */
	if (pgsq_key_is_plan(key))
		objid = hash_combine64(objid, murmurhash64((uint64) key->planid));
	return objid;
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

/*
 * As pgsq_text_give, for a caller whose reference to the entry may have
 * been collected since it was found: the entry is looked up again in the
 * shared hash, under its partition lock.
 */
bool
pgsq_text_give_by_key(const PgsqKey *key, dsa_pointer text)
{
	PgStatShared_HashEntry *hent;
	PgsqSharedEntry *entry;
	bool		given = false;

	if (!DsaPointerIsValid(text))
		return false;
	entry = pgsq_lock_statement_entry(key, LW_EXCLUSIVE, &hent);
	if (entry != NULL)
	{
		given = pgsq_text_give_if_none(entry, text);
		pgsq_unlock_statement_entry(entry, hent);
	}
	if (!given)
		pgsq_text_discard(text);
	return given;
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

/* What insert_entry is asked to create, and what it did */
typedef struct EntryInsert
{
	PgStat_HashKey hkey;
	/* for a new entry: */
	const PgsqKey *key;
	const PgsqCounters *first;	/* its first counts, or NULL */
	const PgsqEntryData *saved; /* or its saved data, or NULL */
	dsa_pointer rare;			/* its rare chunk, or InvalidDsaPointer */
	dsa_pointer text;			/* its text, or InvalidDsaPointer */
	uint32		usage;
	/* while it runs: */
	dsa_pointer body;			/* allocated, not yet linked */
	/* the outcome: */
	PgsqCreateResult result;
} EntryInsert;

/*
 * Link a new hash entry to its body, allocated (zeroed) before the hash
 * partition was locked, as the statistics system does for the entries it
 * creates (pgstat_init_entry): valid (a count of one, not a reference),
 * first generation, its lock ready.  The statistics system allocates the
 * body after inserting the hash entry, under the partition lock, and an
 * error there (a dynamic shared memory segment that cannot be created)
 * would leave a hash entry without a body for every backend to trip on;
 * that is why we link our entries ourselves.  Partition lock held
 * exclusively.  Our kind does not ask PostgreSQL 19 to count its entries
 * (track_entry_count), the one thing that version adds here.
 */
static PgsqSharedEntry *
link_new_entry(PgStatShared_HashEntry *hent, dsa_pointer body)
{
	PgsqSharedEntry *entry = dsa_get_address(pgStatLocal.dsa, body);

	pg_atomic_init_u32(&hent->refcount, 1);
	pg_atomic_init_u32(&hent->generation, 0);
	hent->dropped = false;
	entry->header.magic = 0xdeadbeef;
	LWLockInitialize(&entry->header.lock, LWTRANCHE_PGSTATS_DATA);
	hent->body = body;
	return entry;
}

/*
 * Give a dropped entry still in the hash (a backend references it) a new
 * life, as the statistics system does when asked to create its key: valid
 * again, a new generation so that references to the old life know, its
 * data zeroed.  It was closed before it was dropped, so it holds no text or
 * rare chunk.  Partition lock held exclusively; returns with the entry
 * lock held too, as backends holding old references may look at it.
 */
static PgsqSharedEntry *
revive_dropped_entry(PgStatShared_HashEntry *hent)
{
	PgsqSharedEntry *entry = dsa_get_address(pgStatLocal.dsa, hent->body);

	Assert(entry->header.magic == 0xdeadbeef);

	/*
	 * With no reference left, the entry is an orphan, or its last referrer is
	 * between giving up its reference and taking the partition lock to free
	 * it.  That backend sees the new generation and leaves the item alone;
	 * but were the new life dropped before it comes, the drop would free the
	 * item under it.  An unowned reference keeps the item until shutdown
	 * (pgsq_free_all_orphans), whatever its later lives.
	 */
	if (pg_atomic_fetch_add_u32(&hent->refcount, 1) == 0)
	{
		pg_atomic_fetch_add_u32(&hent->refcount, 1);
		entry->unowned_refs++;
	}
	pg_atomic_fetch_add_u32(&hent->generation, 1);
	hent->dropped = false;

	LWLockAcquire(&entry->header.lock, LW_EXCLUSIVE);
	Assert(!DsaPointerIsValid(entry->text) && !DsaPointerIsValid(entry->rare));
	memset(&entry->data, 0,
		   sizeof(PgsqSharedEntry) - offsetof(PgsqSharedEntry, data));
	pg_atomic_write_u32(&entry->swept_pass, 0);
	pgsq_text_reopen(entry);
	return entry;
}

/*
 * Insert an entry into the shared hash, or revive a dropped one, and fill
 * it; or tell why not.  Run through pgsq_shared_alloc: the body is
 * allocated first, before any lock, then the hash may allocate an item or
 * grow; an error in either leaves nothing half-made (the body, if
 * allocated, is the caller's to free).  A new entry is filled while its
 * hash partition is locked exclusively: nobody can find it before, so its
 * own lock is not needed.  The rare chunk and text become the entry's only
 * if CREATE_DONE.
 */
static void
insert_entry(void *arg)
{
	EntryInsert *ins = (EntryInsert *) arg;
	PgStatShared_HashEntry *hent;
	PgsqSharedEntry *entry;
	bool		found;
	bool		revived = false;

	ins->body = dsa_allocate_extended(pgStatLocal.dsa, sizeof(PgsqSharedEntry),
									  DSA_ALLOC_ZERO | DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(ins->body))
	{
		/* pgstat's area is at its limit */
		ins->result = CREATE_REFUSED;
		return;
	}
	hent = dshash_find_or_insert(pgStatLocal.shared_hash, &ins->hkey, &found);
	if (!found)
	{
		entry = link_new_entry(hent, ins->body);
		ins->body = InvalidDsaPointer;
	}
	else if (hent->dropped)
	{
		entry = revive_dropped_entry(hent);
		revived = true;
	}
	else
	{
		ins->result = CREATE_EXISTS;
		dshash_release_lock(pgStatLocal.shared_hash, hent);
		return;
	}

	if (ins->saved != NULL)
	{
		entry->data = *ins->saved;
		if (DsaPointerIsValid(ins->text))
			pgsq_text_give_locked(entry, ins->text);
	}
	else
	{
		/*
		 * The clock is read once, under the partition lock, for the start
		 * time, the first change and the text's: a reader of changes that did
		 * not see the entry looked at this partition before, so its own start
		 * time is earlier.
		 */
		TimestampTz now = start_entry_data(&entry->data, ins->key);

		if (ins->first != NULL)
			pgsq_fill_new_entry(&entry->data, ins->first, now);
		pgsq_text_give_new(entry, ins->text, now);
	}
	if (DsaPointerIsValid(ins->rare))
		pgsq_rare_give(entry, ins->rare);
	pg_atomic_write_u32(&entry->usage, ins->usage);

	/*
	 * Counted live before the partition lock is released: a reset may drop
	 * the entry as soon as it is, and counts it dropped then.
	 */
	pgsq_live_entry_added(pgsq_key_is_plan(&entry->data.key));
	if (revived)
		LWLockRelease(&entry->header.lock);
	dshash_release_lock(pgStatLocal.shared_hash, hent);
	ins->result = CREATE_DONE;
}

/* Is there a live entry under this key? */
static bool
live_in_hash(const PgStat_HashKey *hkey)
{
	PgStatShared_HashEntry *hent;
	bool		live;

	hent = dshash_find(pgStatLocal.shared_hash, hkey, false);
	if (hent == NULL)
		return false;
	live = !hent->dropped;
	dshash_release_lock(pgStatLocal.shared_hash, hent);
	return live;
}

/*
 * Insert an entry as asked, never failing for want of shared memory:
 * CREATE_REFUSED then, or CREATE_EXISTS if the statement has an entry
 * already (the memory was for a new one).  Unless CREATE_DONE, the rare
 * chunk is freed and the text left to the caller.
 */
static PgsqCreateResult
insert_guarded(EntryInsert *ins)
{
	ins->body = InvalidDsaPointer;
	if (!pgsq_shared_alloc(PGSQ_AREA_STATS, insert_entry, ins))
		ins->result = CREATE_REFUSED;
	if (ins->result == CREATE_REFUSED && live_in_hash(&ins->hkey))
		ins->result = CREATE_EXISTS;
	if (DsaPointerIsValid(ins->body))
		dsa_free(pgStatLocal.dsa, ins->body);
	if (ins->result != CREATE_DONE)
		pgsq_rare_discard(ins->rare);
	return ins->result;
}

/*
 * Create a statement's entry, holding its first counts if given and its
 * text if valid (a chunk from pgsq_text_prepare, which becomes the entry's
 * only if CREATE_DONE), without taking a reference to it, so that this
 * backend has nothing to collect when the entry is dropped, and a drop
 * frees it at once unless another backend references it.  usage is its
 * clock-sweep usage count (eviction.c).  A dropped entry still in the hash
 * (some backend references it) is given a new life.  The caller accounts
 * for the new entry (eviction.c).  Out of shared memory, the result is
 * CREATE_REFUSED, never an error.
 */
PgsqCreateResult
pgsq_create_unreferenced(const PgsqKey *key, uint64 objid,
						 const PgsqCounters *first, uint32 usage,
						 dsa_pointer text)
{
	EntryInsert ins = {0};

	ins.hkey = pgsq_shared_hash_key(PGSQ_KEY_DBOID, objid);
	ins.key = key;
	ins.first = first;
	ins.text = text;

	ins.usage = usage;

	/* rare counts get their chunk before any lock is taken */
	if (first != NULL && first->has_rare)
	{
		ins.rare = pgsq_rare_prepare(&first->rare);
		if (!DsaPointerIsValid(ins.rare))
			return CREATE_REFUSED;
	}
	return insert_guarded(&ins);
}

/* What create_ref is asked for, and what it got */
typedef struct RefRequest
{
	Oid			dboid;
	uint64		objid;
	PgStat_EntryRef *entry_ref;
	bool		created;
} RefRequest;

/* Get a reference to an entry, created if missing (pgsq_shared_alloc) */
static void
create_ref(void *arg)
{
	RefRequest *req = (RefRequest *) arg;

	req->entry_ref = pgstat_get_entry_ref(PGSQ_STATS_KIND, req->dboid,
										  req->objid, true, &req->created);
}

/*
 * A reference to an entry, which the statistics system creates if missing
 * (*created then set), or NULL if shared memory is out, never an error.
 * Only for orphans (below): reviving one allocates nothing, so the pause
 * after a failed allocation (guard.c) need not hold it back.
 */
static PgStat_EntryRef *
create_referenced(Oid dboid, uint64 objid, bool *created)
{
	RefRequest	req = {dboid, objid, NULL, false};

	*created = false;
	if (!pgsq_shared_alloc_unpaused(create_ref, &req))
		return NULL;
	*created = req.created;
	return req.entry_ref;
}

/*
 * Close an entry to be dropped, its lock held exclusively: free its rare
 * counters, and take its text (which closes it to texts, see pg_stat_queries.h) for
 * the caller to discard once the lock is released.
 */
dsa_pointer
pgsq_close_entry(PgsqSharedEntry *entry)
{
	Assert(LWLockHeldByMeInMode(&entry->header.lock, LW_EXCLUSIVE));
	pgsq_rare_release(entry);
	return pgsq_text_take(entry);
}

/*
 * Entries this backend dropped so far, its own references to them released:
 * a reference remembered before is stale once this count moved (merge.c).
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
	EntryInsert ins = {0};
	PgStatShared_HashEntry *hent;
	PgsqSharedEntry *entry;
	PgsqCounters counts;
	dsa_pointer spare_rare = InvalidDsaPointer;

	ins.hkey = pgsq_shared_hash_key(PGSQ_KEY_DBOID, pgsq_objid(&data->key));
	ins.key = &data->key;
	ins.saved = data;
	ins.text = text;

	/* rare counts get their chunk before any lock is taken */
	if (rare != NULL)
	{
		ins.rare = pgsq_rare_prepare(rare);
		if (!DsaPointerIsValid(ins.rare))
		{
			pgsq_text_discard(text);
			return false;
		}
	}
	switch (insert_guarded(&ins))
	{
		case CREATE_DONE:
			return true;
		case CREATE_EXISTS:
			break;
		case CREATE_REFUSED:
			pgsq_text_discard(text);
			return false;
	}

	/* there already: add the saved counts to it */
	memset(&counts, 0, sizeof(counts));
	counts.main = data->counters;
	counts.has_rare = rare != NULL;
	if (rare != NULL)
		counts.rare = *rare;
	if (!pgsq_rare_spare_for(NULL, &counts, &spare_rare))
	{
		pgsq_text_discard(text);
		return false;
	}
	entry = pgsq_lock_statement_entry(&data->key, LW_EXCLUSIVE, &hent);
	if (entry != NULL)
	{
		(void) pgsq_merge_locked(entry, &data->key, &counts, &spare_rare);
		if (DsaPointerIsValid(text) &&
			pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_NONE)
		{
			pgsq_text_give_locked(entry, text);
			text = InvalidDsaPointer;
		}
		pgsq_unlock_statement_entry(entry, hent);
	}
	pgsq_rare_discard(spare_rare);
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

/*
 * Is this a dropped entry of ours that no backend references?  Its unowned
 * references (revive_dropped_entry) are given up here: the caller holds the
 * partition lock exclusively, and no backend is left.
 */
static bool
is_orphan(PgStatShared_HashEntry *hent)
{
	PgsqSharedEntry *entry;

	if (hent->key.kind != PGSQ_STATS_KIND || !hent->dropped)
		return false;
	entry = dsa_get_address(pgStatLocal.dsa, hent->body);
	if (entry->unowned_refs > 0 &&
		pg_atomic_read_u32(&hent->refcount) == entry->unowned_refs)
	{
		pg_atomic_sub_fetch_u32(&hent->refcount, entry->unowned_refs);
		entry->unowned_refs = 0;
	}
	return pg_atomic_read_u32(&hent->refcount) == 0;
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

		(void) create_referenced(orphans[i].dboid, orphans[i].objid,
								 &created);
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
		dshash_seq_init(&hstat, pgStatLocal.shared_hash, true);
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
 * if nowait and the lock was not available, or if shared memory is out for
 * the entry's first rare counters: the counts then stay with the caller.
 */
bool
pgsq_merge_into_entry(PgsqSharedEntry *entry, const PgsqKey *key,
					  const PgsqCounters *counters, TimestampTz counted_for,
					  bool nowait)
{
	int64		calls_before;
	dsa_pointer spare_rare;

	/* a chunk for first rare counts, allocated before the lock is taken */
	if (!pgsq_rare_spare_for(entry, counters, &spare_rare))
		return false;
	if (nowait)
	{
		if (!LWLockConditionalAcquire(&entry->header.lock, LW_EXCLUSIVE))
		{
			pgsq_rare_discard(spare_rare);
			return false;
		}
	}
	else
		LWLockAcquire(&entry->header.lock, LW_EXCLUSIVE);
	if (pgsq_other_life(counted_for, entry->data.stats_since) ||
		pgsq_text_closed(entry))
	{
		/* another life of the entry, or one being dropped */
		LWLockRelease(&entry->header.lock);
		pgsq_rare_discard(spare_rare);
		return true;
	}
	calls_before = pgsq_merge_locked(entry, key, counters, &spare_rare);
	LWLockRelease(&entry->header.lock);
	pgsq_rare_discard(spare_rare);

	pgsq_touch_entry(entry, counters->main.exec.calls, calls_before);
	return true;
}


/*-------------------------------------------------------------------------
 * The number of our entries, and its bound.
 *
 * Creating an entry reserves room for it first, so that the table never
 * holds more than max plus 5% entries; eviction and resets take entries
 * off the count, and a sweep pass that scanned the whole hash sets it
 * exactly (eviction.c).  Until the first pass after startup has counted
 * what was restored, the count is "unknown": a value far above any bound.
 *
 * Apart from that running count, which includes room reserved for entries
 * about to be made, the number of live entries of each class, statements
 * and plans, is kept exactly, for pg_stat_queries_info and the sweep's
 * class bounds: an entry becomes live in one place (the entry's linking or
 * revival above) and stops being live where its closer drops it (the sweep,
 * a reset).  Reading it costs one atomic read, where counting would walk
 * the statistics system's whole hash on every call of a view that exporters
 * poll.
 *-------------------------------------------------------------------------
 */

/* Hard bound on the table: max plus this percentage */
#define PGSQ_OVERSHOOT_PCT 5

/* The count before the first pass after startup has counted the entries */
#define PGSQ_COUNT_UNKNOWN (PG_INT64_MAX / 4)

PgsqEntryCounts *pgsq_entry_counts = NULL;

/* The entries the table is for: max statements, and max_plans plans */
uint64
pgsq_table_size(void)
{
	return (uint64) pgsq_max + (uint64) pgsq_max_plans;
}

/* The hard bound on the number of entries, statements' and plans' */
uint64
pgsq_entry_bound(void)
{
	return pgsq_table_size() * (100 + PGSQ_OVERSHOOT_PCT) / 100;
}

/* The hard bound on the number of plans' entries, or of statements' */
uint64
pgsq_class_bound(bool plans)
{
	return (uint64) (plans ? pgsq_max_plans : pgsq_max) *
		(100 + PGSQ_OVERSHOOT_PCT) / 100;
}

/*
 * Live entries of plans, or of statements, exactly: each class has a count
 * of its own (one taken from the other, each read at another moment, could
 * be off by the entries added or dropped in between)
 */
uint64
pgsq_live_of_class(bool plans)
{
	return pg_atomic_read_u64(plans ? &pgsq_entry_counts->live_plans :
							  &pgsq_entry_counts->live_statements);
}

/* Is this count known, rather than waiting for the first pass? */
bool
pgsq_entry_count_known(uint64 count)
{
	return count < PGSQ_COUNT_UNKNOWN / 2;
}

/* Bytes of shared memory for the count */
Size
pgsq_entry_count_shmem_size(void)
{
	return CACHELINEALIGN(sizeof(PgsqEntryCounts));
}

/* Create or find the count (caller holds AddinShmemInitLock) */
void
pgsq_entry_count_shmem_startup(void)
{
	bool		found;

	pgsq_entry_counts = ShmemInitStruct("pg_stat_queries entry count",
										sizeof(PgsqEntryCounts), &found);
	if (found)
		return;
	/* entries restored from disk are counted by the first pass */
	pg_atomic_init_u64(&pgsq_entry_counts->num_entries, PGSQ_COUNT_UNKNOWN);
	pg_atomic_init_u64(&pgsq_entry_counts->created_entries, 0);
	pg_atomic_init_u64(&pgsq_entry_counts->live_statements, 0);
	pg_atomic_init_u64(&pgsq_entry_counts->live_plans, 0);
	pg_atomic_init_u64(&pgsq_entry_counts->plans_untracked, 0);
	pg_atomic_init_u64(&pgsq_entry_counts->claimed[0], 0);
	pg_atomic_init_u64(&pgsq_entry_counts->claimed[1], 0);
}

/* The number of entries: approximate, or unknown (pgsq_entry_count_known) */
uint64
pgsq_entry_count(void)
{
	return pg_atomic_read_u64(&pgsq_entry_counts->num_entries);
}

/* Set the count, as a pass that scanned every entry found it */
void
pgsq_set_entry_count(uint64 count)
{
	pg_atomic_write_u64(&pgsq_entry_counts->num_entries, count);
}

/* Entries created so far, by any backend */
uint64
pgsq_created_entries(void)
{
	return pg_atomic_read_u64(&pgsq_entry_counts->created_entries);
}

/*
 * Reserve room for an entry a backend is about to create, and say whether
 * there is any.  Backends check for room before, but several may pass that
 * check at once: the count is raised only while it is below the bound, so
 * the table never holds more entries than that, not even for a moment.  The
 * caller then either creates the entry and has it swept (pgsq_entry_created)
 * or gives the room back (pgsq_entry_not_created).
 */
/* Give back the room of an entry of a class (never below zero) */
static void
release_claim(bool plan)
{
	pg_atomic_uint64 *claimed = &pgsq_entry_counts->claimed[plan ? 1 : 0];
	uint64		old = pg_atomic_read_u64(claimed);

	Assert(old > 0);
	while (!pg_atomic_compare_exchange_u64(claimed, &old,
										   old > 0 ? old - 1 : 0))
		;
}

/*
 * Reserve room for an entry a backend is about to create, and say whether
 * there is any.  Backends check for room before, but several may pass that
 * check at once: the count is raised only while it is below the bound, so
 * the table never holds more entries than that, not even for a moment.  So
 * is the count of the entry's class (statements or plans, plan) first,
 * below the class's own bound.  The caller then either creates the entry
 * and has it swept (pgsq_entry_created) or gives the room back
 * (pgsq_entry_not_created).
 */
bool
pgsq_reserve_entry(bool plan)
{
	pg_atomic_uint64 *claimed = &pgsq_entry_counts->claimed[plan ? 1 : 0];
	uint64		class_bound = pgsq_class_bound(plan);
	uint64		count;

	count = pg_atomic_read_u64(claimed);
	do
	{
		if (count >= class_bound)
			return false;
	} while (!pg_atomic_compare_exchange_u64(claimed, &count, count + 1));

	/* first: a pass that recounts meanwhile errs high, never low */
	pg_atomic_add_fetch_u64(&pgsq_entry_counts->created_entries, 1);
	count = pg_atomic_read_u64(&pgsq_entry_counts->num_entries);
	do
	{
		if (count >= pgsq_entry_bound() && pgsq_entry_count_known(count))
		{
			release_claim(plan);
			return false;
		}
	} while (!pg_atomic_compare_exchange_u64(&pgsq_entry_counts->num_entries, &count,
											 count + 1));
	return true;
}

/* An entry was created in the room reserved for it: it goes into the ring */
void
pgsq_entry_created(uint64 objid)
{
	pgsq_ring_push(objid);
}

/*
 * An entry restored at startup (savefile.c), created without room reserved:
 * the bound does not refuse what was saved, the sweep brings the count back
 * within max.  Counted like a creation, and put in the ring.
 */
void
pgsq_entry_restored(uint64 objid, bool plan)
{
	pg_atomic_add_fetch_u64(&pgsq_entry_counts->claimed[plan ? 1 : 0], 1);
	pg_atomic_add_fetch_u64(&pgsq_entry_counts->created_entries, 1);
	pg_atomic_add_fetch_u64(&pgsq_entry_counts->num_entries, 1);
	pgsq_ring_push(objid);
}

/* No entry was created in the room reserved: give it back */
void
pgsq_entry_not_created(bool plan)
{
	release_claim(plan);
	pgsq_entries_removed(1);
}

/* Note that a reset or eviction dropped entries; never below zero */
void
pgsq_entries_removed(int64 count)
{
	uint64		old = pg_atomic_read_u64(&pgsq_entry_counts->num_entries);

	while (!pg_atomic_compare_exchange_u64(&pgsq_entry_counts->num_entries, &old,
										   old > (uint64) count ? old - count : 0))
		;
}

/* An entry became live (linked or revived, above); plan: a plan's */
void
pgsq_live_entry_added(bool plan)
{
	pg_atomic_add_fetch_u64(plan ? &pgsq_entry_counts->live_plans :
							&pgsq_entry_counts->live_statements, 1);
}

/* A live entry was dropped by the backend that closed it */
void
pgsq_live_entry_dropped(bool plan)
{
	pg_atomic_uint64 *of_class = plan ? &pgsq_entry_counts->live_plans :
		&pgsq_entry_counts->live_statements;

	Assert(pg_atomic_read_u64(of_class) > 0);
	pg_atomic_sub_fetch_u64(of_class, 1);
	release_claim(plan);
	pgsq_shared_room_freed();
}

/* The number of live plans' entries, exactly */
uint64
pgsq_live_plans(void)
{
	return pg_atomic_read_u64(&pgsq_entry_counts->live_plans);
}

/* Plan executions found no room for the plan's new entry */
void
pgsq_plan_untracked(uint64 executions)
{
	pg_atomic_add_fetch_u64(&pgsq_entry_counts->plans_untracked, executions);
}

/* Plan executions that found no room for their plan's entry */
uint64
pgsq_plans_untracked(void)
{
	return pg_atomic_read_u64(&pgsq_entry_counts->plans_untracked);
}

/* A full reset: no plan execution found no room since */
void
pgsq_plans_untracked_reset(void)
{
	pg_atomic_write_u64(&pgsq_entry_counts->plans_untracked, 0);
}


/*-------------------------------------------------------------------------
 * The ring of our entries' ids: the hand of the clock sweep.
 *
 * The sweep (eviction.c) takes ids from it and visits their entries;
 * creating an entry adds its id.  See docs/design.md ("Eviction: the clock
 * sweep").
 *-------------------------------------------------------------------------
 */

/* The ring holds this many times the bound at startup, at least its minimum */
#define PGSQ_RING_PER_ENTRY 2
#define PGSQ_RING_MIN 4096

/*
 * The ring of our entries' object ids, in shared memory: the hand of the
 * clock.  Creating an entry adds its id; the sweep takes ids from the other
 * end, visits their entries and adds back those that survive, so a pass of
 * the ring visits our entries only, each with one lookup, instead of a scan
 * of the statistics system's whole hash (every kind's entries, every
 * partition lock).  Any backend may add (a compare-and-exchange reserves a
 * position, the slot's seq says when it is written); only the backend
 * running a sweep slice takes (eviction.c).  Ids of entries dropped meanwhile are
 * skipped when taken.  An id that does not fit (the ring is full, as when
 * max was raised far above its value at startup) makes the ring incomplete:
 * passes scan the whole hash again, and the next one that starts refills
 * the ring.
 */
typedef struct RingSlot
{
	pg_atomic_uint64 seq;		/* position + 1 once objid is written */
	uint64		objid;
} RingSlot;

typedef struct SweepRing
{
	pg_atomic_uint64 head;		/* next position to write */
	pg_atomic_uint64 tail;		/* next position to take */
	pg_atomic_uint32 complete;	/* every live entry has its id in the ring */
	uint32		capacity;		/* slots, set once by the postmaster */
} SweepRing;

static SweepRing *ring = NULL;
static RingSlot *ring_slots = NULL;

/* The ring's size as the postmaster reserved it (0 elsewhere) */
static uint32 ring_capacity_reserved = 0;

/*
 * Ids the ring holds: sized once, from max at server start.  Shared memory
 * is reserved once, and max may change at reload: the postmaster keeps the
 * size it reserved for later startups after a crash, and other processes
 * read the size from shared memory.
 */
static uint32
ring_capacity(uint64 bound)
{
	uint64		wanted = bound * PGSQ_RING_PER_ENTRY;

	if (ring_capacity_reserved == 0)
		ring_capacity_reserved = (uint32) Min(Max(wanted, PGSQ_RING_MIN),
											  PG_UINT32_MAX / 2);
	return ring_capacity_reserved;
}

/* Bytes of shared memory for the ring, for a bound on the entries */
Size
pgsq_ring_shmem_size(uint64 bound)
{
	/* each structure starts on a cache line of its own */
	return add_size(CACHELINEALIGN(sizeof(SweepRing)),
					CACHELINEALIGN(mul_size(ring_capacity(bound), sizeof(RingSlot))));
}

/* Create or find the ring (caller holds AddinShmemInitLock) */
void
pgsq_ring_shmem_startup(uint64 bound)
{
	bool		found;

	ring = ShmemInitStruct("pg_stat_queries sweep ring", sizeof(SweepRing),
						   &found);
	if (!found)
	{
		pg_atomic_init_u64(&ring->head, 0);
		pg_atomic_init_u64(&ring->tail, 0);
		/* entries restored from disk are not in it: the first pass scans */
		pg_atomic_init_u32(&ring->complete, 0);
		ring->capacity = ring_capacity(bound);
	}
	ring_slots = ShmemInitStruct("pg_stat_queries sweep ring slots",
								 mul_size(ring->capacity, sizeof(RingSlot)),
								 &found);
	if (!found)
	{
		for (uint32 i = 0; i < ring->capacity; i++)
		{
			pg_atomic_init_u64(&ring_slots[i].seq, 0);
			ring_slots[i].objid = 0;
		}
	}
}

/*
 * Add an entry's id to the ring; if it is full, mark the ring incomplete.
 * Any backend; never waits.
 */
void
pgsq_ring_push(uint64 objid)
{
	uint64		head = pg_atomic_read_u64(&ring->head);
	RingSlot   *slot;

	do
	{
		/* the tail read may be old: it errs towards "full" */
		if (head - pg_atomic_read_u64(&ring->tail) >= ring->capacity)
		{
			pg_atomic_write_u32(&ring->complete, 0);
			return;
		}
	} while (!pg_atomic_compare_exchange_u64(&ring->head, &head, head + 1));

#ifdef USE_INJECTION_POINTS

	/*
	 * test/t/023_ring_stall.pl: a writer stalled between reserving and
	 * writing; only where it holds no lock (interrupts are not held), so that
	 * the wait holds nobody else up
	 */
	if (INTERRUPTS_CAN_BE_PROCESSED())
		INJECTION_POINT("pg-stat-queries-ring-reserved", NULL);
#endif

	slot = &ring_slots[head % ring->capacity];
	slot->objid = objid;
	pg_write_barrier();
	pg_atomic_write_u64(&slot->seq, head + 1);
}

/*
 * Take the oldest id from the ring, if it is there and written.  Only the
 * backend holding sweep->sweeping.
 */
bool
pgsq_ring_take(uint64 *objid)
{
	uint64		tail = pg_atomic_read_u64(&ring->tail);
	RingSlot   *slot = &ring_slots[tail % ring->capacity];

	if (tail == pg_atomic_read_u64(&ring->head) ||
		pg_atomic_read_u64(&slot->seq) != tail + 1)
		return false;			/* empty, or a writer is about to finish */
	pg_read_barrier();
	*objid = slot->objid;
	/* the slot may be written again once the tail has passed it */
	pg_memory_barrier();
	pg_atomic_write_u64(&ring->tail, tail + 1);
	return true;
}

/*
 * Forget the ids in the ring, up to the first position reserved by a
 * writer that has not written it yet; the sweep refills it.  Were the tail
 * moved past such a position, a writer one lap later could reserve the
 * same slot, and the first writer's late store would leave there a
 * sequence number that no take ever accepts: eviction would stop for good.
 * Only the sweeper.
 */
void
pgsq_ring_clear(void)
{
	uint64		head = pg_atomic_read_u64(&ring->head);
	uint64		tail = pg_atomic_read_u64(&ring->tail);

	while (tail < head &&
		   pg_atomic_read_u64(&ring_slots[tail % ring->capacity].seq) == tail + 1)
		tail++;
	pg_memory_barrier();
	pg_atomic_write_u64(&ring->tail, tail);
	pg_atomic_write_u32(&ring->complete, 1);
}

/* Position of the next id to write */
uint64
pgsq_ring_head(void)
{
	return pg_atomic_read_u64(&ring->head);
}

/* Position of the next id to take */
uint64
pgsq_ring_tail(void)
{
	return pg_atomic_read_u64(&ring->tail);
}

/* Has every live entry its id in the ring? */
bool
pgsq_ring_complete(void)
{
	return pg_atomic_read_u32(&ring->complete) != 0;
}
