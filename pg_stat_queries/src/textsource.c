/*-------------------------------------------------------------------------
 *
 * textsource.c
 *		The text stored for a statement.
 *
 * Literal values never reach a stored text: every text is made by
 * pgsq_normalize (normalize.c), which replaces each constant parse analysis
 * located, and each literal it did not, by a placeholder.  At parse
 * analysis the locations are at hand.  When a statement ends, they are
 * what parse analysis left for it (inflight.c); failing that, the text
 * stored for the same statement at the other nesting level is taken, already
 * normalized, and failing both the statement's literals are replaced
 * without locations (a negative number then shows as -$1, a boolean as
 * written).  A text that cannot be scanned is not stored at all, and
 * texts_missing counts it.  Texts read back from a saved file pass the
 * same rule unless the file says they did already (pgsq_saved_text).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "inflight.h"
#include "mb/pg_wchar.h"
#include "normalize.h"
#include "qtext.h"
#include "scan.h"
#include "textsource.h"

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
 * A chunk (qtext.c) holding the text to store for a statement, or
 * InvalidDsaPointer if it cannot be stored: it cannot be made literal-free,
 * or there is no room.  The caller gives it to the statement's entry, or
 * discards it.
 */
dsa_pointer
pgsq_statement_text(const PgsqKey *key, const PgsqTextSource *src)
{
	int			location = src->location;
	int			len = src->len;
	const char *stmt = src->located ? src->source :
		CleanQuerytext(src->source, &location, &len);
	int			text_len = len;
	char	   *norm;

	if (src->jstate != NULL)
		norm = pgsq_normalize(src->jstate, stmt, location, len, &text_len,
							  NULL);
	else
	{
		bool		found;
		int			unlocated;

		norm = pgsq_inflight_normalized(src->level, key->queryid, stmt,
										location, len, &text_len, &found);
		if (!found)
		{
			norm = pgsq_normalize(NULL, stmt, location, len, &text_len,
								  &unlocated);
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
 * A chunk holding a text read back from a saved file (restore.c, legacy.c),
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
	norm = pgsq_normalize(NULL, text, 0, len, &norm_len, NULL);
	return prepare_normalized(norm, norm_len, encoding);
}
