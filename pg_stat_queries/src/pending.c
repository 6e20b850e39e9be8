/*-------------------------------------------------------------------------
 *
 * pending.c
 *		Pending: counts kept in this backend until they are merged.
 *
 * The second stage.  Every count -- an execution, an execution that ended
 * in an error -- is kept in backend-local memory and merged into the
 * shared entries in batches; finding or creating those entries is
 * merge.c's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/instrument.h"
#include "jit/jit.h"
#include "nodes/queryjumble.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "utils/hsearch.h"
#include "utils/injection_point.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "pg_stat_queries.h"


/*-------------------------------------------------------------------------
 * Backend-local pending counters and their flush into the shared store.
 *
 * Every execution adds to this backend's pending counts for the statement,
 * in a table of its own in local memory, and pending counts are merged into
 * the shared entries in batches: when the backend goes idle, about once a
 * second inside a long transaction, before it reads the view or resets, and
 * at exit.  docs/design.md ("Pending counters and flushing", "References
 * to evicted entries") has the details.
 *-------------------------------------------------------------------------
 */

/* How often a busy backend merges its counters, in milliseconds */
#define PGSQ_BUSY_FLUSH_INTERVAL_MS 1000

/*
 * Outside a transaction block, a statement's start time does not move while
 * it runs (a DO or CALL running many statements, a background worker): a
 * busy backend reads the clock every this many executions instead
 */
#define PGSQ_BUSY_CLOCK_EVERY 256

/*
 * Statements pending that are merged at once, whatever the time: a little
 * below the table's size at that point (a power of two), as the merge comes
 * at the end of the statement, after the statement's plan has taken a slot
 * too; at the size itself, that slot would double the table first.
 */
#define PGSQ_BUSY_FLUSH_COUNT (4096 - 64)

/*
 * The statements with pending counts, in the order they got their first:
 * a dense array, emptied by each flush that merges them all, and an index
 * from object id to position.  The statistics system's own pending data
 * (PgStat_EntryRef->pending) is not used: it is allocated and zeroed at the
 * first execution of every batch, found again by a lookup keyed by the
 * whole hash key, and freed after each merge, and with many statements
 * nearly every execution is the first of its batch.  Positions here are
 * reused, and an index entry counts only in the batch it was made in
 * (pending_batch), so emptying the table costs nothing per statement.
 *
 * Each statement keeps its entry's slot and the generation it was found in
 * (merge.c), and uses it while the slot holds that generation: slots are
 * never freed.  An entry whose slot moved on is looked up again before it
 * is used; one closed to texts is being dropped.  Counts are for
 * the entry that was live when they were added (entry_since, its
 * stats_since): if that entry was dropped since, by a reset or eviction,
 * they are discarded with it, even if the statement has a new entry by now.
 */
typedef struct PendingStmt
{
	PgsqKey		key;
	uint64		objid;
	PgsqSharedEntry *entry;		/* usable while its slot is in */
	uint32		generation;		/* this generation */
	bool		text_checked;	/* the entry's text was looked after */
	TimestampTz entry_since;	/* stats_since of the entry counted for */
	int			mirror_pos;		/* a mirrored plan's or its statement's
								 * position, or -1 (below) */
	int64		mirror_planid;	/* a statement's mirrored plan, or 0 */
	PgsqCounters counters;
} PendingStmt;

/*
 * Mirrored plans.  While every execution a statement's pending counts hold
 * ran the same plan, that plan's counts are the statement's execution
 * counts: the plan's pending position then holds none of its own, and an
 * execution adds to the statement's counts alone (pgsq_record_known).  A
 * plan is mirrored when its pending counts and its statement's begin with
 * the same execution (pgsq_mirror_plan), and given counts of its own
 * (unmirror) before anything else would make the two differ: another plan
 * or none running, a planning counted (its buffer usage goes to the
 * statement), counts not going to these positions, and before each flush,
 * which moves positions.
 */

static MemoryContext pending_context = NULL;
static PendingStmt *pending_stmts = NULL;
static int	pending_count = 0;
static int	pending_size = 0;

/*
 * Positions below this one have had every line of their slot written.  A
 * new slot writes only its header and counters; its histogram is started
 * by a second execution in the batch, so without this the histogram lines
 * of a position would first be touched at some later batch, a cache miss
 * in the middle of a statement long after the array grew.
 */
static int	pending_written = 0;

/*
 * The index: open addressing with linear probing, twice as many slots as
 * pending_stmts has positions, so at most half full.  A slot made in an
 * earlier batch is free, so emptying takes no work and probes never pass
 * statements of past batches.
 */
typedef struct PendingIndexSlot
{
	uint64		objid;
	uint32		batch;			/* pending_batch when made; 0: never */
	int			pos;			/* in pending_stmts */
} PendingIndexSlot;

static PendingIndexSlot *pending_index = NULL;
static uint32 pending_index_mask = 0;
static uint32 pending_batch = 1;

/* Positions kept however few statements the last batches had */
#define PGSQ_PENDING_MIN_SIZE 64

/* Small batches in a row that halve the array (see pgsq_flush_pending) */
#define PGSQ_PENDING_SHRINK_AFTER 4
static int	small_batches = 0;

/*
 * Positions of the two statements that got counts last, the latest first,
 * valid in their batch: a statement and its plan's entry (plans.c) get
 * counts one after the other at each execution.
 */
static int	last_pos = -1;
static int	prev_pos = -1;
static uint32 last_batch = 0;

/* Remember the position that got counts last */
static inline void
remember_pos(int pos)
{
	if (pos != last_pos)
		prev_pos = last_batch == pending_batch ? last_pos : -1;
	last_pos = pos;
	last_batch = pending_batch;
}

/*
 * Where the quick way (pgsq_record_known) looks for a statement's pending
 * counts: by the low bits of its query id (a hash already), the position
 * its counts had when last used, valid in its batch.  A statement whose
 * place another took goes the full way, which gives the place back to it.
 * So statements run in turn (a transaction's few statements) each find
 * their counts without hashing their key.
 */
#define PGSQ_QUICK_PLACES 256

typedef struct QuickPlace
{
	int			pos;
	uint32		batch;
} QuickPlace;

static QuickPlace quick_places[PGSQ_QUICK_PLACES];

/* The quick way's place for a query id */
static inline QuickPlace *
quick_place(int64 queryid)
{
	return &quick_places[(uint64) queryid % PGSQ_QUICK_PLACES];
}

/*
 * The pending counts at a query id's quick place in this batch, or NULL:
 * the statement's, if the caller's key compare says so
 */
