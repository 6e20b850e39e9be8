/*-------------------------------------------------------------------------
 *
 * guard.c
 *		Running our work so that its errors never reach the statement or
 *		the process it runs in.
 *
 * Two kinds of our work may raise errors that must not escape:
 *
 *	- allocations of shared memory made on a statement's behalf
 *	  (pgsq_shared_alloc).  Our entries live in the statistics system's DSA
 *	  area, our texts and rare counters in one of our own; both grow by new
 *	  dynamic shared memory segments, and creating one raises an ERROR when
 *	  the system has no room for it (a full /dev/shm, "too many dynamic
 *	  shared memory segments"): DSA_ALLOC_NO_OOM covers only the areas' own
 *	  limits, and PostgreSQL cannot tell in advance whether an allocation
 *	  will need a segment.  Such an error, of class 53 (insufficient
 *	  resources), becomes a false result: the caller counts the execution
 *	  as untracked or the text as missing, and the statement goes on.  Any
 *	  other error is raised as it came.
 *	- saving and restoring our statistics (pgsq_run_guarded), at startup
 *	  and in the checkpointer's last flush, where any error would be FATAL
 *	  and cost PostgreSQL its own statistics file: every error is logged
 *	  and costs only our file.
 *
 * Recovering from an error without aborting a (sub)transaction is safe for
 * this work because of what it can leave behind:
 *
 *	- LWLocks: those the failed code took (a DSA area's and size classes'
 *	  locks, the shared hash's partition locks, our entry and file locks).
 *	  The work runs with no LWLock held by us or by our caller (PostgreSQL
 *	  calls no planner, executor or statistics hook, and no exit callback,
 *	  under one), so releasing all of them releases exactly those.
 *	- interrupt holdoff counts, which the ERROR zeroed: put back.
 *	- the exit flags: while a process exits (proc_exit_inprogress, and the
 *	  checkpointer's ExitOnAnyError) an ERROR is promoted to FATAL; they are
 *	  cleared while the work runs, so that the error reaches our handler,
 *	  and put back.  A FATAL or PANIC raised by the work is not caught.
 *	- for allocations, the descriptor of a segment dsm_create was making:
 *	  run with no resource owner, it stays unowned in the backend's list (a
 *	  few dozen bytes, freed at exit) instead of being reported as leaked at
 *	  commit.  dsa.c pins the segments it creates for the session anyway.
 *	- the statistics system's local cache: an entry reference left without
 *	  a shared entry is treated as missing by its next lookup.
 *	- nothing half-built in the areas or the hash: each fails before it
 *	  links what it was allocating (entries.c links our entries itself for
 *	  that reason).  Files are closed by the code that opened them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "pg_stat_queries.h"

/* Log failed allocations at most this often per backend */
#define PGSQ_ALLOC_LOG_INTERVAL_MS 10000

static TimestampTz alloc_last_logged = 0;
static uint64 alloc_failures_unlogged = 0;

/*
 * Run fn(arg), catching its errors: those of class 53 only if
 * resources_only, any other then being raised as it came.  Returns 0, or
 * the SQLSTATE of the error caught, copied to *edata if not NULL (in the
 * caller's memory context).
 */
static int
run_catching(PgsqGuardedFn fn, void *arg, bool resources_only,
			 ErrorData **edata)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	uint32		holdoff = InterruptHoldoffCount;
	uint32		cancel_holdoff = QueryCancelHoldoffCount;
	bool		exit_inprogress = proc_exit_inprogress;
	bool		exit_on_any_error = ExitOnAnyError;
	volatile int sqlerrcode = 0;

	Assert(CritSectionCount == 0);
	proc_exit_inprogress = false;
	ExitOnAnyError = false;
	if (resources_only)
		CurrentResourceOwner = NULL;
	PG_TRY();
	{
		fn(arg);
	}
	PG_CATCH();
	{
		CurrentResourceOwner = owner;
		proc_exit_inprogress = exit_inprogress;
		ExitOnAnyError = exit_on_any_error;
		sqlerrcode = geterrcode();
		if (resources_only &&
			ERRCODE_TO_CATEGORY(sqlerrcode) != ERRCODE_INSUFFICIENT_RESOURCES)
			PG_RE_THROW();
		HOLD_INTERRUPTS();
		LWLockReleaseAll();
		pgstat_report_wait_end();
		MemoryContextSwitchTo(cxt);
		if (edata != NULL)
			*edata = CopyErrorData();
		FlushErrorState();
	}
	PG_END_TRY();
	CurrentResourceOwner = owner;
	proc_exit_inprogress = exit_inprogress;
	ExitOnAnyError = exit_on_any_error;
	InterruptHoldoffCount = holdoff;
	QueryCancelHoldoffCount = cancel_holdoff;
	return sqlerrcode;
}

/* Log a failed allocation, unless one was logged recently */
static void
log_alloc_failure(int sqlerrcode)
{
	TimestampTz now = GetCurrentTimestamp();

	alloc_failures_unlogged++;
	if (alloc_last_logged != 0 &&
		!TimestampDifferenceExceeds(alloc_last_logged, now,
									PGSQ_ALLOC_LOG_INTERVAL_MS))
		return;
	ereport(LOG,
			(errmsg("pg_stat_queries could not allocate shared memory (SQLSTATE %s)",
					unpack_sql_state(sqlerrcode)),
			 errdetail_plural("%" PRIu64 " statement or text was not tracked since the last such message.",
							  "%" PRIu64 " statements or texts were not tracked since the last such message.",
							  alloc_failures_unlogged, alloc_failures_unlogged),
			 errhint("Raise the size of /dev/shm, or set min_dynamic_shared_memory.")));
	alloc_last_logged = now;
	alloc_failures_unlogged = 0;
}

/*
 * Run fn(arg), which allocates shared memory, with no LWLock held.  Returns
 * false if it raised an error of class 53 (insufficient resources), which
 * is then logged (at most every PGSQ_ALLOC_LOG_INTERVAL_MS) and forgotten;
 * raises any other error.
 */
bool
pgsq_shared_alloc(PgsqGuardedFn fn, void *arg)
{
	int			sqlerrcode = run_catching(fn, arg, true, NULL);

	if (sqlerrcode == 0)
		return true;
	log_alloc_failure(sqlerrcode);
	return false;
}

/*
 * Run fn(arg), a step of saving or restoring, in a memory context of its
 * own, with no LWLock held.  Returns false if it raised an error, which is
 * then logged ("could not <what>") and forgotten.
 */
bool
pgsq_run_guarded(PgsqGuardedFn fn, void *arg, const char *what)
{
	MemoryContext caller_cxt = CurrentMemoryContext;
	MemoryContext work_cxt;
	ErrorData  *edata = NULL;

	work_cxt = AllocSetContextCreate(TopMemoryContext,
									 "pg_stat_queries persistence",
									 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(work_cxt);
	(void) run_catching(fn, arg, false, &edata);
	MemoryContextSwitchTo(caller_cxt);
	if (edata != NULL)
	{
		ereport(LOG,
				(errcode(edata->sqlerrcode),
				 errmsg("pg_stat_queries could not %s: %s", what,
						edata->message),
				 edata->detail ? errdetail_internal("%s", edata->detail) : 0));
		FreeErrorData(edata);
	}
	MemoryContextDelete(work_cxt);
	return edata == NULL;
}
