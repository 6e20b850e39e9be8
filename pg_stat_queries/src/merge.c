/*-------------------------------------------------------------------------
 *
 * merge.c
 *		Merge: where this backend's counts meet their shared entries.
 *
 * This backend's references to shared entries, the memo and filters that
 * find them without a lookup, the creation of a missing entry within the
 * bound (create-first), and the new statement parse analysis saw, whose
 * entry is made holding its first execution.  The pending table (pending.c) merges through
 * them; the entries themselves are entries.c's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "lib/dshash.h"
#include "utils/injection_point.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "pg_stat_queries.h"


/*-------------------------------------------------------------------------
 * This backend's references to shared entries, and what it remembers
 * to find them without a lookup.
 *
 * Backends keep a local cache of references to entries (the statistics
 * system's), so looking up a known statement takes no lock and writes no
 * shared memory.  On top of it: a memo of the referenced entries by object
 * id (it reads the entry's first line), a filter of the
 * statements seen here with an entry, the entry this backend created last
 * at parse analysis (its first execution is merged at once), and the
 * statements known to have no entry while the table is at its bound.  A
 * missing entry is created here, within the bound eviction.c keeps.
 *-------------------------------------------------------------------------
 */

/*
 * Executions this backend refused since it last added them to the shared
 * count, and the full reset they date from.  Counting each one in shared
 * memory would write a line every backend reads, on a path a table at its
 * bound takes for every statement it cannot track.
 */
static uint64 refused_here = 0;
static uint64 plans_refused_here = 0;
static uint64 refused_here_since_reset = 0;

/*
 * Count executions refused because the table is at its bound: one at
 * execution, or those of pending counts that could not be merged
 * (pending.c)
 */
void
pgsq_refuse_pending(const PgsqKey *key, uint64 executions)
{
	uint64		full_resets;

	/* the statement of a plan refused is counted: only the plan is not */
	if (pgsq_key_is_plan(key))
	{
		pgsq_plan_untracked(executions);
		return;
	}
	full_resets = pg_atomic_read_u64(&pgsq_state->full_resets);

	if (refused_here_since_reset != full_resets)
	{
		/* a full reset came since: it zeroed these */
		refused_here = 0;
		plans_refused_here = 0;
	}
	refused_here_since_reset = full_resets;
	refused_here += executions;
	/* have the statistics system call pgsq_flush_static_cb */
	pgstat_report_fixed = true;
}

/*
 * The plan of an execution refused (pgsq_refuse_pending): counted in
 * untracked_plans, as an entry of its own would have no statement to go
 * with; with the execution's refusal, at the next flush
 */
void
pgsq_plan_refused(void)
{
	plans_refused_here++;
}

/* Count an execution refused because the table is at its bound */
static inline void
count_refused(const PgsqKey *key)
{
	pgsq_refuse_pending(key, 1);
}

/* Add this backend's refused executions to the shared count */
void
pgsq_flush_refused(void)
{
	if (refused_here == 0 && plans_refused_here == 0)
		return;
	if (refused_here_since_reset == pg_atomic_read_u64(&pgsq_state->full_resets))
	{
		if (refused_here > 0)
			pg_atomic_add_fetch_u64(&pgsq_state->refused, refused_here);
		if (plans_refused_here > 0)
			pgsq_plan_untracked(plans_refused_here);
	}
	refused_here = 0;
	plans_refused_here = 0;
}

/*
 * Statements this backend has seen with an entry (it found a reference or
 * created the entry), as bits of a small filter indexed by object id.  A
 * statement never seen here is most likely new, so its entry is created
 * straight away, without a lookup first: at parse analysis if it has
 * constants (as pg_stat_statements does, for the normalized text), else
 * when it ends, holding its first counts (pgsq_create_first).  The
 * insertion finds an entry another backend made, if any.  Looking up a
 * missing entry costs the statistics system's local cache an insertion and
 * a removal as well as the shared lookup.  A statement seen before is
 * looked up first, as an insertion takes its hash partition's lock
 * exclusively.  A bit wrongly set only sends a new statement down the
 * longer path; the filter is emptied when a quarter of its bits are set, so
 * that stays rare.
 */