static inline PendingStmt *
quick_pending(int64 queryid)
{
	QuickPlace *q = quick_place(queryid);

	if (unlikely(q->batch != pending_batch))
		return NULL;
	return &pending_stmts[q->pos];
}

static TimestampTz last_flush = 0;	/* of any merge of all pending counts */

/*
 * The generation of a statement whose counts a flush has merged: never a
 * live entry's (those are odd), so an execution of the statement takes the
 * slow way, to rebind_pending.
 */
#define MERGED_GENERATION 0

/* Are these counts merged already, to be dropped? */
static inline bool
pending_merged(const PendingStmt *ps)
{
	return ps->generation == MERGED_GENERATION;
}

/*
 * May counts be added to these, for the entry they hold?  Not if its slot
 * no longer holds it, nor if it is closed (being dropped).  Both are read
 * on the entry's first line, which the merge reads anyway.
 */
static inline bool
pending_usable(const PendingStmt *ps)
{
	return pgsq_entry_is(ps->entry, ps->generation) &&
		!pgsq_text_closed(ps->entry);
}

/*
 * Statements to end before pgsq_busy_check looks at the clock and the
 * pending table's size again (pg_stat_queries.h).  Set to zero by
 * what must be looked at by the next statement's end.
 */
int			pgsq_busy_countdown = PGSQ_BUSY_CLOCK_EVERY;

/*
 * The stats_since of a referenced entry, which tells its lives apart; read
 * without its lock, as it is set once per life.  Zero for an entry another
 * backend has created but not yet started (entries.c): unknown, then.
 */
static inline TimestampTz
entry_since(PgsqSharedEntry *entry)
{
	return entry->data.stats_since;
}


/* First index slot to probe for a statement (objid is a hash already) */
static inline uint32
index_start(uint64 objid)
{
	return ((uint32) objid ^ (uint32) (objid >> 32)) & pending_index_mask;
}

/* The statement's pending counts in this batch, or NULL */
static inline PendingStmt *
find_pending(uint64 objid)
{
	if (last_pos >= 0 && last_batch == pending_batch &&
		pending_stmts[last_pos].objid == objid)
		return &pending_stmts[last_pos];
	if (pending_index == NULL)
		return NULL;
	for (uint32 i = index_start(objid);; i = (i + 1) & pending_index_mask)
	{
		PendingIndexSlot *slot = &pending_index[i];

		if (slot->batch != pending_batch)
			return NULL;
		if (slot->objid == objid)
		{
			remember_pos(slot->pos);
			return &pending_stmts[slot->pos];
		}
	}
}

/* Index a statement's pending counts at their position in this batch */
static void
index_pending(uint64 objid, int pos)
{
	for (uint32 i = index_start(objid);; i = (i + 1) & pending_index_mask)
	{
		PendingIndexSlot *slot = &pending_index[i];

		if (slot->batch != pending_batch)
		{
			slot->objid = objid;
			slot->batch = pending_batch;
			slot->pos = pos;
			return;
		}
		Assert(slot->objid != objid);
	}
}

/*
 * Give pending_stmts room for "size" statements, and the index twice as
 * many slots (emptied: the statements kept are indexed again).  Not
 * inlined: rare, and bench/scaling.sh counts its cache misses apart.
 */
static pg_noinline void
resize_pending(int size)
{
	PendingIndexSlot *index;
	PendingStmt *stmts;

	if (pending_context == NULL)
		pending_context = AllocSetContextCreate(TopMemoryContext,
												"pg_stat_queries pending",
												ALLOCSET_SMALL_SIZES);

	/*
	 * Both made before anything changes: out of memory, the table is left as
	 * it was, and the error is the caller's.
	 */
	index = MemoryContextAllocExtended(pending_context,
									   2 * size * sizeof(PendingIndexSlot),
									   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	if (pending_stmts == NULL)
		stmts = MemoryContextAllocExtended(pending_context,
										   size * sizeof(PendingStmt),
										   MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	else
		stmts = repalloc_extended(pending_stmts, size * sizeof(PendingStmt),
								  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (stmts == NULL)
	{
		pfree(index);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Failed to make room for %d pending statements.",
						   size)));
	}
	pending_stmts = stmts;
	pending_size = size;
	pending_written = Min(pending_written, size);
	if (pending_index != NULL)
		pfree(pending_index);
	pending_index = index;
	pending_index_mask = 2 * size - 1;
	for (int i = 0; i < pending_count; i++)
		index_pending(pending_stmts[i].objid, i);
}

static void reserve_failure_memory(void);

/*
 * Make the table of pending counts at its first size before any statement
 * runs (see _PG_init); it is still made on first use when this was not
 * called.  The memory context of noted failures is made here too.
 */
void
pgsq_pending_reserve_memory(void)
{
	if (pending_stmts == NULL)
		resize_pending(PGSQ_PENDING_MIN_SIZE);
	reserve_failure_memory();
}

/*
 * Write the whole slot at a position used for the first time (see
 * pending_written).  Not inlined: once per position in a backend's life,
 * and bench/scaling.sh counts its cache misses apart, as first touches of
 * memory rather than a cost per statement.
 */
static pg_noinline void
pending_first_use(PendingStmt *ps)
{
	memset(ps, 0, sizeof(PendingStmt));
	pending_written = pending_count + 1;
}

/*
 * Give the plan that a statement's pending counts mirror counts of its
 * own: the statement's executions so far, all of which ran it
 */
static void
unmirror(PendingStmt *stmt)
{
	PendingStmt *plan = &pending_stmts[stmt->mirror_pos];

	Assert(plan->mirror_pos == (int) (stmt - pending_stmts));
	pgsq_counters_copy_plan(&plan->counters, &stmt->counters);
	plan->mirror_pos = -1;
	stmt->mirror_pos = -1;
	stmt->mirror_planid = 0;
}

/* End the mirror that pending counts of a statement or of a plan are in */
static inline void
end_mirror(PendingStmt *ps)
{
	if (likely(ps->mirror_pos < 0))
		return;
	if (pgsq_key_is_plan(&ps->key))
		unmirror(&pending_stmts[ps->mirror_pos]);
	else
		unmirror(ps);
}

/*
 * New, empty pending counts of a statement, with its entry.
 * Not inlined: once per batch, and bench/scaling.sh counts its calls.
 */
