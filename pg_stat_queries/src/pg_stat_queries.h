/*-------------------------------------------------------------------------
 *
 * pg_stat_queries.h
 *		What the stages of pg_stat_queries share: types, inline functions
 *		and the functions each stage offers the others.
 *
 * One statement is identified by (userid, dbid, queryid, toplevel), as in
 * pg_stat_statements.  Its counters live in three places:
 *
 *	- PgsqCounters in backend-local pending data (pending.c), updated on
 *	  every execution without touching shared memory;
 *	- PgsqSharedEntry in our table of entries in shared memory (table.c,
 *	  entries.c), where pending counters are merged in batches;
 *	- the query text, in a DSA area of our own in shared memory
 *	  (textarea.c).
 *
 * The stages, in the order of the data flow: capture (capture.c) measures
 * a statement, pending (pending.c) keeps its counts in the backend, merge
 * (merge.c) finds or creates their shared entries (entries.c), texts
 * (texts.c, textarea.c, normalize.c) store a literal-free text, eviction
 * (eviction.c) keeps the entries within their bound, reading
 * (functions.c, directscan.c) returns rows, and persistence (savefile.c,
 * restore.c) keeps them across a clean shutdown.  pg_stat_queries.c wires
 * them.  Below, one group per stage, each using only the groups above it.
 * Every version difference is in compat.h; histogram.h is self-contained.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_H
#define PGSQ_H

#include "compat.h"
#include "histogram.h"

#include "access/xact.h"
#include "datatype/timestamp.h"
#include "executor/execdesc.h"
#include "executor/instrument.h"
#include "fmgr.h"
#include "jit/jit.h"
#include "lib/dshash.h"
#include "nodes/queryjumble.h"
#include "port/atomics.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "storage/lwlock.h"
#include "utils/dsa.h"
#include "utils/pgstat_internal.h"
#include "utils/timestamp.h"

/*----------------------------------------------------------------------
 * Shared types: a statement's key, its counters, a shared entry, and the
 * fixed shared state (defined in pg_stat_queries.c, set up at startup).
 *----------------------------------------------------------------------
 */

/* Index into the per-phase arrays of PgsqCounters */
typedef enum PgsqPhase
{
	PGSQ_PLAN = 0,
	PGSQ_EXEC,
} PgsqPhase;

#define PGSQ_NUM_PHASES 2

/*
 * Identity of a tracked statement, or with a plan id, of one plan of it
 * (plans.c): a plan's entry is an entry like a statement's, keyed by the
 * statement's key and the plan's id.  Always zeroed before it is filled
 * in, as local hash tables hash it whole.
 */
typedef struct PgsqKey
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
	int64		planid;			/* 0: the statement itself */
	bool		toplevel;
} PgsqKey;

/* Are these the same statement (or plan)? (objids can collide, keys cannot) */
static inline bool
pgsq_key_equals(const PgsqKey *a, const PgsqKey *b)
{
	return a->queryid == b->queryid && a->userid == b->userid &&
		a->dbid == b->dbid && a->toplevel == b->toplevel &&
		a->planid == b->planid;
}

/* Is this the key of a plan's entry? */
static inline bool
pgsq_key_is_plan(const PgsqKey *key)
{
	return key->planid != INT64CONST(0);
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
 * (textarea.c), so that the entry stays small: with many statements, entries
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
	/* executions that ended in an error (pending.c) */
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
 * A shared entry: one slot of our table (table.c), in our own DSA area.
 * Slots are made in batches and never freed, so a backend may keep a
 * pointer to one for as long as it likes; whether the slot still holds the
 * entry it found is told by the generation, which every creation and every
 * drop advances (odd while the slot holds an entry).  The lock, the hints
 * and the key share the first cache line (slots are 64-byte aligned), the
 * start time and the counters' first fields, up to the histogram's start,
 * the next two (checked in pg_stat_queries.c).  A merge then touches those
 * three lines and the one of the histogram bucket it adds to.
 */
typedef struct PgsqSharedEntry
{
	LWLock		lock;			/* the entry's lock (docs/design.md) */
	pg_atomic_uint32 generation;	/* odd while live; written under the
									 * partition lock and the entry lock */
	pg_atomic_uint32 text_state;	/* PgsqTextState of text; written under
									 * the entry lock, read without as a hint */
	pg_atomic_uint32 usage;		/* clock-sweep usage count (eviction.c) */
	pg_atomic_uint32 swept_pass;	/* last sweep pass that visited it */
	PgsqEntryData data;
	dsa_pointer text;			/* the query text in textarea.c's area, under
								 * the entry lock; after the counters, as
								 * merges never read it */
	dsa_pointer rare;			/* PgsqRareCounters in the same area, or
								 * InvalidDsaPointer while all are zero
								 * (textarea.c); under the entry lock */
	uint64		objid;			/* pgsq_objid of the key, while live */
	dsa_pointer next;			/* the next slot in its chain or free list
								 * (table.c), under the partition lock */
	dsa_pointer self;			/* this slot */
} PgsqSharedEntry;

/* Is the slot's entry live in this generation? */
static inline bool
pgsq_entry_is(PgsqSharedEntry *entry, uint32 generation)
{
	return pg_atomic_read_u32(&entry->generation) == generation;
}

/* Does the slot hold an entry now? (read without locks: a hint) */
static inline bool
pgsq_slot_live(PgsqSharedEntry *entry)
{
	return (pg_atomic_read_u32(&entry->generation) & 1) != 0;
}

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
/*
 * What we allocate from our DSA area, which grows by new segments: entries'
 * slots (in batches) and texts with rare counters.  Each has an allocation
 * pause of its own (guard.c): a batch of slots is far larger than a text.
 */
typedef enum PgsqArea
{
	PGSQ_AREA_ENTRIES,
	PGSQ_AREA_TEXTS,
} PgsqArea;

#define PGSQ_NUM_AREAS 2

/*
 * An area's allocation pause (guard.c): after a failure to allocate, none
 * is tried until end.
 */
typedef struct PgsqAllocPause
{
	pg_atomic_uint64 end;		/* a TimestampTz; 0: no pause */
	pg_atomic_uint32 ms;		/* the length of the last pause */
	pg_atomic_uint32 error;		/* the SQLSTATE that started it */
} PgsqAllocPause;

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
	PgsqAllocPause alloc_pause[PGSQ_NUM_AREAS]; /* guard.c */
	pg_atomic_uint32 restore_pending;	/* PgsqRestoreState of the statistics
										 * saved at the last shutdown */
	uint64		restore_done;	/* statements of our file restored by attempts
								 * that failed after them; written by the
								 * claimer only */
	bool		restore_legacy_ran; /* 1.1's statistics were converted */
	pg_atomic_uint32 restore_failures;	/* attempts failed in a row */
	pg_atomic_uint64 restore_retry_at;	/* no attempt by a client backend
										 * before (restore.c) */
	int			text_tranche_id;
	int			entry_tranche_id;	/* our entries' locks (table.c) */
	dsa_pointer loaded_texts;	/* texts read at startup, until the first
								 * client backend gives them to their entries
								 * (textarea.c); under lock */
	char		text_dsa_place[FLEXIBLE_ARRAY_MEMBER];	/* in-place DSA */
} PgsqSharedState;

