/*-------------------------------------------------------------------------
 *
 * capture.c
 *		Capture: the hooks that see each statement run, and measuring it.
 *
 * The first stage of the data flow.  Planner, executor and utility hooks
 * decide which statements count (sampling included) and at which nesting
 * level, measure each execution's time, buffer and WAL usage, and hand the
 * counts to this backend's pending table (pending.c); a statement's text is
 * made only where an entry is (texts.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "common/pg_prng.h"
#include "executor/executor.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/queryjumble.h"
#include "optimizer/planner.h"
#include "parser/analyze.h"
#include "storage/proc.h"
#include "tcop/utility.h"
#include "utils/memutils.h"

#include "pg_stat_queries.h"


/*-------------------------------------------------------------------------
 * Planner, executor and utility hooks that measure each statement.
 *
 * Which statements count, and at which nesting level, follows
 * pg_stat_statements so that both report the same rows: top-level and
 * (with track = all) nested statements, utility commands when
 * track_utility is on, EXECUTE charged to the prepared statement.
 *-------------------------------------------------------------------------
 */

/* Depth of planner/executor/utility calls we are inside of */
static int	nesting_level = 0;

static void note_start_failure(QueryDesc *query, int level);

static post_parse_analyze_hook_type prev_post_parse_analyze = NULL;
static planner_hook_type prev_planner = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;
static emit_log_hook_type prev_emit_log = NULL;

/* Are statements at this nesting level tracked? */
static inline bool
tracking(int level)
{
	return pgsq_state != NULL && !IsParallelWorker() &&
		(pgsq_track == PGSQ_TRACK_ALL ||
		 (pgsq_track == PGSQ_TRACK_TOP && level == 0));
}

/*
 * The sampling decision of the top-level statement running now, and the
 * statement start time it was drawn at (see measuring).
 */
static bool sample_drawn = false;
static bool sample_taken = true;
static TimestampTz sample_drawn_at = 0;

/*
 * Is the statement starting now at this level measured?  It must be tracked
 * and, with sample_rate below 1, sampled: each top-level statement is drawn
 * once, by the first of its hooks to run (planner, executor or utility),
 * and the statements nested in it follow it.  A draw lasts until the
 * top-level statement ends (sampling_ended), or, should it end in an
 * error, until the next client message.  Parse analysis never asks: a new
 * statement gets its entry and normalized text either way.
 */
static inline bool
measuring(int level)
{
	TimestampTz now;

	if (!tracking(level))
		return false;
	if (likely(pgsq_sample_rate >= 1.0))
		return true;
	if (level > 0)
		return sample_taken;
	now = GetCurrentStatementStartTimestamp();
	if (!sample_drawn || sample_drawn_at != now)
	{
		sample_taken = pgsq_sample_rate > 0.0 &&
			pg_prng_double(&pg_global_prng_state) < pgsq_sample_rate;
		sample_drawn = true;
		sample_drawn_at = now;
	}
	return sample_taken;
}

/* A statement at this level ended: the next top-level one is drawn anew */
static inline void
sampling_ended(int level)
{
	if (level == 0)
		sample_drawn = false;
}

/*-------------------------------------------------------------------------
 * Time, buffer and WAL usage of each running statement, measured by
 * our own executor hooks.
 *
 * Asking the executor for whole-query instrumentation (QueryDesc->totaltime,
 * as pg_stat_statements does) costs a zeroed Instrumentation of some 400
 * bytes in the query's memory on every execution, often a new memory block,
 * and a start/stop pair around both ExecutorRun and ExecutorFinish: a
 * noticeable share of a primary-key lookup.  We measure the
 * same windows ourselves and keep the totals of each running statement in a
 * small backend-local array, searched by QueryDesc address:
 *
 *	- a slot is taken at ExecutorStart and given back at ExecutorEnd;
 *	- every ExecutorRun call is measured (a cursor makes one per FETCH), and
 *	  ExecutorFinish is measured unless the statement is a SELECT without a
 *	  data-modifying WITH: it then has no trigger or CTE to finish;
 *	- a statement whose (sub)transaction aborts never reaches ExecutorEnd, so
 *	  its slot is dropped: at a subtransaction's abort, or, for a
 *	  transaction's, by the next ExecutorStart, which finds the slots of a
 *	  past transaction (starting_lxid).  No transaction callback, which would
 *	  cost every transaction two calls.  A cursor opened in a subtransaction
 *	  that commits belongs to the parent from then on, and so does its slot.
 *
 * A slot never moves while in use, so its index stays valid while the
 * statements nested in it start and end.
 *-------------------------------------------------------------------------
 */

