/*-------------------------------------------------------------------------
 *
 * counters.h
 *		Counter arithmetic (counters.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_COUNTERS_H
#define PGSQ_COUNTERS_H

#include "entry.h"
#include "executor/instrument.h"
#include "jit/jit.h"

extern void pgsq_counters_clear(PgsqCounters *counters);
extern void pgsq_add_execution(PgsqCounters *counters, PgsqPhase phase, double ms,
							   uint64 rows, const BufferUsage *bufusage,
							   const WalUsage *walusage,
							   const JitInstrumentation *jitusage,
							   int parallel_to_launch, int parallel_launched,
							   PgsqPlanCache plan_cache);
extern void pgsq_add_failures(PgsqCounters *counters, int64 count,
							  double ms, int sqlstate, TimestampTz at);
extern int64 pgsq_merge_locked(PgsqSharedEntry *entry, const PgsqKey *key,
							   const PgsqCounters *counters,
							   dsa_pointer *spare_rare);
extern void pgsq_start_data(PgsqEntryData *data, const PgsqKey *key,
							TimestampTz now);
extern void pgsq_fill_new_entry(PgsqEntryData *data,
								const PgsqCounters *first, TimestampTz now);

#endif							/* PGSQ_COUNTERS_H */
