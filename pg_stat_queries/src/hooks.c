/*-------------------------------------------------------------------------
 *
 * hooks.c
 *		Planner, executor and utility hooks that measure each statement.
 *
 * Which statements count, and at which nesting level, follows
 * pg_stat_statements so that both report the same rows: top-level and
 * (with track = all) nested statements, utility commands when
 * track_utility is on, EXECUTE charged to the prepared statement.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "eviction.h"
#include "failures.h"
#include "hooks.h"
#include "inflight.h"
#include "measure.h"
#include "pending.h"
#include "qtext.h"
#include "refs.h"
#include "settings.h"
#include "textsource.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "common/pg_prng.h"
#include "executor/executor.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/queryjumble.h"
#include "optimizer/planner.h"
#include "parser/analyze.h"
#include "tcop/utility.h"
#include "utils/memutils.h"

/* Depth of planner/executor/utility calls we are inside of */
static int	nesting_level = 0;

static void note_start_failure(int level);

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

/* The key of a statement run now by this user in this database */
static PgsqKey
current_key(int64 queryid)
{
	PgsqKey		key;

	key.userid = GetUserId();
	key.dbid = MyDatabaseId;
	key.queryid = queryid;
	key.toplevel = (nesting_level == 0);
	return key;
}

/*
 * Note that the statement running at this nesting level ended in the error
 * being thrown (from a PG_CATCH block; failures.c counts it later).  A
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
 * Give a referenced entry its text when it has none yet.  A text given to
 * an entry that is being dropped meanwhile is refused, and freed (qtext.c).
 */
static void
ensure_text(PgsqSharedEntry *entry, const PgsqKey *key,
			const PgsqTextSource *src)
{
	if (pgsq_text_hint(entry))
		return;
	(void) pgsq_text_give(entry, key, pgsq_statement_text(key, src));
}

/* After parse analysis: see to the entry and normalized text of a statement */
static void
pgsq_post_parse_analyze(ParseState *pstate, Query *query,
						PGSQ_HOOK_JUMBLESTATE * jstate)
{
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

	/* for a statement that ends under another key, or without its entry */
	{
		int			location = query->stmt_location;
		int			len = query->stmt_len;
		const char *stmt = CleanQuerytext(pstate->p_sourcetext, &location,
										  &len);

		pgsq_inflight_remember(nesting_level, query->queryId, stmt, location,
							   len, jstate);
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
	 * A statement with constants gets its entry here if it has none, with the
	 * text normalized from the constants' locations, as pg_stat_statements
	 * does.  The text of a statement that has an entry is seen to when it
	 * ends, once per batch of counts, normalized from what inflight.c keeps.
	 */
	{
		PgsqKey		key = current_key(query->queryId);
		PgsqTextSource src = {pstate->p_sourcetext, query->stmt_location,
		query->stmt_len, jstate, nesting_level};

		pgsq_parse_see_entry(&key, &src);
	}
}

/* Record a finished statement, and its text if the entry lacks one */
static void
record_statement(int64 queryid, const char *source, int location, int len,
				 PgsqPhase phase, double ms, uint64 rows,
				 const BufferUsage *bufusage, const WalUsage *walusage,
				 const JitInstrumentation *jitusage,
				 int parallel_to_launch, int parallel_launched,
				 PgsqPlanCache plan_cache)
{
	PgsqKey		key = current_key(queryid);
	PgsqTextSource src = {source, location, len, NULL, nesting_level};
	PgsqSharedEntry *entry;
	bool		check_text;

	entry = pgsq_record(&key, source != NULL ? &src : NULL, phase, ms,
						rows, bufusage, walusage, jitusage,
						parallel_to_launch, parallel_launched, plan_cache,
						&check_text);
	if (entry != NULL && source != NULL && check_text)
		ensure_text(entry, &key, &src);
	pgsq_maybe_flush_busy();

	/* last: a sweep may evict entries this backend holds references to */
	pgsq_maybe_sweep(nesting_level > 0);
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
		if (pgsq_starting_query != NULL)
			note_start_failure(nesting_level + 1);

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
		pgsq_window_end(&window, &usage, true);
		record_statement(parse->queryId, query_string, parse->stmt_location,
						 parse->stmt_len, PGSQ_PLAN,
						 INSTR_TIME_GET_MILLISEC(usage.time), 0,
						 &usage.bufusage, &usage.walusage, NULL, 0, 0,
						 PGSQ_PLAN_NOT_CACHED);
	}
	return result;
}