static pg_noinline PendingStmt *
add_pending(const PgsqKey *key, uint64 objid, PgsqSharedEntry *entry,
			uint32 generation)
{
	PendingStmt *ps;

	if (pending_count == pending_size)
		resize_pending(Max(PGSQ_PENDING_MIN_SIZE, pending_size * 2));
	ps = &pending_stmts[pending_count];
	if (unlikely(pending_count >= pending_written))
		pending_first_use(ps);
	ps->key = *key;
	ps->objid = objid;
	ps->entry = entry;
	ps->generation = generation;
	ps->text_checked = false;
	ps->entry_since = entry_since(entry);
	ps->mirror_pos = -1;
	ps->mirror_planid = 0;
	pgsq_counters_clear(&ps->counters);
	index_pending(objid, pending_count);
	remember_pos(pending_count);
	pending_count++;
	if (unlikely(pending_count >= PGSQ_BUSY_FLUSH_COUNT))
		pgsq_busy_countdown = 0;
	/* have the statistics system call our flush (pgsq_flush_pending) */
	pgstat_report_fixed = true;
	return ps;
}

/*
 * Give pending counts the entry found for their statement just now.
 * If it is another life of the entry than the one counted for (the old one
 * was dropped by a reset or eviction), the counts belong to the dropped
 * past: discard them.
 */
static void
rebind_pending(PendingStmt *ps, PgsqSharedEntry *entry, uint32 generation)
{
	TimestampTz since = entry_since(entry);

	end_mirror(ps);
	if (pending_merged(ps))
	{
		/* a flush merged these counts, then an error cut it short */
		pgsq_counters_clear(&ps->counters);
	}
	if (pgsq_other_life(ps->entry_since, since))
	{
		pgsq_counters_clear(&ps->counters);
		ps->text_checked = false;
	}
	if (since != 0)
		ps->entry_since = since;
	ps->entry = entry;
	ps->generation = generation;
}

/*
 * The pending positions of the latest statement execution recorded that
 * may begin a mirror (its counts hold this execution alone), and of the
 * counts pgsq_record added to last, in batch record_batch; -1 if none.
 */
static int	mirror_candidate = -1;
static int	recorded_pos = -1;
static uint32 record_batch = 0;

/*
 * Record one planning or execution of a statement in local memory, and
 * return its entry, or NULL if the statement has no usable entry right
 * now: then the counts went into an entry directly, or the table is full
 * and the execution was refused.  Only the first execution of a statement
 * unknown to this backend looks at shared memory, to find or create its
 * entry.  Its execution goes straight into the entry if parse analysis
 * found the statement new or this backend never saw it; an entry created
 * now gets its text made from src (if given).
 *
 * planid is the plan a statement's execution ran (0: none tracked), and
 * *plan_counting (if not NULL) says what the caller does about it: nothing
 * if it is counted already, in the statement's counts that its pending
 * counts mirror; keep it for the statement's next execution if the
 * statement's entry was made by this one (pgsq_plan_defer); or record it
 * (then call pgsq_mirror_plan).
 *
 * *check_text_out says whether the caller should see to the referenced
 * entry's text.  Once per batch of pending counts is enough: an entry left
 * without text because the executed text contains literals (see
 * texts.c) would otherwise have that text scanned again on every
 * execution.
 */
PgsqSharedEntry *
pgsq_record(const PgsqKey *key, const PgsqTextSource *src,
			const PgsqExecution *exec, PgsqPlanCounting *plan_counting,
			bool *check_text_out)
{
	PgsqPhase	phase = exec->phase;
	int64		planid = exec->planid;
	PgsqTextSource parsed_src;
	bool		parsed;
	uint64		objid;
	uint32		generation = 0;
	PendingStmt *ps;
	PgsqSharedEntry *entry;

	*check_text_out = false;
	if (plan_counting)
		*plan_counting = PGSQ_PLAN_RECORD;
	if (!pgsq_key_is_plan(key))
		mirror_candidate = -1;
	recorded_pos = -1;

	/* a new statement parse analysis saw: its entry is made now, below */
	parsed = pgsq_take_parsed_new(key, &parsed_src);

	if (last_pos >= 0 && last_batch == pending_batch &&
		pgsq_key_equals(&pending_stmts[last_pos].key, key))
	{
		/* the statement that got counts last, most likely run again */
		ps = &pending_stmts[last_pos];
		objid = ps->objid;
	}
	else if (prev_pos >= 0 && last_batch == pending_batch &&
			 pgsq_key_equals(&pending_stmts[prev_pos].key, key))
	{
		/* or the one before it: the statement of the plan counted last */
		ps = &pending_stmts[prev_pos];
		objid = ps->objid;
	}
	else
	{
		objid = pgsq_objid(key);
		ps = find_pending(objid);
	}
	if (likely(ps != NULL && pending_usable(ps)))
	{
		entry = ps->entry;
		/* these counts go here: does the mirror still hold after them? */
		if (unlikely(ps->mirror_pos >= 0) &&
			(phase != PGSQ_EXEC || ps->mirror_planid != planid))
			end_mirror(ps);
	}
	else
	{
		bool		missing = false;

		/* the counts may go elsewhere: the mirror, if any, ends */
		if (ps != NULL)
			end_mirror(ps);
		entry = NULL;
		if (ps == NULL)
		{
			if (parsed)
				missing = true;
			else
				entry = pgsq_lookup_entry(objid, &generation, &missing);
			if (missing)
			{
				/*
				 * The statement gets its entry now, holding this execution
				 * and its text.
				 */
				PgsqCounters counters;

				pgsq_counters_clear(&counters);
				pgsq_add_execution(&counters, exec);
				switch (pgsq_create_first(key, objid, &counters,
										  parsed && src == NULL ?
										  &parsed_src : src))
				{
					case CREATE_DONE:
						if (plan_counting)
							*plan_counting = PGSQ_PLAN_DEFER;
						return NULL;
					case CREATE_REFUSED:
						if (plan_counting)
							*plan_counting = PGSQ_PLAN_UNTRACKED;
						return NULL;
					case CREATE_EXISTS:
						break;	/* found or created below */
				}
			}
		}
		if (entry == NULL)
			entry = pgsq_find_or_create_entry(key, objid, src, &generation);
		if (entry == NULL)
		{
			/* table full; counted as refused, and so is the plan */
			if (plan_counting)
				*plan_counting = PGSQ_PLAN_UNTRACKED;
			return NULL;
		}
		if (ps == NULL)
			ps = add_pending(key, objid, entry, generation);
		else
			rebind_pending(ps, entry, generation);
	}
	pgsq_add_execution(&ps->counters, exec);
	*check_text_out = !ps->text_checked;
	ps->text_checked = true;
	pgsq_entry_used(entry);

	recorded_pos = (int) (ps - pending_stmts);
	record_batch = pending_batch;
	if (!pgsq_key_is_plan(key))
	{
		QuickPlace *q = quick_place(key->queryid);

		q->pos = recorded_pos;
		q->batch = pending_batch;
	}
	if (ps->mirror_pos >= 0)
	{
		/* the plan's counts are its statement's: it ran, and is used */
		pgsq_entry_used(pending_stmts[ps->mirror_pos].entry);
		if (plan_counting)
			*plan_counting = PGSQ_PLAN_COUNTED;
	}
	else if (planid != INT64CONST(0) && phase == PGSQ_EXEC &&
			 ps->counters.main.exec.calls == 1 &&
			 ps->counters.main.plan.calls == 0)
		mirror_candidate = recorded_pos;
	return entry;
}

