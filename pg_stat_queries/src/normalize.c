/*-------------------------------------------------------------------------
 *
 * normalize.c
 *		The one rule every stored query text passes: no literal value.
 *
 * A text is stored only as this file makes it.  The parser records where
 * each constant it keeps as a Const starts (JumbleState), so those become
 * $n exactly as pg_stat_statements writes them.  But the parser keeps many
 * values as plain strings that it never locates: passwords, options and
 * connection strings, NOTIFY payloads, DO and function bodies, comments
 * on objects, file names.  So the whole statement is run through the core
 * scanner, and every string, number, bit-string and dollar-quoted token
 * that no recorded location covers becomes a placeholder too.  Identifiers,
 * keywords, operators, parameters and comments stay as written.  A
 * statement the scanner cannot read gets no text at all.
 *
 * The scanner also gives each recorded constant its length (the parser
 * records only where it starts).  The output is a StringInfo that grows as
 * needed, so no estimate of the placeholders' width can overrun it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/int.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "parser/scanner.h"

#include "pg_stat_queries.h"

/* One stretch of the statement to be replaced by a placeholder */
typedef struct Replacement
{
	int			start;			/* offset in the statement */
	int			len;
	bool		extern_param;	/* a parameter the parser located ($n) */
	bool		squashed;		/* a whole squashed list */
} Replacement;

/* The replacements found in one statement, in text order */
typedef struct ReplacementList
{
	Replacement *items;
	int			count;
	int			size;
	int			unlocated;		/* literals no recorded location covered */
	int			highest_param;	/* highest $n written in the statement */
} ReplacementList;

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
 * Is the token starting at tok (NUL-terminated by the scanner) a literal
 * value: a number, a string in any of its forms, a bit string?  Parameters
 * ($1) and identifiers, quoted or not, are not.  The scanner's token codes
 * are not installed for extensions, so the token is told by its first
 * characters, which the scanner's rules fix.
 */
static inline bool
token_is_literal(const char *tok)
{
	unsigned char c = tok[0];

	if (c >= '0' && c <= '9')
		return true;			/* integer or numeric */
	switch (c)
	{
		case '\'':
			return true;		/* standard string */
		case '.':
			return tok[1] >= '0' && tok[1] <= '9';	/* .5 */
		case '$':
			return !(tok[1] >= '0' && tok[1] <= '9');	/* dollar quote, not $n */
		case 'e':
		case 'E':
		case 'b':
		case 'B':
		case 'x':
		case 'X':
			return tok[1] == '\'';	/* E'', B'', X'' */
		case 'u':
		case 'U':
			return tok[1] == '&' && tok[2] == '\''; /* U&'' */
		default:
			return false;		/* N'' is a keyword, then a string */
	}
}

/* Can this byte continue an identifier, keyword or parameter? */
static inline bool
is_word_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '_' || c == '$' || IS_HIGHBIT_SET(c);
}

/*
 * Could a literal start in stmt[from..len)?  stmt is NUL-terminated at len.
 * Every string has a quote, every dollar quote a '$', and every number
 * starts with a digit that does not continue a word.  A cheap pass (libc's
 * vectorized search, then a look at the byte before each run of digits)
 * that lets most statements without constants skip the scanner, and the
 * scanner stop after the last constant; comments and quoted identifiers only
 * make it answer yes when the answer is no.
 */
static bool
literal_may_start(const char *stmt, int from, int len)
{
	const char *p = stmt + from;

	Assert(stmt[len] == '\0');
	for (p += strcspn(p, "'$0123456789"); *p != '\0';
		 p += strcspn(p, "'$0123456789"))
	{
		if (*p == '\'' || *p == '$' ||
			p == stmt || !is_word_byte((unsigned char) p[-1]))
			return true;
		while (*p >= '0' && *p <= '9')
			p++;				/* digits that continue a word */
	}
	return false;
}

/* Append a replacement of [start, start + len) */
static void
add_replacement(ReplacementList *list, int start, int len,
				bool extern_param, bool squashed)
{
	Replacement *r;

	if (list->count == list->size)
	{
		list->size = Max(16, list->size * 2);
		list->items = list->items == NULL ?
			palloc(list->size * sizeof(Replacement)) :
			repalloc(list->items, list->size * sizeof(Replacement));
	}
	r = &list->items[list->count++];
	r->start = start;
	r->len = len;
	r->extern_param = extern_param;
	r->squashed = squashed;
}

/*
 * Scan the statement stmt (len bytes, NUL-terminated) once and list what
 * to replace: each recorded constant (locs, count of them, sorted, relative
 * to stmt), with the length the scanner finds for it, and each literal
 * token outside them.  A location that is not where a token starts is
 * ignored: the literal there, if any, is found as a token.  A negative
 * number's location is its '-' sign, and both tokens are taken.  Raises
 * the scanner's error if the text cannot be scanned.
 */
