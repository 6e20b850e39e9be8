/*-------------------------------------------------------------------------
 *
 * entries.c
 *		Shared entries: their life in our table, their number and bound,
 *		and the ring the clock sweep turns.
 *
 * How an entry is keyed, found, created, merged into, closed and dropped
 * (the table it lives in is table.c's); the running count kept within the
 * bound and the exact count of live entries; the ring of our entries that
 * the clock sweep (eviction.c) turns.
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
 * Our entries: how one is keyed, found, created, closed and dropped.
 *
 * Entries live in our own table (table.c), each in a slot that is never
 * freed, with its lock; a backend keeps a pointer to the slot and the
 * generation it found there, and the generation tells whether the slot
 * still holds that entry.  See docs/design.md for the design and the
 * locking rules.
 *-------------------------------------------------------------------------
 */

/*
 * Our table identifies an entry by a 64-bit object id folding the whole
 * statement key -- database, user, queryid, toplevel, plan -- together.
 * queryid is already a hash, so mixing in the rest keeps collisions as
 * unlikely as between two queryids.  The full key is kept in the entry and
 * checked on every merge.
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

/*
 * The entry of a statement, found in the table: returned with its lock
 * held in mode, or NULL.  Release with pgsq_unlock_statement_entry.
 */
PgsqSharedEntry *
pgsq_lock_statement_entry(const PgsqKey *key, LWLockMode mode)
{
	uint32		generation;
	PgsqSharedEntry *entry = pgsq_table_find(pgsq_objid(key), &generation);

	if (entry == NULL)
		return NULL;
	LWLockAcquire(&entry->lock, mode);
	if (pgsq_entry_is(entry, generation) &&
		pgsq_key_equals(&entry->data.key, key))
		return entry;
	LWLockRelease(&entry->lock);
	return NULL;
}

/* Release what pgsq_lock_statement_entry returned */
void
pgsq_unlock_statement_entry(PgsqSharedEntry *entry)
{
	LWLockRelease(&entry->lock);
}

/*
 * Give the statement's entry, looked up again in the table, its text
 * unless it has one; the text is discarded if not given.
 */
bool
pgsq_text_give_by_key(const PgsqKey *key, dsa_pointer text)
{
	PgsqSharedEntry *entry;
	bool		given = false;

	if (!DsaPointerIsValid(text))
		return false;
	entry = pgsq_lock_statement_entry(key, LW_EXCLUSIVE);
	if (entry != NULL)
	{
		given = pgsq_text_give_if_none(entry, text);
		pgsq_unlock_statement_entry(entry);
	}
	if (!given)
		pgsq_text_discard(text);
	return given;
}

/*
 * Give the entry of the statement key, found by the caller, its text unless
 * it has one, or was closed; otherwise the text is discarded.  The slot may
 * hold another entry by now, or one being made (not yet live, filled
 * without its lock): only a live entry of the same key takes the text.  The
 * time is read under the entry lock: a reader of changed texts that did not
 * see this one released the lock before.  Returns true if the text was
 * given.
 */
bool
pgsq_entry_give_text(PgsqSharedEntry *entry, const PgsqKey *key, dsa_pointer text)
{
	bool		given = false;

	if (!DsaPointerIsValid(text))
		return false;
	LWLockAcquire(&entry->lock, LW_EXCLUSIVE);
	if (pgsq_slot_live(entry) && pgsq_key_equals(&entry->data.key, key))
		given = pgsq_text_give_if_none(entry, text);
	LWLockRelease(&entry->lock);
	if (!given)
		pgsq_text_discard(text);
	return given;
}

/* What insert_entry is asked to create, and what it did */
typedef struct EntryInsert
{
	uint64		objid;
	/* for a new entry: */
	const PgsqKey *key;
	const PgsqCounters *first;	/* its first counts, or NULL */
	const PgsqEntryData *saved; /* or its saved data, or NULL */
	dsa_pointer rare;			/* its rare chunk, or InvalidDsaPointer */
	dsa_pointer text;			/* its text, or InvalidDsaPointer */
	uint32		usage;
	/* the outcome: */
	PgsqCreateResult result;
	PgsqSharedEntry *entry;		/* if CREATE_DONE, */
	uint32		generation;		/* in this generation */
} EntryInsert;

