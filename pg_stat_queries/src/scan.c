/*-------------------------------------------------------------------------
 *
 * scan.c
 *		Reading and resetting all entries, for the SQL functions.
 *
 * Scans take the shared hash's partition locks shared, one at a time, and
 * each entry's lock while it is copied or changed; executing queries never
 * wait for a whole scan.  An entry's text is copied, or taken away and
 * freed, with the entry (see the locking rules in docs/design.md).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "entrycount.h"
#include "eviction.h"
#include "lib/dshash.h"
#include "qtext.h"
#include "rare.h"
#include "scan.h"
#include "store.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "varatt.h"

/* The view's percentiles, in parts per 10,000 of the executions */
static const uint32 view_fractions[PGSQ_VIEW_PERCENTILES] = {5000, 9500, 9900};

/*
 * Copy what the view shows of an entry's data; the percentiles, if wanted,
 * are read from its histogram in place, under the entry lock the caller
 * holds.
 */
static void
copy_entry_data(PgsqEntryCopy *copy, const PgsqEntryData *data,
				bool percentiles)
{
	const PgsqMainCounters *c = &data->counters;

	copy->key = data->key;
	copy->stats_since = data->stats_since;
	copy->minmax_stats_since = data->minmax_stats_since;
	copy->plan = c->plan;
	copy->exec = c->exec;
	copy->rows = c->rows;
	copy->shared_blks_hit = c->shared_blks_hit;
	copy->last_executed = c->last_executed;
	if (percentiles && data->minmax_valid[PGSQ_EXEC])
		pgsq_hist_percentiles(&c->exec_hist, view_fractions,
							  PGSQ_VIEW_PERCENTILES, c->exec.min_time,
							  c->exec.max_time, copy->percentiles);
	else
	{
		for (int k = 0; k < PGSQ_VIEW_PERCENTILES; k++)
			copy->percentiles[k] = get_float8_nan();
	}
}

/*
 * The buffers of a read (PgsqReadSet) are kept from one read to the next in
 * this backend (in TopMemoryContext) while they are small enough: the pages
 * of memory a read touches for the first time, faulted in by the kernel,
 * were a fifth of a read of 5,000 statements.  Each buffer above
 * PGSQ_READ_BUFFERS_KEPT is freed after the read.  A read that starts while
 * another one of this backend still holds them (two scans of the view in
 * one query) gets buffers of its own, freed when it is done.
 */
#define PGSQ_READ_BUFFERS_KEPT (4 * 1024 * 1024)

static PgsqReadSet kept_set;
static bool kept_set_busy = false;

/* Make a read buffer hold at least "need" items of "item" bytes */
static void *
fit_read_buffer(void *buf, Size item, Size *size, Size need, bool keep)
{
	Size		want;

	if (*size >= need)
		return buf;
	want = Max(need, Max(*size * 2, 64));
	want = Min(want, MaxAllocHugeSize / item);
	if (want < need)
		elog(ERROR, "too many statements to read at once");
	if (buf == NULL)
		buf = MemoryContextAllocHuge(TopMemoryContext, want * item);
	else if (keep)
		buf = repalloc_huge(buf, want * item);
	else
	{
		pfree(buf);
		buf = MemoryContextAllocHuge(TopMemoryContext, want * item);
	}
	*size = want;
	return buf;
}

/* Free a read buffer if it is larger than "limit" bytes */
static void
free_read_buffer(void **buf, Size item, Size *size, Size limit)
{
	if (*buf != NULL && *size * item > limit)
	{
		pfree(*buf);
		*buf = NULL;
		*size = 0;
	}
}

/* Buffers for a new read: the kept ones if free, else new ones */
static PgsqReadSet *
start_read_set(void)
{
	PgsqReadSet *set;

	if (!kept_set_busy)
	{
		kept_set_busy = true;
		set = &kept_set;
	}
	else
		set = MemoryContextAllocZero(TopMemoryContext, sizeof(PgsqReadSet));
	set->n = 0;
	return set;
}

/*
 * Done with a read: the kept buffers are freed if too large and made free
 * for the next read, others are freed.
 */
void
pgsq_read_done(PgsqReadSet *set)
{
	Size		limit = (set == &kept_set) ? PGSQ_READ_BUFFERS_KEPT : 0;

	free_read_buffer((void **) &set->copies, sizeof(PgsqEntryCopy),
					 &set->copies_size, limit);
	free_read_buffer((void **) &set->rares, sizeof(PgsqRareCounters),
					 &set->rares_size, limit);
	free_read_buffer((void **) &set->texts, 1, &set->texts_size, limit);
	set->n = 0;
	if (set == &kept_set)
		kept_set_busy = false;
	else
		pfree(set);
}

/*
 * Copy every initialized entry changed at or after since (all of them for
 * 0), as what the view shows of it, with its rare counters, into a read
 * set; the caller passes it to pgsq_read_done when done with the copies.
 * With texts, the copy has the text of each entry of text_user (every
 * user's for InvalidOid) that was stored at or after since, or whose entry
 * is that new (a reader of changes that came before cannot have had it).
 * The percentiles are computed only if asked for (the drop-in's rows have
 * none).  Partition locks are taken shared, one at a time, and each entry's
 * lock shared while it is checked and copied; nothing else is done under
 * them: rows are made from the copies afterwards, so writers never wait
 * for them.
 */
