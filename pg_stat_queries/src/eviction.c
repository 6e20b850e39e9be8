/*-------------------------------------------------------------------------
 *
 * eviction.c
 *		Keeping the number of entries near pg_stat_queries.max: clock sweep.
 *
 * Every entry has a small usage count that executions raise; a pass of the
 * sweep evicts the entries at zero and lowers the others.  Sweeping starts
 * at 95% of max and stops at 90%, in bounded slices that any backend ending
 * a statement may run and nobody waits for; at max + 5% statements without
 * an entry are not tracked until there is room.  The hand of the clock is a
 * ring of our entries' ids in shared memory, so most passes visit our
 * entries only.  docs/design.md ("Eviction: the clock sweep") explains
 * passes, slices, the ring, the victim queue and orphans.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "eviction.h"
#include "qtext.h"
#include "settings.h"
#include "store.h"

#include "access/xact.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

/* Usage count cap: an entry unused for this many passes is evicted */
#define PGSQ_USAGE_MAX 5

/* Sweep from this fill level of max, in percent ... */
#define PGSQ_SWEEP_START_PCT 95

/* ... until back down to this one */
#define PGSQ_SWEEP_STOP_PCT 90

/* Hard bound on the table: max plus this percentage */
#define PGSQ_OVERSHOOT_PCT 5

/* Entries a slice may process (decay or evict), at least */
#define PGSQ_SLICE_MIN 1024

/* Victims a scan may choose ahead for later slices */
#define PGSQ_VICTIM_QUEUE_SIZE 4096

/* num_entries before the first pass after startup has counted them */
#define PGSQ_COUNT_UNKNOWN (PG_INT64_MAX / 4)

/*
 * Every this many passes, one scans the whole hash even if the ring is
 * whole, but no sooner than PGSQ_FULL_PASS_MIN_INTERVAL_MS after the last
 * scan: under a stream of new statements passes follow each other quickly,
 * and a scan reads every kind's entries (one per table, index, function ...)
 * to find our few.
 */
#define PGSQ_FULL_PASS_EVERY 16
#define PGSQ_FULL_PASS_MIN_INTERVAL_MS 10000

/* The ring holds this many times the bound at startup, at least its minimum */
#define PGSQ_RING_PER_ENTRY 2
#define PGSQ_RING_MIN 4096

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

/* An entry chosen for eviction, or an orphan to free */
typedef struct Victim
{
	Oid			dboid;
	uint64		objid;
	PgsqKey		key;
	TimestampTz stats_since;	/* tells a later entry of the key apart */
	dsa_pointer text;			/* taken from the entry (qtext.c) when it was
								 * found to be evicted now */
} Victim;

/*
 * Victims chosen ahead by a scan, oldest first, in shared memory.  Only the
 * backend that holds sweep->sweeping reads or writes it.
 */
typedef struct VictimQueue
{
	int			head;			/* index of the oldest victim */
	int			count;
	Victim		victims[PGSQ_VICTIM_QUEUE_SIZE];
} VictimQueue;

/*
 * The ring of our entries' object ids, in shared memory: the hand of the
 * clock.  Creating an entry adds its id; the sweep takes ids from the other
 * end, visits their entries and adds back those that survive, so a pass of
 * the ring visits our entries only, each with one lookup, instead of a scan
 * of the statistics system's whole hash (every kind's entries, every
 * partition lock).  Any backend may add (a compare-and-exchange reserves a
 * position, the slot's seq says when it is written); only the backend
 * holding sweep->sweeping takes.  Ids of entries dropped meanwhile are
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

/* The sweep's shared state; all atomics but the queue (see above) */
typedef struct SweepState
{
	pg_atomic_uint64 num_entries;	/* approximate; exact after each pass */
	pg_atomic_uint64 created_entries;	/* entries created so far */
	pg_atomic_uint32 pass;		/* current clock-sweep pass, from 1 */
	pg_atomic_uint64 pass_evicted;	/* entries evicted by the current pass */
	pg_atomic_uint32 gc_owed;	/* evictions since the sweep's last gc request */
	pg_atomic_uint64 last_gc_request;	/* when the sweep last made one */
	pg_atomic_uint64 last_pass_end; /* when the previous pass ended */
	pg_atomic_uint32 last_pass_idle;	/* and whether it evicted nothing */
	pg_atomic_uint32 resume_partition;	/* where the current pass rests */
	pg_atomic_uint32 sweeping;	/* a backend is running a sweep slice */
	pg_atomic_uint32 pass_begun;	/* the current pass has had a slice */
	pg_atomic_uint32 full_pass; /* the current pass scans the whole hash */
	pg_atomic_uint64 last_full_pass;	/* when the last such pass began */
	pg_atomic_uint64 ring_pass_end; /* ring position where this pass ends */
	VictimQueue victim_queue;
} SweepState;

