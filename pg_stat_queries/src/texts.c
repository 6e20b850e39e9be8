/*-------------------------------------------------------------------------
 *
 * texts.c
 *		Statement texts: which text a statement stores, and where it comes
 *		from.
 *
 * Every stored text passes normalize.c's rule; the constant locations
 * parse analysis saw are kept for the statements in flight, so that a
 * statement ending later is normalized from them.  The chunks themselves
 * live in the text area (textarea.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/memutils.h"

#include "pg_stat_queries.h"


/*-------------------------------------------------------------------------
 * The text stored for a statement.
 *
 * Literal values never reach a stored text: every text is made by
 * pgsq_normalize (normalize.c), which replaces each constant parse analysis
 * located, and each literal it did not, by a placeholder.  At parse
 * analysis the locations are at hand.  When a statement ends, they are
 * what parse analysis left for it (below); failing that, the text
 * stored for the same statement at the other nesting level is taken, already
 * normalized, and failing both the statement's literals are replaced
 * without locations (a negative number then shows as -$1, a boolean as
 * written).  A text that cannot be scanned is not stored at all, and
 * texts_missing counts it.  Texts read back from a saved file pass the
 * same rule unless the file says they did already (pgsq_saved_text).
 *-------------------------------------------------------------------------
 */

/*
 * A chunk holding the normalized text norm (len bytes, freed here), or
 * InvalidDsaPointer if there is none (it could not be made literal-free,
 * counted in texts_missing) or no room for it.
 */
static dsa_pointer
prepare_normalized(char *norm, int len, int encoding)
{
	dsa_pointer chunk;

	if (norm == NULL)
	{
		pg_atomic_add_fetch_u64(&pgsq_state->texts_missing, 1);
		return InvalidDsaPointer;
	}
	chunk = pgsq_text_prepare(norm, len, encoding);
	pfree(norm);
	return chunk;
}

/*
 * A chunk (textarea.c) holding the text to store for a statement, or
 * InvalidDsaPointer if it cannot be stored: it cannot be made literal-free,
 * or there is no room.  The caller gives it to the statement's entry, or
 * discards it.
 */
dsa_pointer
pgsq_statement_text(const PgsqKey *key, const PgsqTextSource *src)
{
	int			location = src->location;
	int			len = src->len;
	const char *stmt;
	int			text_len;
	char	   *norm;

	/* a plan's entry: the plan's text, literal-free too (plans.c) */
	if (src->plan != NULL)
	{
		norm = pgsq_plan_text(src->plan, &text_len);
		return prepare_normalized(norm, text_len, GetDatabaseEncoding());
	}

	/* a statement whose entry is made before it runs: what parse kept */
	if (src->parsed)
	{
		bool		found;

		norm = pgsq_inflight_latest_normalized(src->level, key->queryid,
											   src->scs, &text_len, &found);
		return prepare_normalized(norm, text_len, GetDatabaseEncoding());
	}

	stmt = src->located ? src->source :
		CleanQuerytext(src->source, &location, &len);
	text_len = len;
	if (src->jstate != NULL)
		norm = pgsq_normalize(src->jstate, stmt, location, len, src->scs,
							  &text_len, NULL);
	else
	{
		bool		found;
		int			unlocated;

		norm = pgsq_inflight_normalized(src->level, key->queryid, stmt,
										location, len, src->scs, &text_len,
										&found);
		if (!found)
		{
			norm = pgsq_normalize(NULL, stmt, location, len, src->scs,
								  &text_len, &unlocated);
			if (unlocated > 0)
			{
				/*
				 * A statement run at a level it was not parsed at (a prepared
				 * statement run by EXPLAIN EXECUTE, a cached foreign-key
				 * check run at COMMIT) may have its text stored at the other
				 * level, normalized as pg_stat_statements would.
				 */
				PgsqKey		sibling = *key;
				int			sibling_len;
				char	   *sibling_text;

				sibling.toplevel = !key->toplevel;
				sibling_text = pgsq_fetch_text(&sibling, &sibling_len);
				if (sibling_text != NULL)
				{
					if (norm != NULL)
						pfree(norm);
					norm = sibling_text;
					text_len = sibling_len;
				}
			}
		}
	}
	return prepare_normalized(norm, text_len, GetDatabaseEncoding());
}

