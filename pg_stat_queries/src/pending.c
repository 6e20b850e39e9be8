/*-------------------------------------------------------------------------
 *
 * pending.c
 *		Backend-local pending counters and their flush into the shared store.
 *
 * Every execution adds to this backend's pending data for the statement,
 * in local memory, and pending data is merged into the shared entry in
 * batches: when the backend goes idle, about once a second inside a long
 * transaction, before it reads the view or resets, and at exit.  Counts of
 * a statement whose entry eviction dropped while this backend referenced it
 * are parked until the reference is collected.  docs/design.md ("Pending
 * counters and flushing", "References to evicted entries") has the details.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "counters.h"
#include "eviction.h"
#include "pending.h"
#include "qtext.h"
#include "refs.h"
#include "store.h"

#include "executor/instrument.h"
#include "jit/jit.h"
#include "utils/memutils.h"
#include "access/xact.h"
#include "storage/ipc.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

/* How often a busy backend merges its counters, in milliseconds */
#define PGSQ_BUSY_FLUSH_INTERVAL_MS 1000

/*
 * Keys of the statements that got pending data since the last flush pass.
 * The statistics system may flush and free pending data behind our back,
 * so entries here are only hints, looked up again before use.  A pass of
 * the statistics system over all pending data that flushed all of ours
 * leaves every key here stale: the list is emptied then (see
 * pgsq_pending_pass_done), so it holds no more keys than statements got
 * pending data since, and needs no compaction by lookups.
 */
typedef struct PendingKey
{
	uint64		objid;
} PendingKey;

static PendingKey *pending_keys = NULL;
static int	pending_count = 0;
static int	pending_size = 0;

/* Did some of our pending data stay unflushed in this pass? */
static bool pass_left_pending = false;

static TimestampTz last_own_flush = 0;

/* Counts of a statement whose entry reference is stale, kept aside */
typedef struct ParkedCounters
{
	PgsqKey		key;			/* hash key */
	PgsqCounters counters;
	uint64		reset_count;	/* pgsq_state->reset_count when parked */
} ParkedCounters;

static HTAB *parked = NULL;
static TimestampTz first_parked = 0;

static bool merge_into_entry(PgStat_EntryRef *entry_ref, const PgsqKey *key,
							 const PgsqCounters *counters, bool nowait);

/* Remember that a statement has pending data */
static void
remember_pending_key(uint64 objid)
{
	if (pending_count == pending_size)
	{
		pending_size = Max(64, pending_size * 2);
		if (pending_keys == NULL)
			pending_keys = MemoryContextAlloc(TopMemoryContext,
											  pending_size * sizeof(PendingKey));
		else
			pending_keys = repalloc(pending_keys,
									pending_size * sizeof(PendingKey));
	}
	pending_keys[pending_count].objid = objid;
	pending_count++;
}