static SweepState *sweep = NULL;
static SweepRing *ring = NULL;
static RingSlot *ring_slots = NULL;

/* The ring's size as the postmaster reserved it (0 elsewhere) */
static uint32 ring_capacity_reserved = 0;

/* The hard bound on the number of entries */
static inline uint64
entry_bound(void)
{
	return (uint64) pgsq_max * (100 + PGSQ_OVERSHOOT_PCT) / 100;
}

/*
 * Ids the ring holds: sized once, from max at server start.  Shared memory
 * is reserved once, and max may change at reload: the postmaster keeps the
 * size it reserved for later startups after a crash, and other processes
 * read the size from shared memory.
 */
static uint32
ring_capacity(void)
{
	uint64		wanted = entry_bound() * PGSQ_RING_PER_ENTRY;

	if (ring_capacity_reserved == 0)
		ring_capacity_reserved = (uint32) Min(Max(wanted, PGSQ_RING_MIN),
											  PG_UINT32_MAX / 2);
	return ring_capacity_reserved;
}

/* Bytes of shared memory for the sweep's state, victim queue and ring */
Size
pgsq_eviction_shmem_size(void)
{
	/* each structure starts on a cache line of its own */
	return add_size(add_size(CACHELINEALIGN(sizeof(SweepState)),
							 CACHELINEALIGN(sizeof(SweepRing))),
					CACHELINEALIGN(mul_size(ring_capacity(), sizeof(RingSlot))));
}

/* Create or find the sweep's state (caller holds AddinShmemInitLock) */
void
pgsq_eviction_shmem_startup(void)
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
		ring->capacity = ring_capacity();
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

	sweep = ShmemInitStruct("pg_stat_queries sweep", sizeof(SweepState),
							&found);
	if (found)
		return;
	pg_atomic_init_u32(&sweep->pass_begun, 0);
	pg_atomic_init_u32(&sweep->full_pass, 1);
	pg_atomic_init_u64(&sweep->last_full_pass, 0);
	pg_atomic_init_u64(&sweep->ring_pass_end, 0);
	/* entries restored from disk are counted by the first pass */
	pg_atomic_init_u64(&sweep->num_entries, PGSQ_COUNT_UNKNOWN);
	pg_atomic_init_u64(&sweep->created_entries, 0);
	pg_atomic_init_u32(&sweep->pass, 1);
	pg_atomic_init_u64(&sweep->pass_evicted, 0);
	pg_atomic_init_u32(&sweep->gc_owed, 0);
	pg_atomic_init_u64(&sweep->last_gc_request, 0);
	pg_atomic_init_u64(&sweep->last_pass_end, 0);
	pg_atomic_init_u32(&sweep->last_pass_idle, 0);
	pg_atomic_init_u32(&sweep->resume_partition, 0);
	pg_atomic_init_u32(&sweep->sweeping, 0);
	sweep->victim_queue.head = 0;
	sweep->victim_queue.count = 0;
}

/*
 * Add an entry's id to the ring; if it is full, mark the ring incomplete.
 * Any backend; never waits.
 */