#define PGSQ_SEEN_BITS (1 << 18)	/* 32 kB */

static uint64 *seen_bits = NULL;
static uint32 seen_set = 0;

/* Has this backend seen the statement with an entry (maybe wrongly yes)? */
static inline bool
seen_objid(uint64 objid)
{
	uint32		bit = (uint32) (objid ^ (objid >> 32)) % PGSQ_SEEN_BITS;

	return seen_bits != NULL &&
		(seen_bits[bit / 64] & (UINT64CONST(1) << (bit % 64))) != 0;
}

/* Note that the statement has an entry this backend found or created */
static inline void
mark_seen(uint64 objid)
{
	uint32		bit = (uint32) (objid ^ (objid >> 32)) % PGSQ_SEEN_BITS;
	uint64		mask = UINT64CONST(1) << (bit % 64);

	if (unlikely(seen_bits == NULL))
		pgsq_refs_reserve_memory();
	if (seen_bits[bit / 64] & mask)
		return;
	if (unlikely(++seen_set > PGSQ_SEEN_BITS / 4))
	{
		memset(seen_bits, 0, PGSQ_SEEN_BITS / 8);
		seen_set = 1;
	}
	seen_bits[bit / 64] |= mask;
}

/*
 * The statements with constants that parse analysis found new, one per
 * nesting level, whose entries are made when they end, holding their first
 * counts and the text normalized from the constants' locations parse
 * analysis kept (texts.c): made at parse analysis, as pg_stat_statements
 * makes it, an entry would cost that execution a second lookup in the
 * shared hash and its lock.  A statement that does not end first gets its
 * entry, without counts, when the next one is parsed at its level or above
 * (statements parsed while it is planned or runs are deeper: SQL functions
 * inlined, a function's statements), but for an EXECUTE, which most likely
 * runs it; else at the flush between statements (pg_stat_queries.c), at the
 * latest when the backend goes idle, or at exit.  Every statement parse
 * analysis saw new still gets its row and its text, as in
 * pg_stat_statements: one only prepared, one whose execution was not
 * sampled, one that failed.
 */
#define PGSQ_PARSED_NEW_LEVELS 8

static struct
{
	PgsqKey		key;
	uint64		objid;
}			parsed_new[PGSQ_PARSED_NEW_LEVELS];

static uint32 parsed_new_waiting = 0;	/* a bit per level */

/* The source of the text parse analysis kept for a statement at level */
static void
parsed_new_source(PgsqTextSource *src, int level)
{
	memset(src, 0, sizeof(*src));
	src->parsed = true;
	src->level = level;
	src->scs = PGSQ_SCS_HERE;	/* as it was lexed, the latest parse */
}

/*
 * Is this a statement parse analysis found new?  Then the caller makes its
 * entry now, holding what it brings (pgsq_create_first), with the text from
 * parsed_src if it has none of its own, and the statement no longer waits.
 */
bool
pgsq_take_parsed_new(const PgsqKey *key, PgsqTextSource *parsed_src)
{
	if (likely(parsed_new_waiting == 0))
		return false;
	for (int level = 0; level < PGSQ_PARSED_NEW_LEVELS; level++)
	{
		if ((parsed_new_waiting & (1U << level)) != 0 &&
			pgsq_key_equals(&parsed_new[level].key, key))
		{
			parsed_new_waiting &= ~(1U << level);
			parsed_new_source(parsed_src, level);
			return true;
		}
	}
	return false;
}

/*
 * Create a statement's entry without a reference (entries.c), holding first
 * if given and its text made from src if given, in room reserved for it
 * first (eviction.c): refused if there is none.  The text is made before
 * the hash partition is locked, and freed if another backend made the
 * entry first.  Unless refused, the statement has an entry now (made here
 * or by another backend): it is marked seen.
 */