/* The parked counters of a statement, created empty if it has none */
static PgsqCounters *
park(const PgsqKey *key)
{
	ParkedCounters *p;
	bool		found;

	if (parked == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(PgsqKey);
		ctl.entrysize = sizeof(ParkedCounters);
		ctl.hcxt = TopMemoryContext;
		parked = hash_create("pg_stat_queries parked counters", 64, &ctl,
							 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	if (hash_get_num_entries(parked) == 0)
		first_parked = GetCurrentStatementStartTimestamp();
	p = hash_search(parked, key, HASH_ENTER, &found);
	/* counts parked before a reset that dropped entries go with it */
	if (!found || p->reset_count != pg_atomic_read_u64(&pgsq_state->reset_count))
	{
		memset(&p->counters, 0, sizeof(p->counters));
		p->reset_count = pg_atomic_read_u64(&pgsq_state->reset_count);
	}
	return &p->counters;
}

/*
 * Set every parked count into its statement's entry: have stale references
 * collected, then find or create the entries.  Counts parked before a reset
 * that dropped entries are discarded, like pending data.  The text stored
 * when the counts were parked is removed again if no entry came of it.
 */
static void
unpark_all(void)
{
	HASH_SEQ_STATUS seq;
	ParkedCounters *p;
	uint64		reset_count = pg_atomic_read_u64(&pgsq_state->reset_count);

	if (parked == NULL || hash_get_num_entries(parked) == 0)
		return;
	pgstat_request_entry_refs_gc();
	hash_seq_init(&seq, parked);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		PgStat_EntryRef *entry_ref = NULL;

		if (p->reset_count == reset_count)
			entry_ref = pgsq_entry_ref(&p->key, false, NULL);
		if (entry_ref != NULL)
			(void) merge_into_entry(entry_ref, &p->key, &p->counters,
									false);
		else if (pgstat_get_entry_ref(PGSQ_STATS_KIND, PGSQ_KEY_DBOID,
									  pgsq_objid(&p->key), false, NULL) == NULL)
			pgsq_qtext_remove(&p->key);
		(void) hash_search(parked, &p->key, HASH_REMOVE, NULL);
	}
}

/* At backend exit, before the statistics system detaches: keep parked counts */
static void
unpark_at_exit(int code, Datum arg)
{
	(void) code;
	(void) arg;
	if (pgsq_store_ready())
		unpark_all();
}

/*
 * Record one planning or execution of a statement in local memory, and
 * return this backend's reference to its entry, or NULL if the statement has
 * no usable entry right now: then *parked_out tells whether the counts were
 * parked (else the table is full and the execution was refused).  Only the
 * first execution of a statement unknown to this backend looks at shared
 * memory, to find or create its entry; if this backend has just created
 * it, that execution is merged right away.
 *
 * *check_text_out says whether the caller should see to the entry's text
 * (also when NULL is returned for a fresh entry merged at once, whose text
 * parse analysis did not store).  Once per batch of pending counts is
 * enough: an entry left without text because the executed text contains
 * literals (see hooks.c) would otherwise have that text scanned again on
 * every execution.
 */
PgStat_EntryRef *
pgsq_record(const PgsqKey *key, PgsqPhase phase, double ms, uint64 rows,
			const BufferUsage *bufusage, const WalUsage *walusage,
			const JitInstrumentation *jitusage,
			int parallel_to_launch, int parallel_launched, bool *parked_out,
			bool *check_text_out)
{
	bool		stale;
	PgStat_EntryRef *entry_ref;
	PgsqPending *pending;
	PgsqSharedEntry *entry;

	/*
	 * The first execution of an entry this backend just created: merged at
	 * once.  Parse analysis stored its text if it had constants; if not, the
	 * text is the one that ran, and the caller stores it now.
	 */
	if (pgsq_is_fresh_entry(key))
	{
		PgsqCounters counters;
		bool		text_stored;

		memset(&counters, 0, sizeof(counters));
		pgsq_add_execution(&counters, phase, ms, rows, bufusage, walusage,
						   jitusage, parallel_to_launch, parallel_launched);
		if (pgsq_merge_fresh(key, &counters, &text_stored))
		{
			*parked_out = false;
			*check_text_out = !text_stored;
			return NULL;
		}
	}

	entry_ref = pgsq_entry_ref(key, true, &stale);
	*parked_out = stale;
	*check_text_out = false;
	if (entry_ref == NULL)
	{
		static bool exit_callback_registered = false;

		if (!stale)
			return NULL;		/* table full; counted as refused */
		if (!exit_callback_registered)
		{
			before_shmem_exit(unpark_at_exit, (Datum) 0);
			exit_callback_registered = true;
		}
		pgsq_add_execution(park(key), phase, ms, rows, bufusage, walusage,
						   jitusage, parallel_to_launch, parallel_launched);
		return NULL;
	}
	pending = (PgsqPending *) entry_ref->pending;
	if (!pending->listed)
	{
		pending->key = *key;
		pending->listed = true;
		remember_pending_key(entry_ref->shared_entry->key.objid);
	}
	pgsq_add_execution(&pending->counters, phase, ms, rows, bufusage, walusage,
					   jitusage, parallel_to_launch, parallel_launched);
	*check_text_out = !pending->text_checked;
	pending->text_checked = true;
	entry = (PgsqSharedEntry *) entry_ref->shared_stats;
	pgsq_entry_used(entry);
	return entry_ref;
}

/*
 * Was the statement's text looked after for its current pending counts?
 * Then parse analysis need not read the shared entry to check it again.
 */
bool
pgsq_pending_text_checked(const PgStat_EntryRef *entry_ref)
{
	return entry_ref->pending != NULL &&
		((const PgsqPending *) entry_ref->pending)->text_checked;
}

/*
 * Merge counters of a statement into its shared entry, under the entry
 * lock.  Returns false if nowait and the lock was not available.
 */
static bool
merge_into_entry(PgStat_EntryRef *entry_ref, const PgsqKey *key,
				 const PgsqCounters *counters, bool nowait)
{
	PgsqSharedEntry *entry = (PgsqSharedEntry *) entry_ref->shared_stats;
	int64		calls_before;

	if (!pgstat_lock_entry(entry_ref, nowait))
		return false;
	calls_before = pgsq_merge_locked(entry, key, counters);
	pgstat_unlock_entry(entry_ref);

	pgsq_touch_entry(entry, counters->calls[PGSQ_EXEC], calls_before);
	return true;
}

/*
 * Merge one statement's pending counters into its shared entry.  Returns
 * false if nowait and the entry lock was not available; the data then
 * stays pending for the next attempt.
 */
static bool
flush_one(PgStat_EntryRef *entry_ref, bool nowait)
{
	PgsqPending *pending = (PgsqPending *) entry_ref->pending;

	/* pending data is freed once this returns true */
	pgsq_forget_pending_ref(entry_ref);

	/* unless the entry was dropped by a reset or eviction, with these counts */
	if (entry_ref->shared_entry->dropped)
		return true;
	return merge_into_entry(entry_ref, &pending->key, &pending->counters,
							nowait);
}

/*
 * The statistics system's flush of one statement's pending counters, in its
 * pass over all pending data (nowait while the backend is busy).  Has it
 * call pgsq_pending_pass_done at the end of the pass.
 */
bool
pgsq_flush_pending_cb(PgStat_EntryRef *entry_ref, bool nowait)
{
	bool		done = flush_one(entry_ref, nowait);

	if (!done)
		pass_left_pending = true;
	pgstat_report_fixed = true;
	return done;
}

/*
 * At the end of each pass of the statistics system over pending data (from
 * its flush of fixed statistics, which follows the pass): if it flushed all
 * of ours, every listed key is stale.
 */
void
pgsq_pending_pass_done(void)
{
	if (!pass_left_pending)
		pending_count = 0;
	pass_left_pending = false;
}

/* Try to merge every listed statement's pending counters */
static void
flush_listed(bool nowait)
{
	int			kept = 0;

	for (int i = 0; i < pending_count; i++)
	{
		PgStat_EntryRef *entry_ref;

		entry_ref = pgstat_fetch_pending_entry(PGSQ_STATS_KIND,
											   PGSQ_KEY_DBOID,
											   pending_keys[i].objid);
		if (entry_ref == NULL)
			continue;			/* flushed or freed since it was listed */
		if (flush_one(entry_ref, nowait))
			pgstat_delete_pending_entry(entry_ref);
		else
			pending_keys[kept++] = pending_keys[i];
	}
	pending_count = kept;
}

/* Merge all of this backend's pending counters now, waiting for locks */
void
pgsq_flush_own_pending(void)
{
	unpark_all();
	flush_listed(false);
	last_own_flush = GetCurrentTimestamp();
}

/*
 * Set parked counts into their entries once they have waited long enough.
 * Inside a long transaction the statistics system does not flush; do it
 * ourselves about once a second, without waiting for any entry lock.
 * The statement start time is already known, so this costs no clock read.
 */
void
pgsq_maybe_flush_busy(void)
{
	TimestampTz now;

	if (unlikely(parked != NULL && hash_get_num_entries(parked) > 0) &&
		TimestampDifferenceExceeds(first_parked,
								   GetCurrentStatementStartTimestamp(),
								   PGSQ_GC_REQUEST_INTERVAL_MS))
		unpark_all();

	if (pending_count == 0 || !IsTransactionBlock())
		return;
	now = GetCurrentStatementStartTimestamp();
	if (!TimestampDifferenceExceeds(last_own_flush, now,
									PGSQ_BUSY_FLUSH_INTERVAL_MS))
		return;
	last_own_flush = now;
	flush_listed(true);
}