/*
 * Right after a statement's execution and then its plan's were recorded
 * (pgsq_record): if the pending counts of both hold that execution alone,
 * the plan's are mirrored from now on.
 * The statement is then the position an execution looks at first.
 */
void
pgsq_mirror_plan(void)
{
	int			stmt_pos = mirror_candidate;
	PendingStmt *stmt;
	PendingStmt *plan;

	mirror_candidate = -1;
	if (stmt_pos < 0 || recorded_pos < 0 || recorded_pos == stmt_pos ||
		record_batch != pending_batch)
		return;
	stmt = &pending_stmts[stmt_pos];
	plan = &pending_stmts[recorded_pos];
	if (stmt->mirror_pos >= 0 || plan->mirror_pos >= 0 ||
		!pgsq_key_is_plan(&plan->key) || pgsq_key_is_plan(&stmt->key) ||
		plan->key.queryid != stmt->key.queryid ||
		plan->counters.main.exec.calls != 1 ||
		stmt->counters.main.exec.calls != 1)
		return;
	stmt->mirror_pos = recorded_pos;
	stmt->mirror_planid = plan->key.planid;
	plan->mirror_pos = stmt_pos;
	remember_pos(stmt_pos);
}

/*
 * At parse analysis: has this statement pending counts at its quick place,
 * its entry still in its slot and holding its text?  Then
 * parse analysis has nothing to do for it, as merge.c's
 * pgsq_parse_needs_nothing would find after a hash and a lookup.
 */
bool
pgsq_pending_has_text(const PgsqKey *key)
{
	PendingStmt *ps = quick_pending(key->queryid);

	return ps != NULL && pgsq_key_equals(&ps->key, key) &&
		pending_usable(ps) && pgsq_text_hint(ps->entry);
}

/*
 * Count one execution of a known statement the quick way, if it has
 * pending counts in this batch at its quick place, its entry (and its
 * mirrored plan's) still in their slots and its text seen to, and its pending counts mirror the plan it ran (or
 * no plan is tracked and they mirror none).  Returns false, having counted
 * nothing, otherwise: pgsq_record then does.  Nearly every execution of a
 * statement run again and again comes here, and nothing here writes shared
 * memory or takes a lock.
 */
bool
pgsq_record_known(int64 queryid, bool toplevel, int64 planid, uint64 rows,
				  const PgsqUsage *usage, PgsqPlanCache plan_cache)
{
	PendingStmt *ps = quick_pending(queryid);

	if (ps == NULL)
		return false;
	if (ps->key.queryid != queryid || ps->mirror_planid != planid ||
		ps->key.planid != INT64CONST(0) || ps->key.toplevel != toplevel ||
		ps->key.userid != GetUserId() || ps->key.dbid != MyDatabaseId)
		return false;
	if (unlikely(!ps->text_checked || !pending_usable(ps) ||
				 (ps->mirror_pos >= 0 &&
				  !pending_usable(&pending_stmts[ps->mirror_pos]))))
		return false;
	pgsq_add_known_execution(&ps->counters,
							 INSTR_TIME_GET_MILLISEC(usage->time), rows, usage,
							 plan_cache);
	pgsq_entry_used(ps->entry);
	if (ps->mirror_pos >= 0)
		pgsq_entry_used(pending_stmts[ps->mirror_pos].entry);
	return true;
}

/*-------------------------------------------------------------------------
 * The plan of a new statement's first execution, counted when the
 * statement runs again.
 *
 * A statement new to the table gets its entry from its first execution;
 * its plan's entry would cost as much again, with the room the sweep makes
 * for it, and a statement that never runs again (a query spelled with a
 * literal list, a one-off report) needs no plan row.  So that execution's
 * plan is kept here, in a small table, and counted in the plan's entry at
 * the statement's next execution in this backend (pgsq_plan_replay).  A
 * kept plan that another statement's takes the place of, and every kept
 * plan when the backend exits, is settled at a flush: merged into the
 * plan's entry if it has one by then, else counted in untracked_plans, so
 * no execution goes uncounted.  A full reset in between drops it, as it
 * zeroes untracked_plans; another reset has it counted as untracked.
 *-------------------------------------------------------------------------
 */

/* Plans kept: a direct-mapped table, by the statement's object id */
#define PGSQ_PLAN_MEMO_SIZE 128

typedef struct PlanMemo
{
	PgsqKey		statement;
	bool		used;
	int64		planid;
	double		ms;
	uint64		rows;
	uint64		reset_count;	/* pgsq_state->reset_count when kept */
	uint64		full_resets;	/* pgsq_state->full_resets when kept */
	BufferUsage bufusage;
} PlanMemo;

static PlanMemo *plan_memo = NULL;

/*
 * Kept plans whose place another statement's took, settled when this
 * backend reads or resets, at exit, or at the next statement's end or
 * flush once there are PGSQ_DISPLACED_SETTLE_AT of them: until then the
 * statement may run again, giving its plan an entry to merge into.  At
 * most PGSQ_DISPLACED_MAX are kept (a flush may find entry locks busy).
 */
#define PGSQ_DISPLACED_SETTLE_AT 256
#define PGSQ_DISPLACED_MAX 8192

static PlanMemo *displaced = NULL;
static int	displaced_count = 0;
static int	displaced_size = 0;

/*
 * Kept plans counted untracked by settling, added to the shared count once
 * per settling (one write of a line every backend reads, not one per new
 * statement); an error in between leaves them for the next
 */
static uint64 untracked_here = 0;

static void settle_plans_at_exit(int code, Datum arg);

/* The memo's place for a statement */
static inline PlanMemo *
plan_memo_of(const PgsqKey *statement)
{
	return &plan_memo[pgsq_objid(statement) % PGSQ_PLAN_MEMO_SIZE];
}

