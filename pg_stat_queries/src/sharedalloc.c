/*-------------------------------------------------------------------------
 *
 * sharedalloc.c
 *		Allocating shared memory on a statement's behalf without ever
 *		failing the statement.
 *
 * Our entries live in the statistics system's DSA area, our texts and rare
 * counters in a DSA area of our own.  Both grow by new dynamic shared
 * memory segments, and creating one raises an ERROR when the system has no
 * room for it (a full /dev/shm, "too many dynamic shared memory segments"):
 * DSA_ALLOC_NO_OOM covers only the areas' own limits.  The statistics
 * system also raises ERRORs of its own when it cannot create an entry.  An
 * ERROR there, on a hook's path, would roll back the user's statement, and
 * PostgreSQL has no way to ask in advance whether an allocation will need
 * a new segment.
 *
 * So every allocation of shared memory we make while a statement runs or
 * ends goes through pgsq_shared_alloc, which runs it and turns an error of
 * class 53 (insufficient resources: out of memory, disk full, too many
 * segments) into a false result: the caller then counts the execution as
 * refused or the text as missing, and the statement goes on.  Any other
 * error is raised as it came.
 *
 * Recovering from such an error without aborting a (sub)transaction is safe
 * here because of what the code that failed can leave behind:
 *
 *	- LWLocks: the DSA area's and size classes' locks and the shared hash's
 *	  partition locks, taken inside the failed call.  The work runs with no
 *	  LWLock held by us or by our caller (PostgreSQL calls no planner,
 *	  executor or statistics hook under one), so releasing all of them
 *	  releases exactly those.
 *	- interrupt holdoff counts, which the ERROR zeroed: put back as they were.
 *	- a descriptor of the segment dsm_create was making: run with no
 *	  resource owner, it stays unowned in the backend's list (a few dozen
 *	  bytes, freed at exit) instead of being reported as leaked at commit.
 *	  Segments that were created are pinned for the session by dsa.c
 *	  anyway, so no owner is needed.
 *	- the statistics system's local cache: an entry reference left without
 *	  a shared entry is treated as missing by its next lookup.
 *	- nothing half-built in the areas or the hash: each fails before it
 *	  links what it was allocating.
 *
 * A failure is logged (LOG, at most every PGSQ_ALLOC_LOG_INTERVAL_MS per
 * backend) with its SQLSTATE, since the error itself is never reported.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "sharedalloc.h"

#include "miscadmin.h"
#include "storage/lwlock.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"

#define PGSQ_ALLOC_LOG_INTERVAL_MS 10000

static TimestampTz last_logged = 0;
static uint64 failures_unlogged = 0;

/* Log a failure, unless one was logged recently */
static void
log_failure(int sqlerrcode)
{
	TimestampTz now = GetCurrentTimestamp();

	failures_unlogged++;
	if (last_logged != 0 &&
		!TimestampDifferenceExceeds(last_logged, now,
									PGSQ_ALLOC_LOG_INTERVAL_MS))
		return;
	ereport(LOG,
			(errmsg("pg_stat_queries could not allocate shared memory (SQLSTATE %s)",
					unpack_sql_state(sqlerrcode)),
			 errdetail_plural("%" PRIu64 " statement or text was not tracked since the last such message.",
							  "%" PRIu64 " statements or texts were not tracked since the last such message.",
							  failures_unlogged, failures_unlogged),
			 errhint("Raise the size of /dev/shm, or set min_dynamic_shared_memory.")));
	last_logged = now;
	failures_unlogged = 0;
}

/*
 * Run fn(arg), which allocates shared memory, with no LWLock held.  Returns
 * false if it raised an error of class 53 (insufficient resources), which
 * is then forgotten; raises any other error.
 */
bool
pgsq_shared_alloc(PgsqSharedAllocFn fn, void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	uint32		holdoff = InterruptHoldoffCount;
	uint32		cancel_holdoff = QueryCancelHoldoffCount;
	volatile int sqlerrcode = 0;

	CurrentResourceOwner = NULL;
	PG_TRY();
	{
		fn(arg);
	}
	PG_CATCH();
	{
		CurrentResourceOwner = owner;
		sqlerrcode = geterrcode();
		if (ERRCODE_TO_CATEGORY(sqlerrcode) != ERRCODE_INSUFFICIENT_RESOURCES)
			PG_RE_THROW();
		LWLockReleaseAll();
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		InterruptHoldoffCount = holdoff;
		QueryCancelHoldoffCount = cancel_holdoff;
	}
	PG_END_TRY();
	CurrentResourceOwner = owner;

	if (sqlerrcode == 0)
		return true;
	log_failure(sqlerrcode);
	return false;
}