/*
 * The first window of a statement sets every field of its totals
 * (pgsq_window_end): a field a later PostgreSQL adds to BufferUsage or
 * WalUsage would be left unset, so their sizes are checked here.
 */
StaticAssertDecl(sizeof(BufferUsage) == 10 * sizeof(int64) + 6 * sizeof(instr_time),
				 "BufferUsage changed: see pgsq_window_end");
StaticAssertDecl(sizeof(WalUsage) == PGSQ_WALUSAGE_FIELDS * sizeof(int64),
				 "WalUsage changed: see pgsq_window_end");

/* Totals of one running statement */
typedef struct QuerySlot
{
	const QueryDesc *query;		/* NULL once given back */
	SubTransactionId subxid;	/* subtransaction that owns the statement */
	int			windows;		/* windows added to usage so far */
	PgsqUsage	usage;			/* set by the first window, not before */
} QuerySlot;

static QuerySlot *slots = NULL;
static int	slot_count = 0;		/* slots in use, up to the last taken one */
static int	slot_capacity = 0;

/*
 * The statement inside ExecutorStart, left set if that throws, and the
 * transaction of the last statement started (its local id): a statement of
 * a past transaction is not looked at (failed_start), and the slots in use
 * belong to it or to a past one (forget_past_slots).
 */
static QueryDesc *starting_query = NULL;
static LocalTransactionId starting_lxid = InvalidLocalTransactionId;

/*
 * The subtransaction running now, as our callbacks follow it: the owner of
 * the statements that start (GetCurrentSubTransactionId without a call per
 * statement)
 */
static SubTransactionId current_subxid = TopSubTransactionId;

/* Give back slots from the end while they are unused */
static inline void
trim_slots(void)
{
	while (slot_count > 0 && slots[slot_count - 1].query == NULL)
		slot_count--;
}

/* Index of the slot of a running statement below the last one, or -1 */
static pg_noinline int
query_slot_below(const QueryDesc *query)
{
	for (int i = slot_count - 2; i >= 0; i--)
	{
		if (slots[i].query == query)
			return i;
	}
	return -1;
}

/*
 * Index of the slot of a running statement, or -1 if it has none: mostly
 * the last one taken, as statements end in the order opposite to their
 * start, but for cursors.
 */
static inline int
query_slot(const QueryDesc *query)
{
	if (likely(slot_count > 0 && slots[slot_count - 1].query == query))
		return slot_count - 1;
	return query_slot_below(query);
}

/*
 * Index of a slot for a statement about to run, when some are taken: the
 * first unused one, or one left with this address by a statement whose end
 * we missed; or -1 to take a new one
 */
static pg_noinline int
query_slot_reused(const QueryDesc *query)
{
	int			i = -1;

	for (int j = 0; j < slot_count; j++)
	{
		if (slots[j].query == query)
			return j;
		if (slots[j].query == NULL && i < 0)
			i = j;
	}
	return i;
}

/* Room for one more slot */
static pg_noinline void
grow_slots(void)
{
	int			capacity = Max(8, slot_capacity * 2);

	if (slots == NULL)
		slots = MemoryContextAlloc(TopMemoryContext,
								   capacity * sizeof(QuerySlot));
	else
		slots = repalloc(slots, capacity * sizeof(QuerySlot));
	slot_capacity = capacity;
}

/* Take a slot for a statement about to run */
static inline void
query_started(const QueryDesc *query)
{
	int			i = -1;

	if (unlikely(slot_count > 0))
		i = query_slot_reused(query);
	if (i < 0)
	{
		if (unlikely(slot_count == slot_capacity))
			grow_slots();
		i = slot_count++;
	}
	slots[i].query = query;
	slots[i].subxid = current_subxid;
	slots[i].windows = 0;
}

/* Add a measured window to a running statement's slot */
static inline void
query_add(int slot, const QueryDesc *query, const PgsqWindow *window)
{
	/* nested statements only push and pop slots after this one */
	Assert(slot < slot_count && slots[slot].query == query);
	if (slot < slot_count && slots[slot].query == query)
	{
		/* a constant "first" in each call: two inlined variants */
		if (slots[slot].windows++ == 0)
			pgsq_window_end(window, &slots[slot].usage, true);
		else
			pgsq_window_end(window, &slots[slot].usage, false);
	}
}