/*
 * Keep a kept plan whose place is taken for the next flush; with no room
 * (or memory) for it, count it untracked now, which needs no lookup
 */
static void
displace(const PlanMemo *m)
{
	if (displaced_count == displaced_size)
	{
		int			size = Max(16, displaced_size * 2);
		PlanMemo   *array = NULL;

		/* as resize_pending: out of memory, the list stays as it was */
		if (size <= PGSQ_DISPLACED_MAX)
			array = displaced == NULL ?
				MemoryContextAllocExtended(TopMemoryContext,
										   size * sizeof(PlanMemo),
										   MCXT_ALLOC_NO_OOM) :
				repalloc_extended(displaced, size * sizeof(PlanMemo),
								  MCXT_ALLOC_NO_OOM);
		if (array == NULL)
		{
			if (m->full_resets == pg_atomic_read_u64(&pgsq_state->full_resets))
				pgsq_plan_untracked(1);
			return;
		}
		displaced = array;
		displaced_size = size;
	}
	displaced[displaced_count++] = *m;
	if (displaced_count >= PGSQ_DISPLACED_SETTLE_AT)
	{
		pgsq_busy_countdown = 0;
		/* have the statistics system call our flush too */
		pgstat_report_fixed = true;
	}
}

/*
 * Keep the plan a new statement's first execution ran, to count it when
 * the statement runs again here.  False if it cannot be kept (no memory):
 * the caller records it then.
 */
bool
pgsq_plan_defer(const PgsqKey *statement, int64 planid, double ms,
				uint64 rows, const BufferUsage *bufusage)
{
	PlanMemo   *m;

	if (plan_memo == NULL)
	{
		if (proc_exit_inprogress)
			return false;
		plan_memo = MemoryContextAllocExtended(TopMemoryContext,
											   PGSQ_PLAN_MEMO_SIZE * sizeof(PlanMemo),
											   MCXT_ALLOC_NO_OOM | MCXT_ALLOC_ZERO);
		if (plan_memo == NULL)
			return false;
		/* kept plans are settled at exit, before the statistics detach */
		before_shmem_exit(settle_plans_at_exit, (Datum) 0);
	}
	m = plan_memo_of(statement);
	if (m->used)
		displace(m);
	m->statement = *statement;
	m->used = true;
	m->planid = planid;
	m->ms = ms;
	m->rows = rows;
	m->reset_count = pg_atomic_read_u64(&pgsq_state->reset_count);
	m->full_resets = pg_atomic_read_u64(&pgsq_state->full_resets);
	m->bufusage = *bufusage;
	return true;
}

/* The execution a kept plan holds, as pgsq_record takes it */
static void
kept_execution(const PlanMemo *m, PgsqExecution *exec)
{
	memset(exec, 0, sizeof(*exec));
	exec->phase = PGSQ_EXEC;
	exec->ms = m->ms;
	exec->rows = m->rows;
	exec->bufusage = &m->bufusage;
	exec->plan_cache = PGSQ_PLAN_NOT_CACHED;
}

/*
 * The statement runs again: count the plan its first execution ran, if it
 * is kept (and was not reset since).  Its entry gets its text when it runs
 * again, as any plan's.
 */
void
pgsq_plan_replay(const PgsqKey *statement)
{
	PlanMemo   *m;
	PgsqKey		key;
	PgsqExecution exec;
	bool		check_text;

	if (plan_memo == NULL)
		return;
	m = plan_memo_of(statement);
	if (!m->used || !pgsq_key_equals(&m->statement, statement))
		return;
	if (m->reset_count != pg_atomic_read_u64(&pgsq_state->reset_count))
	{
		/* settled as any kept plan a reset came after */
		displace(m);
		m->used = false;
		return;
	}
	m->used = false;
	key = m->statement;
	key.planid = m->planid;
	kept_execution(m, &exec);
	(void) pgsq_record(&key, NULL, &exec, NULL, &check_text);
}

/*
 * Count a kept plan's execution: into the plan's entry if this backend
 * knows it has one (created here, or referenced; the entry is not created
 * for it), else in untracked_plans.  An entry only another backend made is
 * not looked for: most kept plans are of statements run once, whose plans
 * have none, and the lookup of a missing entry would cost each new
 * statement as much as a shared lookup.  False if nowait and the entry's
 * lock was busy: it stays kept, for the next flush.
 */
static bool
settle_plan(const PlanMemo *m, bool nowait)
{
	PgsqKey		key = m->statement;
	PgsqSharedEntry *entry;
	PgsqCounters counters;
	PgsqExecution exec;
	uint32		generation;
	bool		missing = false;

	if (m->full_resets != pg_atomic_read_u64(&pgsq_state->full_resets))
		return true;			/* a full reset zeroed untracked_plans too */
	if (m->reset_count != pg_atomic_read_u64(&pgsq_state->reset_count))
	{
		/* its statement's entry, or its plan's, may be a later life */
		untracked_here++;
		return true;
	}
	key.planid = m->planid;
	entry = pgsq_lookup_entry(pgsq_objid(&key), &generation, &missing);
	if (entry == NULL || pgsq_text_closed(entry))
	{
		/* none, or being dropped (evicted) */
		untracked_here++;
		return true;
	}
	pgsq_counters_clear(&counters);
	kept_execution(m, &exec);
	pgsq_add_execution(&counters, &exec);
	return pgsq_merge_into_entry(entry, generation, &key, &counters, 0, nowait);
}

/*
 * Settle the kept plans whose place was taken (and, if all, every kept
 * plan).  Returns true if some stay, their entries' locks being busy.
 * Each is taken off before it is counted: an error loses only that one.
 */
bool
pgsq_plans_settle(bool nowait, bool all)
{
	if (pgsq_state == NULL)
		return false;
	if (all && plan_memo != NULL)
	{
		for (int i = 0; i < PGSQ_PLAN_MEMO_SIZE; i++)
		{
			if (!plan_memo[i].used)
				continue;
			plan_memo[i].used = false;
			(void) settle_plan(&plan_memo[i], false);
		}
	}
	while (displaced_count > 0)
	{
		/* taken off first: an error while counting loses only this one */
		PlanMemo	m = displaced[--displaced_count];

		if (!settle_plan(&m, nowait))
		{
			displaced_count++;	/* its lock is busy: it and the rest wait */
			break;
		}
	}
	if (untracked_here > 0)
	{
		pgsq_plan_untracked(untracked_here);
		untracked_here = 0;
	}
	if (displaced_count > 0)
		return true;
	if (displaced_size > PGSQ_DISPLACED_SETTLE_AT)
	{
		pfree(displaced);
		displaced = NULL;
		displaced_size = 0;
	}
	return false;
}

