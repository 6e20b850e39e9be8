/*-------------------------------------------------------------------------
 *
 * ring.h
 *		The ring of our entries' ids, the hand of the clock sweep (ring.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_RING_H
#define PGSQ_RING_H

#include "postgres.h"

extern Size pgsq_ring_shmem_size(uint64 bound);
extern void pgsq_ring_shmem_startup(uint64 bound);
extern void pgsq_ring_push(uint64 objid);
extern bool pgsq_ring_take(uint64 *objid);
extern void pgsq_ring_clear(void);
extern uint64 pgsq_ring_head(void);
extern uint64 pgsq_ring_tail(void);
extern bool pgsq_ring_complete(void);

#endif							/* PGSQ_RING_H */
