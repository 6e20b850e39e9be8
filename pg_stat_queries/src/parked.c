/*-------------------------------------------------------------------------
 *
 * parked.c
 *		Counts kept aside while this backend's reference to their entry is
 *		stale.
 *
 * When eviction drops an entry this backend still references, the
 * reference stays until the statistics system collects it; counts of that
 * statement meanwhile cannot go to the old entry, nor to a new one through
 * it.  They are parked here, with the text for the entry they will go to,
 * and set into their entries (found or created) once the references were
 * collected: after a while, before a read of the view, and at exit.  Counts
 * parked before a reset that dropped entries go with it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "counters.h"
#include "parked.h"
#include "qtext.h"
#include "refs.h"
#include "store.h"

#include "access/xact.h"
#include "storage/ipc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/*
 * Counts of a statement whose entry reference is stale, kept aside, with
 * the text for the entry they will go to (qtext.c; it counts in
 * query_text_bytes meanwhile).
 */
typedef struct ParkedCounters
{
	PgsqKey		key;			/* hash key */
	PgsqCounters counters;
	uint64		reset_count;	/* pgsq_state->reset_count when parked */
	dsa_pointer text;			/* InvalidDsaPointer if none (yet) */
	bool		text_tried;		/* made from a source, or tried to */
} ParkedCounters;

static HTAB *parked = NULL;
static TimestampTz first_parked = 0;

/* Something is parked: read on every statement's end (parked.h) */
bool		pgsq_any_parked = false;

static void unpark_at_exit(int code, Datum arg);

/*
 * Before the first counts are parked: parked counts are set into their
 * entries at exit at the latest, with their texts, so this backend stays
 * attached to the text area until then.
 */
void
pgsq_park_ready(void)
{
	static bool exit_callback_registered = false;

	if (exit_callback_registered)
		return;
	/* texts are given at exit: detach from their area after */
	pgsq_qtext_attach();
	before_shmem_exit(unpark_at_exit, (Datum) 0);
	exit_callback_registered = true;
}

/*
 * The parked counters of a statement, created empty if it has none, with
 * its text made from src if given and not tried before.
 */
PgsqCounters *
pgsq_park(const PgsqKey *key, const PgsqTextSource *src)
{
	ParkedCounters *p;
	bool		found;

	if (parked == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(PgsqKey);
		ctl.entrysize = sizeof(ParkedCounters);
		ctl.hcxt = TopMemoryContext;
		parked = hash_create("pg_stat_queries parked counters", 64, &ctl,
							 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	if (hash_get_num_entries(parked) == 0)
		first_parked = GetCurrentStatementStartTimestamp();
	p = hash_search(parked, key, HASH_ENTER, &found);
	pgsq_any_parked = true;
	if (!found)
	{
		p->text = InvalidDsaPointer;
		p->text_tried = false;
	}
	/* counts parked before a reset that dropped entries go with it */
	if (!found || p->reset_count != pg_atomic_read_u64(&pgsq_state->reset_count))
	{
		pgsq_counters_clear(&p->counters);
		p->reset_count = pg_atomic_read_u64(&pgsq_state->reset_count);
	}
	if (!p->text_tried && src != NULL)
	{
		p->text = pgsq_statement_text(key, src);
		p->text_tried = true;
	}
	return &p->counters;
}

/*
 * Set every parked count into its statement's entry: have stale references
 * collected, then find or create the entries.  Counts parked before a reset
 * that dropped entries are discarded, like pending data.  Their text goes
 * to the entry unless it has one; otherwise it is freed.
 */
void
pgsq_unpark_all(void)
{
	HASH_SEQ_STATUS seq;
	ParkedCounters *p;
	uint64		reset_count = pg_atomic_read_u64(&pgsq_state->reset_count);

	if (parked == NULL || hash_get_num_entries(parked) == 0)
		return;
	pgstat_request_entry_refs_gc();
	hash_seq_init(&seq, parked);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		PgsqSharedEntry *entry = NULL;

		if (p->reset_count == reset_count)
			entry = pgsq_referenced_entry(&p->key, pgsq_objid(&p->key), NULL);
		if (entry != NULL)
		{
			(void) pgsq_merge_into_entry(entry, &p->key, &p->counters, 0, false);
			(void) pgsq_text_give(entry, &p->key, p->text);
		}
		else
			pgsq_text_discard(p->text);
		(void) hash_search(parked, &p->key, HASH_REMOVE, NULL);
	}
	pgsq_any_parked = false;
}

/* At backend exit, before the statistics system detaches: keep parked counts */
static void
unpark_at_exit(int code, Datum arg)
{
	(void) code;
	(void) arg;
	if (pgsq_store_ready())
		pgsq_unpark_all();
}

/*
 * Set parked counts into their entries once they have waited long enough
 * for the references to be collected (pgsq_unpark_waited checks that
 * something is parked first)
 */
void
pgsq_unpark_if_waited(void)
{
	if (parked != NULL && hash_get_num_entries(parked) > 0 &&
		TimestampDifferenceExceeds(first_parked,
								   GetCurrentStatementStartTimestamp(),
								   PGSQ_GC_REQUEST_INTERVAL_MS))
		pgsq_unpark_all();
}
