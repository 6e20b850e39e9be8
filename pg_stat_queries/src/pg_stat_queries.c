/*-------------------------------------------------------------------------
 *
 * pg_stat_queries.c
 *		Module entry point: settings, statistics kind, shared memory, hooks.
 *
 * pg_stat_queries must be loaded through shared_preload_libraries.  When
 * it is not, CREATE EXTENSION still works and the SQL functions report
 * that the library is missing.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_stat_queries.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/queryjumble.h"
#include "storage/ipc.h"

PG_MODULE_MAGIC_EXT(.name = "pg_stat_queries",.version = "1.0");

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* shmem_request_hook: reserve what we need */
static void
pgsq_shmem_request_hook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	pgsq_shmem_request();
}

/* shmem_startup_hook: set up our fixed shared memory */
static void
pgsq_shmem_startup_hook(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	pgsq_shmem_startup();
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
	pgsq_kind_info.write_to_file = pgsq_save;
	pgstat_register_kind(PGSQ_STATS_KIND, &pgsq_kind_info);

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = pgsq_shmem_request_hook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = pgsq_shmem_startup_hook;

	pgsq_install_hooks();
}
