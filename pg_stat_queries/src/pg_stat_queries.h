/*-------------------------------------------------------------------------
 *
 * pg_stat_queries.h
 *		Types and functions shared by the files of pg_stat_queries.
 *
 * One statement is identified by (userid, dbid, queryid, toplevel), as in
 * pg_stat_statements.  Its counters live in three places:
 *
 *	- PgsqCounters in backend-local pending data (pending.c), updated on
 *	  every execution without touching shared memory;
 *	- PgsqSharedEntry in the cumulative statistics system's shared hash
 *	  (store.c), where pending counters are merged in batches;
 *	- the query text, in a hash of our own in shared memory (qtext.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_STAT_QUERIES_H
#define PG_STAT_QUERIES_H

#include "compat.h"

#include "datatype/timestamp.h"
#include "executor/execdesc.h"
#include "executor/instrument.h"
#include "jit/jit.h"
#include "nodes/queryjumble.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "utils/pgstat_internal.h"

/*
 * A backend asks all others to collect stale references at most this often
 * (store.c), and so does the sweep unless a pass ends sooner (eviction.c);
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

/* Counters of one statement: the same set in pending and shared data */
typedef struct PgsqCounters
{
	int64		calls[PGSQ_NUM_PHASES]; /* plans, calls */
	double		total_time[PGSQ_NUM_PHASES];	/* milliseconds */
	double		min_time[PGSQ_NUM_PHASES];
	double		max_time[PGSQ_NUM_PHASES];
	double		mean_time[PGSQ_NUM_PHASES];
	double		sum_var_time[PGSQ_NUM_PHASES];	/* sum of squared deviations */
	int64		rows;
	int64		shared_blks_hit;
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
	int64		wal_records;
	int64		wal_fpi;
	uint64		wal_bytes;
	int64		wal_buffers_full;
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
	TimestampTz last_executed;	/* start of the latest execution */
} PgsqCounters;

/* Backend-local pending data of one statement (PgStat_EntryRef->pending) */
typedef struct PgsqPending
{
	/* first: read by every execution, with the first counters it adds to */
	bool		listed;			/* key is in the local list of pending keys */
	bool		text_checked;	/* the entry's text was looked after already */
	PgsqKey		key;
	PgsqCounters counters;
} PgsqPending;

/* The part of a shared entry that is written to the statistics file */
typedef struct PgsqEntryData
{
	PgsqKey		key;
	PgsqCounters counters;
	bool		minmax_valid[PGSQ_NUM_PHASES];	/* false until first merge, and
												 * after a min/max reset */
	TimestampTz stats_since;
	TimestampTz minmax_stats_since;
} PgsqEntryData;

/* A shared entry, in the cumulative statistics system's hash */
typedef struct PgsqSharedEntry
{
	PgStatShared_Common header; /* holds the entry's LWLock */
	PgsqEntryData data;
	pg_atomic_uint32 has_text;	/* text known to be stored (a hint) */
	pg_atomic_uint32 usage;		/* clock-sweep usage count (eviction.c) */
	pg_atomic_uint32 swept_pass;	/* last sweep pass that visited it */
} PgsqSharedEntry;

/* Fixed shared state (store.c); see the locking notes there */
typedef struct PgsqSharedState
{
	LWLock	   *lock;			/* protects stats_reset */
	TimestampTz stats_reset;
	pg_atomic_uint64 dealloc;	/* eviction passes */
	pg_atomic_uint64 evicted_entries;
	pg_atomic_uint64 texts_missing; /* texts that could not be stored */
	pg_atomic_uint64 text_bytes;	/* bytes of stored query texts */
	pg_atomic_uint64 last_eviction_time;
	pg_atomic_uint64 refused;	/* executions not tracked: table full;
								 * backends add theirs in batches */
	pg_atomic_uint64 num_entries;	/* approximate; exact after each pass */
	pg_atomic_uint64 reset_count;	/* resets that dropped entries so far */
	pg_atomic_uint64 full_resets;	/* resets of everything so far */
	pg_atomic_uint32 pass;		/* current clock-sweep pass, from 1 */
	pg_atomic_uint64 pass_evicted;	/* entries evicted by the current pass */
	pg_atomic_uint64 created_entries;	/* entries created so far */
	pg_atomic_uint32 gc_owed;	/* evictions since the sweep's last gc request */
	pg_atomic_uint64 last_gc_request;	/* when the sweep last made one */
	pg_atomic_uint64 last_pass_end; /* when the previous pass ended */
	pg_atomic_uint32 last_pass_idle;	/* and whether it evicted nothing */
	pg_atomic_uint32 resume_partition;	/* where the current pass rests */
	pg_atomic_uint32 sweeping;	/* a backend is running a sweep slice */
	pg_atomic_uint32 restore_unchecked; /* the first client backend has yet
										 * to check the restored entries */
	int			text_tranche_id;
	dshash_table_handle text_hash_handle;
	char		text_dsa_place[FLEXIBLE_ARRAY_MEMBER];	/* in-place DSA */
} PgsqSharedState;

/* Time, buffer and WAL usage summed over measured windows (measure.c) */
typedef struct PgsqUsage
{
	instr_time	time;
	BufferUsage bufusage;
	WalUsage	walusage;
} PgsqUsage;

/* One window being measured */
typedef struct PgsqWindow
{
	instr_time	start;
	BufferUsage buf_start;
	WalUsage	wal_start;
} PgsqWindow;

/* Which entries a reset applies to; zero fields match everything */
typedef struct PgsqResetFilter
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
} PgsqResetFilter;

