/*-------------------------------------------------------------------------
 *
 * entry.h
 *		Types shared by several modules of pg_stat_queries.
 *
 * One statement is identified by (userid, dbid, queryid, toplevel), as in
 * pg_stat_statements.  Its counters live in three places:
 *
 *	- PgsqCounters in backend-local pending data (pending.c), updated on
 *	  every execution without touching shared memory;
 *	- PgsqSharedEntry in the cumulative statistics system's shared hash
 *	  (store.c), where pending counters are merged in batches;
 *	- the query text, in a DSA area of our own in shared memory (qtext.c).
 *
 * Only types and inline functions: no module of its own.  The entry file,
 * pg_stat_queries.c, wires the modules; nothing includes its header.
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_ENTRY_H
#define PGSQ_ENTRY_H

#include "compat.h"
#include "histogram.h"

#include "datatype/timestamp.h"
#include "lib/dshash.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "utils/pgstat_internal.h"

/*
 * A backend asks all others to collect stale references at most this often
 * (refs.c), and so does the sweep unless a pass ends sooner (eviction.c);
 * counts kept aside meanwhile are set into their entries after about this
 * long (pending.c).
 */
#define PGSQ_GC_REQUEST_INTERVAL_MS 100

/*
 * The database OID of every one of our entries in the statistics system's
 * hash key, as for objects shared across databases; the statement's own
 * database is part of objid (pgsq_objid) and of the entry's data.  What the
 * statistics system does by database -- pg_stat_reset() zeroes the entries
 * whose key names the current database, DROP DATABASE drops them -- thus
 * never reaches our entries: only pg_stat_queries_reset() resets them, and
 * eviction alone removes a dropped database's statements, as in
 * pg_stat_statements.
 */
#define PGSQ_KEY_DBOID InvalidOid

/* Index into the per-phase arrays of PgsqCounters */
typedef enum PgsqPhase
{
	PGSQ_PLAN = 0,
	PGSQ_EXEC,
} PgsqPhase;

#define PGSQ_NUM_PHASES 2

/* Identity of a tracked statement */
typedef struct PgsqKey
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
	bool		toplevel;
} PgsqKey;

/* Are these the same statement? (objids can collide, keys cannot) */
static inline bool
pgsq_key_equals(const PgsqKey *a, const PgsqKey *b)
{
	return a->queryid == b->queryid && a->userid == b->userid &&
		a->dbid == b->dbid && a->toplevel == b->toplevel;
}

/* Timing summary of one phase: count, total, min, max, mean, variance */
typedef struct PgsqTiming
{
	int64		calls;
	double		total_time;		/* milliseconds */
	double		min_time;
	double		max_time;
	double		mean_time;
	double		sum_var_time;	/* sum of squared deviations */
} PgsqTiming;

/*
 * Counters that most executions leave at zero (blocks other than shared
 * hits, I/O times, WAL, JIT, parallel workers).  A shared entry keeps them
 * apart, in a chunk of their own allocated when a statement first has any
 * (rare.c), so that the entry stays small: with many statements, entries
 * packed more closely spread over more of the CPU cache's sets.
 */
typedef struct PgsqRareCounters
{
	/* first, in one cache line: what a statement that writes usually has */
	int64		wal_records;
	int64		wal_fpi;
	uint64		wal_bytes;
	int64		wal_buffers_full;
	int64		shared_blks_read;
	int64		shared_blks_dirtied;
	int64		shared_blks_written;
	int64		local_blks_hit;
	int64		local_blks_read;
	int64		local_blks_dirtied;
	int64		local_blks_written;
	int64		temp_blks_read;
	int64		temp_blks_written;
	double		shared_blk_read_time;
	double		shared_blk_write_time;
	double		local_blk_read_time;
	double		local_blk_write_time;
	double		temp_blk_read_time;
	double		temp_blk_write_time;
	int64		jit_functions;
	double		jit_generation_time;
	int64		jit_inlining_count;
	double		jit_inlining_time;
	int64		jit_optimization_count;
	double		jit_optimization_time;
	int64		jit_emission_count;
	double		jit_emission_time;
	int64		jit_deform_count;
	double		jit_deform_time;
	int64		parallel_workers_to_launch;
	int64		parallel_workers_launched;
	int64		generic_plan_calls; /* executions of a cached generic plan */
	int64		custom_plan_calls;	/* of a cached custom plan */
	/* executions that ended in an error (failures.c) */
	int64		failed_calls;
	double		failed_exec_time;	/* ms they ran before failing */
	TimestampTz last_failed_at; /* when the latest was counted */
	int32		last_failed_sqlstate;	/* its SQLSTATE, packed */
} PgsqRareCounters;

/*
 * Whether an execution's plan came from the plan cache, generic or custom,
 * as pg_stat_statements 1.13 counts them (PostgreSQL 19 and later tell,
 * compat.h: pgsq_plan_cache_of)
 */
typedef enum PgsqPlanCache
{
	PGSQ_PLAN_NOT_CACHED = 0,
	PGSQ_PLAN_GENERIC,
	PGSQ_PLAN_CUSTOM,
} PgsqPlanCache;

/*
 * The counters a shared entry holds itself.  What nearly every execution
 * changes comes first and together (the execution timing, rows, shared
 * hits, last execution, the histogram's start), so that merging a batch
 * writes few cache lines: with many statements each line of a shared entry
 * touched is a cache miss.
 */
typedef struct PgsqMainCounters
{
	PgsqTiming	exec;
	int64		rows;
	int64		shared_blks_hit;
	TimestampTz last_executed;	/* start of the latest execution */
	PgsqHistogram exec_hist;	/* execution times since minmax_stats_since */
	PgsqTiming	plan;
} PgsqMainCounters;

