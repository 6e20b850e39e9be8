/*-------------------------------------------------------------------------
 *
 * ring.c
 *		The ring of our entries' ids: the hand of the clock sweep.
 *
 * The sweep (eviction.c) takes ids from it and visits their entries;
 * creating an entry adds its id.  See docs/design.md ("Eviction: the clock
 * sweep").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ring.h"

#include "port/atomics.h"
#include "storage/shmem.h"

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

/* Forget every id in the ring; the sweep refills it.  Only the sweeper */
void
pgsq_ring_clear(void)
{
	pg_atomic_write_u64(&ring->tail, pg_atomic_read_u64(&ring->head));
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
