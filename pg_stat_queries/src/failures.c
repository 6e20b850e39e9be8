/*-------------------------------------------------------------------------
 *
 * failures.c
 *		Executions that ended in an error: noted where the error passes
 *		through our hooks, counted later at a safe point.
 *
 * Our planner, executor and utility hooks catch an error on its way up
 * (hooks.c), note the statement, its time until then and the error's
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
	size = Max(8, noted_size * 2);
	if ((Size) size * sizeof(NotedFailure) > MaxAllocSize ||
		(Size) size * 2 * sizeof(int) > MaxAllocSize)
		return false;
	array = MemoryContextAllocExtended(TopMemoryContext,
									   size * sizeof(NotedFailure),
									   MCXT_ALLOC_NO_OOM);
	index = MemoryContextAllocExtended(TopMemoryContext,
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

	if (pgsq_state == NULL || queryid == INT64CONST(0))
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
		stmt = CleanQuerytext(source, &f->location, &f->len);
		if (f->len <= PGSQ_FAILURE_TEXT_MAX)
		{
			f->stmt = MemoryContextAllocExtended(TopMemoryContext, f->len + 1,
												 MCXT_ALLOC_NO_OOM);
			if (f->stmt != NULL)
			{
				memcpy(f->stmt, stmt, f->len);
				f->stmt[f->len] = '\0';
			}
		}
	}

	/* have the statistics system call our flush when this backend idles */
	pgstat_report_fixed = true;
}

/*
 * Count the noted failures into their entries; a failure noted before a
 * reset that dropped entries goes with them.  Outside any error, where a
 * backend flushes its counts.  The memory of many notes is given back.
 */
void
pgsq_failures_count(void)
{
	uint64		reset_count;

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
			true};

			pgsq_record_failure(&f.key, f.stmt != NULL ? &src : NULL,
								f.count, f.ms, f.sqlstate, f.at);
		}
		if (f.stmt != NULL)
			pfree(f.stmt);
	}
	if (noted_size > PGSQ_FAILURE_KEEP)
	{
		pfree(noted);
		pfree(noted_index);
		noted = NULL;
		noted_index = NULL;
		noted_size = 0;
		noted_index_mask = 0;
	}
}
