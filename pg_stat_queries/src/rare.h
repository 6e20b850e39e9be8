/*-------------------------------------------------------------------------
 *
 * rare.h
 *		Rare counters kept beside a shared entry (rare.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_RARE_H
#define PGSQ_RARE_H

#include "entry.h"
#include "utils/dsa.h"

extern PgsqRareCounters *pgsq_rare_for_merge(PgsqSharedEntry *entry,
											 dsa_pointer *spare);
extern bool pgsq_rare_spare_for(PgsqSharedEntry *entry,
								const PgsqCounters *counts,
								dsa_pointer *spare);
extern void pgsq_rare_copy(PgsqSharedEntry *entry, PgsqRareCounters *out);
extern const PgsqRareCounters *pgsq_rare_read(dsa_pointer rare);
extern void pgsq_rare_release(PgsqSharedEntry *entry);
extern dsa_pointer pgsq_rare_prepare(const PgsqRareCounters *counts);
extern void pgsq_rare_give(PgsqSharedEntry *entry, dsa_pointer rare);
extern void pgsq_rare_discard(dsa_pointer rare);

#endif							/* PGSQ_RARE_H */