/*
 * Settle the kept plans whose place was taken if there are many
 * (PGSQ_DISPLACED_SETTLE_AT); as pgsq_plans_settle otherwise
 */
bool
pgsq_plans_settle_many(bool nowait)
{
	if (displaced_count < PGSQ_DISPLACED_SETTLE_AT)
		return false;
	return pgsq_plans_settle(nowait, false);
}

/* Settle every kept plan in a guarded call (an error here would be FATAL) */
static void
settle_all(void *arg)
{
	(void) arg;
	(void) pgsq_plans_settle(false, true);
}

/* At backend exit, before the statistics system detaches: settle them all */
static void
settle_plans_at_exit(int code, Datum arg)
{
	(void) code;
	(void) arg;
	if (pgsq_store_ready())
		(void) pgsq_run_guarded(settle_all, NULL,
								"count plans kept at backend exit");
}


/*
 * Count executions of a statement that ended in an error (count of them,
 * ms in all, the latest's SQLSTATE and time), at a safe point after them
 * (pgsq_failures_count): straight into the statement's entry, found or
 * created with its text from src.
 * Failures are rare, so they skip the pending table; a full table refuses
 * them as it refuses executions.
 */
void
pgsq_record_failure(const PgsqKey *key, const PgsqTextSource *src,
					int64 count, double ms, int sqlstate, TimestampTz at)
{
	PgsqCounters counters;
	PgsqTextSource parsed_src;
	uint64		objid;
	PgsqSharedEntry *entry;
	uint32		generation = 0;
	bool		missing = false;

	pgsq_counters_clear(&counters);
	pgsq_add_failures(&counters, count, ms, sqlstate, at);

	objid = pgsq_objid(key);
	entry = NULL;

	/* a new statement parse analysis saw: made now, with the text it kept */
	if (pgsq_take_parsed_new(key, &parsed_src))
	{
		missing = true;
		src = &parsed_src;
	}
	else
		entry = pgsq_lookup_entry(objid, &generation, &missing);
	if (missing)
	{
		switch (pgsq_create_first(key, objid, &counters, src))
		{
			case CREATE_DONE:
			case CREATE_REFUSED:
				return;
			case CREATE_EXISTS:
				break;
		}
	}
	if (entry == NULL)
		entry = pgsq_find_or_create_entry(key, objid, src, &generation);
	if (entry == NULL)
		return;
	(void) pgsq_merge_into_entry(entry, generation, key, &counters, 0, false);
	if (src != NULL && !pgsq_text_hint(entry))
		(void) pgsq_entry_give_text(entry, key, pgsq_statement_text(key, src));
}


/*
 * Merge one statement's pending counts into the entry they were counted
 * for.  Returns false if nowait and the entry lock was not available: the
 * counts then stay pending for the next attempt.  Counts whose entry was
 * dropped since are discarded (true).  Not inlined, like add_pending.
 */
static pg_noinline bool
flush_one(PendingStmt *ps, bool nowait)
{
	return pgsq_merge_into_entry(ps->entry, ps->generation, &ps->key,
								 &ps->counters, ps->entry_since, nowait);
}

/*
 * Give up the pending counts that a merge waiting for locks could not set
 * into their entries (shared memory was out for their first rare counts):
 * counted as untracked executions, rather than kept, which would grow the
 * table with every new statement and have each statement merge it again.
 */
static void
refuse_unmerged(void)
{
	for (int i = 0; i < pending_count; i++)
	{
		PendingStmt *ps = &pending_stmts[i];

		if (pending_merged(ps))
			continue;
		pgsq_refuse_pending(&ps->key, ps->counters.main.exec.calls);
		ps->generation = MERGED_GENERATION;
	}
	(void) pgsq_flush_pending(false);	/* compacts: nothing is left */
}

/*
 * Merge every statement's pending counts, without waiting for an entry lock
 * if nowait.  Returns true if some stay pending (their locks were busy).
 */
bool
pgsq_flush_pending(bool nowait)
{
	int			kept = 0;
	int			batch_size = pending_count;

	if (pending_count == 0)
		return false;

	/* plans get counts of their own: positions move below */
	for (int i = 0; i < pending_count; i++)
		end_mirror(&pending_stmts[i]);

	/*
	 * Each statement's counts are marked merged (MERGED_GENERATION) as soon
	 * as they are, so that a merge is never repeated: an ERROR in the middle
	 * of the batch (out of shared memory, say) leaves the array as it was,
	 * those merged so far marked, and the next flush skips them; an execution
	 * of such a statement before then empties them first (rebind_pending).
	 * The array is compacted only once every merge is done, by code that
	 * cannot fail.
	 */
	for (int i = 0; i < pending_count; i++)
	{
		PendingStmt *ps = &pending_stmts[i];

		if (pending_merged(ps))
			continue;
		if (flush_one(ps, nowait))
		{
			ps->generation = MERGED_GENERATION;
			/* test/sql/flush_errors.sql: an error after a merge */
			INJECTION_POINT("pg-stat-queries-flush-merged", NULL);
		}
	}
	for (int i = 0; i < pending_count; i++)
	{
		if (pending_merged(&pending_stmts[i]))
			continue;
		if (kept != i)
			pending_stmts[kept] = pending_stmts[i];
		kept++;
	}

	/* a new batch: every index slot made so far is free */
	if (++pending_batch == 0)
	{
		/* wrapped around: slots of batch 1 long ago must not count */
		memset(pending_index, 0, (pending_index_mask + 1) * sizeof(PendingIndexSlot));
		memset(quick_places, 0, sizeof(quick_places));
		pending_batch = 1;
	}
	pending_count = kept;
	last_pos = -1;
	prev_pos = -1;
	last_flush = GetCurrentTimestamp();

	/*
	 * Give back memory a burst of statements took: halve the array after
	 * PGSQ_PENDING_SHRINK_AFTER batches in a row that each used less than a
	 * quarter of it.  One small batch is not enough: a merge between two
	 * batches of the usual size (to read the view, say) would have the array
	 * shrink and grow again, and a grown array is memory touched anew.
	 */
	if (pending_size > PGSQ_PENDING_MIN_SIZE && batch_size < pending_size / 4)
		small_batches++;
	else
		small_batches = 0;
	if (small_batches >= PGSQ_PENDING_SHRINK_AFTER && kept <= pending_size / 2)
	{
		resize_pending(pending_size / 2);
		small_batches = 0;
	}
	else
	{
		for (int i = 0; i < kept; i++)
			index_pending(pending_stmts[i].objid, i);
	}
	return kept > 0;
}