/*
 * Our fixed shared state, defined and set up by pg_stat_queries.c; the text
 * area (textarea.c) lives inside it.
 */
extern PgsqSharedState *pgsq_state;

/* Is the library loaded through shared_preload_libraries? */
static inline bool
pgsq_store_ready(void)
{
	return pgsq_state != NULL;
}


/*----------------------------------------------------------------------
 * Settings (settings.c): the configuration parameters.
 *----------------------------------------------------------------------
 */

/* Values of pg_stat_queries.track */
typedef enum PgsqTrackLevel
{
	PGSQ_TRACK_NONE,
	PGSQ_TRACK_TOP,
	PGSQ_TRACK_ALL,
} PgsqTrackLevel;

extern int	pgsq_max;
extern int	pgsq_max_plans;
extern int	pgsq_track;
extern bool pgsq_track_utility;
extern bool pgsq_track_planning;
extern bool pgsq_save;
extern int	pgsq_query_text_memory; /* kilobytes */
extern int	pgsq_min_sweep_interval;	/* milliseconds */
extern double pgsq_sample_rate;
extern bool pgsq_direct_scan;

extern void pgsq_define_settings(void);


/*----------------------------------------------------------------------
 * Guard (guard.c): running our work so that its errors never reach the
 * statement or the process it runs in.
 *----------------------------------------------------------------------
 */

/* Work to run guarded */
typedef void (*PgsqGuardedFn) (void *arg);

extern void pgsq_alloc_pause_init(PgsqAllocPause *pause);
extern bool pgsq_shared_alloc(PgsqArea area, PgsqGuardedFn fn, void *arg);
extern bool pgsq_shared_alloc_paused(PgsqArea area);
extern void pgsq_shared_room_freed(void);
extern bool pgsq_run_guarded(PgsqGuardedFn fn, void *arg, const char *what);
extern bool pgsq_run_for_earlier(PgsqGuardedFn fn, void *arg);


/*----------------------------------------------------------------------
 * Literal scanning (normalize.c): the one rule every stored query text
 * passes.
 *----------------------------------------------------------------------
 */

/*
 * The standard_conforming_strings a text was lexed with, as far as known:
 * the scanner reads a backslash in a string by it, so a text scanned under
 * another one can have a literal's contents taken for words
 */
typedef enum PgsqScs
{
	PGSQ_SCS_HERE = 0,			/* lexed by this backend: pgsq_scs_lexed_here */
	PGSQ_SCS_UNKNOWN,			/* either (a text read back from a file) */
	PGSQ_SCS_OFF,
	PGSQ_SCS_ON,
} PgsqScs;

/*
 * Can this byte continue an identifier, keyword or parameter?  (normalize.c
 * and plans.c tell words from what may be a value by it)
 */
static inline bool
pgsq_is_word_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '_' || c == '$' || IS_HIGHBIT_SET(c);
}

extern void pgsq_scs_seen(void);
extern PgsqScs pgsq_scs_lexed_here(void);
extern PgsqScs pgsq_scs_now(void);
extern char *pgsq_normalize(const JumbleState *jstate, const char *query,
							int query_loc, int query_len, PgsqScs scs,
							int *out_len, int *unlocated);
extern char *pgsq_normalize_plan(const char *text, int len, PgsqScs scs,
								 int *out_len);


/*----------------------------------------------------------------------
 * Plans (plans.c): the identifier of a statement's plan, and its text.
 *----------------------------------------------------------------------
 */

extern int64 pgsq_plan_id(const PlannedStmt *pstmt);
extern char *pgsq_plan_text(QueryDesc *query, int *len);


/*----------------------------------------------------------------------
 * The text area (textarea.c): normalized query texts and rare counters
 * in a DSA area of our own in shared memory.
 *----------------------------------------------------------------------
 */

/*
 * What an entry's text pointer holds (PgsqSharedEntry.text_state).  CLOSED:
 * its text was taken away because the entry is being dropped, and none may
 * be given to it any more, lest that one be lost with the entry; a new life
 * of the entry (reused by the statistics system) opens it again.
 */
typedef enum PgsqTextState
{
	PGSQ_TEXT_NONE = 0,
	PGSQ_TEXT_STORED,
	PGSQ_TEXT_CLOSED,
} PgsqTextState;

/*
 * Is the entry closed to texts?  Its text is taken, and it closed, under its
 * lock before it is dropped (pgsq_text_take), and opened again only when a
 * new life of it starts (pgsq_text_reopen).  Read without the lock, on the
 * entry's first line, it tells a backend that the entry it remembers is
 * dropped or about to be.
 */
static inline bool
pgsq_text_closed(PgsqSharedEntry *entry)
{
	return pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_CLOSED;
}

/*
 * Texts a backend keeps of those it freed, for its next ones (textarea.c),
 * and so the most entries one sweep slice evicts (eviction.c)
 */
#define PGSQ_SPARE_TEXTS 32

extern Size pgsq_qtext_shmem_size(void);
extern void pgsq_qtext_shmem_init(PgsqSharedState *state, bool found);
extern void pgsq_qtext_attach(void);
extern dsa_area *pgsq_text_area(void);
extern dsa_pointer pgsq_text_area_alloc(Size size);