/* settings.c */
typedef enum PgsqTrackLevel
{
	PGSQ_TRACK_NONE,
	PGSQ_TRACK_TOP,
	PGSQ_TRACK_ALL,
} PgsqTrackLevel;

extern int	pgsq_max;
extern int	pgsq_track;
extern bool pgsq_track_utility;
extern bool pgsq_track_planning;
extern bool pgsq_save;
extern int	pgsq_query_text_memory; /* kilobytes */
extern int	pgsq_min_sweep_interval;	/* milliseconds */
extern void pgsq_define_settings(void);

/* store.c */
extern PgsqSharedState *pgsq_state;
extern PgStat_KindInfo pgsq_kind_info;
extern void pgsq_shmem_request(void);
extern void pgsq_shmem_startup(void);
extern bool pgsq_store_ready(void);
extern void pgsq_require_store(void);
extern uint64 pgsq_objid(const PgsqKey *key);
extern PgStat_HashKey pgsq_shared_hash_key(Oid dbid, uint64 objid);
extern PgStat_EntryRef *pgsq_entry_ref(const PgsqKey *key, bool with_pending,
									   bool *stale);
extern PgStat_EntryRef *pgsq_parse_entry_ref(const PgsqKey *key, bool *stale);
extern bool pgsq_is_fresh_entry(const PgsqKey *key);
extern void pgsq_fresh_entry_text_stored(void);
extern bool pgsq_merge_fresh(const PgsqKey *key, const PgsqCounters *counters,
							 bool *text_stored);
extern void pgsq_forget_pending_ref(const PgStat_EntryRef *entry_ref);
extern bool pgsq_drop_entry(Oid dboid, uint64 objid);
extern bool pgsq_is_live_entry(const PgStatShared_HashEntry *hent);
extern PgsqSharedEntry *pgsq_shared_entry_of(PgStatShared_HashEntry *hent);
extern void pgsq_merge_counters(PgsqEntryData *dst, const PgsqCounters *src);
extern int	pgsq_collect_entries(PgsqEntryData **entries);
extern int64 pgsq_count_entries(void);
extern void pgsq_flush_refused(void);
extern TimestampTz pgsq_reset_entries(const PgsqResetFilter *filter,
									  bool minmax_only);

/* pending.c */
extern PgsqSharedEntry *pgsq_record(const PgsqKey *key, PgsqPhase phase,
									double ms, uint64 rows, const BufferUsage *bufusage,
						const WalUsage *walusage,
						const JitInstrumentation *jitusage,
						int parallel_to_launch, int parallel_launched,
						bool *parked, bool *check_text);
extern bool pgsq_flush_pending_cb(PgStat_EntryRef *entry_ref, bool nowait);
extern bool pgsq_pending_text_checked(const PgStat_EntryRef *entry_ref);
extern bool pgsq_merge_into_entry(PgStat_EntryRef *entry_ref, const PgsqKey *key,
								  const PgsqCounters *counters, bool nowait);
extern int64 pgsq_merge_locked(PgsqSharedEntry *entry, const PgsqKey *key,
							   const PgsqCounters *counters);
extern void pgsq_flush_own_pending(void);
extern void pgsq_maybe_flush_busy(void);

/* eviction.c */
extern Size pgsq_eviction_shmem_size(void);
extern void pgsq_eviction_shmem_startup(void);
extern void pgsq_eviction_init(PgsqSharedState *state);
extern bool pgsq_entry_created(void);
extern void pgsq_entries_removed(int64 count);
extern void pgsq_sweep_after_full_reset(void);
extern bool pgsq_room_for_new_entry(bool nested);
extern void pgsq_touch_entry(PgsqSharedEntry *entry, int64 calls,
							  int64 calls_before);
extern void pgsq_entry_used(PgsqSharedEntry *entry);
extern void pgsq_maybe_sweep(bool nested);
extern void pgsq_free_all_orphans(void);

/* qtext.c */
extern void pgsq_qtext_attach(void);
extern void pgsq_qtext_shmem_init(PgsqSharedState *state, bool found);
extern Size pgsq_qtext_shmem_size(void);
extern bool pgsq_qtext_store(const PgsqKey *key, const char *text, int len,
							 int encoding, bool is_new);
extern char *pgsq_qtext_fetch(const PgsqKey *key, int *encoding);
extern void pgsq_qtext_remove(const PgsqKey *key);
extern void pgsq_qtext_remove_all(void);
extern void pgsq_qtext_drop_orphans(void);
extern void pgsq_qtext_init_backend(void);

/* normalize.c */
extern char *pgsq_normalize(JumbleState *jstate, const char *query,
							int query_loc, int query_len, int *out_len);
extern bool pgsq_text_has_literals(const char *query, int query_len);

/* inflight.c */
extern void pgsq_inflight_remember(int level, int64 queryid, const char *stmt,
								   int location, int stmt_len,
								   const JumbleState *jstate);
extern char *pgsq_inflight_normalized(int level, int64 queryid,
									  const char *stmt, int location,
									  int stmt_len, int *out_len);

/* measure.c */
extern void pgsq_window_begin(PgsqWindow *window);
extern void pgsq_window_end(const PgsqWindow *window, PgsqUsage *usage);
extern void pgsq_query_started(const QueryDesc *query);
extern int	pgsq_query_slot(const QueryDesc *query);
extern void pgsq_query_add(int slot, const QueryDesc *query,
						   const PgsqWindow *window);
extern const PgsqUsage *pgsq_query_ended(const QueryDesc *query);
extern bool pgsq_finish_measured(const QueryDesc *query);
extern void pgsq_measure_init(void);

/* hooks.c */
extern void pgsq_install_hooks(void);

#endif							/* PG_STAT_QUERIES_H */
