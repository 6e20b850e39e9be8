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
 * An entry's rare counters to add to, entry lock held exclusively.  An
 * entry that has none takes *spare, a chunk of zeros the caller prepared
 * before taking the lock (pgsq_rare_spare_for), since nothing may be
 * allocated under it; NULL if there is no chunk (shared memory was out):
 * the rare counts of this merge are then not added.
 */
PgsqRareCounters *
pgsq_rare_for_merge(PgsqSharedEntry *entry, dsa_pointer *spare)
{
	if (!DsaPointerIsValid(entry->rare))
	{
		if (!DsaPointerIsValid(*spare))
			return NULL;
		entry->rare = *spare;
		*spare = InvalidDsaPointer;
	}
	return rare_of(entry->rare);
}

/*
 * A chunk of zeros for pgsq_rare_for_merge, if counts have rare counters
 * and the entry none (read without its lock: rare is set only under it, and
 * cleared only when the entry is closed; entry NULL: not known yet), else
 * InvalidDsaPointer.  Returns
 * false if one was needed and shared memory is out.  The caller discards
 * what the merge did not take.
 */
bool
pgsq_rare_spare_for(PgsqSharedEntry *entry, const PgsqCounters *counts,
					dsa_pointer *spare)
{
	static const PgsqRareCounters zeros;

	*spare = InvalidDsaPointer;
	if (!counts->has_rare ||
		(entry != NULL && DsaPointerIsValid(entry->rare)))
		return true;
	*spare = pgsq_rare_prepare(&zeros);
	return DsaPointerIsValid(*spare);
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
	dsa_pointer chunk = pgsq_text_area_alloc(sizeof(PgsqRareCounters));

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
