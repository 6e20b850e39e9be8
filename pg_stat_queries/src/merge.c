/*-------------------------------------------------------------------------
 *
 * merge.c
 *		Merge: where this backend's counts meet their shared entries.
 *
 * What this backend remembers of shared entries, the memo and filters that
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
 * What this backend remembers of the shared entries, to find them without
 * a lookup.
 *
 * A memo of the entries found by object id, with the generation they were
 * found in, so that looking up a known statement takes no lock and writes
 * no shared memory; a filter of the statements seen here with an entry;
 * the statements parse analysis found new, whose entries are made when
 * they end; and the statements known to have no entry while the table is
 * at its bound.  A missing entry is created here, within the bound
 * eviction.c keeps.
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
 * Statements this backend has seen with an entry (it found or created the
 * entry), as bits of a small filter indexed by object id.  A
 * statement never seen here is most likely new, so its entry is created
 * straight away, without a lookup first: at parse analysis if it has
 * constants (as pg_stat_statements does, for the normalized text), else
 * when it ends, holding its first counts (pgsq_create_first).  The
 * insertion finds an entry another backend made, if any.  A statement seen
 * before is looked up first, as an insertion takes its partition's lock
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
 * table and its lock.  A statement that does not end first gets its
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

static void remember_known_entry(uint64 objid, PgsqSharedEntry *entry,
								 uint32 generation);

/*
 * Create a statement's entry (entries.c), holding first if given and its
 * text made from src if given, in room reserved for it first (eviction.c):
 * refused if there is none.  The text is made before the partition is
 * locked, and freed if another backend made the entry first.  Unless
 * refused, the statement has an entry now (made here or by another
 * backend): it is marked seen.  If made here and entry is not NULL, *entry
 * and *generation are the new entry's, remembered in the memo; else it is
 * not remembered: most statements whose entry is made holding their first
 * execution run once, and the next execution of one that does not looks
 * it up.
 */
static PgsqCreateResult
create_entry(const PgsqKey *key, uint64 objid, const PgsqCounters *first,
			 uint32 usage, const PgsqTextSource *src,
			 PgsqSharedEntry **entry, uint32 *generation)
{
	PgsqCreateResult result = CREATE_REFUSED;
	volatile dsa_pointer text = InvalidDsaPointer;
	PgsqSharedEntry *made = NULL;
	uint32		made_generation = 0;

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
			!pgsq_shared_alloc_paused(PGSQ_AREA_ENTRIES))
			text = pgsq_statement_text(key, src);

		/* test/sql/room_claims.sql: an error once room is claimed */
		INJECTION_POINT("pg-stat-queries-create-entry", NULL);
		result = pgsq_create_entry(key, objid, first, usage, text,
								   &made, &made_generation);
	}
	PG_CATCH();
	{
		pgsq_text_discard(text);
		pgsq_entry_not_created(pgsq_key_is_plan(key));
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (result == CREATE_DONE)
	{
		pgsq_entry_created(made, made_generation);
		if (entry != NULL)
		{
			remember_known_entry(objid, made, made_generation);
			*entry = made;
			*generation = made_generation;
		}
	}
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
 * so), holding its first counts, and account for it.  CREATE_DONE: the
 * counts are in the new entry.  CREATE_REFUSED: the table is at its bound
 * and the execution was counted as refused.  Otherwise (another backend
 * made the entry, or the table is at its bound and it may have an entry)
 * the caller records the counts the usual way.  A statement that runs only
 * once thus costs no pending counts and no second lookup to merge its
 * execution.
 */
PgsqCreateResult
pgsq_create_first(const PgsqKey *key, uint64 objid,
				  const PgsqCounters *counters, const PgsqTextSource *src)
{
	PgsqCreateResult result;

	if (unlikely(!pgsq_room_for_new_entry(!key->toplevel, pgsq_key_is_plan(key))))
		return CREATE_EXISTS;	/* pgsq_find_or_create_entry sorts it out */

	/* its first execution marks it used, as pgsq_entry_used would */
	result = create_entry(key, objid, counters, 1, src, NULL, NULL);
	if (result == CREATE_REFUSED)
		count_refused(key);
	return result;
}

