/*-------------------------------------------------------------------------
 *
 * table.c
 *		The table of shared entries: partitioned chains of entry slots in
 *		our own DSA area, and the free lists that reuse them.
 *
 * An entry lives in a slot.  Slots are made in batches and never given
 * back to the area, so any backend may keep a pointer to one: the slot's
 * generation says whether it still holds the entry that was found there.
 * A fixed number of partitions, each with its lock, hold chains of the
 * live slots by object id and a list of free ones; a partition short of
 * free slots takes a batch from a shared pool, and gives one back when it
 * has too many, so that under a stream of new statements the slots
 * eviction frees are reused without DSA's locks, and nearly always without
 * any lock but the partition's.  docs/design.md ("The table of entries")
 * has the locking rules.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/shmem.h"
#include "storage/spin.h"

#include "pg_stat_queries.h"

/* Partitions of the table, each with its lock (a power of two) */
#define PGSQ_TABLE_PARTITIONS 64

/* Slots made, or moved between a partition and the pool, at once */
#define PGSQ_SLOT_BATCH 16

/* Free slots above which a partition gives a batch to the pool */
#define PGSQ_PARTITION_FREE_MAX (2 * PGSQ_SLOT_BATCH)

/* Batches the pool holds at most; a partition keeps what does not fit */
#define PGSQ_POOL_BATCHES 1024

/* A partition's first chain heads; it doubles them as it fills */
#define PGSQ_BUCKETS_FIRST 64

/* Bytes from one slot to the next: whole cache lines */
#define SLOT_SIZE TYPEALIGN(PG_CACHE_LINE_SIZE, sizeof(PgsqSharedEntry))

/* One partition; all of it under its lock */
typedef struct TablePartition
{
	uint32		nbuckets;		/* a power of two, or 0 before the first entry */
	uint32		count;			/* live entries in its chains */
	dsa_pointer buckets;		/* nbuckets chain heads */
	dsa_pointer free_head;		/* free slots, linked through next */
	uint32		free_count;
} TablePartition;

/* A partition alone in its cache lines */
typedef union PaddedPartition
{
	TablePartition p;
	char		pad[PG_CACHE_LINE_SIZE];
} PaddedPartition;

/* The table's shared state */
typedef struct TableShared
{
	LWLockPadded *locks;		/* one per partition */
	slock_t		pool_lock;		/* protects pool and pool_count */
	int			pool_count;
	dsa_pointer pool[PGSQ_POOL_BATCHES];	/* heads of batches of free slots,
											 * each linked through next */
	PaddedPartition partitions[PGSQ_TABLE_PARTITIONS];
} TableShared;

static TableShared *table = NULL;

/* Bytes of fixed shared memory for the table's state */
Size
pgsq_table_shmem_size(void)
{
	return MAXALIGN(sizeof(TableShared));
}

/* Create or find the table's state (shmem_startup_hook, AddinShmemInitLock held) */
void
pgsq_table_shmem_startup(LWLockPadded *locks)
{
	bool		found;

	table = ShmemInitStruct("pg_stat_queries table", pgsq_table_shmem_size(),
							&found);
	if (found)
		return;
	memset(table, 0, pgsq_table_shmem_size());
	table->locks = locks;
	SpinLockInit(&table->pool_lock);
	for (int i = 0; i < PGSQ_TABLE_PARTITIONS; i++)
	{
		table->partitions[i].p.buckets = InvalidDsaPointer;
		table->partitions[i].p.free_head = InvalidDsaPointer;
	}
}

/* LWLocks the table needs in our named tranche */
int
pgsq_table_lock_count(void)
{
	return PGSQ_TABLE_PARTITIONS;
}

/* The entry in a slot */
PgsqSharedEntry *
pgsq_slot_entry(dsa_pointer slot)
{
	return (PgsqSharedEntry *) dsa_get_address(pgsq_text_area(), slot);
}

/* The partition of an object id (its high half; buckets use the low one) */
int
pgsq_table_partition(uint64 objid)
{
	return (int) ((objid >> 32) & (PGSQ_TABLE_PARTITIONS - 1));
}

/* Lock a partition */
void
pgsq_table_lock(int part, LWLockMode mode)
{
	LWLockAcquire(&table->locks[part].lock, mode);
}

/* Unlock it */
void
pgsq_table_unlock(int part)
{
	LWLockRelease(&table->locks[part].lock);
}