static void
ring_push(uint64 objid)
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

	slot = &ring_slots[head % ring->capacity];
	slot->objid = objid;
	pg_write_barrier();
	pg_atomic_write_u64(&slot->seq, head + 1);
}

/*
 * Take the oldest id from the ring, if it is there and written.  Only the
 * backend holding sweep->sweeping.
 */
static bool
ring_take(uint64 *objid)
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

/* Forget every id in the ring; the sweep refills it.  Only the sweeper */
static void
ring_clear(void)
{
	pg_atomic_write_u64(&ring->tail, pg_atomic_read_u64(&ring->head));
	pg_atomic_write_u32(&ring->complete, 1);
}

/* Entries created so far, by any backend */
uint64
pgsq_created_entries(void)
{
	return pg_atomic_read_u64(&sweep->created_entries);
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
	pg_atomic_add_fetch_u64(&sweep->created_entries, 1);
	count = pg_atomic_read_u64(&sweep->num_entries);
	do
	{
		if (count >= entry_bound() && count < PGSQ_COUNT_UNKNOWN / 2)
			return false;
	} while (!pg_atomic_compare_exchange_u64(&sweep->num_entries, &count,
											 count + 1));
	return true;
}

/* An entry was created in the room reserved for it: it goes into the ring */
void
pgsq_entry_created(uint64 objid)
{
	ring_push(objid);
}

/*
 * An entry restored at startup (savefile.c), created without room reserved:
 * the bound does not refuse what was saved, the sweep brings the count back
 * within max.  Counted like a creation, and put in the ring.
 */
void
pgsq_entry_restored(uint64 objid)
{
	pg_atomic_add_fetch_u64(&sweep->created_entries, 1);
	pg_atomic_add_fetch_u64(&sweep->num_entries, 1);
	ring_push(objid);
}

/* No entry was created in the room reserved: give it back */
void
pgsq_entry_not_created(void)
{
	pgsq_entries_removed(1);
}

/*
 * A full reset emptied the table: evictions earlier in the current pass say
 * nothing about the entries that follow it.
 */
void
pgsq_sweep_after_full_reset(void)
{
	pg_atomic_write_u64(&sweep->pass_evicted, 0);
}

/* Note that a reset or eviction dropped entries; never below zero */
void
pgsq_entries_removed(int64 count)
{
	uint64		old = pg_atomic_read_u64(&sweep->num_entries);

	while (!pg_atomic_compare_exchange_u64(&sweep->num_entries, &old,
										   old > (uint64) count ? old - count : 0))
		;
}

/*
 * Raise an entry's usage count, up to the cap, after a merge of executions
 * of a statement that has run more than once: more than one execution in
 * this merge, or any after earlier ones.  A statement run once gets no raise
 * (its execution set the count already, pgsq_entry_used), so it survives no
 * pass longer than needed; a statement that keeps coming back, even if
 * every backend runs it only now and then, gains a pass with every merge.
 * That sets it apart from one-off statements when passes follow each other
 * quickly, as they do once a pass over a just-filled table found nothing
 * to evict.
 */
void
pgsq_touch_entry(PgsqSharedEntry *entry, int64 calls, int64 calls_before)
{
	uint32		usage = pg_atomic_read_u32(&entry->usage);

	if ((calls > 1 || (calls > 0 && calls_before > 0)) &&
		usage < PGSQ_USAGE_MAX)
		pg_atomic_write_u32(&entry->usage, usage + 1);
}

/*
 * An execution of a statement: if its entry's count is zero (new, or aged
 * by the sweep since it was last used), mark it used.  Merges come up to a
 * second after executions, and under heavy churn a pass can take less than
 * that.  This writes at most once per entry and pass: a known statement's
 * execution otherwise only reads the count.
 */