/*
 * Statements this backend found without an entry while the table was at its
 * bound, each with the number of entries created so far at that moment.
 * Until another entry is created anywhere, such a statement still has none,
 * and a refused execution needs no lookup in the table.  A small
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
	uint32		generation;

	if (known_absent(objid))
		return false;

	/*
	 * Read the count before looking: an entry is counted only after it is in
	 * the table, so one this lookup misses changes the count we remember.
	 */
	created = pgsq_created_entries();
	if (pgsq_table_find(objid, &generation) != NULL)
		return true;
	memo->objid = objid;
	memo->created_plus_one = created + 1;
	return false;
}

/*
 * The entries this backend found, by object id, so that a known
 * statement's entry is found again without any lock.  The memo holds the
 * entry's slot and the generation it was found in: slots are never freed,
 * so the pointer is always good, and the entry's first line, which the
 * merge needs anyway, says whether the slot still holds it (pgsq_entry_is)
 * and whether it is being dropped (pgsq_text_closed).  It holds at most
 * PGSQ_KNOWN_REFS_MAX entries (a table of 131,072 slots, 3 MB) and is
 * emptied when full.
 */
#define PGSQ_KNOWN_REFS_MAX 98304
#define PGSQ_KNOWN_REFS_FIRST 256	/* entries it is made for */

typedef struct KnownRef
{
	uint64		objid;
	char		status;			/* used by simplehash */
	uint32		generation;		/* the slot's when found */
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

/* Remember the entry found in a slot in a generation */
static void
remember_known_entry(uint64 objid, PgsqSharedEntry *entry, uint32 generation)
{
	bool		found;
	KnownRef   *known;

	if (unlikely(known_refs == NULL))
		pgsq_refs_reserve_memory();
	/* full, mostly of dropped entries under churn: start again */
	if (known_refs->members >= PGSQ_KNOWN_REFS_MAX)
		known_refs_reset(known_refs);
	known = known_refs_insert(known_refs, objid, &found);
	known->generation = generation;
	known->entry = entry;
	mark_seen(objid);
}

/*
 * The remembered entry of a statement, if its slot still holds it and it is
 * not being dropped; else NULL.  (An entry is closed to texts under its
 * lock before it is dropped.)
 */
static inline PgsqSharedEntry *
known_live_entry(uint64 objid, uint32 *generation)
{
	KnownRef   *known;

	if (unlikely(known_refs == NULL))
		pgsq_refs_reserve_memory();
	known = known_refs_lookup(known_refs, objid);
	if (known != NULL && likely(pgsq_entry_is(known->entry, known->generation) &&
								!pgsq_text_closed(known->entry)))
	{
		*generation = known->generation;
		return known->entry;
	}
	return NULL;
}

/*
 * Look up a statement's existing entry in the table, without creating it,
 * and remember it; NULL if it has none.
 */
static PgsqSharedEntry *
look_up_existing(uint64 objid, uint32 *generation)
{
	PgsqSharedEntry *entry = pgsq_table_find(objid, generation);

	if (entry != NULL)
		remember_known_entry(objid, entry, *generation);
	return entry;
}

/*
 * The entry of a statement (objid is pgsq_objid(key)), found or created,
 * and the generation it was found in (*generation).  The memo is looked at
 * first; an entry found otherwise is remembered there.  One created gets
 * its text from src, if given, as it is made: a text given afterwards would
 * be newer than the entry's row, and a reader of changes that saw the row
 * in between would not get it with the row.  NULL means the table is at
 * its bound, or shared memory is out: the execution is refused (and
 * counted so).
 */
PgsqSharedEntry *
pgsq_find_or_create_entry(const PgsqKey *key, uint64 objid,
						  const PgsqTextSource *src, uint32 *generation)
{
	PgsqSharedEntry *entry;

	/*
	 * A statement this backend knows needs no look at the table's fill, whose
	 * counter every new entry and eviction writes: one local lookup.
	 */
	entry = known_live_entry(objid, generation);
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
		entry = look_up_existing(objid, generation);
		if (entry != NULL)
			return entry;

		/*
		 * missing: create it in room reserved first; refused if others filled
		 * the table first, or shared memory is out (never an error)
		 */
		switch (create_entry(key, objid, NULL, 0, src, &entry, generation))
		{
			case CREATE_DONE:
				return entry;
			case CREATE_REFUSED:
				count_refused(key);
				return NULL;
			case CREATE_EXISTS:
				break;			/* another backend's: look again */
		}
	}
}