/* Is the partition locked by this backend exclusively? */
static inline bool
partition_held(int part)
{
	return LWLockHeldByMeInMode(&table->locks[part].lock, LW_EXCLUSIVE);
}

/* The head of the chain an object id is in, if the partition has any */
static inline dsa_pointer *
chain_head(TablePartition *p, uint64 objid)
{
	dsa_pointer *heads;

	if (p->nbuckets == 0)
		return NULL;
	heads = (dsa_pointer *) dsa_get_address(pgsq_text_area(), p->buckets);
	return &heads[(uint32) objid & (p->nbuckets - 1)];
}

/* The live entry of an object id, its partition locked (either mode) */
PgsqSharedEntry *
pgsq_table_lookup_locked(int part, uint64 objid)
{
	dsa_pointer *head = chain_head(&table->partitions[part].p, objid);
	dsa_pointer slot;

	if (head == NULL)
		return NULL;
	for (slot = *head; DsaPointerIsValid(slot);)
	{
		PgsqSharedEntry *entry = pgsq_slot_entry(slot);

		if (entry->objid == objid)
			return entry;
		slot = entry->next;
	}
	return NULL;
}

/*
 * The live entry of an object id and its generation, or NULL: found under
 * its partition lock, held shared for the look alone.  The entry may be
 * dropped right after; its slot stays, and its generation tells.
 */
PgsqSharedEntry *
pgsq_table_find(uint64 objid, uint32 *generation)
{
	int			part = pgsq_table_partition(objid);
	PgsqSharedEntry *entry;

	pgsq_table_lock(part, LW_SHARED);
	entry = pgsq_table_lookup_locked(part, objid);
	if (entry != NULL)
		*generation = pg_atomic_read_u32(&entry->generation);
	pgsq_table_unlock(part);
	return entry;
}

/*
 * Double a partition's chain heads (or make its first), if shared memory
 * allows; else leave them.  Partition lock held exclusively.
 */
static void
grow_buckets(TablePartition *p)
{
	dsa_area   *area = pgsq_text_area();
	uint32		nbuckets = p->nbuckets == 0 ? PGSQ_BUCKETS_FIRST : p->nbuckets * 2;
	dsa_pointer buckets;
	dsa_pointer *heads;

	buckets = dsa_allocate_extended(area, nbuckets * sizeof(dsa_pointer),
									DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(buckets))
		return;
	heads = (dsa_pointer *) dsa_get_address(area, buckets);
	for (uint32 i = 0; i < nbuckets; i++)
		heads[i] = InvalidDsaPointer;
	if (p->nbuckets > 0)
	{
		dsa_pointer *old = (dsa_pointer *) dsa_get_address(area, p->buckets);

		for (uint32 i = 0; i < p->nbuckets; i++)
		{
			dsa_pointer slot = old[i];

			while (DsaPointerIsValid(slot))
			{
				PgsqSharedEntry *entry = pgsq_slot_entry(slot);
				dsa_pointer next = entry->next;
				dsa_pointer *head = &heads[(uint32) entry->objid & (nbuckets - 1)];

				entry->next = *head;
				*head = slot;
				slot = next;
			}
		}
		dsa_free(area, p->buckets);
	}
	p->buckets = buckets;
	p->nbuckets = nbuckets;
}

/*
 * Make a batch of free slots from the area, linked through next, or return
 * InvalidDsaPointer if shared memory is out.  Each slot gets its lock once,
 * for good; its data is zeroed when it is taken (pgsq_table_new_slot).
 */
static dsa_pointer
make_batch(void)
{
	dsa_area   *area = pgsq_text_area();
	dsa_pointer chunk;
	dsa_pointer first;
	dsa_pointer next = InvalidDsaPointer;

	chunk = dsa_allocate_extended(area, SLOT_SIZE * PGSQ_SLOT_BATCH +
								  PG_CACHE_LINE_SIZE,
								  DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(chunk))
		return InvalidDsaPointer;
	first = TYPEALIGN(PG_CACHE_LINE_SIZE, chunk);
	for (int i = PGSQ_SLOT_BATCH - 1; i >= 0; i--)
	{
		dsa_pointer slot = first + (dsa_pointer) i * SLOT_SIZE;
		PgsqSharedEntry *entry = pgsq_slot_entry(slot);

		LWLockInitialize(&entry->lock, pgsq_state->entry_tranche_id);
		pg_atomic_init_u32(&entry->generation, 0);
		pg_atomic_init_u32(&entry->text_state, PGSQ_TEXT_NONE);
		pg_atomic_init_u32(&entry->usage, 0);
		pg_atomic_init_u32(&entry->swept_pass, 0);
		entry->text = InvalidDsaPointer;
		entry->rare = InvalidDsaPointer;
		entry->self = slot;
		entry->next = next;
		next = slot;
	}
	return first;
}