void
pgsq_entry_used(PgsqSharedEntry *entry)
{
	if (unlikely(pg_atomic_read_u32(&entry->usage) == 0))
		pg_atomic_write_u32(&entry->usage, 1);
}

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
free_orphans(Victim *orphans, int count)
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
	Victim	   *orphans = palloc(PGSQ_ORPHANS_MAX * sizeof(Victim));
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
 * Visit one entry for the current pass.  Returns true if it should be
 * evicted, filling in the victim; take_text if it is evicted at once (not
 * queued): its text is then taken from it, which closes it to texts.
 */
static bool
visit_entry(PgStatShared_HashEntry *hent, PgsqSharedEntry *entry,
			uint32 pass, Victim *victim, bool take_text)
{
	uint32		previous = pg_atomic_exchange_u32(&entry->swept_pass, pass);
	uint32		usage = pg_atomic_read_u32(&entry->usage);
	bool		evict = false;

	if (usage > 0)
	{
		/* a concurrent raise may be lost: harmless for a usage hint */
		pg_atomic_write_u32(&entry->usage, usage - 1);
		return false;
	}
	if (previous == 0)
		return false;			/* first visit: survives this pass */

	/*
	 * An entry being merged into right now is in use: skip it.  Taking its
	 * text writes it; a victim only queued is read.
	 */
	if (!LWLockConditionalAcquire(&entry->header.lock,
								  take_text ? LW_EXCLUSIVE : LW_SHARED))
		return false;
	if (entry->data.stats_since != 0)
	{
		victim->dboid = hent->key.dboid;
		victim->objid = hent->key.objid;
		victim->key = entry->data.key;
		victim->stats_since = entry->data.stats_since;
		victim->text = take_text ? pgsq_close_entry(entry) : InvalidDsaPointer;
		evict = true;
	}
	LWLockRelease(&entry->header.lock);
	return evict;
}

/*
 * Is a victim an earlier scan chose still the entry it saw, and unused
 * since?  Looked up in the shared hash like the scan saw it, under its
 * partition lock (shared); an entry being merged into is in use.  An entry
 * that stays goes back into the ring (a new life of it is there already).
 * One to evict has its text taken.
 */
static bool
still_evictable(Victim *victim)
{
	PgStat_HashKey hkey = pgsq_shared_hash_key(victim->dboid, victim->objid);
	PgStatShared_HashEntry *hent;
	bool		evict = false;
	bool		same_life = false;

	hent = dshash_find(pgStatLocal.shared_hash, &hkey, false);
	if (hent == NULL)
		return false;
	if (pgsq_is_live_entry(hent))
	{
		PgsqSharedEntry *entry = pgsq_shared_entry_of(hent);

		if (LWLockConditionalAcquire(&entry->header.lock, LW_EXCLUSIVE))
		{
			same_life = entry->data.stats_since == victim->stats_since;
			evict = same_life && pg_atomic_read_u32(&entry->usage) == 0;
			if (evict)
				victim->text = pgsq_close_entry(entry);
			LWLockRelease(&entry->header.lock);
		}
		else
			same_life = true;	/* being merged into: in use, and kept */
		if (same_life && !evict)
			ring_push(victim->objid);
	}
	dshash_release_lock(pgStatLocal.shared_hash, hent);
	return evict;
}

/*
 * Evict victims: drop their entries and free the texts taken from them,
 * with no lock held but each drop's own.  Sets *need_gc if a drop left an
 * entry that some backend still references.
 */
static void
evict_victims(const Victim *victims, int count, bool *need_gc)
{
	for (int i = 0; i < count; i++)
	{
		if (!pgsq_drop_entry(victims[i].dboid, victims[i].objid))
			*need_gc = true;
		pgsq_text_discard(victims[i].text);
	}
}

/*
 * Evict up to "wanted" victims from the queue, skipping those used since
 * they were chosen.  Returns how many were evicted.
 */
