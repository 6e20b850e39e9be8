/*-------------------------------------------------------------------------
 *
 * entrycount.h
 *		The number of our entries, and its bound (entrycount.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_ENTRYCOUNT_H
#define PGSQ_ENTRYCOUNT_H

#include "postgres.h"

extern uint64 pgsq_entry_bound(void);
extern bool pgsq_entry_count_known(uint64 count);
extern Size pgsq_entry_count_shmem_size(void);
extern void pgsq_entry_count_shmem_startup(void);
extern uint64 pgsq_entry_count(void);
extern void pgsq_set_entry_count(uint64 count);
extern uint64 pgsq_created_entries(void);
extern bool pgsq_reserve_entry(void);
extern void pgsq_entry_created(uint64 objid);
extern void pgsq_entry_restored(uint64 objid);
extern void pgsq_entry_not_created(void);
extern void pgsq_entries_removed(int64 count);
extern void pgsq_live_entry_added(void);
extern void pgsq_live_entries_dropped(int64 count);
extern uint64 pgsq_live_entries(void);

#endif							/* PGSQ_ENTRYCOUNT_H */