/* Take a batch from the pool, or InvalidDsaPointer */
static dsa_pointer
pool_take(void)
{
	dsa_pointer batch = InvalidDsaPointer;

	SpinLockAcquire(&table->pool_lock);
	if (table->pool_count > 0)
		batch = table->pool[--table->pool_count];
	SpinLockRelease(&table->pool_lock);
	return batch;
}

/* Give a batch to the pool; false if it is full */
static bool
pool_give(dsa_pointer batch)
{
	bool		given = false;

	SpinLockAcquire(&table->pool_lock);
	if (table->pool_count < PGSQ_POOL_BATCHES)
	{
		table->pool[table->pool_count++] = batch;
		given = true;
	}
	SpinLockRelease(&table->pool_lock);
	return given;
}

/*
 * A free slot of another partition than "part", whose lock is held, or
 * InvalidDsaPointer: taken from the first partition with free slots whose
 * lock is free at once, so that two backends doing this never wait for
 * each other.  For a partition that has none, when the pool has none
 * either: memory all in slots, all on other partitions' lists (a small
 * table, or one just reset after its area filled up).
 */
static dsa_pointer
steal_free_slot(int part)
{
	for (int i = 1; i < PGSQ_TABLE_PARTITIONS; i++)
	{
		int			other = (part + i) % PGSQ_TABLE_PARTITIONS;
		TablePartition *q = &table->partitions[other].p;
		dsa_pointer slot = InvalidDsaPointer;

		/* read without its lock: a hint */
		if (q->free_count == 0 ||
			!LWLockConditionalAcquire(&table->locks[other].lock, LW_EXCLUSIVE))
			continue;
		if (q->free_count > 0)
		{
			slot = q->free_head;
			q->free_head = pgsq_slot_entry(slot)->next;
			q->free_count--;
		}
		pgsq_table_unlock(other);
		if (DsaPointerIsValid(slot))
			return slot;
	}
	return InvalidDsaPointer;
}

/*
 * A free slot of the partition for a new entry, its data zeroed and open to
 * texts, or NULL if shared memory is out.  The partition takes a batch from
 * the pool when it has none, else a slot of another partition, else makes a
 * batch.  Partition lock held exclusively; run through pgsq_shared_alloc,
 * as the area may need a new segment (nothing is half-made if that fails),
 * also for more chain heads.  The caller fills the entry and links it
 * (pgsq_table_link) before releasing the lock.
 */
PgsqSharedEntry *
pgsq_table_new_slot(int part)
{
	TablePartition *p = &table->partitions[part].p;
	PgsqSharedEntry *entry;

	Assert(partition_held(part));
	if (p->nbuckets == 0 || p->count >= p->nbuckets)
		grow_buckets(p);
	if (p->nbuckets == 0)
		return NULL;
	if (p->free_count == 0)
	{
		dsa_pointer batch = pool_take();

		if (DsaPointerIsValid(batch))
			p->free_count = PGSQ_SLOT_BATCH;
		else if (DsaPointerIsValid(batch = steal_free_slot(part)))
		{
			pgsq_slot_entry(batch)->next = InvalidDsaPointer;
			p->free_count = 1;
		}
		else if (DsaPointerIsValid(batch = make_batch()))
			p->free_count = PGSQ_SLOT_BATCH;
		else
			return NULL;
		p->free_head = batch;
	}
	entry = pgsq_slot_entry(p->free_head);
	Assert((pg_atomic_read_u32(&entry->generation) & 1) == 0);
	Assert(!DsaPointerIsValid(entry->text) && !DsaPointerIsValid(entry->rare));
	p->free_head = entry->next;
	p->free_count--;
	memset(&entry->data, 0, sizeof(entry->data));
	pg_atomic_write_u32(&entry->usage, 0);
	pg_atomic_write_u32(&entry->swept_pass, 0);
	pg_atomic_write_u32(&entry->text_state, PGSQ_TEXT_NONE);
	entry->next = InvalidDsaPointer;
	return entry;
}