static int
evict_queued(int wanted, bool *need_gc)
{
	int			evicted = 0;

	while (evicted < wanted && sweep->victim_queue.count > 0)
	{
		Victim		victim = sweep->victim_queue.victims[sweep->victim_queue.head];

		sweep->victim_queue.head = (sweep->victim_queue.head + 1) % PGSQ_VICTIM_QUEUE_SIZE;
		sweep->victim_queue.count--;
		if (!still_evictable(&victim))
			continue;
		evict_victims(&victim, 1, need_gc);
		evicted++;
	}
	return evicted;
}

/*
 * Have backends collect their references to entries the sweep dropped, at
 * the end of a pass or PGSQ_GC_REQUEST_INTERVAL_MS after the last request,
 * whichever comes first.  Each request makes every backend scan all of its
 * references, reading shared memory for each: one per slice cost 1.4% of
 * all CPU time in a workload of new statements only.  Until collected, a
 * dropped entry's memory stays allocated, and a backend running that
 * statement again keeps its counts aside (pending.c).  Called by the
 * sweeping backend only.
 */
static void
request_gc_if_owed(bool pass_finished, TimestampTz now)
{
	if (pg_atomic_read_u32(&sweep->gc_owed) == 0)
		return;
	if (!pass_finished &&
		!TimestampDifferenceExceeds((TimestampTz) pg_atomic_read_u64(&sweep->last_gc_request),
									now, PGSQ_GC_REQUEST_INTERVAL_MS))
		return;
	pg_atomic_write_u32(&sweep->gc_owed, 0);
	pg_atomic_write_u64(&sweep->last_gc_request, (uint64) now);
	pgstat_request_entry_refs_gc();
}

/*
 * Note that a slice evicted entries; unless the pass is finished (whose
 * recount includes them) they come off the running count, if take_off.
 */
static void
count_evicted(int evicted, bool finished, bool take_off, TimestampTz now)
{
	if (evicted == 0)
		return;
	pg_atomic_add_fetch_u64(&pgsq_state->evicted_entries, evicted);
	pg_atomic_write_u64(&pgsq_state->last_eviction_time, (uint64) now);
	if (!finished)
	{
		pg_atomic_add_fetch_u64(&sweep->pass_evicted, evicted);
		if (take_off)
			pgsq_entries_removed(evicted);
	}
}

/*
 * Did a reset drop entries while this slice ran (resets_done as read at its
 * start)?  A reset and an eviction may then both have dropped, and taken off
 * the running count, the same entry, or a recount may have missed entries
 * the reset takes off afterwards: either way the count would err low, and
 * the table could outgrow its bound.  The slice then leaves the count as it
 * is, erring high, until a later scan recounts.
 */
static bool
reset_meanwhile(uint64 resets_done_before)
{
	return pg_atomic_read_u64(&pgsq_state->reset_count) != resets_done_before;
}

/* What a slice's visits found, for sweep_slice */
typedef struct SliceVisits
{
	int			nvictims;		/* victims chosen, in the victim queue */
	int64		live;			/* scan: live entries in the whole hash */
	bool		finished;		/* the pass is complete */
} SliceVisits;

/* Is a periodic scan of the whole hash due at now? */
static bool
full_pass_due(TimestampTz now)
{
	TimestampTz last = (TimestampTz) pg_atomic_read_u64(&sweep->last_full_pass);

	return TimestampDifferenceExceeds(last, now,
									  PGSQ_FULL_PASS_MIN_INTERVAL_MS);
}

/*
 * Visit entries of the current pass by scanning the statistics system's
 * whole hash: every kind's entries, partition by partition.  Used for the
 * first pass after startup (which counts what was restored), when the ring
 * is incomplete, and periodically (full_pass_due); every entry that
 * survives goes into the ring, which the pass's first slice emptied.
 */