/*
 * All counters of one statement, as pending data holds them and readers
 * see them.  has_rare is set by an execution that changed a rare counter,
 * so that a merge knows without reading them all; until then rare holds
 * anything (pgsq_counters_clear leaves it alone, and the first rare count
 * zeroes it).  Likewise the execution histogram's counts: while
 * main.exec_hist.used is false, the histogram holds main.exec.calls times
 * -- none, or one, main.exec.min_time -- and its counts anything; the
 * second execution starts it (counters.c).  Shared entries' histograms are
 * always whole.
 */
typedef struct PgsqCounters
{
	PgsqMainCounters main;
	bool		has_rare;
	PgsqRareCounters rare;
} PgsqCounters;

/* The timing summary of a phase in counters (const or not) */
#define PGSQ_TIMING(c, phase) \
	((phase) == PGSQ_EXEC ? &(c)->exec : &(c)->plan)

/*
 * The part of a shared entry that a reader copies and that is saved across
 * a clean shutdown (savefile.c saves it by field, under names: a field
 * added here needs a column there, and nothing else).  What a merge reads
 * or writes besides the counters' first fields comes first.
 */
typedef struct PgsqEntryData
{
	PgsqKey		key;
	TimestampTz stats_since;
	TimestampTz changed_at;		/* clock at the latest merge or min/max reset,
								 * read under the entry lock */
	bool		minmax_valid[PGSQ_NUM_PHASES];	/* false until first merge,
												 * and after a min/max reset */
	PgsqMainCounters counters;
	TimestampTz minmax_stats_since;
#ifdef PGSQ_TEST_EXTRA_COUNTER

	/*
	 * Only in the build of test/t/012_upgrade.pl that stands for a newer
	 * version with one more counter: executions merged, as exec.calls.
	 */
	int64		test_extra;
#endif
} PgsqEntryData;

/*
 * A shared entry, in the cumulative statistics system's hash.  The
 * statistics system allocates it in its DSA area's 1280-byte size class,
 * 64-byte aligned: the lock, the hints, the key and the start time share
 * the first cache line, and the counters' first fields, up to the
 * histogram's start, the next two (checked in pg_stat_queries.c).  A merge
 * then touches those three lines and the one of the histogram bucket it
 * adds to.
 */
typedef struct PgsqSharedEntry
{
	PgStatShared_Common header; /* holds the entry's LWLock */
	pg_atomic_uint32 text_state;	/* PgsqTextState of text; written under
									 * the entry lock, read without as a hint */
	pg_atomic_uint32 usage;		/* clock-sweep usage count (eviction.c) */
	pg_atomic_uint32 swept_pass;	/* last sweep pass that visited it */
	PgsqEntryData data;
	dsa_pointer text;			/* the query text in qtext.c's area, under the
								 * entry lock; last, as merges never read it */
	dsa_pointer rare;			/* PgsqRareCounters in the same area, or
								 * InvalidDsaPointer while all are zero
								 * (rare.c); under the entry lock */
} PgsqSharedEntry;

/* Where the restore of the saved statistics stands (restore.c) */
typedef enum PgsqRestoreState
{
	PGSQ_RESTORE_DONE = 0,		/* restored, or nothing to restore */
	PGSQ_RESTORE_PENDING,		/* to do, perhaps partly done */
	PGSQ_RESTORE_CLAIMED,		/* a process is restoring */
} PgsqRestoreState;

/*
 * Fixed shared state (pg_stat_queries.c sets it up); the sweep keeps its own
 * (eviction.c).  Locking rules: docs/design.md.
 */
typedef struct PgsqSharedState
{
	LWLock	   *lock;			/* protects stats_reset, loaded_texts */
	TimestampTz stats_reset;
	pg_atomic_uint64 dealloc;	/* sweep passes that evicted entries */
	pg_atomic_uint64 evicted_entries;
	pg_atomic_uint64 texts_missing; /* texts that could not be stored */
	pg_atomic_uint64 text_bytes;	/* bytes of stored query texts */
	pg_atomic_uint64 last_eviction_time;
	pg_atomic_uint64 refused;	/* executions not tracked: table full;
								 * backends add theirs in batches */
	pg_atomic_uint64 reset_count;	/* resets that dropped entries so far */
	pg_atomic_uint64 resets_done;	/* of those, the ones that have taken
									 * their entries off the sweep's count */
	pg_atomic_uint64 full_resets;	/* resets of everything so far */
	pg_atomic_uint32 restore_pending;	/* PgsqRestoreState of the statistics
										 * saved at the last shutdown */
	uint64		restore_done;	/* statements of our file restored by attempts
								 * that failed after them; written by the
								 * claimer only */
	bool		restore_legacy_ran; /* 1.1's statistics were converted */
	int			text_tranche_id;
	dsa_pointer loaded_texts;	/* texts read at startup, until the first
								 * client backend gives them to their entries
								 * (qtext.c); under lock */
	char		text_dsa_place[FLEXIBLE_ARRAY_MEMBER];	/* in-place DSA */
} PgsqSharedState;

/*
 * Our fixed shared state, set up by pg_stat_queries.c; defined in qtext.c,
 * the lowest module that uses it (its text area lives inside it).
 */
extern PgsqSharedState *pgsq_state;

/* Is the library loaded through shared_preload_libraries? */
static inline bool
pgsq_store_ready(void)
{
	return pgsq_state != NULL;
}

#endif							/* PGSQ_ENTRY_H */