/*
 * Link a filled new entry into its partition's chain: from now on it is
 * live, in its new generation (returned).  Everything a reader without
 * locks may look at is written before (the barrier of the generation's
 * advance).  Partition lock held exclusively.
 */
uint32
pgsq_table_link(int part, PgsqSharedEntry *entry, uint64 objid)
{
	TablePartition *p = &table->partitions[part].p;
	dsa_pointer *head = chain_head(p, objid);
	uint32		generation;

	Assert(partition_held(part) && head != NULL);
	entry->objid = objid;
	entry->next = *head;
	generation = pg_atomic_add_fetch_u32(&entry->generation, 1);
	Assert((generation & 1) != 0);
	*head = entry->self;
	p->count++;
	return generation;
}

/*
 * Give back free slots of a partition above its share to the pool, in a
 * batch: those after its first, which its dropper may still be looking at.
 */
static void
give_excess(TablePartition *p)
{
	PgsqSharedEntry *first = pgsq_slot_entry(p->free_head);
	PgsqSharedEntry *last = first;
	dsa_pointer batch = first->next;

	for (int i = 0; i < PGSQ_SLOT_BATCH; i++)
		last = pgsq_slot_entry(last->next);
	/* last is the batch's last slot */
	if (!pool_give(batch))
		return;
	first->next = last->next;
	last->next = InvalidDsaPointer;
	p->free_count -= PGSQ_SLOT_BATCH;
}

/*
 * Unlink a live entry, closed by its dropper: its slot is free from now on
 * (its generation advanced, so that every pointer kept to it knows), in
 * its partition's free list.  Partition lock and entry lock held
 * exclusively.
 */
void
pgsq_table_unlink(int part, PgsqSharedEntry *entry)
{
	TablePartition *p = &table->partitions[part].p;
	dsa_pointer *link = chain_head(p, entry->objid);

	Assert(partition_held(part));
	Assert(LWLockHeldByMeInMode(&entry->lock, LW_EXCLUSIVE));
	Assert(link != NULL);
	while (*link != entry->self)
	{
		Assert(DsaPointerIsValid(*link));
		link = &pgsq_slot_entry(*link)->next;
	}
	*link = entry->next;
	p->count--;
	pg_atomic_fetch_add_u32(&entry->generation, 1);
	entry->next = p->free_head;
	p->free_head = entry->self;
	p->free_count++;
	if (p->free_count > PGSQ_PARTITION_FREE_MAX)
		give_excess(p);
}

/*
 * Begin a scan of every live entry, partition by partition from partition
 * "from", each locked in mode while its entries are returned.  In
 * exclusive mode the caller may unlink the entry returned last.
 */
void
pgsq_table_scan_begin(PgsqTableScan *scan, LWLockMode mode, int from)
{
	scan->mode = mode;
	scan->part = from - 1;
	scan->bucket = 0;
	scan->next = InvalidDsaPointer;
	scan->locked = false;
}

/*
 * The next live entry of a scan, its partition locked, or NULL at the end
 * (then nothing is locked).  scan->part is the partition it is in.
 */
PgsqSharedEntry *
pgsq_table_scan_next(PgsqTableScan *scan)
{
	for (;;)
	{
		TablePartition *p;

		if (DsaPointerIsValid(scan->next))
		{
			PgsqSharedEntry *entry = pgsq_slot_entry(scan->next);

			scan->next = entry->next;
			return entry;
		}
		if (scan->locked)
		{
			p = &table->partitions[scan->part].p;
			if (scan->bucket < p->nbuckets)
			{
				dsa_pointer *heads = dsa_get_address(pgsq_text_area(),
													 p->buckets);

				scan->next = heads[scan->bucket++];
				continue;
			}
			pgsq_table_unlock(scan->part);
			scan->locked = false;
		}
		if (++scan->part >= PGSQ_TABLE_PARTITIONS)
			return NULL;
		pgsq_table_lock(scan->part, scan->mode);
		scan->locked = true;
		scan->bucket = 0;
	}
}

/* End a scan before its end: release its partition's lock */
void
pgsq_table_scan_end(PgsqTableScan *scan)
{
	if (scan->locked)
		pgsq_table_unlock(scan->part);
	scan->locked = false;
	scan->next = InvalidDsaPointer;
	scan->part = PGSQ_TABLE_PARTITIONS;
}
