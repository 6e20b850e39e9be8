/*-------------------------------------------------------------------------
 *
 * directscan.c
 *		Reading the statistics views with a custom scan.
 *
 * Through a function scan, every row of a read is made twice: the function
 * forms a tuple of all its columns into a tuplestore, then the scan takes
 * it apart again to send it.  When a query reads pg_stat_queries(), the
 * drop-in's pg_stat_statements() or pg_stat_queries_changed() in FROM (as
 * their views do), the planner is given a custom scan in place of the
 * function scan: it reads the entries as the function does (functions.c) and
 * returns each row as values made from the copies, only for the columns
 * the query uses.  The rows, their values and the privilege checks are the
 * function's; pg_stat_queries.direct_scan = off restores the function scan.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "commands/explain.h"
#include "commands/explain_format.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "pg_stat_queries.h"

#define PGSQ_DIRECT_SCAN_NAME "pg_stat_queries"

/* The statistics functions a direct scan reads like */
typedef enum ReadFunction
{
	READ_NONE,
	READ_STATS,					/* pg_stat_queries(showtext) */
	READ_CHANGES,				/* pg_stat_queries_changed(since, showtext) */
} ReadFunction;

/* A direct scan being executed */
typedef struct DirectScanState
{
	CustomScanState css;
	ReadFunction kind;
	Oid			funcid;
	int			natts;			/* columns of the function's rows */
	int			ncols;			/* columns of the scan's tuples ... */
	int		   *cols;			/* ... and their positions in a row, from 0 */
	bool		wanted[PGSQ_CHANGED_COLS];	/* by position in a row */
	List	   *args;			/* the function's arguments (ExprStates) */
	PgsqRowReader reader;
	PgsqReadSet *set;			/* the read, once made */
	bool		no_rows;		/* a NULL argument to the strict function */
	int			next;			/* the next copy of the read */
	MemoryContextCallback release;	/* ends the read with the executor */
} DirectScanState;

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

static Plan *plan_direct_scan(PlannerInfo *root, RelOptInfo *rel,
							  CustomPath *best_path, List *tlist,
							  List *clauses, List *custom_plans);
static Node *create_direct_scan_state(CustomScan *cscan);
static void begin_direct_scan(CustomScanState *node, EState *estate,
							  int eflags);
static TupleTableSlot *exec_direct_scan(CustomScanState *node);
static void end_direct_scan(CustomScanState *node);
static void rescan_direct_scan(CustomScanState *node);
static void explain_direct_scan(CustomScanState *node, List *ancestors,
								ExplainState *es);

static const CustomPathMethods direct_path_methods = {
	.CustomName = PGSQ_DIRECT_SCAN_NAME,
	.PlanCustomPath = plan_direct_scan,
};

static const CustomScanMethods direct_scan_methods = {
	.CustomName = PGSQ_DIRECT_SCAN_NAME,
	.CreateCustomScanState = create_direct_scan_state,
};

static const CustomExecMethods direct_exec_methods = {
	.CustomName = PGSQ_DIRECT_SCAN_NAME,
	.BeginCustomScan = begin_direct_scan,
	.ExecCustomScan = exec_direct_scan,
	.EndCustomScan = end_direct_scan,
	.ReScanCustomScan = rescan_direct_scan,
	.ExplainCustomScan = explain_direct_scan,
};

/*
 * Which of our statistics functions funcid is, if any: a C function of our
 * library whose symbol is one of theirs (the drop-in's pg_stat_statements()
 * and our older versions' functions share them).  A function given SECURITY
 * DEFINER or SET clauses (ALTER FUNCTION) is not read directly: only the
 * function call switches user and settings for its duration.
 */
