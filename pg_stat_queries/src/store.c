/*-------------------------------------------------------------------------
 *
 * store.c
 *		The shared store of statement statistics.
 *
 * Entries are a custom kind of PostgreSQL's cumulative statistics system
 * (pgstat_register_kind): they live in its partitioned shared hash (a
 * dshash), each with an LWLock in its header.  Backends keep a local cache
 * of references to entries, so looking up a known statement touches no
 * shared memory at all, and they accumulate counters in local pending data
 * (pending.c) that is merged into the entry in batches.
 *
 * Locking rules
 * -------------
 * - A dshash partition lock (pgstat's) protects the set of entries in that
 *   partition: creating an entry takes one partition lock exclusively,
 *   dropping one likewise, scanning takes them shared one partition at a
 *   time.  No code here holds two partition locks at once.
 * - An entry's LWLock (header.lock) protects its PgsqEntryData.  Flushing
 *   pending counters takes it exclusively, with nowait while a backend is
 *   busy, and so does the first execution of an entry its creator merges at
 *   once; readers take it shared.  It may be taken while holding the
 *   entry's partition lock, never the other way around.
 * - has_text and usage are atomics, written without the entry lock.
 * - Query texts are in a separate hash (qtext.c) with partition locks of
 *   its own.  We never take a text lock while holding any pgstat lock, so
 *   the two hashes cannot deadlock: resets collect the dropped keys first
 *   and remove their texts after releasing pgstat's locks.
 * - pgsq_state->lock protects stats_reset only; the other counters of
 *   pgsq_state are atomics.
 * - The sweep's victim queue (eviction.c) is read and written only by the
 *   backend holding pgsq_state->sweeping, a flag taken with compare-and-
 *   exchange and released after a write barrier; never waited for.
 * - No file I/O happens under any of these locks; the text file is written
 *   by the checkpointer at shutdown and read by the startup process, when
 *   no query runs.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_stat_queries.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "lib/dshash.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

PgsqSharedState *pgsq_state = NULL;

static void pgsq_init_backend_cb(void);
static bool pgsq_flush_static_cb(bool nowait);

/* Our kind of cumulative statistics; write_to_file follows .save */
PgStat_KindInfo pgsq_kind_info = {
	.name = "pg_stat_queries",
	.fixed_amount = false,
	.accessed_across_databases = true,
	.write_to_file = true,
	.shared_size = sizeof(PgsqSharedEntry),
	.shared_data_off = offsetof(PgsqSharedEntry, data),
	.shared_data_len = sizeof(((PgsqSharedEntry *) 0)->data),
	.pending_size = sizeof(PgsqPending),
	.flush_pending_cb = pgsq_flush_pending_cb,
	.flush_static_cb = pgsq_flush_static_cb,
	.init_backend_cb = pgsq_init_backend_cb,
};

/* pgstat_drop_matching_entries callback: ours, keyed by a database */
static bool
keyed_by_database(PgStatShared_HashEntry *hent, Datum arg)
{
	int64	   *count = (int64 *) DatumGetPointer(arg);

	if (hent->key.kind != PGSQ_STATS_KIND ||
		hent->key.dboid == PGSQ_KEY_DBOID)
		return false;
	(*count)++;
	return true;
}

/*
 * Once after the statistics system restored its file, check what came back:
 * entries keyed by their database were written by an earlier version, whose
 * keys nothing looks up any more, and would show next to the new entries of
 * the same statements; and texts whose entries were not restored (the file
 * was damaged) would hold memory that nothing frees.
 */
static void
check_restored(void)
{
	int64		dropped = 0;

	pgstat_drop_matching_entries(keyed_by_database, PointerGetDatum(&dropped));
	if (dropped > 0)
	{
		pgsq_entries_removed(dropped);
		ereport(LOG,
				(errmsg("pg_stat_queries discarded " INT64_FORMAT " statement entries saved by an earlier version",
						dropped)));
	}
	pgsq_qtext_drop_orphans();
}

/*
 * Per-backend setup done by the statistics system (all process types).  The
 * first client backend checks the restored statistics: client backends
 * start after the startup process restored them, on a primary as on a hot
 * standby, and before any statement is tracked.
 */
