/*-------------------------------------------------------------------------
 *
 * store.h
 *		Our entries in the statistics system's shared hash (store.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_STORE_H
#define PGSQ_STORE_H

#include "entry.h"
#include "lib/dshash.h"

/* Outcome of creating an entry without a reference */
typedef enum PgsqCreateResult
{
	CREATE_DONE,
	CREATE_EXISTS,				/* another backend was faster */
	CREATE_REFUSED,				/* no memory (or, for callers, no room) */
} PgsqCreateResult;

extern uint64 pgsq_local_drops;

extern uint64 pgsq_objid(const PgsqKey *key);
extern PgStat_HashKey pgsq_shared_hash_key(Oid dbid, uint64 objid);
extern bool pgsq_is_live_entry(const PgStatShared_HashEntry *hent);
extern PgsqSharedEntry *pgsq_shared_entry_of(PgStatShared_HashEntry *hent);
extern PgsqSharedEntry *pgsq_lock_statement_entry(const PgsqKey *key,
												  LWLockMode mode,
												  PgStatShared_HashEntry **hent);
extern void pgsq_unlock_statement_entry(PgsqSharedEntry *entry,
										PgStatShared_HashEntry *hent);
extern PgsqSharedEntry *pgsq_scan_next_entry(dshash_seq_status *hstat);
extern PgsqCreateResult pgsq_create_unreferenced(const PgsqKey *key,
												 uint64 objid,
												 const PgsqCounters *first,
												 uint32 usage,
												 dsa_pointer text);
extern dsa_pointer pgsq_close_entry(PgsqSharedEntry *entry);
extern bool pgsq_drop_entry(Oid dboid, uint64 objid);
extern void pgsq_free_all_orphans(void);
extern bool pgsq_restore_entry(const PgsqEntryData *data,
							   const PgsqRareCounters *rare,
							   dsa_pointer text);

extern bool pgsq_merge_into_entry(PgsqSharedEntry *entry, const PgsqKey *key,
								  const PgsqCounters *counters,
								  TimestampTz counted_for, bool nowait);

/* Are counts for the life "counted_for" not for the life "since"? */
static inline bool
pgsq_other_life(TimestampTz counted_for, TimestampTz since)
{
	return counted_for != 0 && since != 0 && since != counted_for;
}

#endif							/* PGSQ_STORE_H */