/*
 * Give back a statement's slot and return its totals, or NULL if it had
 * none.  The totals stay readable until the next statement starts.
 */
static inline const PgsqUsage *
query_ended(const QueryDesc *query)
{
	int			i = query_slot(query);

	if (i < 0)
		return NULL;
	slots[i].query = NULL;
	if (i == slot_count - 1)
	{
		slot_count = i;
		if (unlikely(i > 0 && slots[i - 1].query == NULL))
			trim_slots();
	}
	/* a statement ended without running (a cursor closed unfetched) */
	if (unlikely(slots[i].windows == 0))
		memset(&slots[i].usage, 0, sizeof(PgsqUsage));
	return &slots[i].usage;
}

/*
 * The time a statement ran before an error cut short its window: the
 * windows it completed (earlier fetches of a cursor) and this one.
 */
static double
query_failed_ms(int slot, const PgsqWindow *window)
{
	double		ms = pgsq_window_elapsed_ms(window);

	if (slot >= 0 && slot < slot_count && slots[slot].windows > 0)
		ms += INSTR_TIME_GET_MILLISEC(slots[slot].usage.time);
	return ms;
}

/*
 * The statement whose ExecutorStart threw the error being handled, if any
 * and still of this transaction (see note_start_failure); NULL after.
 */
static inline QueryDesc *
failed_start(void)
{
	QueryDesc  *query = starting_query;

	starting_query = NULL;
	if (query == NULL || starting_lxid != MyProc->vxid.lxid)
		return NULL;
	return query;
}

/*
 * Before a statement starts in transaction lxid: slots left by a past
 * transaction belong to statements that never ended (it aborted) and are
 * forgotten; the subtransaction callbacks brought current_subxid back to
 * the top.  Slots were taken at or before the last start: if that was in
 * this transaction, it forgot those of past ones already.
 */
static inline void
forget_past_slots(LocalTransactionId lxid)
{
	if (unlikely(slot_count > 0) && starting_lxid != lxid)
		slot_count = 0;
}

/*
 * Subtransaction end: statements of an aborted one never end, nor does one
 * that failed in ExecutorStart
 */
static void
measure_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	(void) arg;
	if (event == SUBXACT_EVENT_START_SUB)
		current_subxid = mySubid;
	else if (event == SUBXACT_EVENT_COMMIT_SUB ||
			 event == SUBXACT_EVENT_ABORT_SUB)
		current_subxid = parentSubid;
	if (event == SUBXACT_EVENT_ABORT_SUB)
		starting_query = NULL;
	if (slot_count == 0)
		return;
	for (int i = 0; i < slot_count; i++)
	{
		if (slots[i].query == NULL || slots[i].subxid != mySubid)
			continue;
		if (event == SUBXACT_EVENT_ABORT_SUB)
			slots[i].query = NULL;
		else if (event == SUBXACT_EVENT_COMMIT_SUB)
			slots[i].subxid = parentSubid;
	}
	trim_slots();
}

/* Register the subtransaction callback that keeps the slots right */
void
pgsq_measure_init(void)
{
	RegisterSubXactCallback(measure_subxact_callback, NULL);
	if (IsTransactionState())
		current_subxid = GetCurrentSubTransactionId();
}


/* The key of a statement run now by this user in this database */
static PgsqKey
current_key(int64 queryid)
{
	PgsqKey		key;

	memset(&key, 0, sizeof(key));
	key.userid = GetUserId();
	key.dbid = MyDatabaseId;
	key.queryid = queryid;
	key.toplevel = (nesting_level == 0);
	return key;
}

/*
 * Note that the statement running at this nesting level ended in the error
 * being thrown (from a PG_CATCH block; pending.c counts it later).  A
 * top-level statement is its session user's: an error thrown from inside a
 * SECURITY DEFINER function leaves that function's owner as the current
 * user until the transaction aborts.
 */
static void
note_failure(int64 queryid, const char *source, int location, int len,
			 double ms)
{
	Oid			userid = nesting_level == 0 ? GetOuterUserId() : GetUserId();

	pgsq_failure_noted(queryid, userid, nesting_level, source, location, len,
					   ms);
}

