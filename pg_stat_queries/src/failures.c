/*-------------------------------------------------------------------------
 *
 * failures.c
 *		Executions that ended in an error: noted where the error passes
 *		through our hooks, counted later at a safe point.
 *
 * Our planner, executor and utility hooks catch an error on its way up
 * (hooks.c), note the statement, its time until then and the error's
 * SQLSTATE here, and throw it on.  Nothing else is done there: the error
 * may have been raised while a lock was held, ours included, or in memory
 * about to be freed, so shared memory is not touched and only the
 * statement's text is copied.  The noted failures are counted into their
 * entries -- created with their text if the statement never completed --
 * at the next flush of this backend's counts: when it goes idle (an aborted
 * transaction block first has to end), before it reads the view, and at
 * exit.  Error messages are never kept: they carry literal values.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "failures.h"
#include "pending.h"
#include "textsource.h"

#include "nodes/queryjumble.h"
#include "pgstat.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* One execution that failed, until it is counted */
typedef struct NotedFailure
{
	PgsqKey		key;
	int			level;			/* nesting level it ran at */
	double		ms;				/* time it ran before failing */
	int			sqlstate;
	TimestampTz at;
	uint64		reset_count;	/* pgsq_state->reset_count when noted */
	char	   *stmt;			/* its text, cut out of the source; or NULL */
	int			location;		/* of the statement in its source */
	int			len;
} NotedFailure;

static NotedFailure *noted = NULL;
static int	noted_count = 0;
static int	noted_size = 0;

/* Statements kept beyond this many are counted without their text */
#define PGSQ_FAILURE_TEXT_MAX (1024 * 1024)

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

	if (pgsq_state == NULL || queryid == INT64CONST(0))
		return;
	if (noted_count == noted_size)
	{
		int			size = Max(8, noted_size * 2);

		noted = noted == NULL ?
			MemoryContextAlloc(TopMemoryContext, size * sizeof(NotedFailure)) :
			repalloc(noted, size * sizeof(NotedFailure));
		noted_size = size;
	}
	f = &noted[noted_count];
	memset(&f->key, 0, sizeof(f->key));
	f->key.userid = userid;
	f->key.dbid = MyDatabaseId;
	f->key.queryid = queryid;
	f->key.toplevel = (level == 0);
	f->level = level;
	f->ms = ms;
	f->sqlstate = geterrcode();
	f->at = GetCurrentTimestamp();
	f->reset_count = pg_atomic_read_u64(&pgsq_state->reset_count);
	f->stmt = NULL;
	f->location = location;
	f->len = len;
	if (source != NULL)
	{
		const char *stmt = CleanQuerytext(source, &f->location, &f->len);

		if (f->len <= PGSQ_FAILURE_TEXT_MAX)
		{
			f->stmt = MemoryContextAlloc(TopMemoryContext, f->len + 1);
			memcpy(f->stmt, stmt, f->len);
			f->stmt[f->len] = '\0';
		}
	}
	noted_count++;

	/* have the statistics system call our flush when this backend idles */
	pgstat_report_fixed = true;
}

/*
 * Count the noted failures into their entries; a failure noted before a
 * reset that dropped entries goes with them.  Outside any error, where a
 * backend flushes its counts.
 */
void
pgsq_failures_count(void)
{
	uint64		reset_count;

	if (noted_count == 0 || pgsq_state == NULL)
		return;
	reset_count = pg_atomic_read_u64(&pgsq_state->reset_count);
	while (noted_count > 0)
	{
		/* taken off first: an error while counting loses only this one */
		NotedFailure f = noted[--noted_count];

		if (f.reset_count == reset_count)
		{
			PgsqTextSource src = {f.stmt, f.location, f.len, NULL, f.level,
			true};

			pgsq_record_failure(&f.key, f.stmt != NULL ? &src : NULL,
								f.ms, f.sqlstate, f.at);
		}
		if (f.stmt != NULL)
			pfree(f.stmt);
	}
}