static ReadFunction
read_function_of(Oid funcid)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	bool		candidate;
	FmgrInfo	finfo;

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(tup))
		return READ_NONE;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	candidate = proc->prolang == ClanguageId && proc->proretset &&
		!proc->prosecdef && heap_attisnull(tup, Anum_pg_proc_proconfig, NULL);
	if (candidate)
	{
		Datum		src = SysCacheGetAttrNotNull(PROCOID, tup,
												 Anum_pg_proc_prosrc);
		char	   *name = TextDatumGetCString(src);

		candidate = strcmp(name, "pg_stat_queries") == 0 ||
			strcmp(name, "pg_stat_queries_changed") == 0;
	}
	ReleaseSysCache(tup);
	if (!candidate)
		return READ_NONE;

	/* the same symbol in another library is not ours */
	fmgr_info(funcid, &finfo);
	if (finfo.fn_addr == pg_stat_queries)
		return READ_STATS;
	if (finfo.fn_addr == pg_stat_queries_changed)
		return READ_CHANGES;
	return READ_NONE;
}

/*
 * The columns (Vars) a scan of rel must return: those of its target and
 * restrictions; false if it needs anything else (a whole row, a system
 * column, a placeholder)
 */
static bool
needed_columns(RelOptInfo *rel, Index rti, List **columns)
{
	List	   *vars;
	ListCell   *lc;
	Bitmapset  *seen = NULL;

	vars = pull_var_clause((Node *) rel->reltarget->exprs,
						   PVC_INCLUDE_PLACEHOLDERS);
	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		vars = list_concat(vars,
						   pull_var_clause((Node *) rinfo->clause,
										   PVC_INCLUDE_PLACEHOLDERS));
	}
	*columns = NIL;
	foreach(lc, vars)
	{
		Var		   *var = (Var *) lfirst(lc);

		if (!IsA(var, Var) || var->varno != (int) rti || var->varattno <= 0)
			return false;
		if (bms_is_member(var->varattno, seen))
			continue;
		seen = bms_add_member(seen, var->varattno);
		*columns = lappend(*columns, var);
	}
	return true;
}

/*
 * A scan of one of our statistics functions in FROM, whose arguments need
 * no other relation, is done by a direct scan
 */
static pg_noinline void
offer_direct_scan_of(PlannerInfo *root, RelOptInfo *rel, Index rti,
					 RangeTblEntry *rte)
{
	RangeTblFunction *rtfunc;
	FuncExpr   *fexpr;
	ReadFunction kind;
	PgsqRowShape shape;
	List	   *columns;
	CustomPath *cpath;
	Path	   *cheapest = NULL;
	ListCell   *lc;

	if (!pgsq_direct_scan ||
		!pgsq_store_ready() || rte->funcordinality ||
		list_length(rte->functions) != 1 ||
		rel->reloptkind != RELOPT_BASEREL ||
		!bms_is_empty(rel->lateral_relids) || rel->pathlist == NIL)
		return;
	rtfunc = linitial_node(RangeTblFunction, rte->functions);
	if (!IsA(rtfunc->funcexpr, FuncExpr))
		return;
	fexpr = (FuncExpr *) rtfunc->funcexpr;
	if (contain_var_clause((Node *) fexpr->args) ||
		contain_subplans((Node *) fexpr->args))
		return;
	kind = read_function_of(fexpr->funcid);
	if (kind == READ_NONE ||
		!pgsq_row_shape(rtfunc->funccolcount, kind == READ_CHANGES, &shape) ||
		!needed_columns(rel, rti, &columns))
		return;

	foreach(lc, rel->pathlist)
	{
		Path	   *path = (Path *) lfirst(lc);

		if (cheapest == NULL || path->total_cost < cheapest->total_cost)
			cheapest = path;
	}

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;	/* pending counters: the leader's */
	cpath->path.parallel_workers = 0;
	cpath->path.rows = rel->rows;

	/* the function scan's work, less the tuplestore */
	cpath->path.startup_cost = cheapest->startup_cost / 2;
	cpath->path.total_cost = cheapest->total_cost / 2;
	cpath->path.pathkeys = NIL;
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cpath->custom_private = list_make2(makeInteger(kind), columns);
	cpath->methods = &direct_path_methods;

	/* the function scan is replaced, not competed with */
	rel->pathlist = NIL;
	rel->partial_pathlist = NIL;
	add_path(rel, &cpath->path);
}