/*
 * Give an entry its text when it has none yet.  A text given to an entry
 * that is being dropped meanwhile, or whose slot holds another statement by
 * then, is refused, and freed (textarea.c): a plan's text is made by
 * EXPLAIN, which takes its time.
 */
static void
ensure_text(PgsqSharedEntry *entry, const PgsqKey *key,
			const PgsqTextSource *src)
{
	if (pgsq_text_hint(entry))
		return;
	(void) pgsq_entry_give_text(entry, key, pgsq_statement_text(key, src));
}

/*
 * May this statement end under another user than the one it was parsed
 * under (SET ROLE, SET SESSION AUTHORIZATION)?  Its key at its end is then
 * not the one seen at parse analysis, and only the text kept now has its
 * role name replaced: the scanner alone takes a name for a word.
 */
static bool
changes_user(const Query *query)
{
	const VariableSetStmt *set;

	if (query->utilityStmt == NULL || !IsA(query->utilityStmt, VariableSetStmt))
		return false;
	set = (const VariableSetStmt *) query->utilityStmt;
	return set->name != NULL &&
		(strcmp(set->name, "role") == 0 ||
		 strcmp(set->name, "session_authorization") == 0);
}

/* After parse analysis: see to the entry and normalized text of a statement */
static void
pgsq_post_parse_analyze(ParseState *pstate, Query *query,
						PGSQ_HOOK_JUMBLESTATE * jstate)
{
	PgsqKey		key;
	bool		text_kept;

	/*
	 * A statement parsed before at this level or deeper, if still waiting for
	 * its entry, gets it now (merge.c); unless this is an EXECUTE, which most
	 * likely runs that very one.
	 */
	if (query->utilityStmt == NULL || !IsA(query->utilityStmt, ExecuteStmt))
		pgsq_create_parsed_new(nesting_level);
	/* then: a text is read as it was lexed, and it was lexed just now */
	pgsq_scs_seen();
	if (prev_post_parse_analyze)
		prev_post_parse_analyze(pstate, query, jstate);

	if (!tracking(nesting_level) || query->queryId == INT64CONST(0))
		return;

	/* EXECUTE is charged to the prepared statement, not to itself */
	if (query->utilityStmt && IsA(query->utilityStmt, ExecuteStmt))
	{
		if (pgsq_track_utility)
			query->queryId = INT64CONST(0);
		return;
	}
	if (query->utilityStmt && !pgsq_track_utility)
		return;
	if (jstate == NULL || pstate->p_sourcetext == NULL)
		return;

	key = current_key(query->queryId);
	if ((pgsq_pending_has_text(&key) || pgsq_parse_needs_nothing(&key)) &&
		!changes_user(query))
		return;

	/* for a statement that ends under another key, or without its entry */
	{
		int			location = query->stmt_location;
		int			len = query->stmt_len;
		const char *stmt = CleanQuerytext(pstate->p_sourcetext, &location,
										  &len);

		text_kept = pgsq_inflight_remember(nesting_level, query->queryId,
										   stmt, location, len, jstate);
	}

	/*
	 * Without constants, the text is the one that runs: the entry is created
	 * and its text stored when the statement ends, as pg_stat_statements
	 * does, so that a statement that fails leaves neither, and no text for a
	 * later spelling of the same one.
	 */
	if (jstate->clocations_count == 0)
		return;

	/*
	 * A statement with constants that has no entry gets one with the text
	 * normalized from the constants' locations, as in pg_stat_statements:
	 * when it ends, or at the latest by what this backend does next (see
	 * merge.c).  The text of a statement that has an entry is seen to when it
	 * ends, once per batch of counts, normalized from what texts.c keeps.
	 */
	{
		PgsqTextSource src = {pstate->p_sourcetext, query->stmt_location,
		query->stmt_len, jstate, nesting_level};

		pgsq_parse_see_entry(&key, text_kept, &src);
	}
}

/*
 * Record the execution of a statement's plan (its time, rows and shared
 * blocks of the statement's execution, stmt_exec) in the plan's entry,
 * keyed by the statement's key and the plan's id; the plan's text is made
 * from the statement, still open, only if the entry lacks one and the plan
 * ran before.
 */
