/*-------------------------------------------------------------------------
 *
 * plans.c
 *		Plans: the identifier of a statement's plan.
 *
 * A plan id tells two plans of one statement apart by what a user sees as
 * a different plan: which nodes, in which shape (join order), on which
 * relations and indexes, joined how, scanning in which direction, parallel
 * aware or not, aggregating by which strategy, with which subplans.  Costs,
 * row estimates, worker counts and constants do not count, so a custom
 * plan and a generic plan of the same shape share an id.  Relations and
 * indexes are named by OID, which stays the same across restarts and
 * backends (not across a dump and restore).
 *
 * It is computed once per planning, in the planner hook, for a statement
 * that is tracked, and set in PlannedStmt->planId, which PostgreSQL 18
 * gave to extensions: PostgreSQL reports a top-level statement's plan id
 * in the backend's status (pgstat_report_plan_id).  Another extension that
 * set it first keeps its own.  A cached plan made while plans were not
 * tracked (max_plans 0, or a statement level not tracked then) gets its
 * id at its first execution that counts, once.
 *
 * A plan's text is made once, when the plan runs again and finds its entry
 * without one -- not at its first execution: most plans that run once
 * belong to statements that run once, and EXPLAIN costs more than all else
 * a new statement costs -- from the statement still open at its end:
 * EXPLAIN (COSTS OFF) as
 * it would print it, passed through the literal rule of query texts
 * (normalize.c), so a custom plan's constants and a generic plan's
 * parameters both read $n.  The numbers EXPLAIN writes itself (worker
 * counts, subplans' numbers) are no typed values: they stay.  Executions of
 * a known plan never make one.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/explain.h"
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "utils/injection_point.h"
#include "utils/resowner.h"

#include "pg_stat_queries.h"

/* An odd multiplier with well-spread bits: 2^64 divided by the golden ratio */
#define PLAN_ID_MULTIPLIER UINT64CONST(0x9E3779B97F4A7C15)

/*
 * Mix a value into a plan id being computed: for each value a bijection of
 * the id, so that two plans differing in one value never share an id by
 * construction, and far cheaper than a hash of each value; pgsq_plan_id
 * spreads the bits once, at the end.
 */
static inline uint64
mix(uint64 id, uint64 value)
{
	return (id ^ value) * PLAN_ID_MULTIPLIER;
}

/* What a scan of range table entry scanrelid reads: a relation's OID */
static inline uint64
scanned(const PlannedStmt *pstmt, Index scanrelid)
{
	RangeTblEntry *rte;

	if (scanrelid == 0 || scanrelid > (Index) list_length(pstmt->rtable))
		return 0;
	rte = rt_fetch(scanrelid, pstmt->rtable);
	if (rte->rtekind == RTE_RELATION)
		return (uint64) rte->relid;
	/* a subquery, function, VALUES, CTE ...: its kind */
	return ((uint64) 1 << 32) | (uint64) rte->rtekind;
}

static uint64 plan_node_id(const PlannedStmt *pstmt, const Plan *plan,
						   uint64 id);

/*
 * Mix a plan that may be missing (NULL) into id.  A missing one (a scan's
 * children, mostly) mixes in zero without a call.
 */
static inline uint64
plan_or_none_id(const PlannedStmt *pstmt, const Plan *plan, uint64 id)
{
	if (plan == NULL)
		return mix(id, 0);
	return plan_node_id(pstmt, plan, id);
}

/*
 * Mix every plan of a list into id, in order.  Inline: most statements
 * have an empty list of subplans, which costs no call then.
 */
static inline uint64
plan_list_id(const PlannedStmt *pstmt, const List *plans, uint64 id)
{
	ListCell   *lc;

	id = mix(id, (uint64) list_length(plans));
	if (plans == NIL)
		return id;
	check_stack_depth();
	foreach(lc, plans)
		id = plan_or_none_id(pstmt, (const Plan *) lfirst(lc), id);
	return id;
}

/*
 * Mix one plan node, and the plans below it, into id.  The stack depth is
 * checked where the walk goes down, not at the leaves: most plans of the
 * statements run most often are a single scan.
 */