/* ExecutorStart hook: take a measuring slot for tracked statements */
static void
pgsq_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	/* no error frame here (too dear per statement): see note_start_failure */
	pgsq_starting_query = queryDesc;
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	pgsq_starting_query = NULL;

	if (queryDesc->plannedstmt->queryId != INT64CONST(0) &&
		measuring(nesting_level))
		pgsq_query_started(queryDesc);
}

/*
 * Note the failure of a statement whose ExecutorStart threw the error being
 * handled (a permission check, say), if it is measured; level is the one it
 * ran at.  Called where the error passes through: an enclosing statement's
 * error frame, or, for a top-level statement, which has none of ours, the
 * error report (pgsq_emit_log).  A failure caught below those (by a
 * PL/pgSQL exception block) is not seen: the subtransaction's abort forgets
 * it (measure.c).
 */
static void
note_start_failure(int level)
{
	QueryDesc  *query = pgsq_starting_query;
	int			saved_level = nesting_level;

	pgsq_starting_query = NULL;
	if (query->plannedstmt->queryId == INT64CONST(0) || !measuring(level))
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
				 pgsq_query_failed_ms(slot, window));
}

/* ExecutorRun hook: measure the call; statements run from here are nested */
static void
pgsq_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction, uint64 count)
{
	int			slot = pgsq_query_slot(queryDesc);
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
		if (pgsq_starting_query != NULL)
			note_start_failure(nesting_level + 1);
		if (slot >= 0)
			note_executor_failure(queryDesc, slot, &window);
		PG_RE_THROW();
	}
	PG_END_TRY();
	nesting_level--;
	if (slot >= 0)
		pgsq_query_add(slot, queryDesc, &window);
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

	slot = pgsq_query_slot(queryDesc);
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
		if (pgsq_starting_query != NULL)
			note_start_failure(nesting_level + 1);
		if (slot >= 0)
			note_executor_failure(queryDesc, slot, &window);
		PG_RE_THROW();
	}
	PG_END_TRY();
	nesting_level--;
	if (slot >= 0)
		pgsq_query_add(slot, queryDesc, &window);
}

/* ExecutorEnd hook: record the execution */
static void
pgsq_ExecutorEnd(QueryDesc *queryDesc)
{
	int64		queryid = queryDesc->plannedstmt->queryId;
	const PgsqUsage *usage = pgsq_query_ended(queryDesc);

	if (usage != NULL && queryid != INT64CONST(0) && tracking(nesting_level))
	{
		EState	   *estate = queryDesc->estate;

		record_statement(queryid, queryDesc->sourceText,
						 queryDesc->plannedstmt->stmt_location,
						 queryDesc->plannedstmt->stmt_len, PGSQ_EXEC,
						 INSTR_TIME_GET_MILLISEC(usage->time),
						 estate->es_total_processed,
						 &usage->bufusage, &usage->walusage,
						 estate->es_jit ? &estate->es_jit->instr : NULL,
						 estate->es_parallel_workers_to_launch,
						 estate->es_parallel_workers_launched,
						 pgsq_plan_cache_of(queryDesc->plannedstmt));
	}

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
		if (pgsq_starting_query != NULL)
			note_start_failure(nesting_level + 1);
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

	if (queryid != INT64CONST(0))
		record_statement(queryid, queryString, location, len, PGSQ_EXEC,
						 INSTR_TIME_GET_MILLISEC(usage.time), rows,
						 &usage.bufusage, &usage.walusage, NULL, 0, 0,
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
	if (unlikely(pgsq_starting_query != NULL) && edata->elevel >= ERROR)
		note_start_failure(nesting_level);
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
