/*-------------------------------------------------------------------------
 *
 * scan.c
 *		Reading and resetting all entries, for the SQL functions.
 *
 * Scans take the shared hash's partition locks shared, one at a time, and
 * each entry's lock while it is copied or changed; executing queries never
 * wait for a whole scan.  Texts of dropped entries are removed after every
 * partition lock is released (see the locking rules in docs/design.md).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "eviction.h"
#include "lib/dshash.h"
#include "qtext.h"
#include "scan.h"
#include "store.h"
#include "utils/timestamp.h"

/*
 * Copy the data of every initialized entry changed at or after since (all
 * of them for 0) into a palloc'd array.  Partition locks are taken shared,
 * one at a time, and each entry's lock shared while it is checked and
 * copied; nothing else is done under them.
 */
int
pgsq_collect_entries(PgsqEntryData **entries, TimestampTz since)
{
	dshash_seq_status hstat;
	PgsqSharedEntry *entry;
	int			n = 0;
	int			size = 256;
	PgsqEntryData *result = palloc(size * sizeof(PgsqEntryData));

	dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
	while ((entry = pgsq_scan_next_entry(&hstat)) != NULL)
	{
		bool		wanted;

		if (n == size)
		{
			size *= 2;
			result = repalloc_huge(result, size * sizeof(PgsqEntryData));
		}
		LWLockAcquire(&entry->header.lock, LW_SHARED);
		wanted = entry->data.stats_since != 0 &&
			entry->data.changed_at >= since;
		if (wanted)
			result[n] = entry->data;
		LWLockRelease(&entry->header.lock);
		if (wanted)
			n++;
	}
	dshash_seq_term(&hstat);

	*entries = result;
	return n;
}

/*
 * Copy one statement's entry data into *data; false if it has no
 * initialized entry.  The partition lock is held shared while the entry
 * lock is taken, as in a scan.
 */
bool
pgsq_fetch_entry(const PgsqKey *key, PgsqEntryData *data)
{
	PgStat_HashKey hkey = pgsq_shared_hash_key(PGSQ_KEY_DBOID,
											   pgsq_objid(key));
	PgStatShared_HashEntry *hent;
	PgsqSharedEntry *entry;
	bool		found = false;

	hent = dshash_find(pgStatLocal.shared_hash, &hkey, false);
	if (hent == NULL)
		return false;
	entry = pgsq_shared_entry_of(hent);
	if (entry != NULL)
	{
		LWLockAcquire(&entry->header.lock, LW_SHARED);
		if (entry->data.stats_since != 0 &&
			pgsq_key_equals(&entry->data.key, key))
		{
			*data = entry->data;
			found = true;
		}
		LWLockRelease(&entry->header.lock);
	}
	dshash_release_lock(pgStatLocal.shared_hash, hent);
	return found;
}

/* Count our entries, initialized or not, one partition at a time */
int64
pgsq_count_entries(void)
{
	dshash_seq_status hstat;
	int64		n = 0;

	dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
	while (pgsq_scan_next_entry(&hstat) != NULL)
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
		while ((entry = pgsq_scan_next_entry(&hstat)) != NULL)
		{
			LWLockAcquire(&entry->header.lock, LW_EXCLUSIVE);
			if (entry->data.stats_since != 0 &&
				filter_matches(filter, &entry->data))
			{
				for (int phase = 0; phase < PGSQ_NUM_PHASES; phase++)
				{
					PgsqTiming *t = PGSQ_TIMING(&entry->data.counters, phase);

					t->min_time = 0;
					t->max_time = 0;
					entry->data.minmax_valid[phase] = false;
				}
				memset(&entry->data.counters.exec_hist, 0,
					   sizeof(entry->data.counters.exec_hist));
				entry->data.minmax_stats_since = now;
				entry->data.changed_at = GetCurrentTimestamp();
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
		pgsq_local_drops++;
		pgstat_drop_matching_entries(drop_matching, PointerGetDatum(&state));
		pgstat_request_entry_refs_gc();
		pgsq_entries_removed(state.count);
		pg_atomic_add_fetch_u64(&pgsq_state->resets_done, 1);

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