/*
 * A chunk holding a text read back from a saved file (restore.c, restore.c),
 * or InvalidDsaPointer.  Files written before texts were made literal-free
 * whatever the statement (format 6 and older, version 1.1's) may hold a
 * utility statement's values as typed: their texts are normalized now,
 * without locations, and one that cannot be is dropped and counted in
 * texts_missing.
 */
dsa_pointer
pgsq_saved_text(const char *text, int len, int encoding, bool literal_free)
{
	char	   *norm;
	int			norm_len;

	if (literal_free)
		return pgsq_text_prepare(text, len, encoding);
	norm = pgsq_normalize(NULL, text, 0, len, PGSQ_SCS_UNKNOWN, &norm_len,
						  NULL);
	return prepare_normalized(norm, norm_len, encoding);
}

/* A palloc'd copy of the text stored for a statement, or NULL */
char *
pgsq_fetch_text(const PgsqKey *key, int *len)
{
	PgsqSharedEntry *entry = pgsq_lock_statement_entry(key, LW_SHARED);
	char	   *text;
	int			encoding;
	TimestampTz stored_at;

	if (entry == NULL)
		return NULL;
	text = pgsq_text_copy(entry, len, &encoding, &stored_at);

	pgsq_unlock_statement_entry(entry);
	return text;
}


/*-------------------------------------------------------------------------
 * What parse analysis saw of the statements in flight, kept until
 * they end.
 *
 * A statement's text is normalized from the constant locations that only
 * parse analysis has.  A statement with constants that has no entry gets
 * one there, with its text, but every other statement has its text seen to
 * when it ends: one that has an entry (its text is checked once per batch
 * of counts), one that ends under another key than it was parsed under
 * (SET ROLE and SET SESSION AUTHORIZATION end as another user), one that
 * finds its entry gone when it ends, having reset that entry itself.  Its
 * text would then have to be stored from the executor's source text alone,
 * and a text with literals cannot be: they would reach shared memory.
 *
 * So parse analysis leaves here, per nesting level, the text and constant
 * locations of the latest statements parsed, and a statement that ends at
 * that level with the same query id and the same text as one of them is
 * normalized from them.  The text is compared whole: a different statement
 * that merely shares the query id and the level must not be cut at the
 * wrong places.
 *-------------------------------------------------------------------------
 */

/* Nesting levels that keep slots; deeper statements go without */
#define PGSQ_INFLIGHT_LEVELS 8

/*
 * Statements kept per level: the latest ones parsed there.  More than one,
 * because a statement may end after others were parsed at its level: a
 * cursor's query ends when the cursor is closed, and a client pipelining
 * the extended protocol parses several statements before executing them.
 */
#define PGSQ_INFLIGHT_PER_LEVEL 4

/* A slot's buffers above this size are given back for smaller statements */
#define PGSQ_INFLIGHT_KEEP_BYTES (64 * 1024)

/* What parse analysis saw of the latest statement parsed at one level */
typedef struct InflightSlot
{
	bool		valid;
	int64		queryid;
	int			location;		/* offset of the statement in its source */
	int			len;
	char	   *text;			/* the statement, len bytes */
	int			text_size;		/* allocated */
	LocationLen *clocations;
	int			clocations_count;
	int			clocations_size;	/* allocated */
	int			highest_extern_param_id;
	bool		has_squashed_lists;
} InflightSlot;

static InflightSlot slots[PGSQ_INFLIGHT_LEVELS][PGSQ_INFLIGHT_PER_LEVEL];
static int	next_slot[PGSQ_INFLIGHT_LEVELS];	/* the oldest, taken next */

/* Make a slot buffer hold at least "need" bytes, shrinking a huge one */
static void *
fit_buffer(void *buf, int *size, int need)
{
	if (buf != NULL && (need > *size ||
						(*size > PGSQ_INFLIGHT_KEEP_BYTES &&
						 need <= PGSQ_INFLIGHT_KEEP_BYTES)))
	{
		pfree(buf);
		buf = NULL;
	}
	if (buf == NULL)
	{
		*size = Max(need, 256);
		buf = MemoryContextAlloc(TopMemoryContext, *size);
	}
	return buf;
}

/*
 * Remember a statement just parsed at this nesting level: stmt is its text
 * (stmt_len bytes) at offset location of the source string that jstate's
 * constant locations refer to.  False if it is not kept (too deep, too
 * long).
 */