/*
 * set_rel_pathlist_hook: offer a direct scan for a function scan.  Most
 * relations planned are tables: they are let go here, before the frame of
 * the work above is set up.
 */
static void
offer_direct_scan(PlannerInfo *root, RelOptInfo *rel, Index rti,
				  RangeTblEntry *rte)
{
	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);
	if (unlikely(rte->rtekind == RTE_FUNCTION))
		offer_direct_scan_of(root, rel, rti, rte);
}

/*
 * PlanCustomPath: the scan's tuples are the needed columns, in the
 * function's order (custom_scan_tlist); custom_private has the function,
 * its kind, its number of columns and their positions
 */
static Plan *
plan_direct_scan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				 List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	RangeTblFunction *rtfunc = linitial_node(RangeTblFunction, rte->functions);
	FuncExpr   *fexpr = castNode(FuncExpr, rtfunc->funcexpr);
	ReadFunction kind = intVal(linitial(best_path->custom_private));
	List	   *columns = lsecond(best_path->custom_private);
	List	   *scan_tlist = NIL;
	List	   *positions = NIL;
	AttrNumber	resno = 1;

	for (int attno = 1; attno <= rtfunc->funccolcount; attno++)
	{
		ListCell   *lc;

		foreach(lc, columns)
		{
			Var		   *var = lfirst_node(Var, lc);

			if (var->varattno != attno)
				continue;
			scan_tlist = lappend(scan_tlist,
								 makeTargetEntry((Expr *) copyObject(var),
												 resno++, NULL, false));
			positions = lappend_int(positions, attno - 1);
			break;
		}
	}

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_exprs = copyObject(fexpr->args);
	cscan->custom_private = list_make4(makeInteger((int) fexpr->funcid),
									   makeInteger(kind),
									   makeInteger(rtfunc->funccolcount),
									   positions);
	cscan->custom_scan_tlist = scan_tlist;
	cscan->methods = &direct_scan_methods;

	/* a plan of the function scan would depend on the function: so does ours */
	record_plan_function_dependency(root, fexpr->funcid);
	return &cscan->scan.plan;
}

/* CreateCustomScanState */
static Node *
create_direct_scan_state(CustomScan *cscan)
{
	DirectScanState *state = palloc0(sizeof(DirectScanState));
	List	   *positions = lfourth(cscan->custom_private);
	ListCell   *lc;
	int			i = 0;

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &direct_exec_methods;
	state->css.slotOps = &TTSOpsVirtual;
	state->funcid = (Oid) intVal(linitial(cscan->custom_private));
	state->kind = intVal(lsecond(cscan->custom_private));
	state->natts = intVal(lthird(cscan->custom_private));
	state->ncols = list_length(positions);
	state->cols = palloc(sizeof(int) * Max(state->ncols, 1));
	foreach(lc, positions)
	{
		state->cols[i++] = lfirst_int(lc);
		state->wanted[lfirst_int(lc)] = true;
	}
	return (Node *) state;
}

/* End the read, if made (at the end of the scan, or of its executor) */
static void
release_read(void *arg)
{
	DirectScanState *state = (DirectScanState *) arg;
	PgsqReadSet *set = state->set;

	state->set = NULL;
	if (set != NULL)
		pgsq_read_done(set);
}

/*
 * BeginCustomScan: the function's privilege check, as a function scan
 * makes it, even for EXPLAIN
 */
static void
begin_direct_scan(CustomScanState *node, EState *estate, int eflags)
{
	DirectScanState *state = (DirectScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	AclResult	aclresult;

	aclresult = object_aclcheck(ProcedureRelationId, state->funcid,
								GetUserId(), ACL_EXECUTE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_FUNCTION,
					   get_func_name(state->funcid));
	InvokeFunctionExecuteHook(state->funcid);

	state->args = ExecInitExprList(cscan->custom_exprs, &node->ss.ps);

	/* an error ends the executor without EndCustomScan */
	state->release.func = release_read;
	state->release.arg = state;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &state->release);
}

