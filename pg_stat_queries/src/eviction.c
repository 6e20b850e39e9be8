/*-------------------------------------------------------------------------
 *
 * eviction.c
 *		Keeping the number of entries near pg_stat_queries.max.
 *
 * Every entry has a small usage count, raised when a backend merges its
 * counters into the entry (so at most about once a second per backend,
 * never on the execution path) and capped.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_stat_queries.h"

/* Usage count cap: a hot entry survives this many sweeps without use */
#define PGSQ_USAGE_MAX 8

/* Note that a backend created an entry */
void
pgsq_entry_created(void)
{
}

/* Raise an entry's usage count after a merge, up to the cap */
void
pgsq_touch_entry(PgsqSharedEntry *entry)
{
	uint32		usage = pg_atomic_read_u32(&entry->usage);

	if (usage < PGSQ_USAGE_MAX)
		pg_atomic_write_u32(&entry->usage, usage + 1);
}