PgsqReadSet *
pgsq_read_entries(TimestampTz since, bool texts, Oid text_user,
				  bool percentiles)
{
	static const PgsqRareCounters no_rare;
	PgsqReadSet *set = start_read_set();
	dshash_seq_status hstat;
	PgsqSharedEntry *entry;
	int			n = 0;
	int			nrare = 0;
	Size		text_used = 0;
	uint64		count = pgsq_entry_count();

	PG_TRY();
	{
		/* room for every entry at once when their number is known */
		if (pgsq_entry_count_known(count) && since == 0)
			set->copies = fit_read_buffer(set->copies, sizeof(PgsqEntryCopy),
										  &set->copies_size,
										  Min(count + count / 16 + 16, (uint64) INT_MAX / 2),
										  false);

		dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
		while ((entry = pgsq_scan_next_entry(&hstat)) != NULL)
		{
			PgsqEntryCopy *copy;
			const char *bytes = NULL;

			if ((Size) n == set->copies_size)
				set->copies = fit_read_buffer(set->copies, sizeof(PgsqEntryCopy),
											  &set->copies_size, n + 1, true);
			copy = &set->copies[n];
			LWLockAcquire(&entry->header.lock, LW_SHARED);
			if (entry->data.stats_since == 0 || entry->data.changed_at < since)
			{
				LWLockRelease(&entry->header.lock);
				continue;
			}
			copy_entry_data(copy, &entry->data, percentiles);

			/*
			 * Most entries have no rare counters: they share zeros, and only
			 * the others are copied (where, is set after the scan: the buffer
			 * may move as it grows).
			 */
			copy->rare = NULL;
			copy->rare_at = -1;
			if (DsaPointerIsValid(entry->rare))
			{
				if ((Size) nrare == set->rares_size)
					set->rares = fit_read_buffer(set->rares,
												 sizeof(PgsqRareCounters),
												 &set->rares_size, nrare + 1,
												 true);
				pgsq_rare_copy(entry, &set->rares[nrare]);
				copy->rare_at = nrare++;
			}

			/*
			 * When the text was stored matters to a read of changes only; for
			 * a full read (since 0) every text is wanted and stored_at is not
			 * shown, so the text's chunk is not read for it.
			 */
			copy->query = NULL;
			copy->query_text = NULL;
			copy->text_at = -1;
			copy->text_stored_at = since != 0 ? pgsq_text_stored_at(entry) : 0;
			if (texts && (text_user == InvalidOid ||
						  text_user == entry->data.key.userid) &&
				(since == 0 || copy->text_stored_at >= since ||
				 entry->data.stats_since >= since))
				bytes = pgsq_text_peek(entry, &copy->text_len, &copy->encoding,
									   &copy->text_stored_at);
			if (bytes != NULL)
			{
				/*
				 * Each text is kept as a text datum (aligned, with its length
				 * word) and a terminating NUL, so that rows can point at it
				 */
				Size		at = INTALIGN(text_used);
				char	   *dest;

				set->texts = fit_read_buffer(set->texts, 1, &set->texts_size,
											 at + VARHDRSZ + copy->text_len + 1,
											 true);
				dest = set->texts + at;
				SET_VARSIZE(dest, VARHDRSZ + copy->text_len);
				memcpy(dest + VARHDRSZ, bytes, copy->text_len);
				dest[VARHDRSZ + copy->text_len] = '\0';
				copy->text_at = (int64) at;
				text_used = at + VARHDRSZ + copy->text_len + 1;
			}
			LWLockRelease(&entry->header.lock);
			n++;
		}
		dshash_seq_term(&hstat);
	}
	PG_CATCH();
	{
		pgsq_read_done(set);
		PG_RE_THROW();
	}
	PG_END_TRY();

	for (int i = 0; i < n; i++)
	{
		PgsqEntryCopy *copy = &set->copies[i];

		copy->rare = copy->rare_at >= 0 ? &set->rares[copy->rare_at] : &no_rare;
		if (copy->text_at >= 0)
		{
			copy->query_text = (text *) (set->texts + copy->text_at);
			copy->query = VARDATA(copy->query_text);
		}
	}
	set->n = n;
	return set;
}

/*
 * Copy one statement's entry data into *data; false if it has no
 * initialized entry.
 */
bool
pgsq_fetch_entry(const PgsqKey *key, PgsqEntryData *data)
{
	PgStatShared_HashEntry *hent;
	PgsqSharedEntry *entry = pgsq_lock_statement_entry(key, LW_SHARED, &hent);

	if (entry == NULL)
		return false;
	*data = entry->data;
	pgsq_unlock_statement_entry(entry, hent);
	return true;
}

