/*-------------------------------------------------------------------------
 *
 * normalize.c
 *		Query normalization: constants replaced by $n placeholders.
 *
 * The parser records where each constant starts (JumbleState) but not its
 * length, so we run the core scanner over the statement to find where each
 * constant token ends.  The output is a StringInfo that grows as needed, so
 * no estimate of the placeholders' width can overrun it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "compat.h"
#include "normalize.h"

#include "common/int.h"
#include "lib/stringinfo.h"
#include "parser/scanner.h"
#include "utils/memutils.h"

/* qsort comparator: constant locations in text order */
static int
compare_location(const void *a, const void *b)
{
	return pg_cmp_s32(((const LocationLen *) a)->location,
					  ((const LocationLen *) b)->location);
}

/* Start the core scanner as the raw parser would */
static core_yyscan_t
start_scanner(const char *query, core_yy_extra_type *extra)
{
	core_yyscan_t scanner;

	scanner = scanner_init(query, extra, &ScanKeywords, ScanKeywordTokens);
#ifdef PGSQ_SCANNER_WARNS_ESCAPES
	extra->escape_string_warning = false;
#endif
	return scanner;
}

/*
 * Fill in the byte length of each constant, in a sorted copy of the
 * locations.  Locations are relative to the whole source string; query
 * starts at query_loc.  A repeated location gets length -1 (ignored).
 * A negative number's location is its '-' sign, and we take both tokens.
 */
static LocationLen *
constant_lengths(const JumbleState *jstate, const char *query, int query_loc)
{
	int			count = jstate->clocations_count;
	LocationLen *locs = palloc(count * sizeof(LocationLen));
	core_yy_extra_type extra;
	core_yyscan_t scanner;
	core_YYSTYPE yylval;
	YYLTYPE		yylloc = -1;
	int			tok = -1;

	memcpy(locs, jstate->clocations, count * sizeof(LocationLen));
	qsort(locs, count, sizeof(LocationLen), compare_location);

	scanner = start_scanner(query, &extra);
	for (int i = 0; i < count; i++)
	{
		int			loc = locs[i].location - query_loc;

		if (i > 0 && locs[i].location == locs[i - 1].location)
		{
			locs[i].length = -1;
			continue;
		}
		if (locs[i].squashed)
			continue;			/* the jumble gave the whole list's length */
		if (tok == 0 || loc < 0)
		{
			locs[i].length = -1;
			continue;
		}

		/* lex up to the constant's first token */
		while (yylloc < loc)
		{
			tok = core_yylex(&yylval, &yylloc, scanner);
			if (tok == 0)
				break;
		}
		if (tok == 0)
		{
			locs[i].length = -1;
			continue;
		}
		if (query[loc] == '-')
		{
			tok = core_yylex(&yylval, &yylloc, scanner);
			if (tok == 0)
			{
				locs[i].length = -1;
				continue;
			}
		}
		/* the scanner NUL-terminates the current token in its buffer */
		locs[i].length = (yylloc - loc) + strlen(extra.scanbuf + yylloc);
	}
	scanner_finish(scanner);
	return locs;
}

/*
 * Return the statement query[0..query_len) with its constants replaced by
 * $n, numbered after the highest parameter the statement already uses.
 * query_loc is the statement's offset in the source string that
 * jstate's locations refer to.
 */
char *
pgsq_normalize(const JumbleState *jstate, const char *query, int query_loc,
			   int query_len, int *out_len)
{
	StringInfoData buf;
	LocationLen *locs;
	int			copied = 0;		/* bytes of query already emitted */
	int			placeholder = jstate->highest_extern_param_id;
	char	   *stmt = pnstrdup(query, query_len);

	locs = constant_lengths(jstate, stmt, query_loc);
	initStringInfo(&buf);

	for (int i = 0; i < jstate->clocations_count; i++)
	{
		int			start = locs[i].location - query_loc;
		int			len = locs[i].length;

		/*
		 * Parameters ($1) are kept as written, unless lists were squashed:
		 * then everything is renumbered so the numbers have no gaps.
		 */
		if (locs[i].extern_param && !jstate->has_squashed_lists)
			continue;
		if (len < 0 || start < copied || start + len > query_len)
			continue;

		appendBinaryStringInfo(&buf, stmt + copied, start - copied);
		appendStringInfo(&buf, "$%d", ++placeholder);
		if (locs[i].squashed)
			appendStringInfoString(&buf, " /*, ... */");
		copied = start + len;
	}
	appendBinaryStringInfo(&buf, stmt + copied, query_len - copied);

	pfree(locs);
	pfree(stmt);
	*out_len = buf.len;
	return buf.data;
}

/* Does this token, starting at tok in the scanner buffer, hold a value? */
static bool
token_is_literal(const char *tok)
{
	char		c = tok[0];

	if (isdigit((unsigned char) c) || (c == '.' && isdigit((unsigned char) tok[1])))
		return true;			/* number */
	if (c == '\'')
		return true;			/* string */
	if (c == '$')
		return !isdigit((unsigned char) tok[1]);	/* dollar quote, not $n */
	if (strchr("eEbBxXnN", c) && tok[1] == '\'')
		return true;			/* E'', B'', X'', N'' */
	if ((c == 'u' || c == 'U') && tok[1] == '&' && tok[2] == '\'')
		return true;			/* U&'' */
	/* NULL holds no value worth hiding, and IS [NOT] NULL is common */
	return pg_strcasecmp(tok, "true") == 0 || pg_strcasecmp(tok, "false") == 0;
}

/*
 * Does a statement's text contain any literal value?  Used when an entry
 * has to get its text without normalization information: only a text with
 * no literal at all (for example a prepared statement using $n) is then
 * safe to store.  Any doubt, including a scanner error, counts as yes.
 */
bool
pgsq_text_has_literals(const char *query, int query_len)
{
	MemoryContext cxt = CurrentMemoryContext;
	bool		found = true;
	char	   *stmt = pnstrdup(query, query_len);

	PG_TRY();
	{
		core_yy_extra_type extra;
		core_yyscan_t scanner = start_scanner(stmt, &extra);
		core_YYSTYPE yylval;
		YYLTYPE		yylloc;

		found = false;
		while (!found && core_yylex(&yylval, &yylloc, scanner) != 0)
			found = token_is_literal(extra.scanbuf + yylloc);
		scanner_finish(scanner);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		found = true;
	}
	PG_END_TRY();

	pfree(stmt);
	return found;
}