/*
 * Insert an entry into the table and fill it, or tell why not: the one
 * insertion of the table (table.c), under the partition lock alone, held
 * exclusively.  Nobody can find the entry before it is linked, so its own
 * lock is not needed; whoever kept a pointer to its slot from an older
 * generation sees the generation change.  Run through pgsq_shared_alloc:
 * the partition may need a batch of slots, or longer chains, from the
 * area; an error there leaves nothing half-made.  The rare chunk and text
 * become the entry's only if CREATE_DONE.
 */
static void
insert_entry(void *arg)
{
	EntryInsert *ins = (EntryInsert *) arg;
	int			part = pgsq_table_partition(ins->objid);
	PgsqSharedEntry *entry;

	pgsq_table_lock(part, LW_EXCLUSIVE);
	if (pgsq_table_lookup_locked(part, ins->objid) != NULL)
	{
		ins->result = CREATE_EXISTS;
		pgsq_table_unlock(part);
		return;
	}
	entry = pgsq_table_new_slot(part);
	if (entry == NULL)
	{
		/* our area is at its limit */
		ins->result = CREATE_REFUSED;
		pgsq_table_unlock(part);
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
		 * time is earlier.  The clock, not the statement's start time: nested
		 * statements of one long statement may create the same entry again
		 * after a reset or eviction, and stats_since tells the lives apart
		 * (pending.c).
		 */
		TimestampTz now = GetCurrentTimestamp();

		pgsq_start_data(&entry->data, ins->key, now);
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
	ins->generation = pgsq_table_link(part, entry, ins->objid);
	ins->entry = entry;
	pgsq_table_unlock(part);
	ins->result = CREATE_DONE;
}

/* Is there a live entry under this object id? */
static bool
live_in_table(uint64 objid)
{
	uint32		generation;

	return pgsq_table_find(objid, &generation) != NULL;
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
	if (!pgsq_shared_alloc(PGSQ_AREA_ENTRIES, insert_entry, ins))
		ins->result = CREATE_REFUSED;
	if (ins->result == CREATE_REFUSED && live_in_table(ins->objid))
		ins->result = CREATE_EXISTS;
	if (ins->result != CREATE_DONE)
		pgsq_rare_discard(ins->rare);
	return ins->result;
}

/*
 * Create a statement's entry, holding its first counts if given and its
 * text if valid (a chunk from pgsq_text_prepare, which becomes the entry's
 * only if CREATE_DONE).  usage is its clock-sweep usage count
 * (eviction.c).  The caller accounts for the new entry (eviction.c).  Out
 * of shared memory, the result is CREATE_REFUSED, never an error.  If
 * CREATE_DONE and entry is not NULL, *entry and *generation are the new
 * entry's.
 */
PgsqCreateResult
pgsq_create_entry(const PgsqKey *key, uint64 objid,
				  const PgsqCounters *first, uint32 usage,
				  dsa_pointer text, PgsqSharedEntry **entry,
				  uint32 *generation)
{
	EntryInsert ins = {0};

	ins.objid = objid;
	ins.key = key;
	ins.first = first;
	ins.usage = usage;
	ins.text = text;

	/* rare counts get their chunk before any lock is taken */
	if (first != NULL && first->has_rare)
	{
		ins.rare = pgsq_rare_prepare(&first->rare);
		if (!DsaPointerIsValid(ins.rare))
			return CREATE_REFUSED;
	}
	(void) insert_guarded(&ins);
	if (ins.result == CREATE_DONE && entry != NULL)
	{
		*entry = ins.entry;
		*generation = ins.generation;
	}
	return ins.result;
}

/*
 * Close an entry to be dropped, its lock held exclusively: free its rare
 * counters, and take its text (which closes it to texts, see
 * pg_stat_queries.h) for the caller to discard once the lock is released.
 */
static dsa_pointer
close_entry(PgsqSharedEntry *entry)
{
	Assert(LWLockHeldByMeInMode(&entry->lock, LW_EXCLUSIVE));
	pgsq_rare_release(entry);
	return pgsq_text_take(entry);
}

/*
 * Drop an entry, its partition and its own lock held exclusively: close it,
 * unlink it (its slot is free from then on) and count it dropped.  Returns
 * its text, for the caller to discard once it holds no lock.
 */
dsa_pointer
pgsq_drop_locked(int part, PgsqSharedEntry *entry)
{
	dsa_pointer text = close_entry(entry);

	pgsq_live_entry_dropped(pgsq_key_is_plan(&entry->data.key));
	pgsq_table_unlink(part, entry);
	return text;
}

/*
 * Evict the entry found in a slot in a generation, unless it is no longer
 * there, is in use (locked: being merged into), or was used since (usage
 * above zero): under its partition lock and its own, both exclusive, the one
 * drop of the sweep.  Returns whether it was evicted.
 */
bool
pgsq_evict_entry(PgsqSharedEntry *entry, uint32 generation)
{
	int			part;
	dsa_pointer taken = InvalidDsaPointer;
	bool		evicted = false;

	if (!pgsq_entry_is(entry, generation))
		return false;
	part = pgsq_table_partition(entry->objid);
	pgsq_table_lock(part, LW_EXCLUSIVE);
	if (pgsq_entry_is(entry, generation) &&
		LWLockConditionalAcquire(&entry->lock, LW_EXCLUSIVE))
	{
		if (pg_atomic_read_u32(&entry->usage) == 0)
		{
			taken = pgsq_drop_locked(part, entry);
			evicted = true;
		}
		LWLockRelease(&entry->lock);
	}
	pgsq_table_unlock(part);
	pgsq_text_discard(taken);
	return evicted;
}

/*
 * Put back a statement saved across a clean shutdown (savefile.c): its
 * counters, rare counters (or NULL) and text (or InvalidDsaPointer, else a
 * chunk from pgsq_text_prepare with its time set, now the entry's or
 * discarded).  Normally the entry is new; should it exist (a background
 * worker ran the statement before the restore), the saved counts are
 * merged into it.  A new entry is accounted for here, as restored.
 * Returns true if a new entry was created; false if it was merged, or not
 * restored (out of memory, a colliding key).
 */
bool
pgsq_restore_entry(const PgsqEntryData *data, const PgsqRareCounters *rare,
				   dsa_pointer text)
{
	EntryInsert ins = {0};
	PgsqSharedEntry *entry;
	PgsqCounters counts;
	dsa_pointer spare_rare = InvalidDsaPointer;

	ins.objid = pgsq_objid(&data->key);
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
			pgsq_entry_restored(ins.entry, ins.generation,
								pgsq_key_is_plan(&data->key));
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
	entry = pgsq_lock_statement_entry(&data->key, LW_EXCLUSIVE);
	if (entry != NULL)
	{
		(void) pgsq_merge_locked(entry, &data->key, &counts, &spare_rare);
		if (DsaPointerIsValid(text) &&
			pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_NONE)
		{
			pgsq_text_give_locked(entry, text);
			text = InvalidDsaPointer;
		}
		pgsq_unlock_statement_entry(entry);
	}
	pgsq_rare_discard(spare_rare);
	pgsq_text_discard(text);
	return false;
}

/*
 * Merge counters of a statement into its shared entry, under the entry
 * lock, unless they were counted for another life of it (counted_for, its
 * stats_since then; 0 if unknown): then they are discarded.  Returns false
 * if nowait and the lock was not available, or if shared memory is out for
 * the entry's first rare counters: the counts then stay with the caller.
 */
bool
pgsq_merge_into_entry(PgsqSharedEntry *entry, uint32 generation,
					  const PgsqKey *key, const PgsqCounters *counters,
					  TimestampTz counted_for, bool nowait)
{
	int64		calls_before;
	dsa_pointer spare_rare;

	/* a chunk for first rare counts, allocated before the lock is taken */
	if (!pgsq_rare_spare_for(entry, counters, &spare_rare))
		return false;
	if (nowait)
	{
		if (!LWLockConditionalAcquire(&entry->lock, LW_EXCLUSIVE))
		{
			pgsq_rare_discard(spare_rare);
			return false;
		}
	}
	else
		LWLockAcquire(&entry->lock, LW_EXCLUSIVE);
	if (!pgsq_entry_is(entry, generation) ||
		pgsq_other_life(counted_for, entry->data.stats_since) ||
		pgsq_text_closed(entry))
	{
		/* dropped, another life of the entry, or one being dropped */
		LWLockRelease(&entry->lock);
		pgsq_rare_discard(spare_rare);
		return true;
	}
	calls_before = pgsq_merge_locked(entry, key, counters, &spare_rare);
	LWLockRelease(&entry->lock);
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
 * class bounds: an entry becomes live in one place (its insertion above)
 * and stops being live in one (its drop, by the sweep or a reset).  Reading
 * it costs one atomic read, where counting would walk the whole table on
 * every call of a view that exporters poll.
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
pgsq_entry_created(PgsqSharedEntry *entry, uint32 generation)
{
	pgsq_ring_push(entry->self, generation);
}

/*
 * An entry restored at startup (savefile.c), created without room reserved:
 * the bound does not refuse what was saved, the sweep brings the count back
 * within max.  Counted like a creation, and put in the ring.
 */
void
pgsq_entry_restored(PgsqSharedEntry *entry, uint32 generation, bool plan)
{
	pg_atomic_add_fetch_u64(&pgsq_entry_counts->claimed[plan ? 1 : 0], 1);
	pg_atomic_add_fetch_u64(&pgsq_entry_counts->created_entries, 1);
	pg_atomic_add_fetch_u64(&pgsq_entry_counts->num_entries, 1);
	pgsq_ring_push(entry->self, generation);
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
 * The ring of our entries: the hand of the clock sweep.
 *
 * The sweep (eviction.c) takes entries from it and visits them; creating
 * an entry adds it.  See docs/design.md ("Eviction: the clock
 * sweep").
 *-------------------------------------------------------------------------
 */

/* The ring holds this many times the bound at startup, at least its minimum */
#define PGSQ_RING_PER_ENTRY 2
#define PGSQ_RING_MIN 4096

/*
 * The ring of our entries, each as its slot and the generation it was
 * added in, in shared memory: the hand of the clock.  Creating an entry
 * adds it; the sweep takes entries from the other end, visits them and
 * adds back those that survive, so a pass of the ring visits entries
 * without any lock and without a scan of the table.  Any backend may add
 * (a compare-and-exchange reserves a position, the position's seq says
 * when it is written); only the backend running a sweep slice takes
 * (eviction.c).  Entries dropped meanwhile (their slot's generation moved
 * on) are skipped when taken.  An entry that does not fit (the ring is
 * full, as when max was raised far above its value at startup) makes the
 * ring incomplete: passes scan the whole table again, and the next one that
 * starts refills the ring.
 */
typedef struct RingSlot
{
	pg_atomic_uint64 seq;		/* position + 1 once entry is written */
	dsa_pointer entry;			/* the slot of an entry (table.c) */
	uint32		generation;		/* and the generation it was pushed in */
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
			ring_slots[i].entry = InvalidDsaPointer;
		}
	}
}

/*
 * Add an entry's id to the ring; if it is full, mark the ring incomplete.
 * Any backend; never waits.
 */
void
pgsq_ring_push(dsa_pointer entry, uint32 generation)
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
	slot->entry = entry;
	slot->generation = generation;
	pg_write_barrier();
	pg_atomic_write_u64(&slot->seq, head + 1);
}

/*
 * Take the oldest id from the ring, if it is there and written.  Only the
 * backend holding sweep->sweeping.
 */
bool
pgsq_ring_take(dsa_pointer *entry, uint32 *generation)
{
	uint64		tail = pg_atomic_read_u64(&ring->tail);
	RingSlot   *slot = &ring_slots[tail % ring->capacity];

	if (tail == pg_atomic_read_u64(&ring->head) ||
		pg_atomic_read_u64(&slot->seq) != tail + 1)
		return false;			/* empty, or a writer is about to finish */
	pg_read_barrier();
	*entry = slot->entry;
	*generation = slot->generation;
	/* the slot may be written again once the tail has passed it */
	pg_memory_barrier();
	pg_atomic_write_u64(&ring->tail, tail + 1);
	return true;
}

/*
 * Forget the entries in the ring, up to the first position reserved by a
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
