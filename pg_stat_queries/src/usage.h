/*-------------------------------------------------------------------------
 *
 * usage.h
 *		An entry's usage count: executions raise it, the clock sweep
 *		(eviction.c) lowers it and evicts the entries it finds at zero.
 *
 * Inline functions only: they run on the execution path.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_USAGE_H
#define PGSQ_USAGE_H

#include "entry.h"

/* Usage count cap: an entry unused for this many passes is evicted */
#define PGSQ_USAGE_MAX 5

/*
 * Raise an entry's usage count, up to the cap, after a merge of executions
 * of a statement that has run more than once: more than one execution in
 * this merge, or any after earlier ones.  A statement run once gets no raise
 * (its execution set the count already, pgsq_entry_used), so it survives no
 * pass longer than needed; a statement that keeps coming back, even if
 * every backend runs it only now and then, gains a pass with every merge.
 * That sets it apart from one-off statements when passes follow each other
 * quickly, as they do once a pass over a just-filled table found nothing
 * to evict.
 */
static inline void
pgsq_touch_entry(PgsqSharedEntry *entry, int64 calls, int64 calls_before)
{
	uint32		usage = pg_atomic_read_u32(&entry->usage);

	if ((calls > 1 || (calls > 0 && calls_before > 0)) &&
		usage < PGSQ_USAGE_MAX)
		pg_atomic_write_u32(&entry->usage, usage + 1);
}

/*
 * An execution of a statement: if its entry's count is zero (new, or aged
 * by the sweep since it was last used), mark it used.  Merges come up to a
 * second after executions, and under heavy churn a pass can take less than
 * that.  This writes at most once per entry and pass: a known statement's
 * execution otherwise only reads the count.
 */
static inline void
pgsq_entry_used(PgsqSharedEntry *entry)
{
	if (unlikely(pg_atomic_read_u32(&entry->usage) == 0))
		pg_atomic_write_u32(&entry->usage, 1);
}

#endif							/* PGSQ_USAGE_H */
