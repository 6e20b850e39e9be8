/*-------------------------------------------------------------------------
 *
 * pending.h
 *		Backend-local pending counters and their flush (pending.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_PENDING_H
#define PGSQ_PENDING_H

#include "entry.h"
#include "executor/instrument.h"
#include "jit/jit.h"
#include "textsource.h"

extern PgsqSharedEntry *pgsq_record(const PgsqKey *key,
									const PgsqTextSource *src,
									PgsqPhase phase, double ms, uint64 rows,
									const BufferUsage *bufusage,
									const WalUsage *walusage,
									const JitInstrumentation *jitusage,
									int parallel_to_launch,
									int parallel_launched,
									PgsqPlanCache plan_cache,
									bool *check_text);
extern void pgsq_record_failure(const PgsqKey *key, const PgsqTextSource *src,
								int64 count, double ms, int sqlstate,
								TimestampTz at);
extern bool pgsq_flush_pending(bool nowait);
extern void pgsq_flush_own_pending(void);
extern void pgsq_maybe_flush_busy(void);
extern void pgsq_pending_reserve_memory(void);

#endif							/* PGSQ_PENDING_H */
