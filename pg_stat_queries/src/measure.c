/*-------------------------------------------------------------------------
 *
 * measure.c
 *		Time, buffer and WAL usage of each running statement, measured by
 *		our own executor hooks.
 *
 * Asking the executor for whole-query instrumentation (QueryDesc->totaltime,
 * as pg_stat_statements does) costs a zeroed Instrumentation of some 400
 * bytes in the query's memory on every execution, often a new memory block,
 * and a start/stop pair around both ExecutorRun and ExecutorFinish: about
 * 550 of the 38,000 instructions of a primary-key lookup.  We measure the
 * same windows ourselves and keep the totals of each running statement in a
 * small backend-local array, searched by QueryDesc address:
 *
 *	- a slot is taken at ExecutorStart and given back at ExecutorEnd;
 *	- every ExecutorRun call is measured (a cursor makes one per FETCH), and
 *	  ExecutorFinish is measured unless the statement is a SELECT without a
 *	  data-modifying WITH: it then has no trigger or CTE to finish;
 *	- a statement whose (sub)transaction aborts never reaches ExecutorEnd, so
 *	  its slot is dropped at abort.  A cursor opened in a subtransaction that
 *	  commits belongs to the parent from then on, and so does its slot.
 *
 * A slot never moves while in use, so its index stays valid while the
 * statements nested in it start and end.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "measure.h"

#include "access/xact.h"
#include "utils/memutils.h"

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

QueryDesc  *pgsq_starting_query = NULL;

static QuerySlot *slots = NULL;
static int	slot_count = 0;		/* slots in use, up to the last taken one */
static int	slot_capacity = 0;

/* Give back slots from the end while they are unused */
static void
trim_slots(void)
{
	while (slot_count > 0 && slots[slot_count - 1].query == NULL)
		slot_count--;
}

/* Index of the slot of a running statement, or -1 if it has none */
int
pgsq_query_slot(const QueryDesc *query)
{
	for (int i = slot_count - 1; i >= 0; i--)
	{
		if (slots[i].query == query)
			return i;
	}
	return -1;
}

/*
 * Take a slot for a statement about to run: the first unused one, or one
 * left with this address by a statement whose end we missed.
 */
void
pgsq_query_started(const QueryDesc *query)
{
	int			i = -1;

	for (int j = 0; j < slot_count; j++)
	{
		if (slots[j].query == query)
		{
			i = j;
			break;
		}
		if (slots[j].query == NULL && i < 0)
			i = j;
	}
	if (i < 0)
	{
		if (slot_count == slot_capacity)
		{
			int			capacity = Max(8, slot_capacity * 2);

			if (slots == NULL)
				slots = MemoryContextAlloc(TopMemoryContext,
										   capacity * sizeof(QuerySlot));
			else
				slots = repalloc(slots, capacity * sizeof(QuerySlot));
			slot_capacity = capacity;
		}
		i = slot_count++;
	}
	slots[i].query = query;
	slots[i].subxid = GetCurrentSubTransactionId();
	slots[i].windows = 0;
}

/* Add a measured window to a running statement's slot */
void
pgsq_query_add(int slot, const QueryDesc *query, const PgsqWindow *window)
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
const PgsqUsage *
pgsq_query_ended(const QueryDesc *query)
{
	int			i = pgsq_query_slot(query);

	if (i < 0)
		return NULL;
	slots[i].query = NULL;
	trim_slots();
	/* a statement ended without running (a cursor closed unfetched) */
	if (slots[i].windows == 0)
		memset(&slots[i].usage, 0, sizeof(PgsqUsage));
	return &slots[i].usage;
}

/*
 * The time a statement ran before an error cut short its window: the
 * windows it completed (earlier fetches of a cursor) and this one.
 */
double
pgsq_query_failed_ms(int slot, const PgsqWindow *window)
{
	double		ms = pgsq_window_elapsed_ms(window);

	if (slot >= 0 && slot < slot_count && slots[slot].windows > 0)
		ms += INSTR_TIME_GET_MILLISEC(slots[slot].usage.time);
	return ms;
}

/*
 * At transaction end no statement of it can still end: forget them all,
 * and the statement that failed in ExecutorStart, if any
 */
static void
measure_xact_callback(XactEvent event, void *arg)
{
	(void) arg;
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			slot_count = 0;
			pgsq_starting_query = NULL;
			break;
		default:
			break;
	}
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
	if (event == SUBXACT_EVENT_ABORT_SUB)
		pgsq_starting_query = NULL;
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

/* Register the transaction callbacks that keep the slots right */
void
pgsq_measure_init(void)
{
	RegisterXactCallback(measure_xact_callback, NULL);
	RegisterSubXactCallback(measure_subxact_callback, NULL);
}