extern dsa_pointer pgsq_text_prepare(const char *text, int len, int encoding);
extern void pgsq_text_discard(dsa_pointer text);
extern void pgsq_text_give_new(PgsqSharedEntry *entry, dsa_pointer text,
							   TimestampTz now);
extern bool pgsq_text_give_if_none(PgsqSharedEntry *entry, dsa_pointer text);
extern void pgsq_text_give_locked(PgsqSharedEntry *entry, dsa_pointer text);
extern dsa_pointer pgsq_text_take(PgsqSharedEntry *entry);
extern TimestampTz pgsq_text_stored_at(PgsqSharedEntry *entry);
extern const char *pgsq_text_peek(PgsqSharedEntry *entry, int *len,
								  int *encoding, TimestampTz *stored_at);
extern char *pgsq_text_copy(PgsqSharedEntry *entry, int *len, int *encoding,
							TimestampTz *stored_at);
extern const char *pgsq_text_bytes(dsa_pointer text, int *len,
								   int *encoding, TimestampTz *stored_at);
extern void pgsq_text_set_stored_at(dsa_pointer text, TimestampTz stored_at);

/*
 * Has the entry a text, or is it closed to texts (so none need be made)?
 * Read without its lock: a hint.
 */
static inline bool
pgsq_text_hint(PgsqSharedEntry *entry)
{
	return pg_atomic_read_u32(&entry->text_state) != PGSQ_TEXT_NONE;
}

extern PgsqRareCounters *pgsq_rare_for_merge(PgsqSharedEntry *entry,
											 dsa_pointer *spare);
extern bool pgsq_rare_spare_for(PgsqSharedEntry *entry,
								const PgsqCounters *counts,
								dsa_pointer *spare);
extern void pgsq_rare_copy(PgsqSharedEntry *entry, PgsqRareCounters *out);
extern void pgsq_rare_release(PgsqSharedEntry *entry);
extern dsa_pointer pgsq_rare_prepare(const PgsqRareCounters *counts);
extern void pgsq_rare_give(PgsqSharedEntry *entry, dsa_pointer rare);
extern void pgsq_rare_discard(dsa_pointer rare);


/*----------------------------------------------------------------------
 * Counter arithmetic (counters.c).
 *----------------------------------------------------------------------
 */

/* An execution's time and usage as our executor hooks measure it (below) */
typedef struct PgsqUsage PgsqUsage;

/*
 * One planning or execution of a statement, as the capture stage hands it
 * on: what it took and used, and the plan it ran (planid, 0 if none).  The
 * usage pointers may be NULL (nothing measured).
 */
typedef struct PgsqExecution
{
	PgsqPhase	phase;
	double		ms;
	uint64		rows;
	const BufferUsage *bufusage;
	const WalUsage *walusage;
	const JitInstrumentation *jitusage;
	int			parallel_to_launch;
	int			parallel_launched;
	PgsqPlanCache plan_cache;
	int64		planid;
} PgsqExecution;

extern void pgsq_counters_clear(PgsqCounters *counters);
extern void pgsq_add_execution(PgsqCounters *counters,
							   const PgsqExecution *exec);
extern void pgsq_add_rare_usage(PgsqCounters *counters,
								const BufferUsage *bufusage,
								const WalUsage *walusage);
extern void pgsq_add_plan_cache(PgsqCounters *counters,
								PgsqPlanCache plan_cache);
extern void pgsq_counters_copy_plan(PgsqCounters *plan,
									const PgsqCounters *stmt);
extern void pgsq_add_failures(PgsqCounters *counters, int64 count,
							  double ms, int sqlstate, TimestampTz at);
extern int64 pgsq_merge_locked(PgsqSharedEntry *entry, const PgsqKey *key,
							   const PgsqCounters *counters,
							   dsa_pointer *spare_rare);
extern void pgsq_start_data(PgsqEntryData *data, const PgsqKey *key,
							TimestampTz now);
extern void pgsq_fill_new_entry(PgsqEntryData *data,
								const PgsqCounters *first, TimestampTz now);

/* Add one timing observation to a phase's summary (Welford's method) */
static inline void
pgsq_add_timing(PgsqTiming *t, double ms)
{
	int64		n = ++t->calls;
	double		old_mean = t->mean_time;

	t->total_time += ms;
	if (n == 1)
	{
		t->min_time = ms;
		t->max_time = ms;
		t->mean_time = ms;
		t->sum_var_time = 0.0;
		return;
	}
	t->min_time = Min(t->min_time, ms);
	t->max_time = Max(t->max_time, ms);
	t->mean_time = old_mean + (ms - old_mean) / n;
	t->sum_var_time += (ms - old_mean) * (ms - t->mean_time);
}

/*
 * Add an execution time to the histogram, before its count: a first
 * execution's time is its min_time alone, and the histogram is started by
 * a second one (see PgsqCounters)
 */
static inline void
pgsq_add_exec_time(PgsqMainCounters *c, double ms)
{
	if (likely(c->exec_hist.used))
		pgsq_hist_add(&c->exec_hist, ms);
	else if (c->exec.calls > 0)
	{
		Assert(c->exec.calls == 1);
		pgsq_hist_start(&c->exec_hist, c->exec.min_time);
		pgsq_hist_add(&c->exec_hist, ms);
	}
}


/*----------------------------------------------------------------------
 * The table (table.c): partitioned chains of entry slots in our area,
 * with free lists that reuse them.
 *----------------------------------------------------------------------
 */

/* A scan of the table, partition by partition (pgsq_table_scan_begin) */
typedef struct PgsqTableScan
{
	LWLockMode	mode;
	int			part;			/* the partition being scanned */
	uint32		bucket;			/* its next chain */
	dsa_pointer next;			/* the next slot in the current chain */
	bool		locked;
} PgsqTableScan;

