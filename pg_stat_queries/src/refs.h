/*-------------------------------------------------------------------------
 *
 * refs.h
 *		This backend's references to shared entries (refs.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_REFS_H
#define PGSQ_REFS_H

#include "pg_stat_queries.h"

extern PgStat_EntryRef *pgsq_entry_ref(const PgsqKey *key, uint64 objid,
									   bool *stale);
extern PgStat_EntryRef *pgsq_parse_entry_ref(const PgsqKey *key, bool *stale);
extern uint32 pgsq_refs_generation(void);
extern bool pgsq_is_fresh_entry(const PgsqKey *key);
extern void pgsq_fresh_entry_text_stored(uint32 epoch);
extern bool pgsq_merge_fresh(const PgsqKey *key, const PgsqCounters *counters,
							 bool *text_stored);
extern void pgsq_flush_refused(void);

#endif							/* PGSQ_REFS_H */