/* Merge all of this backend's pending counters now, waiting for locks */
void
pgsq_flush_own_pending(void)
{
	(void) pgsq_flush_pending(false);
	(void) pgsq_plans_settle(false, false);
}

/*
 * Merge a busy backend's counts about once a second, without waiting
 * for any entry lock: the statistics system merges them only when the
 * backend goes idle, which a long transaction block, a DO or CALL running
 * many statements, or a background worker does not.  Called when
 * pgsq_busy_countdown runs out (pgsq_maybe_flush_busy): every
 * PGSQ_BUSY_CLOCK_EVERY statements, which then read the clock, and at every
 * statement inside a transaction block (a transaction command sets the
 * countdown to one: capture.c), where each statement's start time tells the
 * time at no cost.  However soon,
 * PGSQ_BUSY_FLUSH_COUNT statements pending are merged, waiting for entry
 * locks if need be: that bounds the pending table inside one statement.
 */
void
pgsq_busy_check(void)
{
	bool		in_block = IsTransactionBlock();
	TimestampTz now;

	pgsq_busy_countdown = in_block ? 1 : PGSQ_BUSY_CLOCK_EVERY;
	(void) pgsq_plans_settle_many(true);

	if (pending_count == 0)
		return;
	if (pending_count >= PGSQ_BUSY_FLUSH_COUNT)
	{
		/* waiting for entry locks, so that the table does shrink */
		(void) pgsq_flush_pending(false);
		if (pending_count >= PGSQ_BUSY_FLUSH_COUNT)
			refuse_unmerged();
		return;
	}
	now = in_block ? GetCurrentStatementStartTimestamp() :
		GetCurrentTimestamp();
	if (TimestampDifferenceExceeds(last_flush, now,
								   PGSQ_BUSY_FLUSH_INTERVAL_MS))
		(void) pgsq_flush_pending(true);
}


/*-------------------------------------------------------------------------
 * Executions that ended in an error: noted where the error passes
 * through our hooks, counted later at a safe point.
 *
 * Our planner, executor and utility hooks catch an error on its way up
 * (capture.c), note the statement, its time until then and the error's
 * SQLSTATE here, and throw it on (one note per statement, counting its
 * failures, so memory grows with the statements that fail, not with their
 * failures).  Nothing else is done there: the error
 * may have been raised while a lock was held, ours included, or in memory
 * about to be freed, so shared memory is not touched and only the
 * statement's text is copied.  The noted failures are counted into their
 * entries -- created with their text if the statement never completed --
 * at the next flush of this backend's counts: when it goes idle (an aborted
 * transaction block first has to end), before it reads the view, and at
 * exit.  Error messages are never kept: they carry literal values.
 *-------------------------------------------------------------------------
 */

/*
 * The executions of one statement that failed since the last count: one
 * note per statement (key, nesting level), however often it failed, so a
 * loop catching millions of errors holds one note, not millions.
 */
typedef struct NotedFailure
{
	PgsqKey		key;
	int			level;			/* nesting level it ran at */
	int64		count;			/* executions that failed */
	double		ms;				/* time they ran before failing, in all */
	int			sqlstate;		/* the latest's */
	TimestampTz at;				/* the latest's */
	uint64		reset_count;	/* pgsq_state->reset_count when noted */
	char	   *stmt;			/* its text, cut out of the source; or NULL */
	int			location;		/* of the statement in stmt's source */
	int			len;			/* (both set with stmt) */
	PgsqScs		scs;			/* what was known of its lexing, then */
} NotedFailure;

static NotedFailure *noted = NULL;
static int	noted_count = 0;
static int	noted_size = 0;

/*
 * Index of the notes by key: open addressing, positions + 1 (0: empty),
 * twice as many slots as notes fit in the array.
 */
static int *noted_index = NULL;
static int	noted_index_mask = 0;

/* Statements kept beyond this many are counted without their text */
#define PGSQ_FAILURE_TEXT_MAX (1024 * 1024)

/* Notes kept between counts without giving memory back */
#define PGSQ_FAILURE_KEEP 64

/* Memory the notes and their texts keep between counts, at most */
#define PGSQ_FAILURE_KEEP_BYTES (16 * 1024)

/*
 * Notes, or bytes of their texts, past which they are counted at the next
 * statement's start (pgsq_failures_due): a statement that runs many
 * failing ones, catching their errors, keeps this backend from going idle.
 * 20,000 distinct statements of 1 kB failing in one DO held 20 MB before.
 */
#define PGSQ_FAILURE_COUNT_AT 256
#define PGSQ_FAILURE_TEXT_AT (1024 * 1024)

/*
 * Bounds that hold whatever one error notes on its way up (a note for each
 * statement of ours it passes through, before any statement starts
 * again): past them a failure is counted without its text, or not at all
 */
#define PGSQ_FAILURE_NOTES_MAX 8192
#define PGSQ_FAILURE_TEXT_BUDGET (4 * 1024 * 1024)

/*
 * The notes and their texts live in a memory context of their own, reset
 * once they are counted: in TopMemoryContext, the freed chunks of texts
 * stayed in its free lists for the life of the backend.  Made at server
 * start (pgsq_pending_reserve_memory): not while an error is on its way up.
 */
static MemoryContext failure_context = NULL;
static Size noted_text_bytes = 0;	/* bytes of the texts the notes keep */
bool		pgsq_failures_due = false;

/* Make the memory context of noted failures (at server start) */
static void
reserve_failure_memory(void)
{
	if (failure_context == NULL)
		failure_context = AllocSetContextCreate(TopMemoryContext,
												"pg_stat_queries failures",
												ALLOCSET_SMALL_SIZES);
}

/* First index slot to probe for a note */
static inline uint32
note_hash(const PgsqKey *key, int level)
{
	return (uint32) (key->queryid ^ (key->queryid >> 32)) ^
		(key->userid * 0x9E3779B1) ^ (key->dbid * 0x85EBCA77) ^
		((uint32) level << 1) ^ (uint32) key->toplevel;
}