static void
record_plan(const PgsqKey *statement, QueryDesc *query,
			const PgsqExecution *stmt_exec)
{
	PgsqKey		key = *statement;
	PgsqTextSource src = {NULL, 0, 0, NULL, nesting_level};
	PgsqExecution exec = {
		.phase = PGSQ_EXEC,
		.ms = stmt_exec->ms,
		.rows = stmt_exec->rows,
		.bufusage = stmt_exec->bufusage,
		.plan_cache = PGSQ_PLAN_NOT_CACHED,
	};
	PgsqSharedEntry *entry;
	bool		check_text;

	key.planid = query->plannedstmt->planId;
	src.plan = query;
	entry = pgsq_record(&key, &src, &exec, NULL, &check_text);
	pgsq_mirror_plan();

	/*
	 * The text of a plan that ran before (its entry has merged counts: read
	 * without the lock, a hint), so that a plan run once costs no EXPLAIN
	 * (merge.c)
	 */
	if (entry != NULL && check_text && entry->data.counters.exec.calls > 0)
		ensure_text(entry, &key, &src);
}

/* After a statement was recorded: merge if long busy, sweep if full */
static inline void
statement_recorded(void)
{
	pgsq_maybe_flush_busy();

	/* last: a sweep may evict entries this statement was counted for */
	pgsq_maybe_sweep(nesting_level > 0);
}

/*
 * Record a finished statement's execution (or planning), and its text if
 * the entry lacks one; with plan, a statement that ran a plan with an id
 * (exec->planid), that plan's execution too (unless the statement's pending
 * counts mirror it: pending.c)
 */
static void
record_statement(int64 queryid, const char *source, int location, int len,
				 const PgsqExecution *exec, QueryDesc *plan)
{
	PgsqKey		key = current_key(queryid);
	PgsqTextSource src = {source, location, len, NULL, nesting_level};
	PgsqSharedEntry *entry;
	bool		check_text;
	PgsqPlanCounting plan_counting;

	Assert(plan == NULL || exec->planid == plan->plannedstmt->planId);
	entry = pgsq_record(&key, source != NULL ? &src : NULL, exec,
						&plan_counting, &check_text);
	if (entry != NULL && source != NULL && check_text)
		ensure_text(entry, &key, &src);
	if (plan != NULL)
	{
		if (plan_counting == PGSQ_PLAN_RECORD)
		{
			pgsq_plan_replay(&key);
			record_plan(&key, plan, exec);
		}
		else if (plan_counting == PGSQ_PLAN_DEFER &&
				 !pgsq_plan_defer(&key, exec->planid, exec->ms, exec->rows,
								  exec->bufusage))
			record_plan(&key, plan, exec);
		else if (plan_counting == PGSQ_PLAN_UNTRACKED)
			pgsq_plan_refused();
	}
	statement_recorded();
}

/*
 * Record an execution measured by our utility hook, whose totals are usage:
 * the quick way if the statement has pending counts (pending.c), the full
 * way otherwise
 */
static void
record_utility(int64 queryid, const char *source, int location, int len,
			   const PgsqUsage *usage, uint64 rows, PgsqPlanCache plan_cache)
{
	if (pgsq_record_known(queryid, nesting_level == 0, 0, rows, usage,
						  plan_cache))
		statement_recorded();
	else
	{
		PgsqExecution exec = {
			.phase = PGSQ_EXEC,
			.ms = INSTR_TIME_GET_MILLISEC(usage->time),
			.rows = rows,
			.bufusage = &usage->bufusage,
			.walusage = &usage->walusage,
			.plan_cache = plan_cache,
		};

		record_statement(queryid, source, location, len, &exec, NULL);
	}
}

