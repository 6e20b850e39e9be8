/*-------------------------------------------------------------------------
 *
 * textarea.c
 *		The text area: our own DSA area in the fixed shared state, and the
 *		chunks it holds (query texts, rare counters).
 *
 * A text's lifetime (prepared, given to its entry, taken, freed), the
 * bytes counted against query_text_memory, and the rare counters' chunks
 * beside an entry.  Below counters.c and entries.c, which both use it; which
 * text a statement stores is texts.c's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/ipc.h"
#include "utils/dsa.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "pg_stat_queries.h"


/*-------------------------------------------------------------------------
 * Normalized query texts in shared memory.
 *
 * Each text is a chunk of a DSA area of our own, pointed to by its entry
 * (PgsqSharedEntry.text), so a new statement's text costs one allocation
 * and its eviction one free, with no index of texts to update.  There is no
 * external file during normal operation and so no garbage-collection
 * rewrite: a text is freed when its entry is evicted or reset.  The bytes
 * used are bounded by pg_stat_queries.query_text_memory (reloadable); a
 * text that does not fit is not stored (its entry shows a NULL query and
 * texts_missing counts it) and is stored by a later execution of the
 * statement once there is room.
 *
 * An entry's text and text_state are read and written under the entry's
 * lock, except while nobody else can see the entry (being created).  A text
 * is taken away from its entry, closing the entry to texts, as the entry
 * is dropped, so that no text is given to it after.
 *
 * Across a clean shutdown the texts are saved with their entries (savefile.c).
 *-------------------------------------------------------------------------
 */

/* Size of the DSA's first segment, inside our fixed shared memory */
#define PGSQ_TEXT_DSA_INIT_SIZE (512 * 1024)

/* A stored text: this header, then len bytes and a NUL */
typedef struct TextChunk
{
	TimestampTz stored_at;		/* clock when given to its entry, read under
								 * the entry lock */
	int32		len;
	int32		encoding;
	int32		capacity;		/* bytes allocated for the whole chunk */
	char		bytes[FLEXIBLE_ARRAY_MEMBER];
} TextChunk;

/*
 * Chunks of texts this backend freed, kept for its next texts instead of
 * going back to the area: under a stream of new statements the backend that
 * evicts an entry is the one about to create the next, and a chunk reused
 * costs neither an allocation nor a free, nor their locks.  A sweep
 * evicts several entries at once, so up to
 * PGSQ_SPARE_CHUNKS chunks are kept (as many as a slice evicts at most,
 * eviction.c), of at most PGSQ_SPARE_BYTES in all,
 * each reused for a text needing at least half of it; they go back to the
 * area at exit.  So that texts of about the same length fit each other's
 * chunks, small chunks are allocated in steps of PGSQ_SPARE_CHUNK_STEP bytes.
 */
#define PGSQ_SPARE_CHUNKS PGSQ_SPARE_TEXTS
#define PGSQ_SPARE_BYTES 16384
#define PGSQ_SPARE_CHUNK_MAX 2048
#define PGSQ_SPARE_CHUNK_STEP 64

static dsa_pointer spare_chunks[PGSQ_SPARE_CHUNKS];
static Size spare_sizes[PGSQ_SPARE_CHUNKS];
static int	spare_count = 0;
static Size spare_bytes = 0;

static dsa_area *text_area = NULL;

/* Bytes of fixed shared memory we need, DSA start included */
Size
pgsq_qtext_shmem_size(void)
{
	return add_size(MAXALIGN(offsetof(PgsqSharedState, text_dsa_place)),
					PGSQ_TEXT_DSA_INIT_SIZE);
}

/* Create the DSA area (postmaster, once) */
void
pgsq_qtext_shmem_init(PgsqSharedState *state, bool found)
{
	dsa_area   *area;

	if (found)
		return;

	state->text_tranche_id = pgsq_new_tranche_id("pg_stat_queries_text");
	state->entry_tranche_id = pgsq_new_tranche_id("pg_stat_queries_entry");
	area = dsa_create_in_place(state->text_dsa_place, PGSQ_TEXT_DSA_INIT_SIZE,
							   state->text_tranche_id, NULL);
	dsa_pin(area);

	/* the postmaster never uses it; processes attach lazily */
	dsa_detach(area);
}

/*
 * Give back our reference to the in-place DSA at process exit.  This must
 * run before dynamic shared memory is unmapped, so it is a before_shmem_exit
 * callback, as for the statistics system's own area.
 */
static void
qtext_detach(int code, Datum arg)
{
	if (text_area != NULL)
	{
		while (spare_count > 0)
			dsa_free(text_area, spare_chunks[--spare_count]);
		spare_bytes = 0;
		dsa_detach(text_area);
		dsa_release_in_place(pgsq_state->text_dsa_place);
	}
	text_area = NULL;
}

