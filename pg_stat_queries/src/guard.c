/*-------------------------------------------------------------------------
 *
 * guard.c
 *		Running our work so that its errors never reach the statement or
 *		the process it runs in.
 *
 * Two kinds of our work may raise errors that must not escape:
 *
 *	- allocations of shared memory made on a statement's behalf
 *	  (pgsq_shared_alloc).  Our entries, texts and rare counters live in a
 *	  DSA area of our own, which grows by new dynamic shared memory
 *	  segments, and creating one raises an ERROR when
 *	  the system has no room for it (a full /dev/shm, "too many dynamic
 *	  shared memory segments"): DSA_ALLOC_NO_OOM covers only the areas' own
 *	  limits, and PostgreSQL cannot tell in advance whether an allocation
 *	  will need a segment.  Such an error, of class 53 (insufficient
 *	  resources) or any other (creating a segment also maps errno values
 *	  such as EACCES or EDQUOT to 42501 or XX000), becomes a false result:
 *	  the caller counts the execution as untracked or the text as missing,
 *	  and the statement goes on.  Only a cancel or termination (class 57)
 *	  is raised as it came: it is the statement's, not ours.
 *
 * Each such failure costs more than the statement it is made for: the
 * descriptor dsm_create pushed stays in the backend's list of segments
 * (below), which every later attach walks, and whose dead handles can
 * clash with a live segment's.  So after one, every backend stops
 * making such allocations for a while (an allocation pause, in our shared
 * state): allocations fail at once, counted as before, without calling
 * DSA.  Then one backend tries again; a failure doubles the pause, up to a
 * cap, a success ends it, and so do entries dropped by a reset or the
 * sweep, whose slots and texts make room without a new segment.  Entries'
 * slots and texts have pauses of their own (PgsqArea), as a batch of slots
 * needs far more room than a text.  The cost of a full /dev/shm is then one failed
 * attempt per pause in the whole server.
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
 *	- nothing half-built in the area or the table: each fails before it
 *	  links what it was allocating (table.c).  Files are closed by the code
 *	  that opened them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "utils/injection_point.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "pg_stat_queries.h"

/* Log failed allocations at most this often per backend */
#define PGSQ_ALLOC_LOG_INTERVAL_MS 10000

/*
 * The allocation pause after a failure, doubled after each failed retry:
 * long enough that a full /dev/shm costs next to nothing, short enough that
 * room made outside our view (another server's segments freed, /dev/shm
 * grown) is used soon.
 */
#define PGSQ_ALLOC_PAUSE_MIN_MS 1000
#define PGSQ_ALLOC_PAUSE_MAX_MS 10000

/*
 * Tests: every guarded allocation fails as with a full /dev/shm, or as
 * with a /dev/shm this user may not write
 */
#define PGSQ_ALLOC_FAIL_POINT "pg-stat-queries-shared-alloc"
#define PGSQ_ALLOC_DENIED_POINT "pg-stat-queries-shared-alloc-denied"

static TimestampTz alloc_last_logged = 0;
static uint64 alloc_failures_unlogged = 0;

/*
 * Make an allocation fail where a test asks for it (injection point
 * PGSQ_ALLOC_FAIL_POINT), with the class of error a full /dev/shm raises.
 * The point's own action runs first, so that a notice, say, shows each
 * attempt.
 */
static void
inject_alloc_failure(void)
{
#ifdef USE_INJECTION_POINTS
	if (IS_INJECTION_POINT_ATTACHED(PGSQ_ALLOC_FAIL_POINT))
	{
		INJECTION_POINT(PGSQ_ALLOC_FAIL_POINT, NULL);
		ereport(ERROR,
				(errcode(ERRCODE_DISK_FULL),
				 errmsg("injected failure to create a shared memory segment")));
	}
	if (IS_INJECTION_POINT_ATTACHED(PGSQ_ALLOC_DENIED_POINT))
	{
		INJECTION_POINT(PGSQ_ALLOC_DENIED_POINT, NULL);
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("injected failure to open a shared memory segment: Permission denied")));
	}
#endif
}

/* What run_catching does besides catching errors */
#define GUARD_ALLOCATION 0x1	/* no resource owner; failures injected */
#define GUARD_PASS_CANCEL 0x2	/* a cancel or termination goes on up */

/*
 * Run fn(arg), catching its errors; with GUARD_PASS_CANCEL, a cancel or
 * termination (class 57) is raised as it came, whose pending flag the
 * error's raiser has cleared: swallowed, it would be lost.  Returns 0, or
 * the SQLSTATE of the error caught, copied to *edata if not NULL (in the
 * caller's memory context).
 */