extern Size pgsq_table_shmem_size(void);
extern void pgsq_table_shmem_startup(LWLockPadded *locks);
extern int	pgsq_table_lock_count(void);
extern PgsqSharedEntry *pgsq_slot_entry(dsa_pointer slot);
extern int	pgsq_table_partition(uint64 objid);
extern void pgsq_table_lock(int part, LWLockMode mode);
extern void pgsq_table_unlock(int part);
extern PgsqSharedEntry *pgsq_table_lookup_locked(int part, uint64 objid);
extern PgsqSharedEntry *pgsq_table_find(uint64 objid, uint32 *generation);
extern PgsqSharedEntry *pgsq_table_new_slot(int part);
extern uint32 pgsq_table_link(int part, PgsqSharedEntry *entry, uint64 objid);
extern void pgsq_table_unlink(int part, PgsqSharedEntry *entry);
extern void pgsq_table_scan_begin(PgsqTableScan *scan, LWLockMode mode,
								  int from);
extern PgsqSharedEntry *pgsq_table_scan_next(PgsqTableScan *scan);
extern void pgsq_table_scan_end(PgsqTableScan *scan);


/*----------------------------------------------------------------------
 * Shared entries (entries.c): how an entry is created, found, merged into
 * and dropped, the number of entries and their bound, the ring the sweep
 * turns, and usage counts.
 *----------------------------------------------------------------------
 */

/* Outcome of creating an entry */
typedef enum PgsqCreateResult
{
	CREATE_DONE,
	CREATE_EXISTS,				/* another backend was faster */
	CREATE_REFUSED,				/* no memory (or, for callers, no room) */
} PgsqCreateResult;

extern uint64 pgsq_objid(const PgsqKey *key);
extern PgsqSharedEntry *pgsq_lock_statement_entry(const PgsqKey *key,
												  LWLockMode mode);
extern void pgsq_unlock_statement_entry(PgsqSharedEntry *entry);
extern bool pgsq_entry_give_text(PgsqSharedEntry *entry, const PgsqKey *key,
								 dsa_pointer text);
extern bool pgsq_text_give_by_key(const PgsqKey *key, dsa_pointer text);
extern PgsqCreateResult pgsq_create_entry(const PgsqKey *key, uint64 objid,
										  const PgsqCounters *first,
										  uint32 usage, dsa_pointer text,
										  PgsqSharedEntry **entry,
										  uint32 *generation);
extern dsa_pointer pgsq_drop_locked(int part, PgsqSharedEntry *entry);
extern bool pgsq_evict_entry(PgsqSharedEntry *entry, uint32 generation);
extern bool pgsq_restore_entry(const PgsqEntryData *data,
							   const PgsqRareCounters *rare,
							   dsa_pointer text);

extern bool pgsq_merge_into_entry(PgsqSharedEntry *entry, uint32 generation,
								  const PgsqKey *key,
								  const PgsqCounters *counters,
								  TimestampTz counted_for, bool nowait);

/* Are counts for the life "counted_for" not for the life "since"? */
static inline bool
pgsq_other_life(TimestampTz counted_for, TimestampTz since)
{
	return counted_for != 0 && since != 0 && since != counted_for;
}

extern uint64 pgsq_table_size(void);
extern uint64 pgsq_entry_bound(void);
extern uint64 pgsq_class_bound(bool plans);
extern uint64 pgsq_live_of_class(bool plans);
extern bool pgsq_entry_count_known(uint64 count);

/* The numbers of entries, in shared memory */
typedef struct PgsqEntryCounts
{
	pg_atomic_uint64 num_entries;	/* approximate; exact after each pass */
	pg_atomic_uint64 created_entries;	/* entries created so far */
	pg_atomic_uint64 live_statements;	/* exact: statements' live entries */
	pg_atomic_uint64 live_plans;	/* exact: plans' live entries */
	pg_atomic_uint64 plans_untracked;	/* plan executions refused */
	pg_atomic_uint64 claimed[2];	/* statements' [0] and plans' [1]: live or
									 * in room reserved, below each class's
									 * bound (pgsq_reserve_entry) */
} PgsqEntryCounts;

extern PGDLLIMPORT PgsqEntryCounts *pgsq_entry_counts;

extern Size pgsq_entry_count_shmem_size(void);
extern void pgsq_entry_count_shmem_startup(void);
extern uint64 pgsq_entry_count(void);
extern void pgsq_set_entry_count(uint64 count);
extern uint64 pgsq_created_entries(void);
extern bool pgsq_reserve_entry(bool plan);
extern void pgsq_entry_created(PgsqSharedEntry *entry, uint32 generation);
extern void pgsq_entry_restored(PgsqSharedEntry *entry, uint32 generation,
								bool plan);
extern void pgsq_entry_not_created(bool plan);
extern void pgsq_entries_removed(int64 count);
extern void pgsq_live_entry_added(bool plan);
extern void pgsq_live_entry_dropped(bool plan);
extern uint64 pgsq_live_plans(void);
extern void pgsq_plan_untracked(uint64 executions);
extern uint64 pgsq_plans_untracked(void);
extern void pgsq_plans_untracked_reset(void);

extern Size pgsq_ring_shmem_size(uint64 bound);
extern void pgsq_ring_shmem_startup(uint64 bound);
extern void pgsq_ring_push(dsa_pointer entry, uint32 generation);
extern bool pgsq_ring_take(dsa_pointer *entry, uint32 *generation);
extern void pgsq_ring_clear(void);
extern uint64 pgsq_ring_head(void);
extern uint64 pgsq_ring_tail(void);
extern bool pgsq_ring_complete(void);

/*
 * An entry's usage count: executions raise it, the clock sweep
 * (eviction.c) lowers it and evicts the entries it finds at zero.
 *
 * Inline functions only: they run on the execution path.
 */

/* Usage count cap: an entry unused for this many passes is evicted */
#define PGSQ_USAGE_MAX 5

/*
 * Raise an entry's usage count, up to the cap, after a merge of executions
 * of a statement that has run more than once: more than one execution in
 * this merge, or any after earlier ones.  A statement run once gets no raise
 * (its execution set the count already, pgsq_entry_used), so it survives no
 * pass longer than needed; a statement that keeps coming back, even if
 * every backend runs it only now and then, gains a pass with every merge.
 * That sets it apart from one-off statements when passes follow each other
 * quickly, as they do once a pass over a just-filled table found nothing
 * to evict.
 */
static inline void
pgsq_touch_entry(PgsqSharedEntry *entry, int64 calls, int64 calls_before)
{
	uint32		usage = pg_atomic_read_u32(&entry->usage);

	if ((calls > 1 || (calls > 0 && calls_before > 0)) &&
		usage < PGSQ_USAGE_MAX)
		pg_atomic_write_u32(&entry->usage, usage + 1);
}

