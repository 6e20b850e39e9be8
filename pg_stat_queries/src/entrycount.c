/*-------------------------------------------------------------------------
 *
 * entrycount.c
 *		The number of our entries, and its bound.
 *
 * Creating an entry reserves room for it first, so that the table never
 * holds more than max plus 5% entries; eviction and resets take entries
 * off the count, and a sweep pass that scanned the whole hash sets it
 * exactly (eviction.c).  Until the first pass after startup has counted
 * what was restored, the count is "unknown": a value far above any bound.
 *
 * Apart from that running count, which includes room reserved for entries
 * about to be made, the number of live entries is kept exactly, for
 * pg_stat_queries_info: an entry becomes live in one place (store.c links
 * or revives it) and stops being live where its closer drops it (the
 * sweep, a reset).  Reading it costs one atomic read, where counting would
 * walk the statistics system's whole hash on every call of a view that
 * exporters poll.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "entrycount.h"
#include "ring.h"
#include "settings.h"

#include "port/atomics.h"
#include "storage/shmem.h"

/* Hard bound on the table: max plus this percentage */
#define PGSQ_OVERSHOOT_PCT 5

/* The count before the first pass after startup has counted the entries */
#define PGSQ_COUNT_UNKNOWN (PG_INT64_MAX / 4)

/* The count, in shared memory */
typedef struct EntryCount
{
	pg_atomic_uint64 num_entries;	/* approximate; exact after each pass */
	pg_atomic_uint64 created_entries;	/* entries created so far */
	pg_atomic_uint64 live_entries;	/* exact: live entries in the hash */
} EntryCount;

static EntryCount *counts = NULL;

/* The hard bound on the number of entries */
uint64
pgsq_entry_bound(void)
{
	return (uint64) pgsq_max * (100 + PGSQ_OVERSHOOT_PCT) / 100;
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
	return CACHELINEALIGN(sizeof(EntryCount));
}

/* Create or find the count (caller holds AddinShmemInitLock) */
void
pgsq_entry_count_shmem_startup(void)
{
	bool		found;

	counts = ShmemInitStruct("pg_stat_queries entry count",
							 sizeof(EntryCount), &found);
	if (found)
		return;
	/* entries restored from disk are counted by the first pass */
	pg_atomic_init_u64(&counts->num_entries, PGSQ_COUNT_UNKNOWN);
	pg_atomic_init_u64(&counts->created_entries, 0);
	pg_atomic_init_u64(&counts->live_entries, 0);
}

/* The number of entries: approximate, or unknown (pgsq_entry_count_known) */
uint64
pgsq_entry_count(void)
{
	return pg_atomic_read_u64(&counts->num_entries);
}

/* Set the count, as a pass that scanned every entry found it */
void
pgsq_set_entry_count(uint64 count)
{
	pg_atomic_write_u64(&counts->num_entries, count);
}

/* Entries created so far, by any backend */
uint64
pgsq_created_entries(void)
{
	return pg_atomic_read_u64(&counts->created_entries);
}

/*
 * Reserve room for an entry a backend is about to create, and say whether
 * there is any.  Backends check for room before, but several may pass that
 * check at once: the count is raised only while it is below the bound, so
 * the table never holds more entries than that, not even for a moment.  The
 * caller then either creates the entry and has it swept (pgsq_entry_created)
 * or gives the room back (pgsq_entry_not_created).
 */
bool
pgsq_reserve_entry(void)
{
	uint64		count;

	/* first: a pass that recounts meanwhile errs high, never low */
	pg_atomic_add_fetch_u64(&counts->created_entries, 1);
	count = pg_atomic_read_u64(&counts->num_entries);
	do
	{
		if (count >= pgsq_entry_bound() && pgsq_entry_count_known(count))
			return false;
	} while (!pg_atomic_compare_exchange_u64(&counts->num_entries, &count,
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
pgsq_entry_restored(uint64 objid)
{
	pg_atomic_add_fetch_u64(&counts->created_entries, 1);
	pg_atomic_add_fetch_u64(&counts->num_entries, 1);
	pgsq_ring_push(objid);
}

/* No entry was created in the room reserved: give it back */
void
pgsq_entry_not_created(void)
{
	pgsq_entries_removed(1);
}

/* Note that a reset or eviction dropped entries; never below zero */
void
pgsq_entries_removed(int64 count)
{
	uint64		old = pg_atomic_read_u64(&counts->num_entries);

	while (!pg_atomic_compare_exchange_u64(&counts->num_entries, &old,
										   old > (uint64) count ? old - count : 0))
		;
}

/* An entry became live (store.c linked or revived it) */
void
pgsq_live_entry_added(void)
{
	pg_atomic_add_fetch_u64(&counts->live_entries, 1);
}

/* Live entries were dropped by the backend that closed them */
void
pgsq_live_entries_dropped(int64 count)
{
	Assert(pg_atomic_read_u64(&counts->live_entries) >= (uint64) count);
	pg_atomic_sub_fetch_u64(&counts->live_entries, count);
}

/* The number of live entries, exactly */
uint64
pgsq_live_entries(void)
{
	return pg_atomic_read_u64(&counts->live_entries);
}