static void
find_replacements(const char *stmt, int len, const LocationLen *locs,
				  int count, ReplacementList *list)
{
	core_yy_extra_type extra;
	core_yyscan_t scanner;
	core_YYSTYPE yylval;
	YYLTYPE		yylloc;
	int			next = 0;		/* first location not yet reached */
	int			covered_end = 0;	/* end of the latest replacement */

	scanner = start_scanner(stmt, &extra);
	while (core_yylex(&yylval, &yylloc, scanner) != 0)
	{
		int			start = yylloc;
		const char *tok = extra.scanbuf + start;
		int			end;

		while (next < count && locs[next].location < start)
			next++;
		if (next < count && locs[next].location == start &&
			start >= covered_end)
		{
			const LocationLen *loc = &locs[next];

			/* a location recorded twice is replaced once */
			while (next < count && locs[next].location == start)
				next++;
			if (loc->squashed)
				end = start + loc->length;	/* the jumble gave the list's */
			else if (tok[0] == '-' && tok[1] == '\0')
			{
				if (core_yylex(&yylval, &yylloc, scanner) == 0)
					break;
				end = yylloc + strlen(extra.scanbuf + yylloc);
				tok = extra.scanbuf + yylloc;
			}
			else
				end = start + strlen(tok);
			if (end <= len)
			{
				add_replacement(list, start, end - start,
								loc->extern_param, loc->squashed);
				covered_end = end;
				/* past the last constant, most statements have no literal */
				if (next == count && !literal_may_start(stmt, end, len))
					break;
				continue;
			}
			start = tok - extra.scanbuf;
		}
		if (start < covered_end)
			continue;
		if (token_is_literal(tok))
		{
			add_replacement(list, start, strlen(tok), false, false);
			list->unlocated++;
		}
		else if (tok[0] == '$')
		{
			/* the parser refuses larger numbers; a saved text may not */
			long		n = strtol(tok + 1, NULL, 10);

			list->highest_param = Max(list->highest_param,
									  (int) Min(n, PG_INT32_MAX / 2));
		}
	}
	scanner_finish(scanner);
}

/*
 * Write stmt with its replacements made.  Constants become $n numbered after
 * the highest parameter the statement uses, in text order; parameters are
 * kept as written, unless lists were squashed (then everything is
 * renumbered, so the numbers have no gaps).  Where only recorded constants
 * are replaced, this is pg_stat_statements' text, byte for byte.
 */
static char *
apply_replacements(const char *stmt, int len, const ReplacementList *list,
				   const JumbleState *jstate, int *out_len)
{
	StringInfoData buf;
	bool		renumber = jstate != NULL && jstate->has_squashed_lists;
	int			placeholder = jstate != NULL ? jstate->highest_extern_param_id : 0;
	int			copied = 0;

	if (list->unlocated > 0 && !renumber)
		placeholder = Max(placeholder, list->highest_param);

	initStringInfo(&buf);
	for (int i = 0; i < list->count; i++)
	{
		const Replacement *r = &list->items[i];

		if (r->extern_param && !renumber)
			continue;
		appendBinaryStringInfo(&buf, stmt + copied, r->start - copied);
		appendStringInfo(&buf, "$%d", ++placeholder);
		if (r->squashed)
			appendStringInfoString(&buf, " /*, ... */");
		copied = r->start + r->len;
	}
	appendBinaryStringInfo(&buf, stmt + copied, len - copied);
	*out_len = buf.len;
	return buf.data;
}

/*
 * The text to store for the statement query[0..query_len): palloc'd,
 * *out_len bytes, with no literal value left; NULL if the statement cannot
 * be scanned, so nothing in it can be told apart from a value.  jstate,
 * if not NULL, has the constant locations parse analysis recorded, relative
 * to the source string, in which the statement starts at query_loc.
 * *unlocated (if not NULL) is set to the number of literals found that
 * no recorded location covered.
 */
char *
pgsq_normalize(const JumbleState *jstate, const char *query, int query_loc,
			   int query_len, int *out_len, int *unlocated)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	   *stmt = pnstrdup(query, query_len);
	int			count = jstate != NULL ? jstate->clocations_count : 0;
	LocationLen *locs = NULL;
	ReplacementList list = {0};
	char	   *result = NULL;
	volatile bool failed = false;

	if (count > 0)
	{
		locs = palloc(count * sizeof(LocationLen));
		memcpy(locs, jstate->clocations, count * sizeof(LocationLen));
		for (int i = 0; i < count; i++)
			locs[i].location -= query_loc;
		qsort(locs, count, sizeof(LocationLen), compare_location);
	}

	if (count > 0 || literal_may_start(stmt, 0, query_len))
	{
		uint32		holdoff = InterruptHoldoffCount;
		uint32		cancel_holdoff = QueryCancelHoldoffCount;

		PG_TRY();
		{
			find_replacements(stmt, query_len, locs, count, &list);
		}
		PG_CATCH();
		{
			/*
			 * The scanner's error (an unterminated string, say): no text.
			 * The ERROR zeroed the holdoff counts of a caller that holds
			 * interrupts: put back.
			 */
			MemoryContextSwitchTo(cxt);
			FlushErrorState();
			InterruptHoldoffCount = holdoff;
			QueryCancelHoldoffCount = cancel_holdoff;
			failed = true;
		}
		PG_END_TRY();
	}

	if (!failed && list.count == 0)
	{
		/* nothing to replace: the copy is the text */
		result = stmt;
		stmt = NULL;
		*out_len = query_len;
	}
	else if (!failed)
		result = apply_replacements(stmt, query_len, &list, jstate, out_len);
	if (unlocated != NULL)
		*unlocated = failed ? 0 : list.unlocated;
	if (!failed && list.items != NULL)
		pfree(list.items);
	if (locs != NULL)
		pfree(locs);
	if (stmt != NULL)
		pfree(stmt);
	return result;
}
