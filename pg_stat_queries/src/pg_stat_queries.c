/*-------------------------------------------------------------------------
 *
 * pg_stat_queries.c
 *		Module entry point: wires the modules together.
 *
 * Defines our kind of cumulative statistics with the callbacks the other
 * modules implement, sizes and starts everyone's shared memory, and
 * installs the settings and hooks.  pg_stat_queries must be loaded through
 * shared_preload_libraries; when it is not, CREATE EXTENSION still works
 * and the SQL functions report that the library is missing.
 *
 * It also defines our fixed shared state, pgsq_state, which every stage
 * reads through pg_stat_queries.h.  The stages (one file each, see
 * pg_stat_queries.h) depend on each other in one direction, along the data
 * flow, and only this file depends on them all: the order is written once,
 * in docs/design.md ("Module dependencies"), and checked by
 * scripts/module-graph.
 *
 * docs/design.md explains the design and the locking rules.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "libpq/auth.h"
#include "miscadmin.h"
#include "nodes/queryjumble.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "pg_stat_queries.h"

PG_MODULE_MAGIC_EXT(.name = "pg_stat_queries",.version = "1.0");

/* Our fixed shared state (pg_stat_queries.h), with the text area's first segment */
PgsqSharedState *pgsq_state = NULL;


/*
 * The fields every merge touches lie in an entry's first three cache lines
 * (see PgsqSharedEntry): the lock, hints, key and start time in the first,
 * the execution timing, rows, shared hits, last execution and the
 * histogram's header in the next two; the bucket a merge adds to is one
 * more line.
 */
StaticAssertDecl(offsetof(PgsqSharedEntry, data.key) + sizeof(PgsqKey) <=
				 PG_CACHE_LINE_SIZE,
				 "an entry's lock, generation, hints and key must share a cache line");
StaticAssertDecl(offsetof(PgsqSharedEntry, data.counters.exec_hist.counts) <=
				 3 * PG_CACHE_LINE_SIZE,
				 "an entry's execution counters and the histogram's header must fit in three cache lines");

/* A writing statement's usual rare counters: one line of the chunk (textarea.c) */
StaticAssertDecl(offsetof(PgsqRareCounters, shared_blks_written) + sizeof(int64) <=
				 PG_CACHE_LINE_SIZE,
				 "the WAL and shared block counters must share the rare chunk's first cache line");

/*
 * An entry's slot (table.c) takes 1280 bytes: with the histogram's 968
 * bytes of counts it cannot be smaller, and one more field must not cost
 * another line of every slot unnoticed.
 */
StaticAssertDecl(TYPEALIGN(PG_CACHE_LINE_SIZE, sizeof(PgsqSharedEntry)) == 1280,
				 "an entry's slot must stay at 1280 bytes");

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static ClientAuthentication_hook_type prev_client_auth_hook = NULL;

static void pgsq_init_backend_cb(void);
static bool pgsq_flush_static_cb(bool nowait);

/* How a single-user backend exits: -1 until known (standalone_exit_cb) */
static int	standalone_exit_code = -1;

/* Our work of the last flush at shutdown is done (or was skipped) */
static bool shutdown_work_done = false;

/*
 * Our kind of cumulative statistics: it holds no entry (ours are in a table
 * of our own, table.c), and is registered for its callbacks, through which
 * the statistics system has every process set up and flush our counts at
 * the moments it flushes its own.  Nothing of it is written to the
 * statistics system's file, nor copied by a snapshot.
 */
static PgStat_KindInfo pgsq_kind_info = {
	.name = "pg_stat_queries",
	.fixed_amount = false,
	.accessed_across_databases = false,
	.write_to_file = false,
	.shared_size = sizeof(PgStatShared_Common),
	.shared_data_off = sizeof(PgStatShared_Common),
	.shared_data_len = 0,
	.flush_static_cb = pgsq_flush_static_cb,
	.init_backend_cb = pgsq_init_backend_cb,
};

/*
 * Per-backend setup done by the statistics system (all process types).  The
 * startup process decides whether the saved statistics are to be restored
 * (after a clean shutdown only).  The first client backend restores them
 * once authenticated (client_auth_hook).  A single-user backend is its own
 * startup process:
 * it decides here, before it restores PostgreSQL's statistics, and restores
 * ours at its first flush, once they are back.
 */