/* Attach to the text area, once per process */
void
pgsq_qtext_attach(void)
{
	MemoryContext oldcxt;

	if (likely(text_area != NULL))
		return;

	pgsq_register_tranche(pgsq_state->text_tranche_id, "pg_stat_queries_text");
	pgsq_register_tranche(pgsq_state->entry_tranche_id, "pg_stat_queries_entry");
	oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	text_area = dsa_attach_in_place(pgsq_state->text_dsa_place, NULL);
	dsa_pin_mapping(text_area);
	MemoryContextSwitchTo(oldcxt);

	/* while exiting, callers detach themselves */
	if (!proc_exit_inprogress)
		before_shmem_exit(qtext_detach, 0);
}

/* The text area, attached */
dsa_area *
pgsq_text_area(void)
{
	pgsq_qtext_attach();
	return text_area;
}

/* The chunk of a text */
static inline TextChunk *
chunk_of(dsa_pointer text)
{
	return (TextChunk *) dsa_get_address(text_area, text);
}

/* Size of the chunk of a text of len bytes */
static inline Size
chunk_size(int len)
{
	Size		size = offsetof(TextChunk, bytes) + len + 1;

	if (size <= PGSQ_SPARE_CHUNK_MAX)
		size = TYPEALIGN(PGSQ_SPARE_CHUNK_STEP, size);
	return size;
}

/* A spare chunk (see spare_chunks) for size bytes, or InvalidDsaPointer */
static dsa_pointer
take_spare(Size size)
{
	for (int i = 0; i < spare_count; i++)
	{
		if (spare_sizes[i] >= size && spare_sizes[i] / 2 <= size)
		{
			dsa_pointer chunk = spare_chunks[i];

			spare_bytes -= spare_sizes[i];
			spare_count--;
			spare_chunks[i] = spare_chunks[spare_count];
			spare_sizes[i] = spare_sizes[spare_count];
			return chunk;
		}
	}
	return InvalidDsaPointer;
}

/* What allocate_chunk asks for and gets */
typedef struct ChunkRequest
{
	Size		size;
	dsa_pointer chunk;
} ChunkRequest;

/* Allocate a chunk of the text area (through pgsq_shared_alloc) */
static void
allocate_chunk(void *arg)
{
	ChunkRequest *req = (ChunkRequest *) arg;

	req->chunk = dsa_allocate_extended(text_area, req->size,
									   DSA_ALLOC_NO_OOM | DSA_ALLOC_HUGE);
}

/*
 * A chunk of the text area of size bytes, or InvalidDsaPointer if shared
 * memory is out; never raises an error for that (guard.c).  Also
 * used for rare counters (below).
 */
dsa_pointer
pgsq_text_area_alloc(Size size)
{
	ChunkRequest req = {size, InvalidDsaPointer};

	/* attached again if a backend's exit detached it before its last flush */
	pgsq_qtext_attach();
	if (!pgsq_shared_alloc(PGSQ_AREA_TEXTS, allocate_chunk, &req))
		return InvalidDsaPointer;
	return req.chunk;
}

/*
 * A chunk holding a copy of text, not yet given to an entry, or
 * InvalidDsaPointer if query_text_memory has no room for it (texts_missing
 * counts it).  The caller gives it to an entry or discards it.
 */
dsa_pointer
pgsq_text_prepare(const char *text, int len, int encoding)
{
	uint64		limit = (uint64) pgsq_query_text_memory * 1024;
	dsa_pointer chunk;
	TextChunk  *tc;

	pgsq_qtext_attach();
	if (pg_atomic_add_fetch_u64(&pgsq_state->text_bytes, len + 1) > limit)
		chunk = InvalidDsaPointer;
	else
	{
		Size		size = chunk_size(len);

		chunk = take_spare(size);
		if (!DsaPointerIsValid(chunk))
		{
			chunk = pgsq_text_area_alloc(size);
			if (DsaPointerIsValid(chunk))
				chunk_of(chunk)->capacity = size;
		}
	}
	if (!DsaPointerIsValid(chunk))
	{
		pg_atomic_sub_fetch_u64(&pgsq_state->text_bytes, len + 1);
		pg_atomic_add_fetch_u64(&pgsq_state->texts_missing, 1);
		return InvalidDsaPointer;
	}
	tc = chunk_of(chunk);
	tc->stored_at = 0;
	tc->len = len;
	tc->encoding = encoding;
	memcpy(tc->bytes, text, len);
	tc->bytes[len] = '\0';
	return chunk;
}

/*
 * Free a text no entry points to (any longer), if valid, or keep its chunk
 * as a spare.
 */
void
pgsq_text_discard(dsa_pointer text)
{
	TextChunk  *tc;

	if (!DsaPointerIsValid(text))
		return;
	pgsq_qtext_attach();
	tc = chunk_of(text);
	pg_atomic_sub_fetch_u64(&pgsq_state->text_bytes, tc->len + 1);
	if (tc->capacity <= PGSQ_SPARE_CHUNK_MAX &&
		spare_count < PGSQ_SPARE_CHUNKS &&
		spare_bytes + tc->capacity <= PGSQ_SPARE_BYTES &&
		!proc_exit_inprogress)
	{
		spare_chunks[spare_count] = text;

		spare_sizes[spare_count] = tc->capacity;
		spare_bytes += tc->capacity;
		spare_count++;
	}
	else
		dsa_free(text_area, text);
}