static void
pgsq_init_backend_cb(void)
{
	pgsq_qtext_init_backend();
	if (MyBackendType == B_BACKEND && pgsq_state != NULL &&
		pg_atomic_read_u32(&pgsq_state->restore_unchecked) != 0 &&
		pg_atomic_exchange_u32(&pgsq_state->restore_unchecked, 0) != 0)
		check_restored();
}

/*
 * Executions this backend refused since it last added them to the shared
 * count, and the full reset they date from.  Counting each one in shared
 * memory would write a line every backend reads, on a path a table at its
 * bound takes for every statement it cannot track.
 */
static uint64 refused_here = 0;
static uint64 refused_here_since_reset = 0;

/* Count an execution refused because the table is at its bound */
static void
count_refused(void)
{
	uint64		full_resets = pg_atomic_read_u64(&pgsq_state->full_resets);

	if (refused_here > 0 && refused_here_since_reset != full_resets)
		refused_here = 0;		/* a full reset came since: it zeroed these */
	refused_here_since_reset = full_resets;
	refused_here++;
	/* have the statistics system call pgsq_flush_static_cb */
	pgstat_report_fixed = true;
}

/* Add this backend's refused executions to the shared count */
void
pgsq_flush_refused(void)
{
	if (refused_here == 0)
		return;
	if (refused_here_since_reset == pg_atomic_read_u64(&pgsq_state->full_resets))
		pg_atomic_add_fetch_u64(&pgsq_state->refused, refused_here);
	refused_here = 0;
}

/*
 * Called by every flush of fixed statistics (when a backend goes idle, at
 * most once a second, and at exit).  The checkpointer's last one comes
 * right before it writes the statistics file at shutdown: the moment to
 * free orphaned entries (see eviction.c).
 */
static bool
pgsq_flush_static_cb(bool nowait)
{
	(void) nowait;
	if (pgsq_state != NULL)
		pgsq_flush_refused();
	if (MyBackendType == B_CHECKPOINTER && proc_exit_inprogress)
		pgsq_free_all_orphans();
	return false;
}

/* Reserve our fixed shared memory; called from shmem_request_hook */
void
pgsq_shmem_request(void)
{
	RequestAddinShmemSpace(add_size(pgsq_qtext_shmem_size(),
									pgsq_eviction_shmem_size()));
	RequestNamedLWLockTranche("pg_stat_queries", 1);
}

/* Create or find our fixed shared memory; called from shmem_startup_hook */
void
pgsq_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	pgsq_state = ShmemInitStruct("pg_stat_queries", pgsq_qtext_shmem_size(),
								 &found);
	if (!found)
	{
		pgsq_state->lock = &(GetNamedLWLockTranche("pg_stat_queries"))->lock;
		pgsq_state->stats_reset = GetCurrentTimestamp();
		pg_atomic_init_u64(&pgsq_state->dealloc, 0);
		pg_atomic_init_u64(&pgsq_state->evicted_entries, 0);
		pg_atomic_init_u64(&pgsq_state->texts_missing, 0);
		pg_atomic_init_u64(&pgsq_state->text_bytes, 0);
		pg_atomic_init_u64(&pgsq_state->last_eviction_time, 0);
		pg_atomic_init_u64(&pgsq_state->reset_count, 0);
		pg_atomic_init_u64(&pgsq_state->full_resets, 0);
		pg_atomic_init_u32(&pgsq_state->restore_unchecked, 1);
		pgsq_eviction_init(pgsq_state);
	}
	pgsq_qtext_shmem_init(pgsq_state, found);
	pgsq_eviction_shmem_startup();
	LWLockRelease(AddinShmemInitLock);
}

/* Is the library loaded through shared_preload_libraries? */
bool
pgsq_store_ready(void)
{
	return pgsq_state != NULL;
}

/* Error out from SQL functions when the library was not preloaded */
void
pgsq_require_store(void)
{
	if (!pgsq_store_ready())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_stat_queries must be loaded via \"shared_preload_libraries\"")));
}

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

/*
 * The statement whose entry this backend created last at parse analysis,
 * until it first executes.  The entry is created without a reference from
 * this backend, and that first execution is merged straight into it, whose
 * lock nobody else wants yet and whose lines are still in this CPU's cache:
 * a statement run only once then costs no pending data, no reference to
 * collect after its eviction and no merge into an entry gone cold.
 */