static void
pgsq_init_backend_cb(void)
{
	if (pgsq_state == NULL)
		return;

	/*
	 * Attached now, before the statistics system sets up its exit callback,
	 * our area is detached after that callback's last flush: the entries this
	 * backend remembers stay mapped until then.
	 */
	pgsq_qtext_attach();
	if (MyBackendType == B_STARTUP || MyBackendType == B_STANDALONE_BACKEND)
		pgsq_savefile_at_startup();

	/*
	 * The checkpointer's last flush must call pgsq_flush_static_cb, which
	 * writes our file; it does IO that asks for that flush anyway, but
	 * nothing of ours runs there to ask.  It flushes nothing before exit.  A
	 * single-user backend's first flush, before its first command, restores.
	 */
	if (MyBackendType == B_CHECKPOINTER ||
		MyBackendType == B_STANDALONE_BACKEND)
		pgstat_report_fixed = true;
}

/*
 * ClientAuthentication_hook: the first client backend that is let in
 * restores the saved statistics, before it runs any statement.  Client
 * backends start after the startup process let the statistics system
 * restore its own, on a primary as on a hot standby.  Not before
 * authentication: a connection refused must cost nothing, even while a
 * restore keeps failing.
 */
static void
client_auth_hook(Port *port, int status)
{
	if (prev_client_auth_hook)
		prev_client_auth_hook(port, status);
	if (status == STATUS_OK && MyBackendType == B_BACKEND)
	{
		/*
		 * Authentication's timeout may fire meanwhile: it then ends the
		 * connection once the restore is done, not in its middle
		 */
		HOLD_INTERRUPTS();
		(void) pgsq_restore_saved(false);
		RESUME_INTERRUPTS();
	}
}

/*
 * before_shmem_exit callback of a single-user backend, registered after the
 * statistics system's own, so called before it: note whether the exit is
 * clean (as that callback decides whether to write PostgreSQL's file), and
 * make sure its last flush calls ours.
 */
static void
standalone_exit_cb(int code, Datum arg)
{
	standalone_exit_code = code;
	pgstat_report_fixed = true;
}

/*
 * A single-user backend's flush while it runs: once it is done starting
 * (PostgreSQL's statistics are back), restore ours, and follow its exit.
 */
static void
standalone_flush(void)
{
	static bool exit_followed = false;

	if (!IsNormalProcessingMode())
		return;
	if (!exit_followed)
	{
		before_shmem_exit(standalone_exit_cb, 0);
		exit_followed = true;
	}
	(void) pgsq_restore_saved(true);
}

/*
 * Is this the last flush of a clean shutdown, in the process about to write
 * PostgreSQL's statistics file?  PostgreSQL writes it only when that
 * process exits normally (exit code 0: pgstat_before_server_shutdown).  The
 * checkpointer exits normally only once the postmaster asked it to
 * (ShutdownRequestPending), which it does after every other process that
 * could report statistics has exited; when the postmaster dies, the
 * checkpointer exits with 1 without being asked, perhaps while backends
 * still run.  A single-user backend's exit code is noted before the flush.
 */
static bool
last_flush_of_clean_shutdown(void)
{
	if (!proc_exit_inprogress || shutdown_work_done)
		return false;
	if (MyBackendType == B_CHECKPOINTER)
		return ShutdownRequestPending;
	if (MyBackendType == B_STANDALONE_BACKEND)
		return standalone_exit_code == 0;
	return false;
}

/*
 * A backend's last flush, at exit, inside the statistics system's own exit
 * callback: everything pending is merged.  It runs guarded: an error here
 * would become FATAL and cut that callback short, leaving every reference
 * of the backend held, of every kind, for the uptime.
 */
static void
flush_at_exit(void *arg)
{
	pgsq_create_parsed_new(0);
	pgsq_failures_count();
	(void) pgsq_flush_pending(false);
	(void) pgsq_plans_settle(false, true);
}

/*
 * Called by every flush of fixed statistics (when a backend goes idle, at
 * most once a second, and at exit), right after the statistics system's
 * pass over its pending data: count the failed executions noted since the
 * last flush (pending.c), merge our pending counts, and say whether
 * some stay pending (then the statistics system calls again later).  The
 * last one of a clean shutdown comes right before PostgreSQL writes its
 * statistics file: the moment to write our file (savefile.c), after
 * restoring the last one if no client backend came to do it.
 */