/* Planner hook: measure planning when track_planning is on */
static PlannedStmt *
pgsq_planner(Query *parse, const char *query_string, int cursorOptions,
			 ParamListInfo boundParams PGSQ_PLANNER_EXTRA_PARAMS)
{
	PlannedStmt *result;
	bool		measure = pgsq_track_planning && query_string != NULL &&
		parse->queryId != INT64CONST(0) && measuring(nesting_level);
	PgsqWindow	window;
	PgsqUsage	usage;

	pgsq_maybe_count_failures();
	if (measure)
		pgsq_window_begin(&window);

	/* functions run by the planner are nested statements */
	nesting_level++;
	PG_TRY();
	{
		if (prev_planner)
			result = prev_planner(parse, query_string, cursorOptions, boundParams
								  PGSQ_PLANNER_EXTRA_ARGS);
		else
			result = standard_planner(parse, query_string, cursorOptions,
									  boundParams PGSQ_PLANNER_EXTRA_ARGS);
	}
	PG_CATCH();
	{
		nesting_level--;
		note_start_failure(failed_start(), nesting_level + 1);

		/* planning time is only known when it is measured */
		if (query_string != NULL && parse->queryId != INT64CONST(0) &&
			measuring(nesting_level))
			note_failure(parse->queryId, query_string, parse->stmt_location,
						 parse->stmt_len,
						 measure ? pgsq_window_elapsed_ms(&window) : 0);
		PG_RE_THROW();
	}
	PG_END_TRY();
	nesting_level--;

	if (measure)
	{
		PgsqExecution exec = {
			.phase = PGSQ_PLAN,
			.bufusage = &usage.bufusage,
			.walusage = &usage.walusage,
			.plan_cache = PGSQ_PLAN_NOT_CACHED,
		};

		pgsq_window_end(&window, &usage, true);
		exec.ms = INSTR_TIME_GET_MILLISEC(usage.time);
		record_statement(parse->queryId, query_string, parse->stmt_location,
						 parse->stmt_len, &exec, NULL);
	}

	/*
	 * The plan's id, unless another extension gave it one (PostgreSQL reports
	 * it in the backend's status when this hook returns)
	 */
	if (result->planId == INT64CONST(0) && pgsq_max_plans > 0 &&
		parse->queryId != INT64CONST(0) && tracking(nesting_level))
		result->planId = pgsq_plan_id(result);
	return result;
}

/* ExecutorStart hook: take a measuring slot for tracked statements */
static void
pgsq_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	LocalTransactionId lxid = MyProc->vxid.lxid;

	pgsq_maybe_count_failures();
	forget_past_slots(lxid);

	/* no error frame here (too dear per statement): see note_start_failure */
	starting_query = queryDesc;
	starting_lxid = lxid;
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	starting_query = NULL;

	if (queryDesc->plannedstmt->queryId != INT64CONST(0) &&
		measuring(nesting_level))
		query_started(queryDesc);
}

/*
 * Note the failure of a statement whose ExecutorStart threw the error being
 * handled (a permission check, say: failed_start), if it is measured; level
 * is the one it ran at.  Called where the error passes through: an enclosing
 * statement's error frame, or, for a top-level statement, which has none of
 * ours, the error report (pgsq_emit_log).  A failure caught below those (by
 * a PL/pgSQL exception block) is not seen: the subtransaction's abort
 * forgets it (measure_subxact_callback), and one whose report was not
 * logged is forgotten with its transaction.
 */
static void
note_start_failure(QueryDesc *query, int level)
{
	int			saved_level = nesting_level;

	if (query == NULL || query->plannedstmt->queryId == INT64CONST(0) ||
		!measuring(level))
		return;
	nesting_level = level;
	note_failure(query->plannedstmt->queryId, query->sourceText,
				 query->plannedstmt->stmt_location,
				 query->plannedstmt->stmt_len, 0);
	nesting_level = saved_level;
}

/* Note a measured statement whose ExecutorRun or ExecutorFinish failed */
static void
note_executor_failure(QueryDesc *queryDesc, int slot, const PgsqWindow *window)
{
	note_failure(queryDesc->plannedstmt->queryId, queryDesc->sourceText,
				 queryDesc->plannedstmt->stmt_location,
				 queryDesc->plannedstmt->stmt_len,
				 query_failed_ms(slot, window));
}

/* ExecutorRun hook: measure the call; statements run from here are nested */
static void
pgsq_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction, uint64 count)
{
	int			slot = query_slot(queryDesc);
	PgsqWindow	window;

	if (slot >= 0)
		pgsq_window_begin(&window);
	nesting_level++;
	PG_TRY();
	{
		if (prev_ExecutorRun)
			prev_ExecutorRun(queryDesc, direction, count);
		else
			standard_ExecutorRun(queryDesc, direction, count);
	}
	PG_CATCH();
	{
		nesting_level--;
		note_start_failure(failed_start(), nesting_level + 1);
		if (slot >= 0)
			note_executor_failure(queryDesc, slot, &window);
		PG_RE_THROW();
	}
	PG_END_TRY();
	nesting_level--;
	if (slot >= 0)
		query_add(slot, queryDesc, &window);
}