static int
run_catching(PgsqGuardedFn fn, void *arg, int flags, ErrorData **edata)
{
	bool		resources_only = (flags & GUARD_ALLOCATION) != 0;
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
		if (resources_only)
			inject_alloc_failure();
		fn(arg);
	}
	PG_CATCH();
	{
		CurrentResourceOwner = owner;
		proc_exit_inprogress = exit_inprogress;
		ExitOnAnyError = exit_on_any_error;
		sqlerrcode = geterrcode();
		if ((flags & GUARD_PASS_CANCEL) != 0 &&
			ERRCODE_TO_CATEGORY(sqlerrcode) == ERRCODE_OPERATOR_INTERVENTION)
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

/* Set up an area's allocation pause: none yet */
void
pgsq_alloc_pause_init(PgsqAllocPause *pause)
{
	pg_atomic_init_u64(&pause->end, 0);
	pg_atomic_init_u32(&pause->ms, 0);
	pg_atomic_init_u32(&pause->error, ERRCODE_INSUFFICIENT_RESOURCES);
}

/*
 * May this backend allocate now?  Not while the allocation pause lasts;
 * once it is over, only the backend that claims the retry, which moves the
 * pause's end on so that the others keep waiting meanwhile.  *pause_end is
 * set to the end the caller saw or claimed (0: none), for note_alloc_result.
 */
static bool
alloc_allowed(PgsqAllocPause *pause, uint64 *pause_end)
{
	uint64		end = pg_atomic_read_u64(&pause->end);
	TimestampTz now;
	uint32		ms;
	uint64		claimed;

	*pause_end = end;
	if (end == 0)
		return true;
	now = GetCurrentTimestamp();
	if ((uint64) now < end)
		return false;
	ms = pg_atomic_read_u32(&pause->ms);
	claimed = (uint64) TimestampTzPlusMilliseconds(now, ms);
	if (!pg_atomic_compare_exchange_u64(&pause->end, &end, claimed))
		return false;
	*pause_end = claimed;
	return true;
}

/*
 * Start, lengthen or end the allocation pause after an allocation made
 * when the pause's end was pause_end.  Whoever changed the pause since
 * (another failure, a success, room freed) saw later news: theirs stands.
 * The length is written after the end, so a retry racing with a failure
 * may wait the previous length: no harm.
 */
static void
note_alloc_result(PgsqAllocPause *pause, uint64 pause_end, int sqlerrcode)
{
	uint32		ms = pg_atomic_read_u32(&pause->ms);
	uint64		expected = pause_end;
	uint64		end;

	if (sqlerrcode == 0)
	{
		/* the common case, free of writes to shared memory */
		if (pause_end == 0 && ms == 0)
			return;
		if (pg_atomic_compare_exchange_u64(&pause->end, &expected, 0))
			pg_atomic_write_u32(&pause->ms, 0);
		return;
	}
	ms = ms == 0 ? PGSQ_ALLOC_PAUSE_MIN_MS :
		Min(ms * 2, PGSQ_ALLOC_PAUSE_MAX_MS);
	end = (uint64) TimestampTzPlusMilliseconds(GetCurrentTimestamp(), ms);
	if (pg_atomic_compare_exchange_u64(&pause->end, &expected, end))
	{
		pg_atomic_write_u32(&pause->ms, ms);
		pg_atomic_write_u32(&pause->error, (uint32) sqlerrcode);
	}
}

/*
 * Run fn(arg), which allocates shared memory from area, with no LWLock
 * held.  Returns false if it raised an error, or if it was not run because
 * such an error paused the area's allocations (above); either is logged
 * (at most every PGSQ_ALLOC_LOG_INTERVAL_MS) and forgotten.  Raises only a
 * cancel or termination.
 */
bool
pgsq_shared_alloc(PgsqArea area, PgsqGuardedFn fn, void *arg)
{
	PgsqAllocPause *pause = &pgsq_state->alloc_pause[area];
	uint64		pause_end;
	int			sqlerrcode;

	if (!alloc_allowed(pause, &pause_end))
	{
		log_alloc_failure((int) pg_atomic_read_u32(&pause->error));
		return false;
	}
	sqlerrcode = run_catching(fn, arg, GUARD_ALLOCATION | GUARD_PASS_CANCEL,
							  NULL);
	note_alloc_result(pause, pause_end, sqlerrcode);
	if (sqlerrcode == 0)
		return true;
	log_alloc_failure(sqlerrcode);
	return false;
}

/*
 * Would an allocation from area be refused now, for its allocation pause?
 * Work done only for such an allocation can then be skipped; the claim of
 * the retry is left to pgsq_shared_alloc.
 */
bool
pgsq_shared_alloc_paused(PgsqArea area)
{
	uint64		end = pg_atomic_read_u64(&pgsq_state->alloc_pause[area].end);

	return end != 0 && (uint64) GetCurrentTimestamp() < end;
}

/*
 * Entries were dropped, their slots and texts free for reuse, so an
 * allocation of either kind may find room without a new segment: end the allocation
 * pauses.  Their lengths are kept, so that a retry that fails all the same
 * doubles them.
 */
void
pgsq_shared_room_freed(void)
{
	for (int i = 0; i < PGSQ_NUM_AREAS; i++)
	{
		PgsqAllocPause *pause = &pgsq_state->alloc_pause[i];

		if (pg_atomic_read_u64(&pause->end) != 0)
			pg_atomic_write_u64(&pause->end, 0);
	}
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
	(void) run_catching(fn, arg, 0, &edata);
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

/*
 * Run fn(arg), work of ours done between or at the start of statements on
 * behalf of an earlier one (the entry of a statement that did not end
 * first, with the text normalized for it): an error it raises, out of
 * memory say, is the earlier statement's, not the one running now, so it is
 * forgotten (false) but for a cancel or termination, which goes on up.
 * The caller holds no LWLock.
 */
bool
pgsq_run_for_earlier(PgsqGuardedFn fn, void *arg)
{
	return run_catching(fn, arg, GUARD_PASS_CANCEL, NULL) == 0;
}