static struct
{
	bool		valid;
	bool		text_stored;	/* its text was stored at parse analysis */
	uint64		objid;
}			fresh_entry;

/* Remember the entry this backend just created at parse analysis */
static void
remember_fresh_entry(uint64 objid)
{
	fresh_entry.valid = true;
	fresh_entry.text_stored = false;
	fresh_entry.objid = objid;
}

/* Did this backend create the statement's entry and not run it since? */
bool
pgsq_is_fresh_entry(const PgsqKey *key)
{
	return fresh_entry.valid && fresh_entry.objid == pgsq_objid(key);
}

/* Note that the fresh entry's text is stored, for its first execution */
void
pgsq_fresh_entry_text_stored(void)
{
	fresh_entry.text_stored = true;
}

/* The key in pgstat's shared hash of one of our entries */
PgStat_HashKey
pgsq_shared_hash_key(Oid dbid, uint64 objid)
{
	PgStat_HashKey hkey;

	memset(&hkey, 0, sizeof(hkey));	/* no padding today, but hashed whole */
	hkey.kind = PGSQ_STATS_KIND;
	hkey.dboid = dbid;
	hkey.objid = objid;
	return hkey;
}

/*
 * Merge the first execution of the fresh entry into it, looked up in the
 * shared hash and held by its partition lock (shared) instead of by a
 * reference.  Returns false if it is not the fresh entry or if the entry
 * was dropped since: the caller then records the execution as usual.
 * *text_stored says whether parse analysis stored the entry's text.
 */
bool
pgsq_merge_fresh(const PgsqKey *key, const PgsqCounters *counters,
				 bool *text_stored)
{
	PgStat_HashKey hkey;
	PgStatShared_HashEntry *hent;
	bool		merged = false;

	if (!pgsq_is_fresh_entry(key))
		return false;
	fresh_entry.valid = false;
	*text_stored = fresh_entry.text_stored;
	hkey = pgsq_shared_hash_key(PGSQ_KEY_DBOID, fresh_entry.objid);
	hent = dshash_find(pgStatLocal.shared_hash, &hkey, false);
	if (hent == NULL)
		return false;
	if (pgsq_is_live_entry(hent))
	{
		PgsqSharedEntry *entry = pgsq_shared_entry_of(hent);
		int64		calls_before;

		LWLockAcquire(&entry->header.lock, LW_EXCLUSIVE);
		calls_before = pgsq_merge_locked(entry, key, counters);
		LWLockRelease(&entry->header.lock);
		if (fresh_entry.text_stored)
			pg_atomic_write_u32(&entry->has_text, 1);
		pgsq_entry_used(entry);
		pgsq_touch_entry(entry, counters->calls[PGSQ_EXEC], calls_before);
		merged = true;
	}
	dshash_release_lock(pgStatLocal.shared_hash, hent);
	return merged;
}

/*
 * Give a new (or reused dropped) entry its key and start time, so it can be
 * found and evicted, and start its hints afresh.
 */
static void
start_entry(PgsqSharedEntry *entry, const PgsqKey *key)
{
	PgsqEntryData *data = &entry->data;

	pg_atomic_write_u32(&entry->has_text, 0);
	pg_atomic_write_u32(&entry->usage, 0);
	pg_atomic_write_u32(&entry->swept_pass, 0);

	LWLockAcquire(&entry->header.lock, LW_EXCLUSIVE);
	if (data->stats_since == 0)
	{
		data->key = *key;
		/* the statement's start time: already known, no clock read */
		data->stats_since = GetCurrentStatementStartTimestamp();
		data->minmax_stats_since = data->stats_since;
	}
	LWLockRelease(&entry->header.lock);
}

/* Outcome of creating an entry without a reference */
typedef enum CreateResult
{
	CREATE_DONE,
	CREATE_EXISTS,				/* another backend was faster */
	CREATE_REFUSED,				/* the table is at its bound, or no memory */
	CREATE_DROPPED,				/* a dropped entry is in the way */
} CreateResult;

/*
 * Create a statement's entry without taking a reference to it, so that this
 * backend has nothing to collect when the entry is dropped, and a drop frees
 * it at once unless another backend references it.  A dropped entry still
 * in the hash (some backend references it) can only be reused by the
 * statistics system itself: the caller then creates the entry with a
 * reference.
 */