static bool
pgsq_flush_static_cb(bool nowait)
{
	bool		partial = false;

	if (proc_exit_inprogress)
		(void) pgsq_run_guarded(flush_at_exit, NULL,
								"merge statistics at backend exit");
	else
	{
		/* between statements: one parse analysis found new has its entry */
		pgsq_create_parsed_new(0);
		pgsq_failures_count();
		partial = pgsq_flush_pending(nowait);
		partial |= pgsq_plans_settle_many(nowait);
	}

	if (pgsq_state == NULL)
		return partial;
	pgsq_flush_refused();
	if (MyBackendType == B_STANDALONE_BACKEND && !proc_exit_inprogress)
		standalone_flush();
	if (last_flush_of_clean_shutdown())
	{
		shutdown_work_done = true;
		pgsq_savefile_at_shutdown();
	}
	return partial;
}

/* Fixed shared memory: our state with the text area, then the sweep's */
static Size
shmem_size(void)
{
	return add_size(add_size(pgsq_qtext_shmem_size(), pgsq_eviction_shmem_size()),
					pgsq_table_shmem_size());
}

/* shmem_request_hook: reserve what every module needs */
static void
pgsq_shmem_request_hook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shmem_size());
	RequestNamedLWLockTranche("pg_stat_queries", 1 + pgsq_table_lock_count());
}

/* shmem_startup_hook: create or find every module's shared memory */
static void
pgsq_shmem_startup_hook(void)
{
	bool		found;
	LWLockPadded *locks;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	locks = GetNamedLWLockTranche("pg_stat_queries");
	pgsq_state = ShmemInitStruct("pg_stat_queries", pgsq_qtext_shmem_size(),
								 &found);
	if (!found)
	{
		pgsq_state->lock = &locks[0].lock;
		pgsq_state->restore_done = 0;
		pgsq_state->restore_legacy_ran = false;
		pgsq_state->stats_reset = GetCurrentTimestamp();
		pg_atomic_init_u64(&pgsq_state->dealloc, 0);
		pg_atomic_init_u64(&pgsq_state->evicted_entries, 0);
		pg_atomic_init_u64(&pgsq_state->texts_missing, 0);
		pg_atomic_init_u64(&pgsq_state->text_bytes, 0);
		pg_atomic_init_u64(&pgsq_state->last_eviction_time, 0);
		pg_atomic_init_u64(&pgsq_state->refused, 0);
		pg_atomic_init_u64(&pgsq_state->reset_count, 0);
		pg_atomic_init_u64(&pgsq_state->resets_done, 0);
		pg_atomic_init_u64(&pgsq_state->full_resets, 0);
		for (int i = 0; i < PGSQ_NUM_AREAS; i++)
			pgsq_alloc_pause_init(&pgsq_state->alloc_pause[i]);
		pg_atomic_init_u32(&pgsq_state->restore_pending, PGSQ_RESTORE_PENDING);
		pg_atomic_init_u32(&pgsq_state->restore_failures, 0);
		pg_atomic_init_u64(&pgsq_state->restore_retry_at, 0);
		pgsq_state->loaded_texts = InvalidDsaPointer;
	}
	pgsq_qtext_shmem_init(pgsq_state, found);
	pgsq_eviction_shmem_startup();
	pgsq_table_shmem_startup(&locks[1]);
	LWLockRelease(AddinShmemInitLock);
}

/* Module load */
void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;

	/* compute_query_id = auto computes query IDs only if somebody asks */
	EnableQueryId();

	pgsq_define_settings();
	pgsq_hist_init();
	pgstat_register_kind(PGSQ_STATS_KIND, &pgsq_kind_info);
	pgsq_legacy_register();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = pgsq_shmem_request_hook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = pgsq_shmem_startup_hook;
	prev_client_auth_hook = ClientAuthentication_hook;
	ClientAuthentication_hook = client_auth_hook;

	pgsq_install_hooks();
	pgsq_install_direct_scan();

	/*
	 * The lookup aids and pending table every backend uses from its first
	 * statement are made here, in the postmaster, and inherited.  Made on
	 * first use, they would be allocated while that statement's executor
	 * memory is live, above it in the C heap: the blocks every later
	 * statement allocates and frees would then come from the heap's free
	 * lists instead of its top, which costs every statement
	 * (bench/callgrind.sh measures it).
	 */
	pgsq_refs_reserve_memory();
	pgsq_pending_reserve_memory();
}