static uint64
plan_node_id(const PlannedStmt *pstmt, const Plan *plan, uint64 id)
{
	id = mix(id, ((uint64) nodeTag(plan) << 1) | (plan->parallel_aware ? 1 : 0));

	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
		case T_FunctionScan:
		case T_ValuesScan:
		case T_TableFuncScan:
		case T_CteScan:
		case T_NamedTuplestoreScan:
		case T_WorkTableScan:
		case T_ForeignScan:
			id = mix(id, scanned(pstmt, ((const Scan *) plan)->scanrelid));
			break;
		case T_IndexScan:
			{
				const IndexScan *scan = (const IndexScan *) plan;

				id = mix(id, scanned(pstmt, scan->scan.scanrelid));
				id = mix(id, scan->indexid);
				id = mix(id, (uint64) (scan->indexorderdir + 1));
			}
			break;
		case T_IndexOnlyScan:
			{
				const IndexOnlyScan *scan = (const IndexOnlyScan *) plan;

				id = mix(id, scanned(pstmt, scan->scan.scanrelid));
				id = mix(id, scan->indexid);
				id = mix(id, (uint64) (scan->indexorderdir + 1));
			}
			break;
		case T_BitmapIndexScan:
			{
				const BitmapIndexScan *scan = (const BitmapIndexScan *) plan;

				id = mix(id, scanned(pstmt, scan->scan.scanrelid));
				id = mix(id, scan->indexid);
			}
			break;
		case T_SubqueryScan:
			check_stack_depth();
			id = plan_or_none_id(pstmt, ((const SubqueryScan *) plan)->subplan,
								 id);
			break;
		case T_CustomScan:
			{
				const CustomScan *scan = (const CustomScan *) plan;
				const char *name = scan->methods->CustomName;

				id = mix(id, scanned(pstmt, scan->scan.scanrelid));
				id = mix(id, hash_bytes_extended((const unsigned char *) name,
												 strlen(name), 0));
				id = plan_list_id(pstmt, scan->custom_plans, id);
			}
			break;
		case T_NestLoop:
		case T_MergeJoin:
		case T_HashJoin:
			id = mix(id, (uint64) ((const Join *) plan)->jointype);
			break;
		case T_Agg:
			id = mix(id, (uint64) ((const Agg *) plan)->aggstrategy);
			break;
		case T_SetOp:
			id = mix(id, (uint64) ((const SetOp *) plan)->strategy);
			break;
		case T_ModifyTable:
			{
				const ModifyTable *mt = (const ModifyTable *) plan;
				ListCell   *lc;

				id = mix(id, (uint64) mt->operation);
				foreach(lc, mt->resultRelations)
					id = mix(id, scanned(pstmt, (Index) lfirst_int(lc)));
			}
			break;
		case T_Append:
			id = plan_list_id(pstmt, ((const Append *) plan)->appendplans, id);
			break;
		case T_MergeAppend:
			id = plan_list_id(pstmt, ((const MergeAppend *) plan)->mergeplans, id);
			break;
		case T_BitmapAnd:
			id = plan_list_id(pstmt, ((const BitmapAnd *) plan)->bitmapplans, id);
			break;
		case T_BitmapOr:
			id = plan_list_id(pstmt, ((const BitmapOr *) plan)->bitmapplans, id);
			break;
		default:
			break;
	}

	/* the outer, then the inner plan: join order */
	if (plan->lefttree != NULL || plan->righttree != NULL)
		check_stack_depth();
	id = plan_or_none_id(pstmt, plan->lefttree, id);
	return plan_or_none_id(pstmt, plan->righttree, id);
}

/*
 * The id of a statement's plan: its plan tree, then its subplans (those
 * of SubPlan and InitPlan expressions), never 0.
 */
int64
pgsq_plan_id(const PlannedStmt *pstmt)
{
	uint64		id;

	id = plan_or_none_id(pstmt, pstmt->planTree, (uint64) pstmt->commandType);
	id = plan_list_id(pstmt, pstmt->subplans, id);
	id = murmurhash64(id);
	return id == 0 ? 1 : (int64) id;
}

/*
 * Numbers that EXPLAIN writes after these words are its own, never a value
 * typed into the statement (a literal there would be inside quotes, or
 * would not follow these words)
 */
static const char *const explain_numbers[] = {
	"Workers Planned: ", "Subplans Removed: ", "InitPlan ", "SubPlan "
};

/* What such a number becomes while the text is scanned: an identifier */
#define NUMBER_MASK "pgsq_explain_no_"

/*
 * Copy text, with every number EXPLAIN wrote itself (above) turned into an
 * identifier (mask) or back (!mask), so that the literal rule leaves it.
 * The words all start with a capital I, S or W: text between is copied in
 * runs.
 */