static CreateResult
create_unreferenced(const PgsqKey *key, uint64 objid)
{
	PgStat_HashKey hkey = pgsq_shared_hash_key(PGSQ_KEY_DBOID, objid);
	PgStatShared_HashEntry *hent;
	PgsqSharedEntry *entry;
	bool		found;

	hent = dshash_find_or_insert(pgStatLocal.shared_hash, &hkey, &found);
	if (!found)
	{
		entry = (PgsqSharedEntry *) pgstat_init_entry(PGSQ_STATS_KIND, hent);
		if (entry == NULL)
		{
			/* pgstat's area is out of memory: do not fail the query */
			dshash_delete_entry(pgStatLocal.shared_hash, hent);
			return CREATE_REFUSED;
		}
	}
	else
	{
		bool		dropped = hent->dropped;

		dshash_release_lock(pgStatLocal.shared_hash, hent);
		return dropped ? CREATE_DROPPED : CREATE_EXISTS;
	}

	start_entry(entry, key);
	dshash_release_lock(pgStatLocal.shared_hash, hent);

	if (!pgsq_entry_created())
	{
		(void) pgsq_drop_entry(PGSQ_KEY_DBOID, objid);
		return CREATE_REFUSED;
	}
	return CREATE_DONE;
}

/*
 * Give a newly created entry its key, so it can be found and evicted.
 * Returns false, having dropped the entry again (and released entry_ref),
 * if it would take the table past its bound.
 */
static bool
init_new_entry(PgStat_EntryRef *entry_ref, const PgsqKey *key)
{
	PgsqSharedEntry *entry = (PgsqSharedEntry *) entry_ref->shared_stats;

	if (!pgsq_entry_created())
	{
		/* this releases our reference too, and its pending data */
		PgStat_HashKey hkey = entry_ref->shared_entry->key;

		(void) pgsq_drop_entry(hkey.dboid, hkey.objid);
		return false;
	}

	start_entry(entry, key);
	return true;
}

/*
 * Ask every backend to collect references to dropped entries, at most once
 * per PGSQ_GC_REQUEST_INTERVAL_MS from this backend: each request makes
 * every backend scan all of its references, and under eviction churn many
 * backends find stale references at once.  The sweep makes requests of its
 * own at the same rate or at the end of each pass, so stale references are
 * often collected before this interval runs out.
 */
static bool
request_gc_if_due(void)
{
	static TimestampTz last_request = 0;
	TimestampTz now = GetCurrentStatementStartTimestamp();

	if (!TimestampDifferenceExceeds(last_request, now,
									PGSQ_GC_REQUEST_INTERVAL_MS))
		return false;
	last_request = now;
	pgstat_request_entry_refs_gc();
	return true;
}

/*
 * Statements this backend found without an entry while the table was at its
 * bound, each with the number of entries created so far at that moment.
 * Until another entry is created anywhere, such a statement still has none,
 * and a refused execution needs no lookup in the shared hash (which a miss
 * costs, and with it an insertion and removal in the local cache).  A small
 * direct-mapped table: a statement pushed out is merely looked up again.
 */
#define PGSQ_ABSENT_MEMO_SIZE 256

typedef struct AbsentMemo
{
	uint64		objid;
	uint64		created_plus_one;	/* created_entries + 1; 0: empty slot */
} AbsentMemo;

static AbsentMemo absent_memo[PGSQ_ABSENT_MEMO_SIZE];

/* Is this statement known to have no entry, as no entry was created since? */
static inline bool
known_absent(uint64 objid)
{
	AbsentMemo *memo = &absent_memo[objid % PGSQ_ABSENT_MEMO_SIZE];

	return memo->objid == objid &&
		memo->created_plus_one ==
		pg_atomic_read_u64(&pgsq_state->created_entries) + 1;
}

/* Does this statement have an entry?  Remembers the answer "no" */
static bool
entry_exists(uint64 objid)
{
	AbsentMemo *memo = &absent_memo[objid % PGSQ_ABSENT_MEMO_SIZE];
	uint64		created;

	if (known_absent(objid))
		return false;

	/*
	 * Read the count before looking: an entry is counted only after it is in
	 * the hash, so one this lookup misses changes the count we remember.
	 */
	created = pg_atomic_read_u64(&pgsq_state->created_entries);
	if (pgstat_get_entry_ref(PGSQ_STATS_KIND, PGSQ_KEY_DBOID, objid, false,
							 NULL) != NULL)
		return true;
	memo->objid = objid;
	memo->created_plus_one = created + 1;
	return false;
}