static void
scan_slice(uint32 pass, int slice, int wanted, int evict_now, Victim *victims,
		   SliceVisits *out)
{
	int			resume = (int) pg_atomic_read_u32(&sweep->resume_partition);
	int			processed = 0;
	dshash_seq_status hstat;
	PgStatShared_HashEntry *hent;
	PgsqSharedEntry *entry;

	out->finished = true;
	dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
	while ((hent = dshash_seq_next(&hstat)) != NULL)
	{
		if (!pgsq_is_live_entry(hent))
			continue;
		out->live++;

		/*
		 * The scan goes partition by partition, and earlier slices of this
		 * pass have visited the partitions before the one the last stopped
		 * in: skip those without touching the entries, whose memory is likely
		 * out of this CPU's cache.  (One created there since then waits for
		 * the next pass, like any entry the hand has passed.)
		 */
		if (hstat.curpartition < resume)
			continue;
		entry = pgsq_shared_entry_of(hent);
		if (pg_atomic_read_u32(&entry->swept_pass) == pass)
			continue;
		if (processed == slice || out->nvictims == wanted)
		{
			out->finished = false;
			pg_atomic_write_u32(&sweep->resume_partition,
								(uint32) hstat.curpartition);
			break;
		}
		processed++;
		if (visit_entry(hent, entry, pass, &victims[out->nvictims],
						out->nvictims < evict_now))
			out->nvictims++;
		else
			ring_push(hent->key.objid);
	}
	dshash_seq_term(&hstat);
}

/*
 * Visit entries of the current pass by taking their ids from the ring, up
 * to the position where the pass began; survivors go back in, for the next
 * pass.  Ids of dropped entries, and a second id of one entry, are dropped.
 */
static void
ring_slice(uint32 pass, int slice, int wanted, int evict_now, Victim *victims,
		   SliceVisits *out)
{
	uint64		pass_end = pg_atomic_read_u64(&sweep->ring_pass_end);
	int			processed = 0;

	out->finished = false;
	while (processed < slice && out->nvictims < wanted)
	{
		uint64		objid;
		PgStat_HashKey hkey;
		PgStatShared_HashEntry *hent;

		if (pg_atomic_read_u64(&ring->tail) >= pass_end)
		{
			out->finished = true;
			break;
		}
		if (!ring_take(&objid))
			break;				/* an id is being written: next slice */
		hkey = pgsq_shared_hash_key(PGSQ_KEY_DBOID, objid);
		hent = dshash_find(pgStatLocal.shared_hash, &hkey, false);
		if (hent == NULL)
			continue;
		if (pgsq_is_live_entry(hent))
		{
			PgsqSharedEntry *entry = pgsq_shared_entry_of(hent);

			if (pg_atomic_read_u32(&entry->swept_pass) != pass)
			{
				processed++;
				if (visit_entry(hent, entry, pass, &victims[out->nvictims],
								out->nvictims < evict_now))
					out->nvictims++;
				else
					ring_push(objid);
			}
		}
		dshash_release_lock(pgStatLocal.shared_hash, hent);
	}
}

/*
 * Run one slice of the current pass: bring the table back to its low-water
 * mark.  Victims queued by an earlier slice go first; if they are not
 * enough, visit entries not yet visited in this pass (from the ring, or by
 * a scan of the whole hash, see above), up to a bounded number or until
 * enough victims are chosen for this slice and to fill the queue, evict
 * what this slice needs and queue the rest.  When a pass that scanned is
 * complete, the entry count, recounted, replaces the running estimate.
 */
