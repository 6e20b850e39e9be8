/*-------------------------------------------------------------------------
 *
 * eviction.h
 *		Clock-sweep eviction within pg_stat_queries.max (eviction.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_EVICTION_H
#define PGSQ_EVICTION_H

#include "pg_stat_queries.h"

extern Size pgsq_eviction_shmem_size(void);
extern void pgsq_eviction_shmem_startup(void);
extern uint64 pgsq_created_entries(void);
extern bool pgsq_reserve_entry(void);
extern void pgsq_entry_created(uint64 objid);
extern void pgsq_entry_restored(uint64 objid);
extern void pgsq_entry_not_created(void);
extern void pgsq_entries_removed(int64 count);
extern void pgsq_sweep_after_full_reset(void);
extern bool pgsq_room_for_new_entry(bool nested);
extern void pgsq_touch_entry(PgsqSharedEntry *entry, int64 calls,
							 int64 calls_before);
extern void pgsq_entry_used(PgsqSharedEntry *entry);
extern void pgsq_maybe_sweep(bool nested);
extern void pgsq_free_all_orphans(void);

#endif							/* PGSQ_EVICTION_H */