bool
pgsq_inflight_remember(int level, int64 queryid, const char *stmt,
					   int location, int stmt_len, const JumbleState *jstate)
{
	InflightSlot *slot;
	int			nlocs = jstate->clocations_count;

	if (level < 0 || level >= PGSQ_INFLIGHT_LEVELS)
		return false;
	slot = &slots[level][next_slot[level]];
	next_slot[level] = (next_slot[level] + 1) % PGSQ_INFLIGHT_PER_LEVEL;
	slot->valid = false;
	if (stmt_len > MaxAllocSize / 2)
		return false;

	slot->text = fit_buffer(slot->text, &slot->text_size, stmt_len);
	memcpy(slot->text, stmt, stmt_len);
	if (nlocs > 0)
	{
		slot->clocations = fit_buffer(slot->clocations, &slot->clocations_size,
									  nlocs * sizeof(LocationLen));
		memcpy(slot->clocations, jstate->clocations,
			   nlocs * sizeof(LocationLen));
	}
	slot->clocations_count = nlocs;
	slot->highest_extern_param_id = jstate->highest_extern_param_id;
	slot->has_squashed_lists = jstate->has_squashed_lists;
	slot->queryid = queryid;
	slot->location = location;
	slot->len = stmt_len;
	slot->valid = true;
	return true;
}

/* The normalized text of what a slot kept, as pgsq_normalize makes it */
static char *
normalize_slot(const InflightSlot *slot, const char *stmt, int location,
			   int stmt_len, PgsqScs scs, int *out_len)
{
	JumbleState jstate;

	memset(&jstate, 0, sizeof(jstate));
	jstate.clocations = slot->clocations;
	jstate.clocations_buf_size = slot->clocations_count;
	jstate.clocations_count = slot->clocations_count;
	jstate.highest_extern_param_id = slot->highest_extern_param_id;
	jstate.has_squashed_lists = slot->has_squashed_lists;
	return pgsq_normalize(&jstate, stmt, location, stmt_len, scs, out_len,
						  NULL);
}

/*
 * The normalized text (palloc'd, *out_len bytes) of a statement ending at
 * this nesting level, lexed with scs, normalized with the constant
 * locations parse analysis left for the very same text.  *found tells
 * whether it left them; if it did, NULL means the text cannot be made
 * literal-free (normalize.c).
 */
char *
pgsq_inflight_normalized(int level, int64 queryid, const char *stmt,
						 int location, int stmt_len, PgsqScs scs,
						 int *out_len, bool *found)
{
	InflightSlot *slot;

	*found = false;
	if (level < 0 || level >= PGSQ_INFLIGHT_LEVELS)
		return NULL;

	/* the latest first: usually the statement ending was parsed last */
	for (int i = 1;; i++)
	{
		if (i > PGSQ_INFLIGHT_PER_LEVEL)
			return NULL;
		slot = &slots[level][(next_slot[level] + PGSQ_INFLIGHT_PER_LEVEL - i) %
							 PGSQ_INFLIGHT_PER_LEVEL];
		if (slot->valid && slot->queryid == queryid &&
			slot->location == location && slot->len == stmt_len &&
			memcmp(slot->text, stmt, stmt_len) == 0)
			break;
	}

	*found = true;
	return normalize_slot(slot, stmt, location, stmt_len, scs, out_len);
}

/*
 * As pgsq_inflight_normalized, for the statement parsed last at this level
 * under this query id, whose own text is no longer at hand: an entry made
 * for it after its parse analysis, before it ran (merge.c).
 */
char *
pgsq_inflight_latest_normalized(int level, int64 queryid, PgsqScs scs,
								int *out_len, bool *found)
{
	const InflightSlot *slot;

	*found = false;
	if (level < 0 || level >= PGSQ_INFLIGHT_LEVELS)
		return NULL;
	for (int i = 1; i <= PGSQ_INFLIGHT_PER_LEVEL; i++)
	{
		slot = &slots[level][(next_slot[level] + PGSQ_INFLIGHT_PER_LEVEL - i) %
							 PGSQ_INFLIGHT_PER_LEVEL];
		if (slot->valid && slot->queryid == queryid)
		{
			*found = true;
			return normalize_slot(slot, slot->text, slot->location, slot->len,
								  scs, out_len);
		}
	}
	return NULL;
}