static void
sweep_slice(void)
{
	uint32		pass = pg_atomic_read_u32(&sweep->pass);
	int			slice = Max(PGSQ_SLICE_MIN, pgsq_max / 4);
	uint64		count = pg_atomic_read_u64(&sweep->num_entries);
	uint64		low_water = (uint64) pgsq_max * PGSQ_SWEEP_STOP_PCT / 100;
	bool		counting = count >= PGSQ_COUNT_UNKNOWN / 2;
	int64		needed = (counting || count <= low_water) ? 0 :
		(int64) (count - low_water);
	int			from_queue = 0;
	uint64		resets_done_before = pg_atomic_read_u64(&pgsq_state->resets_done);
	int			wanted;
	int			evict_now;
	bool		full;
	bool		need_gc = false;
	Victim	   *victims;
	uint64		created_before;
	bool		keep_count;
	SliceVisits visits = {0, 0, true};
	TimestampTz now;

	if (!counting)
	{
		from_queue = evict_queued((int) Min(needed, INT_MAX), &need_gc);
		if (from_queue >= needed)
		{
			now = GetCurrentTimestamp();
			if (need_gc)
				pg_atomic_write_u32(&sweep->gc_owed, 1);
			request_gc_if_owed(false, now);
			count_evicted(from_queue, false,
						  !reset_meanwhile(resets_done_before), now);
			return;
		}
	}

	/* the pass's first slice decides how it visits */
	if (!pg_atomic_read_u32(&sweep->pass_begun))
	{
		TimestampTz began = 0;

		if (pass % PGSQ_FULL_PASS_EVERY == 0)
			began = GetCurrentTimestamp();
		full = counting || !pg_atomic_read_u32(&ring->complete) ||
			(began != 0 && full_pass_due(began));
		if (full)
		{
			ring_clear();
			if (began == 0)
				began = GetCurrentTimestamp();
			pg_atomic_write_u64(&sweep->last_full_pass, (uint64) began);
		}
		pg_atomic_write_u32(&sweep->full_pass, full);
		pg_atomic_write_u64(&sweep->ring_pass_end,
							pg_atomic_read_u64(&ring->head));
		pg_atomic_write_u32(&sweep->pass_begun, 1);
	}
	full = pg_atomic_read_u32(&sweep->full_pass) != 0;

	/*
	 * The queue is empty now (a first pass after startup did not look at it,
	 * but never fills it either): the visits choose victims right into it.  A
	 * scan, costly to resume, chooses as many as the queue holds, evicts this
	 * slice's share and leaves the rest for later slices; the ring resumes
	 * where it stopped at no cost, so it chooses only what this slice evicts,
	 * and victims are not looked up a second time when taken from the queue.
	 */
	Assert(counting || sweep->victim_queue.count == 0);
	sweep->victim_queue.head = 0;
	sweep->victim_queue.count = 0;
	victims = sweep->victim_queue.victims;
	wanted = Min(slice, PGSQ_VICTIM_QUEUE_SIZE);
	if (!full)
		wanted = (int) Min(wanted, needed - from_queue);
	created_before = pg_atomic_read_u64(&sweep->created_entries);

	/* the first evict_now victims are evicted at once, the rest queued */
	evict_now = counting ? wanted : (int) Min(wanted, needed - from_queue);
	if (full)
		scan_slice(pass, slice, wanted, evict_now, victims, &visits);
	else
		ring_slice(pass, slice, wanted, evict_now, victims, &visits);

	/* evict with no lock held but each drop's own; queue the rest */
	evict_now = Min(evict_now, visits.nvictims);
	evict_victims(victims, evict_now, &need_gc);
	sweep->victim_queue.head = evict_now;
	sweep->victim_queue.count = visits.nvictims - evict_now;

	now = GetCurrentTimestamp();
	if (need_gc)
		pg_atomic_write_u32(&sweep->gc_owed, 1);
	request_gc_if_owed(visits.finished, now);
	keep_count = reset_meanwhile(resets_done_before);
	count_evicted(from_queue, false, !keep_count, now);
	count_evicted(evict_now, visits.finished && full, !keep_count, now);

	if (visits.finished)
	{
		uint64		pass_evicted = pg_atomic_read_u64(&sweep->pass_evicted) +
			(full ? evict_now : 0);

		/*
		 * A scan saw every live entry of the hash in this last slice: the
		 * count, kept up by creations, evictions and resets in between,
		 * becomes exact again.  Entries created during the scan may have
		 * landed in partitions it had passed: count them all, so the count
		 * errs on the high side.  Queued victims are still live, and counted.
		 * (A pass of the ring, which sees no entry created since it began,
		 * leaves the running count as it is.)
		 */
		if (full && !keep_count)
		{
			uint64		created_meanwhile = pg_atomic_read_u64(&sweep->created_entries) -
				created_before;

			pg_atomic_write_u64(&sweep->num_entries,
								Max(visits.live - evict_now, 0) + created_meanwhile);
		}
		/* as pg_stat_statements' dealloc: only passes that evicted */
		if (pass_evicted > 0)
			pg_atomic_add_fetch_u64(&pgsq_state->dealloc, 1);
		pg_atomic_write_u32(&sweep->pass, pass + 1 == 0 ? 1 : pass + 1);
		pg_atomic_write_u32(&sweep->resume_partition, 0);
		pg_atomic_write_u64(&sweep->pass_evicted, 0);
		pg_atomic_write_u32(&sweep->last_pass_idle,
							pass_evicted == 0);
		pg_atomic_write_u64(&sweep->last_pass_end, (uint64) now);
		pg_atomic_write_u32(&sweep->pass_begun, 0);
		ereport(DEBUG1,
				(errmsg_internal("pg_stat_queries sweep pass %u by %s evicted " UINT64_FORMAT " entries",
								 pass, full ? "scan" : "ring", pass_evicted)));
	}
}