/*
 * At execution, for the first counts of a batch: the entry of a statement
 * this backend knows or finds, and its generation, or NULL.  *missing is
 * set when the entry is missing, or likely so as this backend never saw
 * the statement (then it is not even looked up): the caller creates the
 * entry with pgsq_create_first.
 */
PgsqSharedEntry *
pgsq_lookup_entry(uint64 objid, uint32 *generation, bool *missing)
{
	PgsqSharedEntry *entry;

	/* the memo only holds statements seen here (or lost from the filter) */
	if (!seen_objid(objid))
	{
		*missing = true;
		return NULL;
	}
	entry = known_live_entry(objid, generation);
	if (entry == NULL)
		entry = look_up_existing(objid, generation);
	*missing = entry == NULL;
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
	uint32		generation;
	PgsqSharedEntry *entry = known_live_entry(pgsq_objid(key), &generation);

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
 * (text_kept), else now (src).  At the bound, nothing is made or counted
 * here: the execution is, when it ends.
 */
void
pgsq_parse_see_entry(const PgsqKey *key, bool text_kept,
					 const PgsqTextSource *src)
{
	uint64		objid = pgsq_objid(key);
	uint32		generation;

	if (known_live_entry(objid, &generation) != NULL)
		return;
	if (seen_objid(objid) && look_up_existing(objid, &generation) != NULL)
		return;
	if (unlikely(!pgsq_room_for_new_entry(!key->toplevel, pgsq_key_is_plan(key))))
		return;
	if (!text_kept || src->level >= PGSQ_PARSED_NEW_LEVELS)
	{
		(void) create_entry(key, objid, NULL, 0, src, NULL, NULL);
		return;
	}
	pgsq_create_parsed_new(src->level); /* one waits per level */
	parsed_new[src->level].key = *key;
	parsed_new[src->level].objid = objid;
	parsed_new_waiting |= 1U << src->level;
	/* have the statistics system call our flush, which makes it if need be */
	pgstat_report_fixed = true;
}

/* Make the entry of the statement parse analysis found new at a level */
static void
create_parsed_new_at(void *arg)
{
	int			level = *(int *) arg;
	PgsqTextSource src;

	parsed_new_source(&src, level);
	if (pgsq_room_for_new_entry(!parsed_new[level].key.toplevel, false))
		(void) create_entry(&parsed_new[level].key, parsed_new[level].objid,
							NULL, 0, &src, NULL, NULL);
}

/*
 * Make the entries of the statements parse analysis found new at this
 * nesting level or deeper, which did not end first (see parsed_new):
 * without counts, with the text parse analysis kept.  This runs while
 * another statement is parsed, or between statements: an error making an
 * earlier statement's text (out of memory) must not reach it, and costs
 * only that entry.
 */
void
pgsq_create_parsed_new(int from_level)
{
	for (int level = Max(from_level, 0); level < PGSQ_PARSED_NEW_LEVELS; level++)
	{
		if (likely((parsed_new_waiting >> level) == 0))
			return;
		if ((parsed_new_waiting & (1U << level)) == 0)
			continue;
		parsed_new_waiting &= ~(1U << level);
		(void) pgsq_run_for_earlier(create_parsed_new_at, &level);
	}
}