/*
 * An execution of a statement: if its entry's count is zero (new, or aged
 * by the sweep since it was last used), mark it used.  Merges come up to a
 * second after executions, and under heavy churn a pass can take less than
 * that.  This writes at most once per entry and pass: a known statement's
 * execution otherwise only reads the count.
 */
static inline void
pgsq_entry_used(PgsqSharedEntry *entry)
{
	if (unlikely(pg_atomic_read_u32(&entry->usage) == 0))
		pg_atomic_write_u32(&entry->usage, 1);
}


/*----------------------------------------------------------------------
 * Eviction (eviction.c): clock-sweep eviction within
 * pg_stat_queries.max.
 *----------------------------------------------------------------------
 */

extern Size pgsq_eviction_shmem_size(void);
extern void pgsq_eviction_shmem_startup(void);
extern void pgsq_sweep_after_full_reset(void);
extern bool pgsq_room_for_new_entry(bool nested, bool plan);
extern void pgsq_sweep_if_due(bool nested);

/*
 * Fill levels below which no sweep is due (eviction.c computes them): of
 * all entries, of statements, of plans.  Zero until computed, and again
 * after max or max_plans changed (settings.c defines them, as state that
 * follows those settings), so that the next statement computes them anew.
 */
typedef struct PgsqSweepFloors
{
	uint64		entries;
	uint64		statements;
	uint64		plans;
} PgsqSweepFloors;

extern PGDLLIMPORT PgsqSweepFloors pgsq_sweep_floors;

/*
 * After a statement: sweep a slice if entries are nearly at their bound.
 * Inline, as it runs for every statement: mostly three reads of shared
 * counts that change only when entries are created or dropped.
 */
static inline void
pgsq_maybe_sweep(bool nested)
{
	if (likely(pg_atomic_read_u64(&pgsq_entry_counts->num_entries) <
			   pgsq_sweep_floors.entries &&
			   pg_atomic_read_u64(&pgsq_entry_counts->live_statements) <
			   pgsq_sweep_floors.statements &&
			   pg_atomic_read_u64(&pgsq_entry_counts->live_plans) <
			   pgsq_sweep_floors.plans))
		return;
	pgsq_sweep_if_due(nested);
}


/*----------------------------------------------------------------------
 * Statement texts (texts.c): which text a statement stores, and what
 * parse analysis saw of the statements in flight.
 *----------------------------------------------------------------------
 */

/*
 * Where a statement's text comes from, filled in by capture.c and passed
 * down to where an entry may be created, so that the text is made only
 * when one is.
 */
typedef struct PgsqTextSource
{
	const char *source;			/* source text, maybe of several statements */
	int			location;		/* of the statement in it */
	int			len;			/* of the statement, 0: to the end */
	const JumbleState *jstate;	/* at parse analysis, else NULL */
	int			level;			/* nesting level it runs at */
	bool		located;		/* source is the statement itself, already cut
								 * out of its source text at location */
	QueryDesc  *plan;			/* for a plan's entry: the statement whose
								 * plan it is, at its end (source unused) */
	PgsqScs		scs;			/* the setting it was lexed with */
	bool		parsed;			/* the statement's text is not at hand: the
								 * one parse analysis kept for it (its query
								 * id, at level) is used */
} PgsqTextSource;

extern dsa_pointer pgsq_statement_text(const PgsqKey *key,
									   const PgsqTextSource *src);
extern dsa_pointer pgsq_saved_text(const char *text, int len, int encoding,
								   bool literal_free);
extern char *pgsq_fetch_text(const PgsqKey *key, int *len);

extern bool pgsq_inflight_remember(int level, int64 queryid, const char *stmt,
								   int location, int stmt_len,
								   const JumbleState *jstate);
extern char *pgsq_inflight_normalized(int level, int64 queryid,
									  const char *stmt, int location,
									  int stmt_len, PgsqScs scs,
									  int *out_len, bool *found);
extern char *pgsq_inflight_latest_normalized(int level, int64 queryid,
											 PgsqScs scs, int *out_len,
											 bool *found);


/*----------------------------------------------------------------------
 * Merge (merge.c): what this backend remembers of shared entries, and
 * their creation.
 *----------------------------------------------------------------------
 */

extern PgsqSharedEntry *pgsq_find_or_create_entry(const PgsqKey *key,
												  uint64 objid,
												  const PgsqTextSource *src,
												  uint32 *generation);
extern bool pgsq_parse_needs_nothing(const PgsqKey *key);
extern void pgsq_parse_see_entry(const PgsqKey *key, bool text_kept,
								 const PgsqTextSource *src);
extern bool pgsq_take_parsed_new(const PgsqKey *key,
								 PgsqTextSource *parsed_src);
extern void pgsq_create_parsed_new(int from_level);
extern PgsqSharedEntry *pgsq_lookup_entry(uint64 objid, uint32 *generation,
										  bool *missing);
extern PgsqCreateResult pgsq_create_first(const PgsqKey *key, uint64 objid,
										  const PgsqCounters *counters,
										  const PgsqTextSource *src);
extern void pgsq_flush_refused(void);
extern void pgsq_refuse_pending(const PgsqKey *key, uint64 executions);
extern void pgsq_plan_refused(void);
extern void pgsq_refs_reserve_memory(void);


/*----------------------------------------------------------------------
 * Pending (pending.c): backend-local pending counters and their flush,
 * and executions that ended in an error.
 *----------------------------------------------------------------------
 */

/*
 * What the caller of pgsq_record does about the plan a statement's
 * execution ran: record it, nothing (it is counted already, in the
 * statement's counts that its pending counts mirror), or keep it for the
 * statement's next execution (the statement's entry was made by this one:
 * pgsq_plan_defer)
 */
typedef enum PgsqPlanCounting
{
	PGSQ_PLAN_RECORD,
	PGSQ_PLAN_COUNTED,
	PGSQ_PLAN_DEFER,
	PGSQ_PLAN_UNTRACKED,		/* the statement's execution was refused */
} PgsqPlanCounting;

extern PgsqSharedEntry *pgsq_record(const PgsqKey *key,
									const PgsqTextSource *src,
									const PgsqExecution *exec,
									PgsqPlanCounting *plan_counting,
									bool *check_text);
