/*-------------------------------------------------------------------------
 *
 * inflight.c
 *		What parse analysis saw of the statements in flight, kept until
 *		they end.
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
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "inflight.h"
#include "normalize.h"

#include "utils/memutils.h"

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
 * constant locations refer to.
 */
void
pgsq_inflight_remember(int level, int64 queryid, const char *stmt,
					   int location, int stmt_len, const JumbleState *jstate)
{
	InflightSlot *slot;
	int			nlocs = jstate->clocations_count;

	if (level < 0 || level >= PGSQ_INFLIGHT_LEVELS)
		return;
	slot = &slots[level][next_slot[level]];
	next_slot[level] = (next_slot[level] + 1) % PGSQ_INFLIGHT_PER_LEVEL;
	slot->valid = false;
	if (stmt_len > MaxAllocSize / 2)
		return;

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
}

/*
 * The normalized text (palloc'd, *out_len bytes) of a statement ending at
 * this nesting level, normalized with the constant locations parse analysis
 * left for the very same text.  *found tells whether it left them; if it
 * did, NULL means the text cannot be made literal-free (normalize.c).
 */
char *
pgsq_inflight_normalized(int level, int64 queryid, const char *stmt,
						 int location, int stmt_len, int *out_len,
						 bool *found)
{
	InflightSlot *slot;
	JumbleState jstate;

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
	memset(&jstate, 0, sizeof(jstate));
	jstate.clocations = slot->clocations;
	jstate.clocations_buf_size = slot->clocations_count;
	jstate.clocations_count = slot->clocations_count;
	jstate.highest_extern_param_id = slot->highest_extern_param_id;
	jstate.has_squashed_lists = slot->has_squashed_lists;
	return pgsq_normalize(&jstate, stmt, location, stmt_len, out_len, NULL);
}