/*
 * The reference with pending data this backend used last, so that a
 * statement run again and again skips even the local hash lookup.  Pending
 * data keeps a reference from being collected, and the statistics system
 * frees it only after our flush callback ran for it or when this backend
 * drops entries; each of those forgets the reference kept here.
 */
static struct
{
	bool		valid;
	PgsqKey		key;
	PgStat_EntryRef *entry_ref;
}			last_pending;

/* Forget the last reference with pending data, if it is this one (or NULL) */
void
pgsq_forget_pending_ref(const PgStat_EntryRef *entry_ref)
{
	if (entry_ref == NULL || entry_ref == last_pending.entry_ref)
		last_pending.valid = false;
}

/*
 * Drop an entry from this backend.  The drop releases our reference and
 * frees its pending data, so the remembered reference is forgotten first.
 * Returns false if other backends still hold references to the entry.
 */
bool
pgsq_drop_entry(Oid dboid, uint64 objid)
{
	pgsq_forget_pending_ref(NULL);
	return pgstat_drop_entry_ext(PGSQ_STATS_KIND, dboid, objid, true);
}

/* Is this the statement whose reference with pending data was used last? */
static inline bool
is_last_pending(const PgsqKey *key)
{
	return last_pending.valid && pgsq_key_equals(&last_pending.key, key);
}

/* Remember a reference with pending data as the last one used */
static inline PgStat_EntryRef *
remember_pending_ref(const PgsqKey *key, PgStat_EntryRef *entry_ref)
{
	Assert(entry_ref->pending != NULL);
	last_pending.valid = true;
	last_pending.key = *key;
	last_pending.entry_ref = entry_ref;
	return entry_ref;
}

/*
 * A live reference found for a statement: remembered if it has pending
 * data, so that at parse analysis too the execution that follows finds it
 * without a lookup.
 */
static inline PgStat_EntryRef *
found_entry_ref(const PgsqKey *key, PgStat_EntryRef *entry_ref)
{
	return entry_ref->pending != NULL ?
		remember_pending_ref(key, entry_ref) : entry_ref;
}

/*
 * This backend's reference to a statement's entry, created if needed, with
 * pending data allocated if asked; at parse analysis (at_parse) a missing
 * entry is created without a reference and NULL is returned (see
 * create_unreferenced).  A cached reference may point to an entry
 * that a reset or eviction dropped; the statistics system keeps such a
 * reference while it has pending data, so counts would keep going to the
 * dropped entry.  Discard that data (it belongs to the dropped past), have
 * the reference collected, and look again to find or create a live entry.
 *
 * If the reference cannot be collected right now (see request_gc_if_due)
 * and the caller passed "stale", set *stale and return NULL: the caller
 * keeps its counts aside until the reference is gone (pending.c).  With
 * stale == NULL, collection is requested unconditionally.  NULL without
 * *stale means the table is at its bound: the execution is refused.
 */
