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
 * ring of our entries in shared memory, so most passes visit entries
 * without a lock.  docs/design.md ("Eviction: the clock sweep") explains
 * passes, slices, the ring and the victim queue.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "storage/shmem.h"
#include "utils/injection_point.h"
#include "utils/timestamp.h"

#include "pg_stat_queries.h"

/* Sweep from this fill level of max, in percent ... */
#define PGSQ_SWEEP_START_PCT 95

/* ... until back down to this one */
#define PGSQ_SWEEP_STOP_PCT 90

/* Entries a slice may process (decay or evict), at least */
#define PGSQ_SLICE_MIN 1024

/* Victims a scan may choose ahead for later slices */
#define PGSQ_VICTIM_QUEUE_SIZE 4096

/* Ends of the latest passes of each class kept (a power of two) */
#define PGSQ_PASS_ENDS 64

/*
 * Every this many passes, one scans the whole table even if the ring is
 * whole (which recounts the entries), but no sooner than
 * PGSQ_FULL_PASS_MIN_INTERVAL_MS after the last scan: under a stream of new
 * statements passes follow each other quickly, and a scan takes every
 * partition's lock.
 */
#define PGSQ_FULL_PASS_EVERY 16
#define PGSQ_FULL_PASS_MIN_INTERVAL_MS 10000

/*
 * Which entries a slice may evict: statements' and plans' (each within its
 * own bound, pgsq_class_bound), or only the one whose bound is reached.  A
 * statement with hundreds of plans thus makes room among plans only, and
 * never ages or evicts a statement.
 */
#define SWEEP_STATEMENTS 0x1
#define SWEEP_PLANS 0x2
#define SWEEP_ALL (SWEEP_STATEMENTS | SWEEP_PLANS)

/* An entry's class: 0 statements, 1 plans (its key, set once per life) */
static inline int
class_of(PgsqSharedEntry *entry)
{
	return pgsq_key_is_plan(&entry->data.key) ? 1 : 0;
}

/* Is this entry swept by a slice sweeping these classes? */
static inline bool
swept_class(PgsqSharedEntry *entry, int classes)
{
	return (classes & (class_of(entry) ? SWEEP_PLANS : SWEEP_STATEMENTS)) != 0;
}