/* ExecutorFinish hook: AFTER triggers and the like are nested too */
static void
pgsq_ExecutorFinish(QueryDesc *queryDesc)
{
	int			slot;
	PgsqWindow	window;

	/*
	 * A SELECT without a data-modifying WITH has no trigger or CTE to finish:
	 * nothing runs here that is measured or nested, so no level and no error
	 * frame either.
	 */
	if (!pgsq_finish_measured(queryDesc))
	{
		if (prev_ExecutorFinish)
			prev_ExecutorFinish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
		return;
	}

	slot = query_slot(queryDesc);
	if (slot >= 0)
		pgsq_window_begin(&window);
	nesting_level++;
	PG_TRY();
	{
		if (prev_ExecutorFinish)
			prev_ExecutorFinish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
	}
	PG_CATCH();
	{
		nesting_level--;
		note_start_failure(failed_start(), nesting_level + 1);
		if (slot >= 0)
			note_executor_failure(queryDesc, slot, &window);
		PG_RE_THROW();
	}
	PG_END_TRY();
	nesting_level--;
	if (slot >= 0)
		query_add(slot, queryDesc, &window);
}

/*
 * Record the execution of a statement measured since its ExecutorStart the
 * full way (record_execution), and with it the plan it ran if it has an id
 */
static pg_noinline void
record_execution_fully(QueryDesc *queryDesc, const PgsqUsage *usage)
{
	EState	   *estate = queryDesc->estate;
	PlannedStmt *pstmt = queryDesc->plannedstmt;
	bool		with_plan = pgsq_max_plans > 0 &&
		pstmt->planId != INT64CONST(0);
	PgsqExecution exec = {
		.phase = PGSQ_EXEC,
		.ms = INSTR_TIME_GET_MILLISEC(usage->time),
		.rows = estate->es_total_processed,
		.bufusage = &usage->bufusage,
		.walusage = &usage->walusage,
		.jitusage = estate->es_jit ? &estate->es_jit->instr : NULL,
		.parallel_to_launch = estate->es_parallel_workers_to_launch,
		.parallel_launched = estate->es_parallel_workers_launched,
		.plan_cache = pgsq_plan_cache_of(pstmt),
		.planid = with_plan ? pstmt->planId : 0,
	};

	record_statement(pstmt->queryId, queryDesc->sourceText,
					 pstmt->stmt_location, pstmt->stmt_len, &exec,
					 with_plan ? queryDesc : NULL);
}

/*
 * Record the execution of a statement measured since its ExecutorStart (it
 * has a slot: it was tracked and sampled then), whose totals are usage: the
 * quick way if the statement has pending counts (pending.c), the full way
 * otherwise or with JIT or parallel workers.  What only the full way needs
 * is read there, not at every execution.
 */
static inline void
record_execution(QueryDesc *queryDesc, const PgsqUsage *usage)
{
	EState	   *estate = queryDesc->estate;
	PlannedStmt *pstmt = queryDesc->plannedstmt;

	/* a cached plan made while plans were not tracked: its id, once */
	if (pgsq_max_plans > 0 && unlikely(pstmt->planId == INT64CONST(0)))
		pstmt->planId = pgsq_plan_id(pstmt);

	if (likely(estate->es_jit == NULL &&
			   (estate->es_parallel_workers_to_launch |
				estate->es_parallel_workers_launched) == 0) &&
		pgsq_record_known(pstmt->queryId, nesting_level == 0,
						  pgsq_max_plans > 0 ? pstmt->planId : 0,
						  estate->es_total_processed, usage,
						  pgsq_plan_cache_of(pstmt)))
		statement_recorded();
	else
		record_execution_fully(queryDesc, usage);
}