extern void pgsq_mirror_plan(void);
extern bool pgsq_pending_has_text(const PgsqKey *key);
extern bool pgsq_plan_defer(const PgsqKey *statement, int64 planid,
							double ms, uint64 rows,
							const BufferUsage *bufusage);
extern void pgsq_plan_replay(const PgsqKey *statement);
extern bool pgsq_plans_settle(bool nowait, bool all);
extern bool pgsq_plans_settle_many(bool nowait);
extern bool pgsq_record_known(int64 queryid, bool toplevel, int64 planid,
							  uint64 rows, const PgsqUsage *usage,
							  PgsqPlanCache plan_cache);
extern void pgsq_record_failure(const PgsqKey *key, const PgsqTextSource *src,
								int64 count, double ms, int sqlstate,
								TimestampTz at);
extern bool pgsq_flush_pending(bool nowait);
extern void pgsq_flush_own_pending(void);
extern void pgsq_busy_check(void);
extern void pgsq_pending_reserve_memory(void);


extern PGDLLIMPORT int pgsq_busy_countdown;

/*
 * At a statement's end: merge a busy backend's counts about once a second
 * (pgsq_busy_check).  Inline, as it runs for every statement:
 * mostly a decrement.
 */
static inline void
pgsq_maybe_flush_busy(void)
{
	if (unlikely(--pgsq_busy_countdown <= 0))
		pgsq_busy_check();
}

extern void pgsq_failure_noted(int64 queryid, Oid userid, int level,
							   const char *source, int location, int len,
							   double ms);
extern void pgsq_failures_count(void);
extern void pgsq_failures_count_busy(void);

extern PGDLLIMPORT bool pgsq_failures_due;

/*
 * At a statement's start: count the failures noted so far if they take
 * much memory.  A statement running many others that fail, their errors
 * caught, keeps this backend from going idle, and each note made since the
 * last count follows the start of the statement it notes.
 */
static inline void
pgsq_maybe_count_failures(void)
{
	if (unlikely(pgsq_failures_due))
		pgsq_failures_count_busy();
}


/*----------------------------------------------------------------------
 * Capture (capture.c): the planner, executor and utility hooks, and the
 * time, buffer and WAL usage of statements.
 *----------------------------------------------------------------------
 */

extern void pgsq_install_hooks(void);

/*
 * Time, buffer and WAL usage summed over measured windows.  rare is zero
 * unless a window changed some counter other than shared hits (or
 * track_io_timing was on): then the rare counters need adding, which a
 * known statement's execution otherwise skips (pgsq_record_known).
 */
struct PgsqUsage
{
	instr_time	time;
	uint64		rare;
	BufferUsage bufusage;
	WalUsage	walusage;
};

/*
 * Add one execution of a known statement, measured by our executor hooks
 * (pending.c: pgsq_record_known): what pgsq_add_execution does for an
 * execution without JIT or parallel workers, with the rare counters looked
 * at only when usage says one moved.  Inline: the way of nearly every
 * execution.
 */
static inline void
pgsq_add_known_execution(PgsqCounters *counters, double ms, uint64 rows,
						 const PgsqUsage *usage, PgsqPlanCache plan_cache)
{
	PgsqMainCounters *c = &counters->main;

	pgsq_add_exec_time(c, ms);
	pgsq_add_timing(&c->exec, ms);
	c->rows += rows;
	c->last_executed = GetCurrentStatementStartTimestamp();
	c->shared_blks_hit += usage->bufusage.shared_blks_hit;
	if (unlikely(usage->rare != 0))
		pgsq_add_rare_usage(counters, &usage->bufusage, &usage->walusage);
	if (unlikely(plan_cache != PGSQ_PLAN_NOT_CACHED))
		pgsq_add_plan_cache(counters, plan_cache);
}

/* One window being measured */
typedef struct PgsqWindow
{
	instr_time	start;
	BufferUsage buf_start;
	WalUsage	wal_start;
} PgsqWindow;


extern void pgsq_measure_init(void);

/*
 * The functions run on every execution are inline: each call saved is a
 * few instructions of the few hundred we add per statement.
 */

/* Start measuring a window */
static inline void
pgsq_window_begin(PgsqWindow *window)
{
	window->buf_start = pgBufferUsage;
	window->wal_start = pgWalUsage;
	INSTR_TIME_SET_CURRENT(window->start);
}

/*
 * Add the time and buffer and WAL usage since the window began to usage,
 * or, for the first window of a total, set usage to it: the caller passes
 * "first" as a constant, so each inlined copy either adds or stores, and no
 * total is zeroed beforehand (a memset of the whole total per statement).
 * Always inlined, as a call would cost some of that back.
 * usage->rare notes whether any counter but shared hits moved, so that the
 * rare counters are looked at only then.  I/O times are only ever non-zero
 * with track_io_timing on: otherwise their six fields are only zeroed, for
 * a first window.
 */
