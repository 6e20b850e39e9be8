/*-------------------------------------------------------------------------
 *
 * rare.c
 *		Counters most executions leave at zero, in a chunk beside the entry.
 *
 * A shared entry holds the counters nearly every execution changes; the
 * others (PgsqRareCounters: blocks other than shared hits, I/O times, WAL,
 * JIT, parallel workers) live in a chunk of their own in the text area
 * (qtext.c), which the entry points to.  The chunk is allocated when a
 * statement first has such counts -- a read-only statement served from
 * shared buffers never needs one -- and freed when the entry is closed to
 * be dropped.  Keeping them out makes the entry small enough for the
 * statistics area's 448-byte size class (see PgsqSharedEntry).
 *
 * entry->rare is read and written under the entry's lock, like its text;
 * the area's own locks are taken after it.  Chunks are not counted in
 * query_text_memory: they are counters, and an entry never goes without
 * its counts for want of text memory.  Our saved file keeps them across a
 * clean shutdown (savefile.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "qtext.h"
#include "rare.h"

/* The rare counters of a chunk */
static inline PgsqRareCounters *
rare_of(dsa_pointer rare)
{
	return (PgsqRareCounters *) dsa_get_address(pgsq_text_area(), rare);
}

/*
 * An entry's rare counters to add to, given a zeroed chunk first if it has
 * none; entry lock held exclusively.  Raises an error, before anything
 * changed, if shared memory is out.
 */
PgsqRareCounters *
pgsq_rare_for_merge(PgsqSharedEntry *entry)
{
	if (!DsaPointerIsValid(entry->rare))
	{
		static const PgsqRareCounters zeros;
		dsa_pointer chunk = pgsq_rare_prepare(&zeros);

		if (!DsaPointerIsValid(chunk))
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of shared memory"),
					 errdetail("pg_stat_queries could not allocate %zu bytes for a statement's counters.",
							   sizeof(PgsqRareCounters))));
		entry->rare = chunk;
	}
	return rare_of(entry->rare);
}

/* Copy an entry's rare counters, zeros if it has none; entry lock held */
void
pgsq_rare_copy(PgsqSharedEntry *entry, PgsqRareCounters *out)
{
	if (DsaPointerIsValid(entry->rare))
		*out = *rare_of(entry->rare);
	else
		memset(out, 0, sizeof(*out));
}

/* The counters of a chunk, for the text file's writer */
const PgsqRareCounters *
pgsq_rare_read(dsa_pointer rare)
{
	return rare_of(rare);
}

/*
 * Free an entry's rare counters as it is closed to be dropped; entry lock
 * held exclusively.  A new life of the entry starts without any.
 */
void
pgsq_rare_release(PgsqSharedEntry *entry)
{
	dsa_pointer rare = entry->rare;

	entry->rare = InvalidDsaPointer;
	pgsq_rare_discard(rare);
}

/*
 * A chunk holding a copy of counts, for an entry not visible yet or one
 * restored at startup, or InvalidDsaPointer if shared memory is out.
 */
dsa_pointer
pgsq_rare_prepare(const PgsqRareCounters *counts)
{
	dsa_pointer chunk = dsa_allocate_extended(pgsq_text_area(),
											  sizeof(PgsqRareCounters),
											  DSA_ALLOC_NO_OOM);

	if (DsaPointerIsValid(chunk))
		*rare_of(chunk) = *counts;
	return chunk;
}

/*
 * Give a prepared chunk to an entry that has none: nobody can see the entry
 * yet, or its lock is held exclusively.
 */
void
pgsq_rare_give(PgsqSharedEntry *entry, dsa_pointer rare)
{
	Assert(!DsaPointerIsValid(entry->rare));
	entry->rare = rare;
}

/* Free a chunk no entry points to, if valid */
void
pgsq_rare_discard(dsa_pointer rare)
{
	if (DsaPointerIsValid(rare))
		dsa_free(pgsq_text_area(), rare);
}