/* Run one slice unless another backend is sweeping; never waits */
static void
try_sweep_slice(void)
{
	uint32		idle = 0;

	/* look before writing: the flag's cache line is shared by everybody */
	if (pg_atomic_read_u32(&sweep->sweeping) != 0 ||
		!pg_atomic_compare_exchange_u32(&sweep->sweeping, &idle, 1))
		return;
	PG_TRY();
	{
		sweep_slice();
	}
	PG_FINALLY();
	{
		/* the next sweeper must see the victim queue as we leave it */
		pg_write_barrier();
		pg_atomic_write_u32(&sweep->sweeping, 0);
	}
	PG_END_TRY();
}

/*
 * May sweeping go on now?  Not if the current pass may not begin yet: below
 * the bound, not within min_sweep_interval of the end of the previous pass;
 * at the bound, likewise if that pass evicted nothing (every entry was new
 * or in use, and one evicted a moment later would be a statement in use).
 * The top-level statement's start time, already known, serves as the
 * clock; for a nested statement (the start time does not advance inside a
 * long procedure) the clock is read if that time is too early.
 */
static bool
pass_may_go_on(uint64 count, bool nested)
{
	TimestampTz earliest;

	if (count >= entry_bound() && !pg_atomic_read_u32(&sweep->last_pass_idle))
		return true;
	earliest = TimestampTzPlusMilliseconds((TimestampTz) pg_atomic_read_u64(&sweep->last_pass_end),
										   pgsq_min_sweep_interval);
	return GetCurrentStatementStartTimestamp() >= earliest ||
		(nested && GetCurrentTimestamp() >= earliest);
}

/* After a statement: sweep a slice if the table is nearly full */
void
pgsq_maybe_sweep(bool nested)
{
	uint64		count = pg_atomic_read_u64(&sweep->num_entries);

	if (count < (uint64) pgsq_max * PGSQ_SWEEP_START_PCT / 100 ||
		!pass_may_go_on(count, nested))
		return;
	try_sweep_slice();
}

/* Is this entry count below the bound (or not known yet)? */
static inline bool
count_below_bound(uint64 count)
{
	return count < entry_bound() || count >= PGSQ_COUNT_UNKNOWN / 2;
}

/*
 * May a new entry be created for a statement at this nesting?  At the
 * bound, first try to make room, unless the last pass evicted nothing and
 * the next may not begin yet.
 */
bool
pgsq_room_for_new_entry(bool nested)
{
	uint64		count = pg_atomic_read_u64(&sweep->num_entries);

	if (count_below_bound(count))
		return true;
	if (!pass_may_go_on(count, nested))
		return false;
	try_sweep_slice();
	return pg_atomic_read_u64(&sweep->num_entries) < entry_bound();
}