static pgsq_always_inline void
pgsq_window_end(const PgsqWindow *window, PgsqUsage *usage, bool first)
{
	const BufferUsage *b0 = &window->buf_start;
	const WalUsage *w0 = &window->wal_start;
	BufferUsage *b = &usage->bufusage;
	WalUsage   *w = &usage->walusage;
	uint64		rare = first ? 0 : usage->rare;
	instr_time	now;

/* one counter of the totals: set to the window's difference, or add it */
#define PGSQ_WINDOW_COUNT(total, current, start) \
	((total) = (first ? 0 : (total)) + ((current) - (start)))
/* the same for a counter most executions leave alone, noting a change */
#define PGSQ_WINDOW_RARE(total, current, start) \
	do { \
		uint64		d_ = (uint64) ((current) - (start)); \
		(total) = (first ? 0 : (total)) + d_; \
		rare |= d_; \
	} while (0)
#define PGSQ_WINDOW_BUF(field) \
	PGSQ_WINDOW_RARE(b->field, pgBufferUsage.field, b0->field)
#define PGSQ_WINDOW_WAL(field) \
	PGSQ_WINDOW_RARE(w->field, pgWalUsage.field, w0->field)
#define PGSQ_WINDOW_IO_TIME(field) \
	INSTR_TIME_ACCUM_DIFF(b->field, pgBufferUsage.field, b0->field)

	INSTR_TIME_SET_CURRENT(now);
	if (first)
		INSTR_TIME_SET_ZERO(usage->time);
	INSTR_TIME_ACCUM_DIFF(usage->time, now, window->start);
	PGSQ_WINDOW_COUNT(b->shared_blks_hit, pgBufferUsage.shared_blks_hit,
					  b0->shared_blks_hit);
	PGSQ_WINDOW_BUF(shared_blks_read);
	PGSQ_WINDOW_BUF(shared_blks_dirtied);
	PGSQ_WINDOW_BUF(shared_blks_written);
	PGSQ_WINDOW_BUF(local_blks_hit);
	PGSQ_WINDOW_BUF(local_blks_read);
	PGSQ_WINDOW_BUF(local_blks_dirtied);
	PGSQ_WINDOW_BUF(local_blks_written);
	PGSQ_WINDOW_BUF(temp_blks_read);
	PGSQ_WINDOW_BUF(temp_blks_written);
	if (first)
	{
		INSTR_TIME_SET_ZERO(b->shared_blk_read_time);
		INSTR_TIME_SET_ZERO(b->shared_blk_write_time);
		INSTR_TIME_SET_ZERO(b->local_blk_read_time);
		INSTR_TIME_SET_ZERO(b->local_blk_write_time);
		INSTR_TIME_SET_ZERO(b->temp_blk_read_time);
		INSTR_TIME_SET_ZERO(b->temp_blk_write_time);
	}
	if (unlikely(track_io_timing))
	{
		PGSQ_WINDOW_IO_TIME(shared_blk_read_time);
		PGSQ_WINDOW_IO_TIME(shared_blk_write_time);
		PGSQ_WINDOW_IO_TIME(local_blk_read_time);
		PGSQ_WINDOW_IO_TIME(local_blk_write_time);
		PGSQ_WINDOW_IO_TIME(temp_blk_read_time);
		PGSQ_WINDOW_IO_TIME(temp_blk_write_time);
		rare = 1;
	}
	PGSQ_WINDOW_WAL(wal_records);
	PGSQ_WINDOW_WAL(wal_fpi);
	PGSQ_WINDOW_WAL(wal_bytes);
	PGSQ_WINDOW_WAL(wal_buffers_full);
#ifdef PGSQ_HAS_WAL_FPI_BYTES
	PGSQ_WINDOW_WAL(wal_fpi_bytes);
#endif
	usage->rare = rare;

#undef PGSQ_WINDOW_COUNT
#undef PGSQ_WINDOW_RARE
#undef PGSQ_WINDOW_BUF
#undef PGSQ_WINDOW_WAL
#undef PGSQ_WINDOW_IO_TIME
}

/* Milliseconds since a window began (for an error cutting it short) */
static inline double
pgsq_window_elapsed_ms(const PgsqWindow *window)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, window->start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/*
 * Does ExecutorFinish of this statement need measuring?  A SELECT without a
 * data-modifying WITH has no trigger or CTE to finish.
 */
static inline bool
pgsq_finish_measured(const QueryDesc *query)
{
	return query->operation != CMD_SELECT ||
		query->plannedstmt->hasModifyingCTE;
}


/*----------------------------------------------------------------------
 * Reading (functions.c, directscan.c): reading and resetting all entries,
 * the rows of the statistics functions, the SQL-callable functions that
 * return them (which the direct scan recognizes by their addresses), and
 * the custom scan.
 *----------------------------------------------------------------------
 */

/* Which entries a reset applies to; zero fields match everything */
typedef struct PgsqResetFilter
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
} PgsqResetFilter;

/* The percentiles the view shows: p50, p95, p99 */
#define PGSQ_VIEW_PERCENTILES 3

/*
 * An entry's counters, rare counters and text, as collected for the SQL
 * functions: what the view shows, not the histogram (about 1 kB, which a
 * full read of many entries would copy for three numbers), whose
 * percentiles are read under the entry lock instead.
 */
typedef struct PgsqEntryCopy
{
	PgsqKey		key;
	TimestampTz stats_since;
	TimestampTz minmax_stats_since;
	PgsqTiming	plan;
	PgsqTiming	exec;
	int64		rows;
	int64		shared_blks_hit;
	TimestampTz last_executed;
	double		percentiles[PGSQ_VIEW_PERCENTILES]; /* NaN: none */
	const PgsqRareCounters *rare;	/* a copy, or zeros shared by all */
	const char *query;			/* text, NUL-terminated; NULL if none or not
								 * wanted */
	const text *query_text;		/* the same as a text datum */
	int			rare_at;		/* functions.c's: where the copies are kept */
	int64		text_at;
	int			text_len;
	int			encoding;
	TimestampTz text_stored_at; /* when it was stored; 0 if none */
} PgsqEntryCopy;

/*
 * The copies of one read (pgsq_read_entries), valid until pgsq_read_done;
 * the rest is functions.c's
 */
typedef struct PgsqReadSet
{
	PgsqEntryCopy *copies;
	int			n;
	Size		copies_size;
	PgsqRareCounters *rares;
	Size		rares_size;
	char	   *texts;
	Size		texts_size;
} PgsqReadSet;

extern PgsqReadSet *pgsq_read_entries(TimestampTz since, bool texts,
									  Oid text_user, bool percentiles,
									  bool plans);
extern void pgsq_read_done(PgsqReadSet *set);
extern bool pgsq_fetch_entry(const PgsqKey *key, PgsqEntryData *data);
extern TimestampTz pgsq_reset_entries(const PgsqResetFilter *filter,
									  bool minmax_only);

/*
 * Columns of pg_stat_queries(): pg_stat_statements 1.13's, then ours; the
 * function also serves the SQL definitions of our earlier versions and of
 * the drop-in.  Those of pg_stat_statements 1.13 (on PostgreSQL 19) are the
 * first columns of ours; our versions 1.0 and 1.1 and pg_stat_statements
 * 1.12 lack generic_plan_calls and custom_plan_calls, and take the first
 * columns of the rest; versions before 1.3 lack the failed executions'
 * columns, the last ones.  pg_stat_queries_changed() has one more, when
 * the text was stored.
 */