static PgStat_EntryRef *
entry_ref_internal(const PgsqKey *key, bool with_pending, bool at_parse,
				   bool *stale)
{
	uint64		objid;
	PgStat_EntryRef *parse_ref = NULL;
	bool		looked_up = false;

	if (stale != NULL)
		*stale = false;

	/* the statement run last by this backend, most likely run again */
	if (is_last_pending(key) &&
		likely(!last_pending.entry_ref->shared_entry->dropped))
		return last_pending.entry_ref;
	objid = pgsq_objid(key);

	/*
	 * A statement this backend has pending data for has a live entry unless
	 * eviction or a reset dropped it: one local lookup, no look at the fill.
	 */
	if (with_pending && !known_absent(objid))
	{
		PgStat_EntryRef *entry_ref;

		entry_ref = pgstat_fetch_pending_entry(PGSQ_STATS_KIND, PGSQ_KEY_DBOID,
											   objid);
		if (entry_ref != NULL && likely(!entry_ref->shared_entry->dropped))
			return remember_pending_ref(key, entry_ref);
	}

	/*
	 * At parse analysis, a statement this backend references needs no look
	 * at the fill either, whose counter every new entry and eviction writes:
	 * one local lookup, whose miss the creation below reuses.
	 */
	if (at_parse)
	{
		parse_ref = pgstat_get_entry_ref(PGSQ_STATS_KIND, PGSQ_KEY_DBOID, objid,
										 false, NULL);
		if (parse_ref != NULL && likely(!parse_ref->shared_entry->dropped))
			return found_entry_ref(key, parse_ref);
		looked_up = true;
	}

	/* at the bound, only statements that have an entry are counted */
	if (unlikely(!pgsq_room_for_new_entry(!key->toplevel)) &&
		(at_parse ? parse_ref == NULL : !entry_exists(objid)))
	{
		count_refused();
		return NULL;
	}

	for (;;)
	{
		PgStat_EntryRef *entry_ref;
		bool		created;

		if (with_pending)
			entry_ref = pgstat_prep_pending_entry(PGSQ_STATS_KIND, PGSQ_KEY_DBOID,
												  objid, &created);
		else
		{
			entry_ref = NULL;
			created = false;
			if (at_parse)
			{
				entry_ref = looked_up ? parse_ref :
					pgstat_get_entry_ref(PGSQ_STATS_KIND, PGSQ_KEY_DBOID, objid,
										 false, NULL);
				looked_up = false;
				if (entry_ref == NULL)
				{
					switch (create_unreferenced(key, objid))
					{
						case CREATE_DONE:
							remember_fresh_entry(objid);
							return NULL;
						case CREATE_REFUSED:
							count_refused();
							return NULL;
						case CREATE_EXISTS:
							continue;
						case CREATE_DROPPED:
							break;
					}
				}
			}
			if (entry_ref == NULL)
				entry_ref = pgstat_get_entry_ref(PGSQ_STATS_KIND, PGSQ_KEY_DBOID,
												 objid, true, &created);
		}
		if (created && !init_new_entry(entry_ref, key))
		{
			/* others filled the table first: refused */
			count_refused();
			return NULL;
		}
		if (created && at_parse)
			remember_fresh_entry(objid);
		if (likely(!entry_ref->shared_entry->dropped))
			return found_entry_ref(key, entry_ref);

		if (entry_ref->pending != NULL)
		{
			pgsq_forget_pending_ref(entry_ref);
			pgstat_delete_pending_entry(entry_ref);
		}
		if (stale == NULL)
			pgstat_request_entry_refs_gc();
		else if (!request_gc_if_due())
		{
			*stale = true;
			return NULL;
		}
	}
}

/*
 * This backend's reference to a statement's entry, created if needed, with
 * pending data allocated if asked; see entry_ref_internal.
 */
PgStat_EntryRef *
pgsq_entry_ref(const PgsqKey *key, bool with_pending, bool *stale)
{
	return entry_ref_internal(key, with_pending, false, stale);
}

/*
 * At parse analysis: this backend's reference to a statement's existing
 * entry, or NULL.  A missing entry is created without a reference (then
 * pgsq_is_fresh_entry is true and NULL is returned); see entry_ref_internal
 * for *stale.
 */
PgStat_EntryRef *
pgsq_parse_entry_ref(const PgsqKey *key, bool *stale)
{
	return entry_ref_internal(key, false, true, stale);
}

/* Merge one phase's timing summary with Chan et al.'s parallel algorithm */
static void
merge_phase(PgsqEntryData *dst, const PgsqCounters *src, int phase)
{
	int64		n_a = dst->counters.calls[phase];
	int64		n_b = src->calls[phase];
	double		n = (double) (n_a + n_b);
	PgsqCounters *d = &dst->counters;

	if (n_b == 0)
		return;

	if (n_a == 0)
	{
		d->mean_time[phase] = src->mean_time[phase];
		d->sum_var_time[phase] = src->sum_var_time[phase];
	}
	else
	{
		double		delta = src->mean_time[phase] - d->mean_time[phase];

		d->mean_time[phase] += delta * n_b / n;
		d->sum_var_time[phase] += src->sum_var_time[phase] +
			delta * delta * ((double) n_a * n_b / n);
	}

	if (!dst->minmax_valid[phase])
	{
		d->min_time[phase] = src->min_time[phase];
		d->max_time[phase] = src->max_time[phase];
		dst->minmax_valid[phase] = true;
	}
	else
	{
		d->min_time[phase] = Min(d->min_time[phase], src->min_time[phase]);
		d->max_time[phase] = Max(d->max_time[phase], src->max_time[phase]);
	}

	d->calls[phase] += n_b;
	d->total_time[phase] += src->total_time[phase];
}