/* A palloc'd copy of the text stored for a statement, or NULL */
char *
pgsq_fetch_text(const PgsqKey *key, int *len)
{
	PgStatShared_HashEntry *hent;
	PgsqSharedEntry *entry = pgsq_lock_statement_entry(key, LW_SHARED, &hent);
	char	   *text;
	int			encoding;
	TimestampTz stored_at;

	if (entry == NULL)
		return NULL;
	text = pgsq_text_copy(entry, len, &encoding, &stored_at);

	pgsq_unlock_statement_entry(entry, hent);
	return text;
}

/* Does an entry's key pass a reset filter? */
static bool
filter_matches(const PgsqResetFilter *filter, const PgsqEntryData *data)
{
	if (data->stats_since == 0)
	{
		/* not yet merged into, so its key is unknown: only a full reset */
		return filter->userid == InvalidOid && filter->dbid == InvalidOid &&
			filter->queryid == 0;
	}
	return (filter->userid == InvalidOid || filter->userid == data->key.userid) &&
		(filter->dbid == InvalidOid || filter->dbid == data->key.dbid) &&
		(filter->queryid == 0 || filter->queryid == data->key.queryid);
}

/* State passed to drop_matching through pgstat_drop_matching_entries */
typedef struct DropMatching
{
	const PgsqResetFilter *filter;
	int64		count;			/* entries dropped */
} DropMatching;

/*
 * pgstat_drop_matching_entries callback: pick our entries to drop, and
 * free their texts (our text area's locks are taken last of all).
 */
static bool
drop_matching(PgStatShared_HashEntry *hent, Datum arg)
{
	DropMatching *state = (DropMatching *) DatumGetPointer(arg);
	PgsqSharedEntry *entry = pgsq_shared_entry_of(hent);
	bool		drop;
	dsa_pointer text = InvalidDsaPointer;

	if (entry == NULL)
		return false;
	LWLockAcquire(&entry->header.lock, LW_EXCLUSIVE);

	/*
	 * An entry closed already is the sweep's, which drops it: dropped here
	 * too, its key could get a new entry that the sweep's drop would then
	 * take without closing it (whoever closes an entry drops it).
	 */
	drop = !pgsq_text_closed(entry) &&
		filter_matches(state->filter, &entry->data);
	if (drop)
		text = pgsq_close_entry(entry);

	LWLockRelease(&entry->header.lock);
	if (!drop)
		return false;
	pgsq_text_discard(text);
	pgsq_live_entries_dropped(1);
	state->count++;
	return true;
}

/*
 * Reset entries that match the filter: drop them, or with minmax_only
 * clear their min/max times.  Executing queries never wait for the whole
 * reset: partitions are processed one at a time, and a backend whose
 * entry disappears simply creates a new one.
 */
TimestampTz
pgsq_reset_entries(const PgsqResetFilter *filter, bool minmax_only)
{
	TimestampTz now = GetCurrentTimestamp();
	bool		full = filter->userid == InvalidOid &&
		filter->dbid == InvalidOid && filter->queryid == 0;

	if (minmax_only)
	{
		dshash_seq_status hstat;
		PgsqSharedEntry *entry;

		dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
		while ((entry = pgsq_scan_next_entry(&hstat)) != NULL)
		{
			LWLockAcquire(&entry->header.lock, LW_EXCLUSIVE);
			if (entry->data.stats_since != 0 &&
				filter_matches(filter, &entry->data))
			{
				for (int phase = 0; phase < PGSQ_NUM_PHASES; phase++)
				{
					PgsqTiming *t = PGSQ_TIMING(&entry->data.counters, phase);

					t->min_time = 0;
					t->max_time = 0;
					entry->data.minmax_valid[phase] = false;
				}
				memset(&entry->data.counters.exec_hist, 0,
					   sizeof(entry->data.counters.exec_hist));
				entry->data.minmax_stats_since = now;
				entry->data.changed_at = GetCurrentTimestamp();
			}
			LWLockRelease(&entry->header.lock);
		}
		dshash_seq_term(&hstat);
		return now;
	}
	else
	{
		DropMatching state = {filter, 0};

		/* counts kept aside before this reset must not outlive it */
		pg_atomic_add_fetch_u64(&pgsq_state->reset_count, 1);
		if (full)
			pgsq_sweep_after_full_reset();
		pgsq_local_drops++;
		pgstat_drop_matching_entries(drop_matching, PointerGetDatum(&state));
		pgstat_request_entry_refs_gc();
		pgsq_entries_removed(state.count);
		pg_atomic_add_fetch_u64(&pgsq_state->resets_done, 1);

		if (full)
		{
			LWLockAcquire(pgsq_state->lock, LW_EXCLUSIVE);
			pgsq_state->stats_reset = now;
			LWLockRelease(pgsq_state->lock);
			pg_atomic_write_u64(&pgsq_state->dealloc, 0);
			pg_atomic_write_u64(&pgsq_state->evicted_entries, 0);
			pg_atomic_write_u64(&pgsq_state->texts_missing, 0);
			pg_atomic_add_fetch_u64(&pgsq_state->full_resets, 1);
			pg_atomic_write_u64(&pgsq_state->refused, 0);
			pg_atomic_write_u64(&pgsq_state->last_eviction_time, 0);
		}
	}
	return now;
}