#define PGSQ_STATS_COLS 61
#define PGSQ_CHANGED_COLS (PGSQ_STATS_COLS + 1)

/* The query column's position (from 0) in every row type */
#define PGSQ_QUERY_COL 4

/* What the row type a statistics function was declared with holds */
typedef struct PgsqRowShape
{
	bool		plan_cache_cols;	/* generic_plan_calls, custom_plan_calls */
	bool		failure_cols;	/* failed_calls and the rest (1.3) */
	bool		percentile_cols;	/* p50_exec_time... (1.1 and later) */
	int			percentile_col; /* p50_exec_time's position, or -1 */
	int			stored_col;		/* text_stored_at's position, or -1 */
	int			natts;
} PgsqRowShape;

/*
 * Who reads, and what a read's rows show: made once per read by
 * pgsq_start_rows
 */
typedef struct PgsqRowReader
{
	PgsqRowShape shape;
	Oid			userid;			/* the caller */
	bool		see_all;		/* has pg_read_all_stats */
	bool		showtext;
	const bool *wanted;			/* columns to fill; NULL: all */
} PgsqRowReader;

extern void pgsq_require_store(void);
extern bool pgsq_row_shape(int natts, bool changes, PgsqRowShape *shape);
extern void pgsq_start_rows(PgsqRowReader *reader, int natts, bool changes,
							bool showtext);
extern bool pgsq_row_shown(const PgsqRowReader *reader,
						   const PgsqEntryCopy *copy);
extern void pgsq_fill_row(const PgsqRowReader *reader,
						  const PgsqEntryCopy *copy, Datum *values,
						  bool *nulls);
extern PgsqReadSet *pgsq_read_rows(const PgsqRowReader *reader,
								   TimestampTz since);

/* A timestamp column that is NULL while unset */
static inline Datum
pgsq_timestamp_or_null(TimestampTz ts, bool *isnull)
{
	*isnull = (ts == 0);
	return TimestampTzGetDatum(ts);
}

extern PGDLLEXPORT Datum pg_stat_queries(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum pg_stat_queries_changed(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum pg_stat_queries_plans(PG_FUNCTION_ARGS);

extern void pgsq_install_direct_scan(void);


/*----------------------------------------------------------------------
 * Persistence (restore.c, savefile.c): the format of our saved
 * statistics file, restoring it, what version 1.1 saved, and writing it
 * at a clean shutdown.
 *----------------------------------------------------------------------
 */

/*
 * The format of our saved statistics file (restore.c): what a
 * row holds and the named columns it is saved under.
 *
 * savefile.c writes the file, restore.c reads it; the format is described
 * in savefile.c's header and in docs/design.md ("Across restarts").
 */

#define PGSQ_SAVE_FILE "pg_stat/pg_stat_queries.stat"
#define PGSQ_SAVE_FILE_TMP PGSQ_SAVE_FILE ".tmp"
#define PGSQ_SAVE_MAGIC 0x50475351	/* "PGSQ" */
#define PGSQ_SAVE_END 0x454E4451	/* "QDNE" */

/*
 * Format version of the files this build writes, and the oldest reader's
 * version that understands them.  Format 3 was 1.1's text file (restore.c);
 * 4 is the first of this file; 5 added generic_plan_calls and
 * custom_plan_calls; 6 replaced the histogram of three buckets per doubling
 * (exec_hist.log3, still read and converted) with one of eighteen, and
 * added the failed executions' counters; 7 says its texts are literal-free
 * (texts_literal_free: older files' are normalized again when read); 8
 * added planid, plans' entries (a file holding any needs a reader of 8).  Bump
 * PGSQ_SAVE_FORMAT with any change of columns; raise PGSQ_SAVE_OLDEST_READER
 * only for a change that older builds would misread.
 */
#ifndef PGSQ_TEST_EXTRA_COUNTER
#define PGSQ_SAVE_FORMAT 8
#else
#define PGSQ_SAVE_FORMAT 9		/* test/t/012_upgrade.pl's newer build */
#endif
#define PGSQ_SAVE_OLDEST_READER 4
#define PGSQ_SAVE_OLDEST_PLANS_READER 8 /* of a file that holds plans */

/* Longest column name */
#define PGSQ_SAVE_NAME_MAX 63

/* One statement as saved: what the entry holds, its rare counters, text */
typedef struct SavedEntry
{
	PgsqEntryData data;
	bool		has_rare;
	PgsqRareCounters rare;
	int32		text_len;		/* -1: no text */
	int32		text_encoding;
	TimestampTz text_stored_at;
	PgsqHistogramLog3 old_hist; /* read from files of format 5 and older */
} SavedEntry;

/* What the statistics say about themselves (pg_stat_queries_info) */
typedef struct SavedInfo
{
	TimestampTz stats_reset;
	uint64		dealloc;
	uint64		evicted_entries;
	uint64		texts_missing;
	bool		texts_literal_free; /* every text passed normalize.c's rule */
} SavedInfo;

/* A column: a field of a row saved under a name */
typedef struct SavedColumn
{
	const char *name;
	uint32		offset;
	uint32		size;
} SavedColumn;

typedef struct SaveFileHeader
{
	uint32		magic;
	uint32		format;
	uint32		oldest_reader;
	uint32		pg_major;
} SaveFileHeader;

/* The file's trailer; the CRC covers every byte before it */
typedef struct SaveFileTrailer
{
	uint32		end;
	uint32		crc;
	uint64		entries;
} SaveFileTrailer;

/* The columns of a statement and of the info row (restore.c) */
extern const SavedColumn pgsq_entry_columns[];
extern const int pgsq_entry_column_count;
extern const SavedColumn pgsq_entry_old_columns[];
extern const int pgsq_entry_old_column_count;
extern const SavedColumn pgsq_info_columns[];
extern const int pgsq_info_column_count;

extern bool pgsq_restore_saved(bool take_over);

extern void pgsq_legacy_register(void);
extern int64 pgsq_legacy_convert_entries(void);
extern bool pgsq_legacy_read_texts(void);
extern void pgsq_legacy_discard_texts(void);

extern void pgsq_savefile_at_startup(void);
extern void pgsq_savefile_write(void);
extern void pgsq_savefile_at_shutdown(void);

#endif							/* PGSQ_H */