/* An entry chosen for eviction: its slot, in the generation it was seen */
typedef struct Victim
{
	dsa_pointer slot;
	uint32		generation;
	bool		plan;			/* of the plans' class */
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

/* The sweep's shared state; all atomics but the queue (see above) */
typedef struct SweepState
{
	pg_atomic_uint32 pass;		/* current clock-sweep pass, from 1 */
	pg_atomic_uint64 pass_evicted;	/* entries evicted by the current pass */
	pg_atomic_uint64 last_pass_end; /* when the previous pass ended */
	pg_atomic_uint32 last_pass_idle;	/* and whether it evicted nothing */
	pg_atomic_uint32 resume_partition;	/* where the current pass rests */
	pg_atomic_uint32 sweeping;	/* a backend is running a sweep slice */
	pg_atomic_uint32 pass_begun;	/* the current pass has had a slice */
	pg_atomic_uint32 full_pass; /* the current pass scans the whole table */
	pg_atomic_uint64 last_full_pass;	/* when the last such pass began */
	pg_atomic_uint64 ring_pass_end; /* ring position where this pass ends */

	/*
	 * Each class, statements [0] and plans [1], is aged in passes of its own:
	 * an entry is aged at most once per pass of its class, which ends with
	 * the first pass of the hand in which no entry of the class was passed
	 * over unvisited (the hand also moves for the other class, and skips this
	 * one's entries then).  So statements are aged as often as when the table
	 * held statements only, however fast plans churn.
	 */
	pg_atomic_uint32 class_pass[2];
	pg_atomic_uint32 class_swept[2];	/* swept in the current class pass */
	pg_atomic_uint32 class_skipped[2];	/* passed over unvisited in this pass
										 * of the hand */

	/*
	 * When the latest passes of each class ended, by pass number modulo
	 * PGSQ_PASS_ENDS (0: not known).  Like the queue, read and written only
	 * by the backend holding sweep->sweeping.
	 */
	TimestampTz class_pass_end[2][PGSQ_PASS_ENDS];
	VictimQueue victim_queue;
} SweepState;

static SweepState *sweep = NULL;

/* Bytes of shared memory for the sweep's state, victim queue and ring */
Size
pgsq_eviction_shmem_size(void)
{
	/* each structure starts on a cache line of its own */
	return add_size(add_size(CACHELINEALIGN(sizeof(SweepState)),
							 pgsq_entry_count_shmem_size()),
					pgsq_ring_shmem_size(pgsq_entry_bound()));
}

/* Create or find the sweep's state (caller holds AddinShmemInitLock) */
void
pgsq_eviction_shmem_startup(void)
{
	bool		found;

	pgsq_ring_shmem_startup(pgsq_entry_bound());
	pgsq_entry_count_shmem_startup();

	sweep = ShmemInitStruct("pg_stat_queries sweep", sizeof(SweepState),
							&found);
	if (found)
		return;
	pg_atomic_init_u32(&sweep->pass_begun, 0);
	pg_atomic_init_u32(&sweep->full_pass, 1);
	pg_atomic_init_u64(&sweep->last_full_pass, 0);
	pg_atomic_init_u64(&sweep->ring_pass_end, 0);
	pg_atomic_init_u32(&sweep->pass, 1);
	pg_atomic_init_u64(&sweep->pass_evicted, 0);
	pg_atomic_init_u64(&sweep->last_pass_end, 0);
	pg_atomic_init_u32(&sweep->last_pass_idle, 0);
	pg_atomic_init_u32(&sweep->resume_partition, 0);
	pg_atomic_init_u32(&sweep->sweeping, 0);
	for (int c = 0; c < 2; c++)
	{
		pg_atomic_init_u32(&sweep->class_pass[c], 1);
		pg_atomic_init_u32(&sweep->class_swept[c], 0);
		pg_atomic_init_u32(&sweep->class_skipped[c], 0);
		for (int i = 0; i < PGSQ_PASS_ENDS; i++)
			sweep->class_pass_end[c][i] = 0;
	}
	sweep->victim_queue.head = 0;
	sweep->victim_queue.count = 0;
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

/*
 * Has a plan whose usage count a visit in pass "previous" of its class left
 * at zero gone unused for min_sweep_interval?  That visit came before the
 * pass ended (for a pass too old to be kept, before the oldest kept ended).
 * Plans churn at their bound, where passes follow each other within
 * milliseconds, and a plan run thousands of times a second was evicted
 * when its backend was off the CPU for two of them; statements' passes
 * below their bound are that far apart anyway.
 */
static bool
unused_for_interval(int class, uint32 previous, uint32 class_pass)
{
	uint32		behind = class_pass - previous;
	TimestampTz ended;

	if (pgsq_min_sweep_interval <= 0)
		return true;
	if (behind >= PGSQ_PASS_ENDS)
		previous = class_pass - (PGSQ_PASS_ENDS - 1);
	ended = sweep->class_pass_end[class][previous % PGSQ_PASS_ENDS];
	return ended == 0 ||
		TimestampDifferenceExceeds(ended, GetCurrentTimestamp(),
								   pgsq_min_sweep_interval);
}

/* What a visit found an entry to be */
typedef enum VisitResult
{
	VISIT_KEPT,					/* it stays: back into the ring */
	VISIT_VICTIM,				/* to evict */
	VISIT_GONE,					/* its slot no longer holds it */
} VisitResult;

/*
 * Visit one entry, seen in its slot in generation, for the current pass;
 * without any lock: what it reads of the entry (class, usage, the pass of
 * its last visit) is written without the entry's lock too, and the
 * eviction that may follow looks at the generation and usage again under
 * the locks.  A victim is filled in for VISIT_VICTIM.
 */
static VisitResult
visit_entry(PgsqSharedEntry *entry, uint32 generation, Victim *victim,
			int classes)
{
	uint32		previous;
	uint32		usage;
	int			class = class_of(entry);
	uint32		class_pass = pg_atomic_read_u32(&sweep->class_pass[class]);

	if (!pgsq_entry_is(entry, generation))
		return VISIT_GONE;

	/* an entry of a class within its bound is neither aged nor evicted */
	if (!swept_class(entry, classes))
	{
		if (pg_atomic_read_u32(&entry->swept_pass) != class_pass)
			pg_atomic_write_u32(&sweep->class_skipped[class], 1);
		return VISIT_KEPT;
	}
	previous = pg_atomic_exchange_u32(&entry->swept_pass, class_pass);
	usage = pg_atomic_read_u32(&entry->usage);
	if (usage > 0)
	{
		/* a concurrent raise may be lost: harmless for a usage hint */
		pg_atomic_write_u32(&entry->usage, usage - 1);
		return VISIT_KEPT;
	}
	if (previous == 0)
		return VISIT_KEPT;		/* first visit: survives this pass */
	if (class == 1 && previous != class_pass &&
		!unused_for_interval(class, previous, class_pass))
		return VISIT_KEPT;		/* a plan unused for less than an interval */
	victim->slot = entry->self;
	victim->generation = generation;
	victim->plan = class == 1;
	return VISIT_VICTIM;
}

/*
 * Evict a victim, unless it is gone, in use (being merged into) or used
 * since it was chosen; one that stays goes back into the ring.  Returns
 * whether it was evicted.
 */
static bool
evict_victim(const Victim *victim)
{
	PgsqSharedEntry *entry = pgsq_slot_entry(victim->slot);

	/* test/specs/evict_reset.spec: others act right before the drop */
	INJECTION_POINT("pg-stat-queries-sweep-closed", NULL);
	if (pgsq_evict_entry(entry, victim->generation))
		return true;
	if (pgsq_entry_is(entry, victim->generation))
		pgsq_ring_push(victim->slot, victim->generation);
	return false;
}

/*
 * Evict up to "wanted" victims from the queue, skipping those used since
 * they were chosen, and those of a class this slice does not sweep (back
 * into the ring).  Returns how many were evicted.
 */
static int
evict_queued(int wanted, int classes)
{
	int			evicted = 0;

	while (evicted < wanted && sweep->victim_queue.count > 0)
	{
		Victim		victim = sweep->victim_queue.victims[sweep->victim_queue.head];
		int			class = victim.plan ? SWEEP_PLANS : SWEEP_STATEMENTS;

		sweep->victim_queue.head = (sweep->victim_queue.head + 1) % PGSQ_VICTIM_QUEUE_SIZE;
		sweep->victim_queue.count--;
		if ((classes & class) == 0)
		{
			pgsq_ring_push(victim.slot, victim.generation);
			continue;
		}
		if (evict_victim(&victim))
			evicted++;
	}
	return evicted;
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
	int64		live;			/* scan: live entries in the whole table */
	bool		finished;		/* the pass is complete */
} SliceVisits;

/* Is a periodic scan of the whole table due at now? */
static bool
full_pass_due(TimestampTz now)
{
	TimestampTz last = (TimestampTz) pg_atomic_read_u64(&sweep->last_full_pass);

	return TimestampDifferenceExceeds(last, now,
									  PGSQ_FULL_PASS_MIN_INTERVAL_MS);
}

/*
 * Visit the chosen victims that this slice evicts now (the first evict_now
 * of them): evicted, or back into the ring.  The others are queued.
 */
static int
evict_victims(Victim *victims, int evict_now)
{
	int			evicted = 0;

	for (int i = 0; i < evict_now; i++)
		if (evict_victim(&victims[i]))
			evicted++;
	return evicted;
}

/*
 * Visit entries of the current pass by scanning the whole table, partition
 * by partition.  Used for the first pass after startup (which counts what
 * was restored), when the ring is incomplete, and periodically
 * (full_pass_due); every entry that survives goes into the ring, which the
 * pass's first slice emptied.  Victims are only chosen here, under the
 * partition's lock (shared): they are evicted once it is released.
 */
static void
scan_slice(int slice, int wanted, Victim *victims, int classes,
		   SliceVisits *out)
{
	int			resume = (int) pg_atomic_read_u32(&sweep->resume_partition);
	int			processed = 0;
	PgsqTableScan scan;
	PgsqSharedEntry *entry;

	out->finished = true;
	pgsq_table_scan_begin(&scan, LW_SHARED, 0);
	while ((entry = pgsq_table_scan_next(&scan)) != NULL)
	{
		uint32		generation = pg_atomic_read_u32(&entry->generation);

		out->live++;

		/*
		 * Earlier slices of this pass have visited the partitions before the
		 * one the last stopped in: they are counted, not visited again.  (One
		 * created there since then waits for the next pass, like any entry
		 * the hand has passed.)
		 */
		if (scan.part < resume)
			continue;
		if (pg_atomic_read_u32(&entry->swept_pass) ==
			pg_atomic_read_u32(&sweep->class_pass[class_of(entry)]))
		{
			/* visited in this pass of its class: back into the ring */
			pgsq_ring_push(entry->self, generation);
			continue;
		}
		if (processed == slice || out->nvictims == wanted)
		{
			out->finished = false;
			pg_atomic_write_u32(&sweep->resume_partition, (uint32) scan.part);
			pgsq_table_scan_end(&scan);
			break;
		}
		processed++;
		if (visit_entry(entry, generation, &victims[out->nvictims],
						classes) == VISIT_VICTIM)
			out->nvictims++;
		else
			pgsq_ring_push(entry->self, generation);
	}
}

/*
 * Visit entries of the current pass by taking them from the ring, up to
 * the position where the pass began; survivors go back in, for the next
 * pass.  No lock is taken: an entry's slot is never freed, and the
 * generation the ring holds with it says whether it is still there.  An
 * entry visited already in the pass of its class goes back in unvisited.
 */
static void
ring_slice(int slice, int wanted, Victim *victims, int classes,
		   SliceVisits *out)
{
	uint64		pass_end = pg_atomic_read_u64(&sweep->ring_pass_end);
	int			processed = 0;

	out->finished = false;
	while (processed < slice && out->nvictims < wanted)
	{
		dsa_pointer slot;
		uint32		generation;
		PgsqSharedEntry *entry;

		if (pgsq_ring_tail() >= pass_end)
		{
			out->finished = true;
			break;
		}
		if (!pgsq_ring_take(&slot, &generation))
			break;				/* an entry is being written: next slice */
		entry = pgsq_slot_entry(slot);
		if (!pgsq_entry_is(entry, generation))
			continue;			/* dropped since */
		processed++;
		if (pg_atomic_read_u32(&entry->swept_pass) ==
			pg_atomic_read_u32(&sweep->class_pass[class_of(entry)]))
		{
			/* visited in this pass of its class */
			pgsq_ring_push(slot, generation);
			continue;
		}
		switch (visit_entry(entry, generation, &victims[out->nvictims],
							classes))
		{
			case VISIT_VICTIM:
				out->nvictims++;
				break;
			case VISIT_KEPT:
				pgsq_ring_push(slot, generation);
				break;
			case VISIT_GONE:
				break;
		}
	}
}

/* Live entries of a class above its low-water mark, or 0 */
static int64
class_excess(bool plans)
{
	uint64		live = pgsq_live_of_class(plans);
	uint64		low_water = (uint64) (plans ? pgsq_max_plans : pgsq_max) *
		PGSQ_SWEEP_STOP_PCT / 100;

	return live > low_water ? (int64) (live - low_water) : 0;
}

/*
 * Run one slice of the current pass: bring the table back to its low-water
 * mark.  Victims queued by an earlier slice go first; if they are not
 * enough, visit entries not yet visited in this pass (from the ring, or by
 * a scan of the whole table, see above), up to a bounded number or until
 * enough victims are chosen for this slice and to fill the queue, evict
 * what this slice needs and queue the rest.  When a pass that scanned is
 * complete, the entry count, recounted, replaces the running estimate.
 */
static void
sweep_slice(void)
{
	uint32		pass = pg_atomic_read_u32(&sweep->pass);
	int			slice = (int) Max(PGSQ_SLICE_MIN, pgsq_table_size() / 4);
	uint64		count = pgsq_entry_count();
	uint64		low_water = pgsq_table_size() * PGSQ_SWEEP_STOP_PCT / 100;
	bool		counting = !pgsq_entry_count_known(count);
	int64		needed = (counting || count <= low_water) ? 0 :
		(int64) (count - low_water);
	int			classes = SWEEP_ALL;
	int			from_queue = 0;
	uint64		resets_done_before = pg_atomic_read_u64(&pgsq_state->resets_done);
	int			wanted;
	int			evict_now;
	int			evicted_now;
	bool		full;
	Victim	   *victims;
	uint64		created_before;
	bool		keep_count;
	SliceVisits visits = {0, 0, true};
	TimestampTz now;

	/*
	 * Only statements or plans over their own low-water mark are swept (the
	 * table's is the sum of theirs), and within min_sweep_interval of the
	 * last pass, which only a bound lets go on, only those at their bound:
	 * plans churning at theirs must not age statements at a faster pace than
	 * statements' own, nor evict them.  Only when neither is over its mark
	 * (the table's count errs high) is the table's count the measure.
	 */
	if (!counting)
	{
		int64		statements = class_excess(false);
		int64		plans = class_excess(true);
		TimestampTz earliest =
			TimestampTzPlusMilliseconds((TimestampTz) pg_atomic_read_u64(&sweep->last_pass_end),
										pgsq_min_sweep_interval);
		bool		paced = GetCurrentTimestamp() < earliest;

		if (paced && pgsq_live_of_class(false) < pgsq_class_bound(false))
			statements = 0;
		if (paced && pgsq_live_of_class(true) < pgsq_class_bound(true))
			plans = 0;
		if (statements > 0 || plans > 0)
		{
			classes = (statements > 0 ? SWEEP_STATEMENTS : 0) |
				(plans > 0 ? SWEEP_PLANS : 0);
			needed = statements + plans;
		}
		else if (paced && count < pgsq_entry_bound())
			needed = 0;

		/*
		 * A slice evicts no more entries than the texts its backend keeps for
		 * its next ones (textarea.c): the texts it frees are then those its
		 * next new statements take, not chunks given back to the area's size
		 * classes and allocated again, both under locks that every backend
		 * creating entries shares.  At the bound the table then stays near
		 * the mark that starts sweeping, a slice every few new statements.
		 */
		needed = Min(needed, PGSQ_SPARE_TEXTS);
	}

	if (!counting)
	{
		from_queue = evict_queued((int) Min(needed, INT_MAX), classes);
		if (from_queue >= needed)
		{
			now = GetCurrentTimestamp();
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
		full = counting || !pgsq_ring_complete() ||
			(began != 0 && full_pass_due(began));
		if (full)
		{
			pgsq_ring_clear();
			if (began == 0)
				began = GetCurrentTimestamp();
			pg_atomic_write_u64(&sweep->last_full_pass, (uint64) began);
		}
		pg_atomic_write_u32(&sweep->full_pass, full);
		pg_atomic_write_u64(&sweep->ring_pass_end,
							pgsq_ring_head());
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
	created_before = pgsq_created_entries();

	if (classes & SWEEP_STATEMENTS)
		pg_atomic_write_u32(&sweep->class_swept[0], 1);
	if (classes & SWEEP_PLANS)
		pg_atomic_write_u32(&sweep->class_swept[1], 1);

	/* the first evict_now victims are evicted at once, the rest queued */
	evict_now = counting ? wanted : (int) Min(wanted, needed - from_queue);
	if (full)
		scan_slice(slice, wanted, victims, classes, &visits);
	else
		ring_slice(slice, wanted, victims, classes, &visits);

	/* evict with no lock held but each eviction's own; queue the rest */
	evict_now = Min(evict_now, visits.nvictims);
	evicted_now = evict_victims(victims, evict_now);
	sweep->victim_queue.head = evict_now;
	sweep->victim_queue.count = visits.nvictims - evict_now;

	now = GetCurrentTimestamp();
	keep_count = reset_meanwhile(resets_done_before);
	count_evicted(from_queue, false, !keep_count, now);
	count_evicted(evicted_now, visits.finished && full, !keep_count, now);

	if (visits.finished)
	{
		uint64		pass_evicted = pg_atomic_read_u64(&sweep->pass_evicted) +
			(full ? evicted_now : 0);

		/*
		 * A scan saw every live entry of the table in this last slice: the
		 * count, kept up by creations, evictions and resets in between,
		 * becomes exact again.  Entries created during the scan may have
		 * landed in partitions it had passed: count them all, so the count
		 * errs on the high side.  Queued victims are still live, and counted.
		 * (A pass of the ring, which sees no entry created since it began,
		 * leaves the running count as it is.)
		 */
		if (full && !keep_count)
		{
			uint64		created_meanwhile = pgsq_created_entries() -
				created_before;

			pgsq_set_entry_count(Max(visits.live - evicted_now, 0) +
								 created_meanwhile);
		}
		/* as pg_stat_statements' dealloc: only passes that evicted */
		if (pass_evicted > 0)
			pg_atomic_add_fetch_u64(&pgsq_state->dealloc, 1);
		pg_atomic_write_u32(&sweep->pass, pass + 1 == 0 ? 1 : pass + 1);
		for (int c = 0; c < 2; c++)
		{
			if (pg_atomic_read_u32(&sweep->class_swept[c]) &&
				!pg_atomic_read_u32(&sweep->class_skipped[c]))
			{
				uint32		ended = pg_atomic_read_u32(&sweep->class_pass[c]);
				uint32		next = ended + 1;

				sweep->class_pass_end[c][ended % PGSQ_PASS_ENDS] = now;
				pg_atomic_write_u32(&sweep->class_pass[c], next == 0 ? 1 : next);
				pg_atomic_write_u32(&sweep->class_swept[c], 0);
			}
			pg_atomic_write_u32(&sweep->class_skipped[c], 0);
		}
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
pass_may_go_on(bool at_bound, bool nested)
{
	TimestampTz earliest;

	if (at_bound && !pg_atomic_read_u32(&sweep->last_pass_idle))
		return true;
	earliest = TimestampTzPlusMilliseconds((TimestampTz) pg_atomic_read_u64(&sweep->last_pass_end),
										   pgsq_min_sweep_interval);
	return GetCurrentStatementStartTimestamp() >= earliest ||
		(nested && GetCurrentTimestamp() >= earliest);
}

/*
 * Are statements (or plans) at the fill level where sweeping starts (their
 * floor, computed by then)?  Sets *at_bound if they are at their bound.
 */
static inline bool
class_nearly_full(bool plans, bool *at_bound)
{
	uint64		live = pgsq_live_of_class(plans);

	if (live >= pgsq_class_bound(plans))
		*at_bound = true;
	return live >= (plans ? pgsq_sweep_floors.plans :
					pgsq_sweep_floors.statements);
}

/*
 * The fill levels below which pgsq_maybe_sweep has nothing to do, for the
 * settings of now: with no plans tracked, the plans' class is always "at
 * its level" (of zero), so only the whole table counts.
 */
static void
compute_sweep_floors(void)
{
	pgsq_sweep_floors.entries = pgsq_table_size() * PGSQ_SWEEP_START_PCT / 100;
	if (pgsq_max_plans == 0)
	{
		pgsq_sweep_floors.statements = PG_UINT64_MAX;
		pgsq_sweep_floors.plans = PG_UINT64_MAX;
	}
	else
	{
		pgsq_sweep_floors.statements = (uint64) pgsq_max * PGSQ_SWEEP_START_PCT / 100;
		pgsq_sweep_floors.plans = (uint64) pgsq_max_plans * PGSQ_SWEEP_START_PCT / 100;
	}
}

/*
 * After a statement whose entries were not all below their floors: sweep
 * a slice if the table, statements or plans are nearly full.  The entry
 * count may be unknown (after a restart, until a pass counted entries):
 * then it is at no floor, and a pass is due.
 */
void
pgsq_sweep_if_due(bool nested)
{
	uint64		count = pgsq_entry_count();
	bool		at_bound = count >= pgsq_entry_bound();

	if (pgsq_sweep_floors.entries == 0)
		compute_sweep_floors();
	if (count < pgsq_sweep_floors.entries)
	{
		/* statements or plans may be nearly full, if not the whole table */
		if (pgsq_max_plans == 0)
			return;
		if (!class_nearly_full(false, &at_bound) &&
			!class_nearly_full(true, &at_bound))
			return;
	}
	if (!pass_may_go_on(at_bound, nested))
		return;
	try_sweep_slice();
}

/* Is this entry count below the bound (or not known yet)? */
static inline bool
count_below_bound(uint64 count)
{
	return count < pgsq_entry_bound() || !pgsq_entry_count_known(count);
}

/*
 * May a new entry be created for a statement (or plan, if plan) at this
 * nesting?  The table must be below its bound, and statements (or plans)
 * below theirs.  At a bound, first try to make room, unless the last pass
 * evicted nothing and the next may not begin yet.
 */
bool
pgsq_room_for_new_entry(bool nested, bool plan)
{
	uint64		count = pgsq_entry_count();
	bool		class_room = pgsq_live_of_class(plan) < pgsq_class_bound(plan);

	if (class_room && count_below_bound(count))
		return true;
	if (!pass_may_go_on(true, nested))
		return false;
	try_sweep_slice();
	return pgsq_entry_count() < pgsq_entry_bound() &&
		pgsq_live_of_class(plan) < pgsq_class_bound(plan);
}
