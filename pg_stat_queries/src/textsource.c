/*-------------------------------------------------------------------------
 *
 * textsource.c
 *		The text stored for a statement.
 *
 * Literal values never reach a stored text.  At parse analysis a statement
 * with constants is normalized from their locations.  When a statement
 * ends, it is normalized from what parse analysis left for it
 * (inflight.c), else taken from the same statement at the other nesting
 * level, already normalized; failing both, it is stored only if it
 * contains no literal.
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
 * A chunk (qtext.c) holding the text to store for a statement, or
 * InvalidDsaPointer if it cannot be stored: it has literals and no
 * locations, or there is no room.  The caller gives it to the statement's
 * entry, or discards it.
 */
dsa_pointer
pgsq_statement_text(const PgsqKey *key, const PgsqTextSource *src)
{
	int			location = src->location;
	int			len = src->len;
	const char *stmt = src->located ? src->source :
		CleanQuerytext(src->source, &location, &len);
	int			text_len = len;
	char	   *norm = NULL;
	dsa_pointer text;

	if (src->jstate != NULL)
	{
		if (src->jstate->clocations_count > 0)
			norm = pgsq_normalize(src->jstate, stmt, location, len, &text_len);
	}
	else
	{
		bool		verbatim;

		norm = pgsq_inflight_normalized(src->level, key->queryid, stmt,
										location, len, &text_len, &verbatim);
		if (norm == NULL && !verbatim && pgsq_text_has_literals(stmt, len))
		{
			/*
			 * A statement run at a level it was not parsed at (a prepared
			 * statement run by EXPLAIN EXECUTE, a cached foreign-key check
			 * run at COMMIT) has the text stored at the other level.
			 */
			PgsqKey		sibling = *key;

			sibling.toplevel = !key->toplevel;
			norm = pgsq_fetch_text(&sibling, &text_len);
			if (norm == NULL)
				return InvalidDsaPointer;
		}
	}
	if (norm == NULL)
		return pgsq_text_prepare(stmt, len, GetDatabaseEncoding());
	text = pgsq_text_prepare(norm, text_len, GetDatabaseEncoding());

	pfree(norm);
	return text;
}