/* The note of a statement at a level, noted since reset_count, or NULL */
static NotedFailure *
find_note(const PgsqKey *key, int level, uint64 reset_count)
{
	if (noted_index == NULL)
		return NULL;
	for (uint32 i = note_hash(key, level) & noted_index_mask;;
		 i = (i + 1) & noted_index_mask)
	{
		NotedFailure *f;

		if (noted_index[i] == 0)
			return NULL;
		if (noted_index[i] > noted_count)
			continue;			/* not in use (an error cut a count short) */
		f = &noted[noted_index[i] - 1];
		if (f->level == level && f->reset_count == reset_count &&
			pgsq_key_equals(&f->key, key))
			return f;
	}
}

/* Index the note at position pos */
static void
index_note(int pos)
{
	NotedFailure *f = &noted[pos];

	for (uint32 i = note_hash(&f->key, f->level) & noted_index_mask;;
		 i = (i + 1) & noted_index_mask)
	{
		if (noted_index[i] == 0)
		{
			noted_index[i] = pos + 1;
			return;
		}
	}
}

/*
 * Room for one more note, or false.  Called with an error on its way up:
 * nothing here may throw, so a note that finds no memory is not made (its
 * failure goes uncounted) rather than replace the error being reported.
 */
static bool
make_room(void)
{
	int			size;
	NotedFailure *array;
	int		   *index;

	if (noted_count < noted_size)
		return true;
	if (noted_size >= PGSQ_FAILURE_NOTES_MAX)
		return false;
	size = Max(8, noted_size * 2);
	array = MemoryContextAllocExtended(failure_context,
									   size * sizeof(NotedFailure),
									   MCXT_ALLOC_NO_OOM);
	index = MemoryContextAllocExtended(failure_context,
									   size * 2 * sizeof(int),
									   MCXT_ALLOC_NO_OOM | MCXT_ALLOC_ZERO);
	if (array == NULL || index == NULL)
	{
		if (array != NULL)
			pfree(array);
		if (index != NULL)
			pfree(index);
		return false;
	}
	if (noted != NULL)
	{
		memcpy(array, noted, noted_count * sizeof(NotedFailure));
		pfree(noted);
		pfree(noted_index);
	}
	noted = array;
	noted_size = size;
	noted_index = index;
	noted_index_mask = size * 2 - 1;
	for (int i = 0; i < noted_count; i++)
		index_note(i);
	return true;
}

/*
 * Note that the statement of queryid, at this nesting level and under this
 * user, ended in the error being thrown: called in a PG_CATCH block, with
 * the error still on the error stack.  source, location and len locate its
 * text as for a completed execution (source may be NULL).
 */
void
pgsq_failure_noted(int64 queryid, Oid userid, int level, const char *source,
				   int location, int len, double ms)
{
	NotedFailure *f;
	PgsqKey		key;
	uint64		reset_count;

	if (pgsq_state == NULL || queryid == INT64CONST(0) ||
		failure_context == NULL)
		return;
	memset(&key, 0, sizeof(key));
	key.userid = userid;
	key.dbid = MyDatabaseId;
	key.queryid = queryid;
	key.toplevel = (level == 0);
	reset_count = pg_atomic_read_u64(&pgsq_state->reset_count);

	f = find_note(&key, level, reset_count);
	if (f == NULL)
	{
		if (!make_room())
			return;
		f = &noted[noted_count];
		f->key = key;
		f->level = level;
		f->count = 0;
		f->ms = 0;
		f->at = 0;
		f->reset_count = reset_count;
		f->stmt = NULL;
		index_note(noted_count);
		noted_count++;
	}
	f->count++;
	f->ms += ms;
	f->sqlstate = geterrcode();
	f->at = GetCurrentTimestamp();
	if (f->stmt == NULL && source != NULL)
	{
		/* the text, once per note */
		const char *stmt;

		f->location = location;
		f->len = len;
		f->scs = pgsq_scs_lexed_here();
		stmt = CleanQuerytext(source, &f->location, &f->len);
		if (f->len <= PGSQ_FAILURE_TEXT_MAX &&
			noted_text_bytes + f->len + 1 <= PGSQ_FAILURE_TEXT_BUDGET)
		{
			f->stmt = MemoryContextAllocExtended(failure_context, f->len + 1,
												 MCXT_ALLOC_NO_OOM);
			if (f->stmt != NULL)
			{
				memcpy(f->stmt, stmt, f->len);
				f->stmt[f->len] = '\0';
				noted_text_bytes += f->len + 1;
			}
		}
	}

	/* counted at the next statement's start if they take much memory */
	if (noted_count >= PGSQ_FAILURE_COUNT_AT ||
		noted_text_bytes >= PGSQ_FAILURE_TEXT_AT)
		pgsq_failures_due = true;

	/* have the statistics system call our flush when this backend idles */
	pgstat_report_fixed = true;
}

/*
 * Count the noted failures into their entries; a failure noted before a
 * reset that dropped entries goes with them.  Outside any error, where a
 * backend flushes its counts, or at a statement's start when the notes
 * take much memory (pgsq_maybe_count_failures).  The memory of many notes
 * is given back.
 */
void
pgsq_failures_count(void)
{
	uint64		reset_count;

	pgsq_failures_due = false;
	if (noted_count == 0 || pgsq_state == NULL)
		return;
	reset_count = pg_atomic_read_u64(&pgsq_state->reset_count);
	/* unindexed first: after an error below, what is left is noted anew */
	memset(noted_index, 0, (noted_index_mask + 1) * sizeof(int));
	while (noted_count > 0)
	{
		/* taken off first: an error while counting loses only this one */
		NotedFailure f = noted[--noted_count];

		if (f.reset_count == reset_count)
		{
			PgsqTextSource src = {f.stmt, f.location, f.len, NULL, f.level,
			true, NULL, f.scs};

			pgsq_record_failure(&f.key, f.stmt != NULL ? &src : NULL,
								f.count, f.ms, f.sqlstate, f.at);
		}
		if (f.stmt != NULL)
		{
			pfree(f.stmt);
			noted_text_bytes -= f.len + 1;
		}
	}
	if (noted_size > PGSQ_FAILURE_KEEP ||
		MemoryContextMemAllocated(failure_context, false) >
		PGSQ_FAILURE_KEEP_BYTES)
	{
		/* the arrays, and the blocks the texts' chunks were freed into */
		MemoryContextReset(failure_context);
		noted = NULL;
		noted_index = NULL;
		noted_size = 0;
		noted_index_mask = 0;
		noted_text_bytes = 0;
	}
}

/*
 * Count the noted failures at a statement's start, pgsq_failures_due, if
 * not in an aborted transaction block (only its end can run there: the
 * count waits for this backend to go idle)
 */
void
pgsq_failures_count_busy(void)
{
	if (IsAbortedTransactionBlockState())
		return;
	pgsq_failures_count();
}