/* Add pending counters to an entry's data; caller holds the entry lock */
void
pgsq_merge_counters(PgsqEntryData *dst, const PgsqCounters *src)
{
	PgsqCounters *d = &dst->counters;

	for (int phase = 0; phase < PGSQ_NUM_PHASES; phase++)
		merge_phase(dst, src, phase);

	d->rows += src->rows;
	d->shared_blks_hit += src->shared_blks_hit;
	d->shared_blks_read += src->shared_blks_read;
	d->shared_blks_dirtied += src->shared_blks_dirtied;
	d->shared_blks_written += src->shared_blks_written;
	d->local_blks_hit += src->local_blks_hit;
	d->local_blks_read += src->local_blks_read;
	d->local_blks_dirtied += src->local_blks_dirtied;
	d->local_blks_written += src->local_blks_written;
	d->temp_blks_read += src->temp_blks_read;
	d->temp_blks_written += src->temp_blks_written;
	d->shared_blk_read_time += src->shared_blk_read_time;
	d->shared_blk_write_time += src->shared_blk_write_time;
	d->local_blk_read_time += src->local_blk_read_time;
	d->local_blk_write_time += src->local_blk_write_time;
	d->temp_blk_read_time += src->temp_blk_read_time;
	d->temp_blk_write_time += src->temp_blk_write_time;
	d->wal_records += src->wal_records;
	d->wal_fpi += src->wal_fpi;
	d->wal_bytes += src->wal_bytes;
	d->wal_buffers_full += src->wal_buffers_full;
	d->jit_functions += src->jit_functions;
	d->jit_generation_time += src->jit_generation_time;
	d->jit_inlining_count += src->jit_inlining_count;
	d->jit_inlining_time += src->jit_inlining_time;
	d->jit_optimization_count += src->jit_optimization_count;
	d->jit_optimization_time += src->jit_optimization_time;
	d->jit_emission_count += src->jit_emission_count;
	d->jit_emission_time += src->jit_emission_time;
	d->jit_deform_count += src->jit_deform_count;
	d->jit_deform_time += src->jit_deform_time;
	d->parallel_workers_to_launch += src->parallel_workers_to_launch;
	d->parallel_workers_launched += src->parallel_workers_launched;
	d->last_executed = Max(d->last_executed, src->last_executed);
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

/* The next of our entries in a scan begun with dshash_seq_init, or NULL */
static PgsqSharedEntry *
scan_next_entry(dshash_seq_status *hstat)
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
 * Copy the data of every initialized entry into a palloc'd array.
 * Partition locks are taken shared, one at a time, and each entry's lock
 * shared while it is copied; nothing else is done under them.
 */
int
pgsq_collect_entries(PgsqEntryData **entries)
{
	dshash_seq_status hstat;
	PgsqSharedEntry *entry;
	int			n = 0;
	int			size = 256;
	PgsqEntryData *result = palloc(size * sizeof(PgsqEntryData));

	dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
	while ((entry = scan_next_entry(&hstat)) != NULL)
	{
		if (n == size)
		{
			size *= 2;
			result = repalloc_huge(result, size * sizeof(PgsqEntryData));
		}
		LWLockAcquire(&entry->header.lock, LW_SHARED);
		result[n] = entry->data;
		LWLockRelease(&entry->header.lock);
		if (result[n].stats_since != 0)
			n++;
	}
	dshash_seq_term(&hstat);

	*entries = result;
	return n;
}

/* Count our entries, initialized or not, one partition at a time */
int64
pgsq_count_entries(void)
{
	dshash_seq_status hstat;
	int64		n = 0;

	dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
	while (scan_next_entry(&hstat) != NULL)
		n++;
	dshash_seq_term(&hstat);
	return n;
}

/* Does an entry's key pass a reset filter? */
static bool
filter_matches(const PgsqResetFilter *filter, const PgsqEntryData *data)
{
	if (data->stats_since == 0)
	{
		/* not yet merged into, so its key is unknown: only a full reset */
		return filter->userid == InvalidOid && filter->dbid == InvalidOid &&
			filter->queryid == 0;
	}
	return (filter->userid == InvalidOid || filter->userid == data->key.userid) &&
		(filter->dbid == InvalidOid || filter->dbid == data->key.dbid) &&
		(filter->queryid == 0 || filter->queryid == data->key.queryid);
}

/* State passed to drop_matching through pgstat_drop_matching_entries */
typedef struct DropMatching
{
	const PgsqResetFilter *filter;
	List	   *dropped;		/* PgsqKey copies, for text removal */
	int64		count;			/* entries dropped */
} DropMatching;

/* pgstat_drop_matching_entries callback: pick our entries to drop */
static bool
drop_matching(PgStatShared_HashEntry *hent, Datum arg)
{
	DropMatching *state = (DropMatching *) DatumGetPointer(arg);
	PgsqSharedEntry *entry = pgsq_shared_entry_of(hent);

	if (entry == NULL || !filter_matches(state->filter, &entry->data))
		return false;
	state->count++;
	if (entry->data.stats_since != 0)
	{
		PgsqKey    *key = palloc(sizeof(PgsqKey));

		*key = entry->data.key;
		state->dropped = lappend(state->dropped, key);
	}
	return true;
}

/*
 * Reset entries that match the filter: drop them, or with minmax_only
 * clear their min/max times.  Executing queries never wait for the whole
 * reset: partitions are processed one at a time, and a backend whose
 * entry disappears simply creates a new one.
 */
TimestampTz
pgsq_reset_entries(const PgsqResetFilter *filter, bool minmax_only)
{
	TimestampTz now = GetCurrentTimestamp();
	bool		full = filter->userid == InvalidOid &&
		filter->dbid == InvalidOid && filter->queryid == 0;

	if (minmax_only)
	{
		dshash_seq_status hstat;
		PgsqSharedEntry *entry;

		dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
		while ((entry = scan_next_entry(&hstat)) != NULL)
		{
			LWLockAcquire(&entry->header.lock, LW_EXCLUSIVE);
			if (entry->data.stats_since != 0 &&
				filter_matches(filter, &entry->data))
			{
				for (int phase = 0; phase < PGSQ_NUM_PHASES; phase++)
				{
					entry->data.counters.min_time[phase] = 0;
					entry->data.counters.max_time[phase] = 0;
					entry->data.minmax_valid[phase] = false;
				}
				entry->data.minmax_stats_since = now;
			}
			LWLockRelease(&entry->header.lock);
		}
		dshash_seq_term(&hstat);
		return now;
	}
	else
	{
		DropMatching state = {filter, NIL, 0};
		ListCell   *lc;

		/* counts kept aside before this reset must not outlive it */
		pg_atomic_add_fetch_u64(&pgsq_state->reset_count, 1);
		if (full)
			pgsq_sweep_after_full_reset();
		pgsq_forget_pending_ref(NULL);
		pgstat_drop_matching_entries(drop_matching, PointerGetDatum(&state));
		pgstat_request_entry_refs_gc();
		pgsq_entries_removed(state.count);

		/* texts only now, with no pgstat lock held */
		if (full)
			pgsq_qtext_remove_all();
		else
		{
			foreach(lc, state.dropped)
				pgsq_qtext_remove((PgsqKey *) lfirst(lc));
		}
		list_free_deep(state.dropped);

		if (full)
		{
			LWLockAcquire(pgsq_state->lock, LW_EXCLUSIVE);
			pgsq_state->stats_reset = now;
			LWLockRelease(pgsq_state->lock);
			pg_atomic_write_u64(&pgsq_state->dealloc, 0);
			pg_atomic_write_u64(&pgsq_state->evicted_entries, 0);
			pg_atomic_write_u64(&pgsq_state->texts_missing, 0);
			pg_atomic_add_fetch_u64(&pgsq_state->full_resets, 1);
			pg_atomic_write_u64(&pgsq_state->refused, 0);
			pg_atomic_write_u64(&pgsq_state->last_eviction_time, 0);
		}
	}
	return now;
}