static PgsqCreateResult
create_entry(const PgsqKey *key, uint64 objid, const PgsqCounters *first,
			 uint32 usage, const PgsqTextSource *src)
{
	PgsqCreateResult result = CREATE_REFUSED;
	volatile dsa_pointer text = InvalidDsaPointer;

	if (!pgsq_reserve_entry(pgsq_key_is_plan(key)))
		return CREATE_REFUSED;

	/*
	 * An error from here on (out of memory normalizing the text, say) gives
	 * the room back: a claim lost would lower the bound for the uptime.
	 */
	PG_TRY();
	{
		/*
		 * A plan's text (EXPLAIN: more instructions than all else a new
		 * statement costs) is made when the plan runs again (capture.c), not
		 * now: most plans that run once belong to statements that run once.
		 * Nor is a text made while entries cannot be allocated (guard.c): the
		 * entry would be refused, like one refused above for want of room,
		 * and its text is no missing text of a tracked statement.
		 */
		if (src != NULL && !pgsq_key_is_plan(key) &&
			!pgsq_shared_alloc_paused(PGSQ_AREA_STATS))
			text = pgsq_statement_text(key, src);

		/* test/sql/room_claims.sql: an error once room is claimed */
		INJECTION_POINT("pg-stat-queries-create-entry", NULL);
		result = pgsq_create_unreferenced(key, objid, first, usage, text);
	}
	PG_CATCH();
	{
		pgsq_text_discard(text);
		pgsq_entry_not_created(pgsq_key_is_plan(key));
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (result == CREATE_DONE)
		pgsq_entry_created(objid);
	else
	{
		pgsq_text_discard(text);
		pgsq_entry_not_created(pgsq_key_is_plan(key));
	}
	if (result != CREATE_REFUSED)
		mark_seen(objid);		/* it has an entry: look it up next time */
	return result;
}

/*
 * Create the entry of a statement that has none (pgsq_lookup_entry said
 * so), holding its first counts, without a reference (entries.c), and
 * account for it.  CREATE_DONE: the counts are in the new
 * entry.  CREATE_REFUSED: the table is at its bound and the execution was
 * counted as refused.  Otherwise (another backend made the entry, or the
 * table is at its bound and it may have an entry) the caller records the
 * counts the usual way.  A statement that runs only once thus costs no
 * pending counts, no reference to collect after its eviction and no second
 * lookup to merge its execution.
 */
PgsqCreateResult
pgsq_create_first(const PgsqKey *key, uint64 objid,
				  const PgsqCounters *counters, const PgsqTextSource *src)
{
	PgsqCreateResult result;

	if (unlikely(!pgsq_room_for_new_entry(!key->toplevel, pgsq_key_is_plan(key))))
		return CREATE_EXISTS;	/* pgsq_referenced_entry sorts it out */

	/* its first execution marks it used, as pgsq_entry_used would */
	result = create_entry(key, objid, counters, 1, src);
	if (result == CREATE_REFUSED)
		count_refused(key);
	return result;
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
		pgsq_created_entries() + 1;
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
	created = pgsq_created_entries();
	if (pgstat_get_entry_ref(PGSQ_STATS_KIND, PGSQ_KEY_DBOID, objid, false,
							 NULL) != NULL)
		return true;
	memo->objid = objid;
	memo->created_plus_one = created + 1;
	return false;
}

/*
 * The entries of references this backend found, by object id, so that a
 * known statement's entry is found again with a lookup keyed by its 64-bit
 * id (already a hash) instead of the statistics system's lookup keyed by
 * the whole hash key.  The memo holds the entry itself, not the reference:
 * at 50,000 statements each line a known statement touches is a likely
 * cache miss, and the entry's first line, which the merge needs anyway,
 * also says whether it is being dropped (pgsq_text_closed), where the
 * reference and the shared hash entry would take two lines more.
 *
 * The entry stays allocated for as long as this backend's reference to it
 * lives.  The statistics system frees a reference only when this backend
 * drops the entry (pgsq_local_drops) or when it collects references after
 * some backend asked for it (gc_request_count, checked at the start of each
 * of its lookups): whenever either count moved, the memo's generation
 * advances and what it remembered before no longer counts, so it never
 * hands out a freed entry.  (Advancing instead of emptying it: under
 * eviction churn requests come often, and emptying means clearing every
 * slot.)  Both counts are read before the lookup that finds a reference to
 * remember, so one freed by that lookup's own collection is never kept.
 * It holds at most PGSQ_KNOWN_REFS_MAX entries (a table of 131,072 slots,
 * 3 MB) and is emptied when full: below that, a known statement would go
 * to the statistics system's lookup (a hash of the whole key and a cache
 * line more) whenever the backend runs more statements than it holds.
 */
#define PGSQ_KNOWN_REFS_MAX 98304
#define PGSQ_KNOWN_REFS_FIRST 256	/* references it is made for */

typedef struct KnownRef
{
	uint64		objid;
	char		status;			/* used by simplehash */
	uint32		generation;		/* pgsq_refs_gen when remembered */
	PgsqSharedEntry *entry;
} KnownRef;

#define SH_PREFIX known_refs
#define SH_ELEMENT_TYPE KnownRef
#define SH_KEY_TYPE uint64
#define SH_KEY objid
#define SH_HASH_KEY(tb, key) ((uint32) ((key) ^ ((key) >> 32)))
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

static known_refs_hash *known_refs = NULL;

/* The current generation, and the counts it began with (pg_stat_queries.h) */
uint32		pgsq_refs_gen = 1;
uint64		pgsq_refs_gen_gc = 0;
uint64		pgsq_refs_gen_drops = 0;

/*
 * Begin a new generation of references, as references may have been freed
 * since the current one began (see above; pgsq_refs_generation in pg_stat_queries.h
 * checks).  (A generation seen again after 2^32 advances would be taken for
 * current; what is kept under one lives until the next flush, about a
 * second.)
 */
uint32
pgsq_refs_generation_advance(uint64 gc)
{
	if (++pgsq_refs_gen == 0)
	{
		/* wrapped around: forget for good what older ones remembered */
		if (known_refs != NULL)
			known_refs_reset(known_refs);
		pgsq_refs_gen = 1;
	}
	pgsq_refs_gen_gc = gc;
	pgsq_refs_gen_drops = pgsq_local_drops;
	return pgsq_refs_gen;
}

/*
 * Make the seen filter and the memo at their first size: before any
 * statement runs (see _PG_init), or on first use when the library was not
 * preloaded.
 */
void
pgsq_refs_reserve_memory(void)
{
	if (seen_bits == NULL)
		seen_bits = MemoryContextAllocZero(TopMemoryContext,
										   PGSQ_SEEN_BITS / 8);
	if (known_refs == NULL)
		known_refs = known_refs_create(TopMemoryContext,
									   PGSQ_KNOWN_REFS_FIRST, NULL);
}

/* The remembered entry of a statement, or NULL */
static inline PgsqSharedEntry *
known_entry(uint64 objid)
{
	uint32		generation = pgsq_refs_generation();
	KnownRef   *known;

	if (unlikely(known_refs == NULL))
		pgsq_refs_reserve_memory();
	known = known_refs_lookup(known_refs, objid);
	return known != NULL && known->generation == generation ?
		known->entry : NULL;
}

/* Remember the entry of a live reference found after known_entry() was read */
static inline PgsqSharedEntry *
remember_known_entry(uint64 objid, PgStat_EntryRef *entry_ref)
{
	bool		found;
	KnownRef   *known;

	/* full, mostly of older generations under churn: start again */
	if (known_refs->members >= PGSQ_KNOWN_REFS_MAX)
		known_refs_reset(known_refs);
	known = known_refs_insert(known_refs, objid, &found);
	known->generation = pgsq_refs_gen;
	known->entry = (PgsqSharedEntry *) entry_ref->shared_stats;
	mark_seen(objid);
	return known->entry;
}

/*
 * The remembered entry of a statement, unless it is being dropped.  (An
 * entry is closed to texts under its lock before any drop of ours, and
 * PostgreSQL drops entries of ours only at startup; a drop that closed
 * nothing would still advance the generation, see above, by its request
 * to collect references.)
 */
static inline PgsqSharedEntry *
known_live_entry(uint64 objid)
{
	PgsqSharedEntry *entry = known_entry(objid);

	if (entry != NULL && likely(!pgsq_text_closed(entry)))
		return entry;
	return NULL;
}

/*
 * Look up a statement's existing entry, without creating it, and remember
 * it.  NULL if it has none, or, with *stale set, if this backend's
 * reference to its dropped entry cannot be collected yet (see
 * request_gc_if_due).  The caller read the memo's generation first.  The
 * shared hash entry's flag decides whether the entry was dropped: one only
 * closed to texts is about to be, and waiting for its drop would spin.
 */
static PgsqSharedEntry *
look_up_existing(uint64 objid, bool *stale)
{
	for (;;)
	{
		PgStat_EntryRef *entry_ref;

		entry_ref = pgstat_get_entry_ref(PGSQ_STATS_KIND, PGSQ_KEY_DBOID,
										 objid, false, NULL);
		if (entry_ref == NULL)
			return NULL;
		if (likely(!entry_ref->shared_entry->dropped))
			return remember_known_entry(objid, entry_ref);
		/* have it collected, and look again */
		if (!request_gc_if_due())
		{
			*stale = true;
			return NULL;
		}
	}
}

/*
 * The entry of a statement (objid is pgsq_objid(key)), found or created,
 * with a reference from this backend that keeps it allocated while the
 * generation of references (pg_stat_queries.h) stays the same.  The memo is looked at
 * first; an entry found otherwise is remembered there.  A cached reference
 * may point to an entry that a reset or eviction dropped: have it
 * collected, and look again to find or create a live entry.
 *
 * If the reference cannot be collected right now (see request_gc_if_due)
 * and the caller passed "stale", set *stale and return NULL: the caller
 * keeps its counts aside until the reference is gone (pending.c).  With
 * stale == NULL, collection is requested unconditionally.  NULL without
 * *stale means the table is at its bound: the execution is refused.
 */
PgsqSharedEntry *
pgsq_referenced_entry(const PgsqKey *key, uint64 objid, bool *stale)
{
	PgsqSharedEntry *entry;

	if (stale != NULL)
		*stale = false;

	/*
	 * A statement this backend references needs no look at the table's fill,
	 * whose counter every new entry and eviction writes: one local lookup.
	 * (The memo's generation is read here, before any lookup below whose
	 * result it may remember.)
	 */
	entry = known_live_entry(objid);
	if (entry != NULL)
		return entry;

	/* at the bound, only statements that have an entry are counted */
	if (unlikely(!pgsq_room_for_new_entry(!key->toplevel, pgsq_key_is_plan(key))) &&
		!entry_exists(objid))
	{
		count_refused(key);
		return NULL;
	}

	for (;;)
	{
		PgStat_EntryRef *entry_ref;

		entry_ref = pgstat_get_entry_ref(PGSQ_STATS_KIND, PGSQ_KEY_DBOID,
										 objid, false, NULL);
		if (entry_ref == NULL)
		{
			/*
			 * missing: create it in room reserved first, then reference it;
			 * refused if others filled the table first, or shared memory is
			 * out (never an error)
			 */
			if (create_entry(key, objid, NULL, 0, NULL) == CREATE_REFUSED)
			{
				count_refused(key);
				return NULL;
			}
			continue;
		}
		if (likely(!entry_ref->shared_entry->dropped))
			return remember_known_entry(objid, entry_ref);

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
 * At execution, for the first counts of a batch: the entry of a statement
 * this backend references or finds, or NULL.  *missing is set when the
 * entry is missing, or likely so as this backend never saw the statement
 * (then it is not even looked up): the caller creates the entry with
 * pgsq_create_first.  *stale as for pgsq_referenced_entry; the caller
 * passes both set to false.
 */
PgsqSharedEntry *
pgsq_lookup_entry(uint64 objid, bool *stale, bool *missing)
{
	PgsqSharedEntry *entry;

	/* the memo only holds statements seen here (or lost from the filter) */
	if (!seen_objid(objid))
	{
		*missing = true;
		return NULL;
	}
	entry = known_live_entry(objid);
	if (entry == NULL)
		entry = look_up_existing(objid, stale);
	*missing = entry == NULL && !*stale;
	return entry;
}

/*
 * At parse analysis: does this backend refer to the statement's live entry,
 * and has the entry its text?  Then parse analysis has nothing to do for
 * it: no entry to create, and no text to make when it ends.  (Should the
 * entry be evicted before then, the text made for its next entry has the
 * statement's literals replaced without their locations: the same rule.)
 */
bool
pgsq_parse_needs_nothing(const PgsqKey *key)
{
	PgsqSharedEntry *entry = known_live_entry(pgsq_objid(key));

	return entry != NULL && pgsq_text_hint(entry);
}

/*
 * At parse analysis of a statement with constants: see that it gets an
 * entry, so that a new one gets its text normalized from the constants'
 * locations.  A statement this backend refers to has one, and needs
 * nothing more: its text is seen to when it ends.  One this backend never
 * saw is most likely new, and one seen before is looked up: a new one's
 * entry is made when it ends, or at the latest by whatever this backend
 * does next at its level (see parsed_new), from the text parse analysis kept
 * (text_kept), else now (src).  Nothing is made while this backend's
 * reference to the statement's dropped entry cannot be collected yet (see
 * pgsq_referenced_entry): its counts will be parked, with its text.  At the
 * bound, nothing is made or counted here: the execution is, when it ends.
 */
void
pgsq_parse_see_entry(const PgsqKey *key, bool text_kept,
					 const PgsqTextSource *src)
{
	uint64		objid = pgsq_objid(key);
	bool		stale = false;

	if (known_live_entry(objid) != NULL)
		return;
	if (seen_objid(objid) &&
		(look_up_existing(objid, &stale) != NULL || stale))
		return;
	if (unlikely(!pgsq_room_for_new_entry(!key->toplevel, pgsq_key_is_plan(key))))
		return;
	if (!text_kept || src->level >= PGSQ_PARSED_NEW_LEVELS)
	{
		(void) create_entry(key, objid, NULL, 0, src);
		return;
	}
	pgsq_create_parsed_new(src->level); /* one waits per level */
	parsed_new[src->level].key = *key;
	parsed_new[src->level].objid = objid;
	parsed_new_waiting |= 1U << src->level;
	/* have the statistics system call our flush, which makes it if need be */
	pgstat_report_fixed = true;
}

/*
 * Make the entries of the statements parse analysis found new at this
 * nesting level or deeper, which did not end first (see parsed_new):
 * without counts, with the text parse analysis kept.
 */
void
pgsq_create_parsed_new(int from_level)
{
	for (int level = Max(from_level, 0); level < PGSQ_PARSED_NEW_LEVELS; level++)
	{
		PgsqTextSource src;

		if (likely((parsed_new_waiting >> level) == 0))
			return;
		if ((parsed_new_waiting & (1U << level)) == 0)
			continue;
		parsed_new_waiting &= ~(1U << level);
		parsed_new_source(&src, level);
		if (pgsq_room_for_new_entry(!parsed_new[level].key.toplevel, false))
			(void) create_entry(&parsed_new[level].key, parsed_new[level].objid,
								NULL, 0, &src);
	}
}
