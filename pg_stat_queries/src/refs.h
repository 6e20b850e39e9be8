/*-------------------------------------------------------------------------
 *
 * refs.h
 *		This backend's references to shared entries (refs.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_REFS_H
#define PGSQ_REFS_H

#include "entry.h"
#include "store.h"
#include "textsource.h"

extern uint32 pgsq_refs_gen;
extern uint64 pgsq_refs_gen_gc;
extern uint64 pgsq_refs_gen_drops;

extern PgsqSharedEntry *pgsq_referenced_entry(const PgsqKey *key,
											  uint64 objid, bool *stale);
extern void pgsq_parse_see_entry(const PgsqKey *key,
								 const PgsqTextSource *src);
extern uint32 pgsq_refs_generation_advance(uint64 gc);
extern bool pgsq_is_fresh_entry(const PgsqKey *key);
extern bool pgsq_merge_fresh(const PgsqKey *key,
							 const PgsqCounters *counters);
extern PgsqSharedEntry *pgsq_lookup_entry(uint64 objid, bool *stale,
										  bool *missing);
extern PgsqCreateResult pgsq_create_first(const PgsqKey *key, uint64 objid,
										  const PgsqCounters *counters,
										  const PgsqTextSource *src);
extern void pgsq_flush_refused(void);
extern void pgsq_refs_reserve_memory(void);

/*
 * The generation of references now (refs.c): advanced first if references
 * may have been freed since the current one began.  A reference found by a
 * lookup made after this call may be used for as long as it returns the
 * same generation; pending.c keeps references of its own by this rule.
 */
static inline uint32
pgsq_refs_generation(void)
{
	uint64		gc = pg_atomic_read_u64(&pgStatLocal.shmem->gc_request_count);

	if (likely(gc == pgsq_refs_gen_gc &&
			   pgsq_local_drops == pgsq_refs_gen_drops))
		return pgsq_refs_gen;
	return pgsq_refs_generation_advance(gc);
}

#endif							/* PGSQ_REFS_H */