/* Read the entries, with the arguments' values, as the function would */
static void
read_entries(DirectScanState *state)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	Datum		args[2] = {0};
	bool		any_null = false;
	int			nargs = 0;
	ListCell   *lc;
	TimestampTz since = 0;
	bool		showtext;

	foreach(lc, state->args)
	{
		bool		isnull;

		if (nargs == lengthof(args))
			elog(ERROR, "unexpected arguments to %s",
				 get_func_name(state->funcid));
		args[nargs++] = ExecEvalExpr((ExprState *) lfirst(lc), econtext,
									 &isnull);
		any_null |= isnull;
	}
	if (nargs != (state->kind == READ_CHANGES ? 2 : 1))
		elog(ERROR, "unexpected arguments to %s", get_func_name(state->funcid));
	if (any_null && func_strict(state->funcid))
	{
		state->no_rows = true;
		return;
	}
	if (state->kind == READ_CHANGES)
	{
		/* as pg_stat_queries_changed(): 0 means "everything" inside */
		since = Max(DatumGetTimestampTz(args[0]), 1);
		showtext = DatumGetBool(args[1]);
	}
	else
		showtext = DatumGetBool(args[0]);

	pgsq_start_rows(&state->reader, state->natts, state->kind == READ_CHANGES,
					showtext);
	state->reader.wanted = state->wanted;
	state->set = pgsq_read_rows(&state->reader, since);
	state->next = 0;
}

/* The next row, as a virtual tuple of the needed columns */
static TupleTableSlot *
next_row(ScanState *ss)
{
	DirectScanState *state = (DirectScanState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;

	if (state->set == NULL && !state->no_rows)
		read_entries(state);
	ExecClearTuple(slot);
	while (state->set != NULL && state->next < state->set->n)
	{
		const PgsqEntryCopy *copy = &state->set->copies[state->next++];

		if (!pgsq_row_shown(&state->reader, copy))
			continue;
		if (state->ncols > 0)
		{
			Datum		values[PGSQ_CHANGED_COLS] = {0};
			bool		nulls[PGSQ_CHANGED_COLS] = {0};
			MemoryContext oldcxt;

			/* what the row allocates lives until the next one */
			oldcxt = MemoryContextSwitchTo(ss->ps.ps_ExprContext->ecxt_per_tuple_memory);
			pgsq_fill_row(&state->reader, copy, values, nulls);
			MemoryContextSwitchTo(oldcxt);
			for (int i = 0; i < state->ncols; i++)
			{
				slot->tts_values[i] = values[state->cols[i]];
				slot->tts_isnull[i] = nulls[state->cols[i]];
			}
		}
		return ExecStoreVirtualTuple(slot);
	}
	return slot;
}

/* Rows need no recheck: there are no concurrent updates to see */
static bool
recheck_row(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

/* ExecCustomScan */
static TupleTableSlot *
exec_direct_scan(CustomScanState *node)
{
	return ExecScan(&node->ss, next_row, recheck_row);
}

/* EndCustomScan */
static void
end_direct_scan(CustomScanState *node)
{
	release_read(node);
}

/*
 * ReScanCustomScan: the same rows again, as a function scan rereads its
 * tuplestore, unless a parameter changed (then its arguments may have)
 */
static void
rescan_direct_scan(CustomScanState *node)
{
	DirectScanState *state = (DirectScanState *) node;

	if (node->ss.ps.chgParam != NULL)
	{
		release_read(state);
		state->no_rows = false;
	}
	state->next = 0;
	ExecScanReScan(&node->ss);
}

/* ExplainCustomScan: the function read */
static void
explain_direct_scan(CustomScanState *node, List *ancestors, ExplainState *es)
{
	DirectScanState *state = (DirectScanState *) node;

	ExplainPropertyText("Function", get_func_name(state->funcid), es);
}

/* Install the planner hook and the scan's methods; _PG_init */
void
pgsq_install_direct_scan(void)
{
	RegisterCustomScanMethods(&direct_scan_methods);
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = offer_direct_scan;
}