/* ExecutorEnd hook: record the execution */
static void
pgsq_ExecutorEnd(QueryDesc *queryDesc)
{
	const PgsqUsage *usage = query_ended(queryDesc);

	if (usage != NULL && queryDesc->plannedstmt->queryId != INT64CONST(0))
		record_execution(queryDesc, usage);
	sampling_ended(nesting_level);

	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/*
 * Where a measured utility command comes from, for noting its failure: its
 * query ID (the PlannedStmt may be gone by then), text and window
 */
typedef struct UtilityFailure
{
	int64		queryid;
	const char *source;
	int			location;
	int			len;
	const PgsqWindow *window;
} UtilityFailure;

/*
 * Run the next ProcessUtility, at one more nesting level if asked; if it
 * fails, note the failure of a measured command (measured not NULL)
 */
static void
call_process_utility(bool nested, const UtilityFailure *measured,
					 PlannedStmt *pstmt, const char *queryString,
					 bool readOnlyTree, ProcessUtilityContext context,
					 ParamListInfo params, QueryEnvironment *queryEnv,
					 DestReceiver *dest, QueryCompletion *qc)
{
	if (nested)
		nesting_level++;
	PG_TRY();
	{
		if (prev_ProcessUtility)
			prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
									params, queryEnv, dest, qc);
	}
	PG_CATCH();
	{
		if (nested)
			nesting_level--;
		note_start_failure(failed_start(), nesting_level + 1);
		if (measured != NULL && measured->queryid != INT64CONST(0))
			note_failure(measured->queryid, measured->source,
						 measured->location, measured->len,
						 pgsq_window_elapsed_ms(measured->window));
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (nested)
		nesting_level--;
}

/*
 * ProcessUtility hook: measure utility commands.  EXECUTE and PREPARE are
 * not measured here: the executor hooks charge the prepared statement.
 */
static void
pgsq_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					bool readOnlyTree, ProcessUtilityContext context,
					ParamListInfo params, QueryEnvironment *queryEnv,
					DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	int64		queryid = pstmt->queryId;
	int			location = pstmt->stmt_location;
	int			len = pstmt->stmt_len;
	PgsqPlanCache plan_cache = pgsq_plan_cache_of(pstmt);

	/* drawn even when utility commands are not tracked: nested ones follow */
	bool		enabled = measuring(nesting_level) && pgsq_track_utility;
	bool		prepared = IsA(parsetree, ExecuteStmt) ||
		IsA(parsetree, PrepareStmt);
	PgsqWindow	window;
	PgsqUsage	usage;
	uint64		rows;

	pgsq_maybe_count_failures();

	/* a transaction block's statements look at the time (pgsq_busy_check) */
	if (IsA(parsetree, TransactionStmt))
		pgsq_busy_countdown = 1;

	/*
	 * Statements inside a utility command (EXPLAIN, DECLARE CURSOR, CREATE
	 * TABLE AS) are measured here, not again by the executor hooks.
	 */
	if (enabled)
		pstmt->queryId = INT64CONST(0);

	if (!enabled || prepared)
	{
		call_process_utility(!prepared, NULL, pstmt, queryString,
							 readOnlyTree, context, params, queryEnv, dest,
							 qc);
		sampling_ended(nesting_level);
		return;
	}

	pgsq_window_begin(&window);
	{
		UtilityFailure measured = {queryid, queryString, location, len,
		&window};

		call_process_utility(true, &measured, pstmt, queryString,
							 readOnlyTree, context, params, queryEnv, dest,
							 qc);
	}
	/* pstmt may be gone now (ROLLBACK frees it): use our copies only */
	pgsq_window_end(&window, &usage, true);

	/* commands that report a row count in their completion tag */
	rows = (qc && (qc->commandTag == CMDTAG_COPY ||
				   qc->commandTag == CMDTAG_FETCH ||
				   qc->commandTag == CMDTAG_SELECT ||
				   qc->commandTag == CMDTAG_REFRESH_MATERIALIZED_VIEW)) ?
		qc->nprocessed : 0;

	/* BEGIN and COMMIT of every transaction: mostly the quick way */
	if (queryid != INT64CONST(0))
		record_utility(queryid, queryString, location, len, &usage, rows,
					   plan_cache);
	sampling_ended(nesting_level);
}

/*
 * emit_log_hook: the report of an error that a top-level statement's
 * ExecutorStart threw reaches here with no error frame of ours on the way
 * (see note_start_failure)
 */
static void
pgsq_emit_log(ErrorData *edata)
{
	if (unlikely(starting_query != NULL) && edata->elevel >= ERROR)
		note_start_failure(failed_start(), nesting_level);
	if (prev_emit_log)
		prev_emit_log(edata);
}

/* Install our hooks, keeping the previous ones to call */
void
pgsq_install_hooks(void)
{
	prev_post_parse_analyze = post_parse_analyze_hook;
	post_parse_analyze_hook = pgsq_post_parse_analyze;
	prev_planner = planner_hook;
	planner_hook = pgsq_planner;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = pgsq_ExecutorStart;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = pgsq_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = pgsq_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = pgsq_ExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = pgsq_ProcessUtility;
	prev_emit_log = emit_log_hook;
	emit_log_hook = pgsq_emit_log;
	pgsq_measure_init();
}