/*
 * Point an entry that has no text to one, whose stored_at the caller set;
 * entry lock held exclusively.
 */
void
pgsq_text_give_locked(PgsqSharedEntry *entry, dsa_pointer text)
{
	entry->text = text;

	pg_atomic_write_u32(&entry->text_state, PGSQ_TEXT_STORED);
}

/*
 * Give a new entry, which nobody else can see yet, its text if valid; now
 * is its start time, read under its partition lock.
 */
void
pgsq_text_give_new(PgsqSharedEntry *entry, dsa_pointer text, TimestampTz now)
{
	Assert(pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_NONE);
	if (DsaPointerIsValid(text))
	{
		chunk_of(text)->stored_at = now;
		pgsq_text_give_locked(entry, text);
	}
}

/*
 * Give an entry the text unless it has one or was closed, stamped with the
 * time read under the entry lock (held exclusively); true if given
 */
bool
pgsq_text_give_if_none(PgsqSharedEntry *entry, dsa_pointer text)
{
	if (pg_atomic_read_u32(&entry->text_state) != PGSQ_TEXT_NONE)
		return false;
	chunk_of(text)->stored_at = GetCurrentTimestamp();
	pgsq_text_give_locked(entry, text);
	return true;
}

/*
 * Take an entry's text away (InvalidDsaPointer if none) and close it to
 * texts, before it is dropped; entry lock held exclusively.  The caller
 * discards the text once it holds no lock.
 */
dsa_pointer
pgsq_text_take(PgsqSharedEntry *entry)
{
	dsa_pointer text = InvalidDsaPointer;

	Assert(LWLockHeldByMeInMode(&entry->lock, LW_EXCLUSIVE));

	if (pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_STORED)
		text = entry->text;

	entry->text = InvalidDsaPointer;
	pg_atomic_write_u32(&entry->text_state, PGSQ_TEXT_CLOSED);
	return text;
}

/* When an entry's text was stored, 0 if it has none; entry lock held */
TimestampTz
pgsq_text_stored_at(PgsqSharedEntry *entry)
{
	Assert(LWLockHeldByMe(&entry->lock));
	if (pg_atomic_read_u32(&entry->text_state) != PGSQ_TEXT_STORED)
		return 0;
	pgsq_qtext_attach();
	return chunk_of(entry->text)->stored_at;
}

/*
 * The bytes of an entry's text, NUL-terminated, valid while the caller
 * holds the entry lock; NULL if it has none.
 */
const char *
pgsq_text_peek(PgsqSharedEntry *entry, int *len, int *encoding,
			   TimestampTz *stored_at)
{
	*stored_at = 0;
	if (pg_atomic_read_u32(&entry->text_state) != PGSQ_TEXT_STORED)
		return NULL;
	return pgsq_text_bytes(entry->text, len, encoding, stored_at);
}

/* A palloc'd copy of an entry's text, under its lock; NULL if it has none */
char *
pgsq_text_copy(PgsqSharedEntry *entry, int *len, int *encoding,
			   TimestampTz *stored_at)
{
	const char *bytes = pgsq_text_peek(entry, len, encoding, stored_at);

	return bytes != NULL ? pnstrdup(bytes, *len) : NULL;
}


/*
 * The bytes of a text the caller keeps from being freed (it holds the
 * entry lock, or the text is its own), NUL-terminated, and what describes
 * them.
 */
const char *
pgsq_text_bytes(dsa_pointer text, int *len, int *encoding,
				TimestampTz *stored_at)
{
	TextChunk  *tc;

	pgsq_qtext_attach();
	tc = chunk_of(text);
	*len = tc->len;
	*encoding = tc->encoding;
	*stored_at = tc->stored_at;
	return tc->bytes;
}

/* Set when a text not given to an entry yet was first stored (a loaded one) */
void
pgsq_text_set_stored_at(dsa_pointer text, TimestampTz stored_at)
{
	pgsq_qtext_attach();
	chunk_of(text)->stored_at = stored_at;
}


/*-------------------------------------------------------------------------
 * Counters most executions leave at zero, in a chunk beside the entry.
 *
 * A shared entry holds the counters nearly every execution changes; the
 * others (PgsqRareCounters: blocks other than shared hits, I/O times, WAL,
 * JIT, parallel workers) live in a chunk of their own in the text area
 * (above), which the entry points to.  The chunk is allocated when a
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
 *-------------------------------------------------------------------------
 */

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
	Assert(LWLockHeldByMeInMode(&entry->lock, LW_EXCLUSIVE));
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
	Assert(LWLockHeldByMe(&entry->lock));
	if (DsaPointerIsValid(entry->rare))
		*out = *rare_of(entry->rare);
	else
		memset(out, 0, sizeof(*out));
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
