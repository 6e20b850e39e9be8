/*-------------------------------------------------------------------------
 *
 * eviction.h
 *		Clock-sweep eviction within pg_stat_queries.max (eviction.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_EVICTION_H
#define PGSQ_EVICTION_H

#include "entry.h"

extern Size pgsq_eviction_shmem_size(void);
extern void pgsq_eviction_shmem_startup(void);
extern void pgsq_sweep_after_full_reset(void);
extern bool pgsq_room_for_new_entry(bool nested);
extern void pgsq_maybe_sweep(bool nested);

#endif							/* PGSQ_EVICTION_H */