static char *
mask_explain_numbers(const char *str, int len, bool mask, int *out_len)
{
	static const int mask_len = sizeof(NUMBER_MASK) - 1;
	StringInfoData out;
	int			copied = 0;		/* the text before this is in out */

	initStringInfo(&out);
	enlargeStringInfo(&out, len + (mask ? 64 : 0));
	for (int i = 0; i < len; i++)
	{
		char		c = str[i];

		if (c != 'I' && c != 'S' && c != 'W')
			continue;
		for (int k = 0; k < lengthof(explain_numbers); k++)
		{
			const char *word = explain_numbers[k];
			int			wlen = strlen(word);
			int			at = i + wlen;

			if (word[0] != c || len - i <= wlen ||
				strncmp(str + i, word, wlen) != 0)
				continue;
			if (!mask)
			{
				if (len - at <= mask_len ||
					strncmp(str + at, NUMBER_MASK, mask_len) != 0 ||
					!isdigit((unsigned char) str[at + mask_len]))
					continue;
				/* the word stays, the mask goes */
				appendBinaryStringInfo(&out, str + copied, at - copied);
				copied = at + mask_len;
			}
			else
			{
				if (!isdigit((unsigned char) str[at]))
					continue;
				appendBinaryStringInfo(&out, str + copied, at - copied);
				appendBinaryStringInfo(&out, NUMBER_MASK, mask_len);
				copied = at;
			}
			i = at - 1;
			break;
		}
	}
	appendBinaryStringInfo(&out, str + copied, len - copied);
	*out_len = out.len;
	return out.data;
}

/* The largest n of the $n in str, 0 if none */
static int
largest_placeholder(const char *str, int len)
{
	int			largest = 0;

	for (int i = 0; i < len; i++)
	{
		int			n = 0;

		if (str[i] != '$' || (i > 0 && pgsq_is_word_byte((unsigned char) str[i - 1])))
			continue;
		while (i + 1 < len && isdigit((unsigned char) str[i + 1]) && n < 100000000)
			n = n * 10 + (str[++i] - '0');
		largest = Max(largest, n);
	}
	return largest;
}

/*
 * Labels after which EXPLAIN prints, to the end of the line, a value from
 * the options of another object: file_fdw's file or program
 */
static const char *const explain_option_values[] = {
	"Foreign File: ", "Foreign Program: "
};

/*
 * Where the value ends (its line's end) if one of the labels above starts
 * at str[at], else at
 */
static int
option_value_end(const char *str, int len, int at)
{
	for (int k = 0; k < lengthof(explain_option_values); k++)
	{
		const char *label = explain_option_values[k];
		int			llen = strlen(label);
		int			end = at + llen;

		if (len - at < llen || strncmp(str + at, label, llen) != 0)
			continue;
		while (end < len && str[end] != '\n')
			end++;
		return end;
	}
	return at;
}

/*
 * The number of a value masked by mask_plan_values, str[start, start + len)
 * (the keywords true and false are matched without regard to case): the
 * one it got before, or the next one
 */
static int
value_number(const char *str, int start, int len, List **seen, int *next)
{
	ListCell   *lc;

	/* the few values masked here: a list, each a pair of its start and len */
	foreach(lc, *seen)
	{
		int		   *v = lfirst(lc);

		if (v[1] == len && pg_strncasecmp(str + v[0], str + start, len) == 0)
			return v[2];
	}
	{
		int		   *v = palloc(3 * sizeof(int));

		v[0] = start;
		v[1] = len;
		v[2] = (*next)++;
		*seen = lappend(*seen, v);
		return v[2];
	}
}

/*
 * Copy a normalized plan str with the values the literal rule cannot tell
 * from words replaced by placeholders numbered after its own (one number
 * per value): the boolean constants EXPLAIN prints as the keywords true and
 * false (unquoted, so never an identifier), and the option values of the
 * labels above.  Quoted identifiers are copied as they are.
 */
static char *
mask_plan_values(const char *str, int len, int *out_len)
{
	StringInfoData out;
	int			next = largest_placeholder(str, len) + 1;
	bool		line_start = true;
	List	   *seen = NIL;

	initStringInfo(&out);
	for (int i = 0; i < len; i++)
	{
		char		c = str[i];

		if (c == '"')
		{
			int			end = i + 1;

			while (end < len && str[end] != '"')
				end++;
			appendBinaryStringInfo(&out, str + i, Min(end + 1, len) - i);
			i = end;
			line_start = false;
			continue;
		}
		if (line_start && c != ' ')
		{
			int			value_end = option_value_end(str, len, i);

			line_start = false;
			if (value_end > i)
			{
				/* the label, then a placeholder to the end of the line */
				while (str[i] != ':')
					appendStringInfoChar(&out, str[i++]);
				appendStringInfo(&out, ": $%d",
								 value_number(str, i, value_end - i, &seen,
											  &next));
				i = value_end - 1;
				continue;
			}
		}
		if ((c == 't' || c == 'f' || c == 'T' || c == 'F') &&
			(i == 0 || !pgsq_is_word_byte((unsigned char) str[i - 1])))
		{
			int			wlen = (c == 't' || c == 'T') ? 4 : 5;

			if (len - i >= wlen &&
				pg_strncasecmp(str + i, wlen == 4 ? "true" : "false", wlen) == 0 &&
				(i + wlen == len || !pgsq_is_word_byte((unsigned char) str[i + wlen])))
			{
				appendStringInfo(&out, "$%d",
								 value_number(str, i, wlen, &seen, &next));
				i += wlen - 1;
				continue;
			}
		}
		if (c == '\n')
			line_start = true;
		appendStringInfoChar(&out, c);
	}
	list_free_deep(seen);
	*out_len = out.len;
	return out.data;
}

/*
 * The text of the plan a statement ran, at its end: EXPLAIN (COSTS OFF),
 * made literal-free; NULL if it cannot be made (never an error).
 *
 * EXPLAIN can fail: it looks up functions, operators and types that the
 * statement's locks do not protect from a concurrent DROP, calls type output
 * functions and the callbacks of foreign and custom scans, and may run out of
 * stack or memory.  It runs in a subtransaction, whose abort gives back
 * whatever the error left held (locks, buffer pins, cache references,
 * snapshots), so that the statement measured never sees it; the error is
 * dropped.  Interrupts are held throughout, so that no cancel meant for
 * the statement is taken and dropped here; the ERROR zeroed the holdoff
 * counts, which are put back.  Outside a transaction in progress (never
 * expected at the end of a statement) no text is made.
 */
char *
pgsq_plan_text(QueryDesc *query, int *len)
{
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	MemoryContext work;
	char	   *explained = NULL;
	int			explained_len = 0;
	char	   *result = NULL;
	uint32		holdoff;
	uint32		cancel_holdoff;

	if (query->planstate == NULL || !IsTransactionState())
		return NULL;
	work = AllocSetContextCreate(caller, "pg_stat_queries plan text",
								 ALLOCSET_DEFAULT_SIZES);
	HOLD_INTERRUPTS();
	holdoff = InterruptHoldoffCount;
	cancel_holdoff = QueryCancelHoldoffCount;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(work);
	PG_TRY();
	{
		ExplainState *es = NewExplainState();

		es->costs = false;
		es->format = EXPLAIN_FORMAT_TEXT;
		ExplainBeginOutput(es);
		ExplainPrintPlan(es, query);
		ExplainEndOutput(es);

		/* test/sql/plan_text_errors.sql: an error once EXPLAIN holds things */
		INJECTION_POINT("pg-stat-queries-plan-text", NULL);

		explained = es->str->data;
		explained_len = es->str->len;
		while (explained_len > 0 && explained[explained_len - 1] == '\n')
			explained_len--;
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(work);
		FlushErrorState();
		InterruptHoldoffCount = holdoff;
		QueryCancelHoldoffCount = cancel_holdoff;
		RollbackAndReleaseCurrentSubTransaction();
		explained = NULL;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(caller);
	CurrentResourceOwner = owner;
	RESUME_INTERRUPTS();

	if (explained != NULL && explained_len > 0)
	{
		int			masked_len;
		char	   *masked = mask_explain_numbers(explained, explained_len, true,
												  &masked_len);

		/* EXPLAIN wrote its strings for the setting in force */
		char	   *norm = pgsq_normalize_plan(masked, masked_len,
											   pgsq_scs_now(), &masked_len);

		pfree(masked);
		if (norm != NULL)
		{
			char	   *values = mask_plan_values(norm, masked_len, &masked_len);

			pfree(norm);
			result = mask_explain_numbers(values, masked_len, false, len);
			pfree(values);
		}
	}
	MemoryContextDelete(work);
	return result;
}
