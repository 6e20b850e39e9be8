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
 * The scanner must read a text as PostgreSQL's parser lexed it, and on
 * PostgreSQL 18 that depends on standard_conforming_strings: with it off,
 * a backslash in a '...' string escapes the next character, so 'a\', ' is
 * one string, and with it on 'a\' is.  Scanned under the other setting, a
 * literal's contents can come out as words.  The setting in force when a
 * text is normalized need not be the one it was lexed with: PostgreSQL
 * lexes a whole query string before running the first of its statements
 * (one of which may SET it), and a text may be normalized long after its
 * parse (a failure counted after ROLLBACK undid a SET, a prepared statement
 * whose entry was evicted).  Without a backslash the two settings read a
 * text alike.  With one, the setting is known where this backend has lexed
 * every text under the same one (pgsq_scs_lexed_here); otherwise the text is
 * scanned under both, and kept only if they agree or one of them cannot
 * read it.  backslash_quote and escape_string_warning only make the scanner
 * raise errors and warnings, never read a text otherwise: ours raises
 * neither.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/int.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "parser/parser.h"
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

/*
 * The values of standard_conforming_strings this backend's parser lexed
 * texts with, as seen at parse analysis: bits SCS_SEEN_OFF and SCS_SEEN_ON.
 * Nothing runs between PostgreSQL's lexing of a query string and the parse
 * analysis of its first statement (simple and extended protocol, SPI, SQL
 * functions), so every value a text was lexed with is seen there.
 */
#ifdef PGSQ_SCANNER_READS_SCS
#define SCS_SEEN_OFF 1
#define SCS_SEEN_ON 2
static int	scs_seen = 0;
#endif

/* At parse analysis: note the setting texts are being lexed with */
void
pgsq_scs_seen(void)
{
#ifdef PGSQ_SCANNER_READS_SCS
	scs_seen |= standard_conforming_strings ? SCS_SEEN_ON : SCS_SEEN_OFF;
#endif
}

/*
 * The setting every text this backend lexed so far was lexed with, or
 * PGSQ_SCS_UNKNOWN once it has lexed texts under both
 */
PgsqScs
pgsq_scs_lexed_here(void)
{
#ifdef PGSQ_SCANNER_READS_SCS
	if (scs_seen == SCS_SEEN_ON)
		return PGSQ_SCS_ON;
	if (scs_seen == SCS_SEEN_OFF)
		return PGSQ_SCS_OFF;
	return PGSQ_SCS_UNKNOWN;
#else
	return PGSQ_SCS_ON;			/* the only one there is */
#endif
}

/* The setting in force: that of a text written now (a plan's, by EXPLAIN) */
PgsqScs
pgsq_scs_now(void)
{
#ifdef PGSQ_SCANNER_READS_SCS
	return standard_conforming_strings ? PGSQ_SCS_ON : PGSQ_SCS_OFF;
#else
	return PGSQ_SCS_ON;
#endif
}

/*
 * Start the core scanner as the raw parser would, with
 * standard_conforming_strings as given (PostgreSQL 18), warning of nothing
 * and accepting \' (backslash_quote only decides whether it is an error)
 */
static core_yyscan_t
start_scanner(const char *query, core_yy_extra_type *extra, bool scs_on)
{
	core_yyscan_t scanner;

	scanner = scanner_init(query, extra, &ScanKeywords, ScanKeywordTokens);
	extra->backslash_quote = BACKSLASH_QUOTE_ON;
#ifdef PGSQ_SCANNER_WARNS_ESCAPES
	extra->escape_string_warning = false;
#endif
#ifdef PGSQ_SCANNER_READS_SCS
	extra->standard_conforming_strings = scs_on;
#else
	(void) scs_on;
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
			p == stmt || !pgsq_is_word_byte((unsigned char) p[-1]))
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
 * number's location is its '-' sign, and both tokens are taken.  The
 * scanner reads strings with standard_conforming_strings as scs_on says.
 * Raises the scanner's error if the text cannot be scanned.
 */
static void
find_replacements(const char *stmt, int len, const LocationLen *locs,
				  int count, bool scs_on, ReplacementList *list)
{
	core_yy_extra_type extra;
	core_yyscan_t scanner;
	core_YYSTYPE yylval;
	YYLTYPE		yylloc;
	int			next = 0;		/* first location not yet reached */
	int			covered_end = 0;	/* end of the latest replacement */

	scanner = start_scanner(stmt, &extra, scs_on);
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
 * find_replacements, an error of the scanner caught: false if the text
 * cannot be scanned under that setting (list is then left empty; what it
 * held stays in the caller's memory context)
 */
static bool
scan_statement(const char *stmt, int len, const LocationLen *locs, int count,
			   bool scs_on, ReplacementList *list)
{
	MemoryContext cxt = CurrentMemoryContext;
	uint32		holdoff = InterruptHoldoffCount;
	uint32		cancel_holdoff = QueryCancelHoldoffCount;
	volatile bool scanned = true;

	PG_TRY();
	{
		find_replacements(stmt, len, locs, count, scs_on, list);
	}
	PG_CATCH();
	{
		/*
		 * The scanner's error (an unterminated string, say).  The ERROR
		 * zeroed the holdoff counts of a caller that holds interrupts: put
		 * back.
		 */
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		InterruptHoldoffCount = holdoff;
		QueryCancelHoldoffCount = cancel_holdoff;
		scanned = false;
	}
	PG_END_TRY();
	if (!scanned)
		memset(list, 0, sizeof(ReplacementList));
	return scanned;
}

#ifdef PGSQ_SCANNER_READS_SCS
/* Do two scans of a statement find the same replacements? */
static bool
same_replacements(const ReplacementList *a, const ReplacementList *b)
{
	if (a->count != b->count || a->unlocated != b->unlocated ||
		a->highest_param != b->highest_param)
		return false;
	for (int i = 0; i < a->count; i++)
	{
		const Replacement *x = &a->items[i];
		const Replacement *y = &b->items[i];

		if (x->start != y->start || x->len != y->len ||
			x->extern_param != y->extern_param || x->squashed != y->squashed)
			return false;
	}
	return true;
}

/*
 * Scan a statement lexed with a standard_conforming_strings not known:
 * under both settings.  A setting the text cannot be scanned under is not
 * the one PostgreSQL lexed it with (that succeeded), so if only one scans
 * it, that one is right, and if both find the same literals, either is.
 * Two different readings cannot be told apart: false, as for a text that
 * cannot be scanned, rather than risk a literal.
 */
static bool
scan_either_way(const char *stmt, int len, const LocationLen *locs,
				int count, ReplacementList *list)
{
	ReplacementList off = {0};
	bool		on_ok = scan_statement(stmt, len, locs, count, true, list);
	bool		off_ok = scan_statement(stmt, len, locs, count, false, &off);
	bool		same;

	if (!on_ok)
	{
		*list = off;			/* the only reading, if any */
		return off_ok;
	}
	if (!off_ok)
		return true;
	same = same_replacements(list, &off);
	if (off.items != NULL)
		pfree(off.items);
	if (!same && list->items != NULL)
	{
		pfree(list->items);
		memset(list, 0, sizeof(ReplacementList));
	}
	return same;
}
#endif

/* What number_by_value sorts: the replacements of a statement */
typedef struct ValueOrder
{
	const char *stmt;
	const ReplacementList *list;
} ValueOrder;

/* Do two replacements replace the same text? */
static inline bool
same_value(const char *stmt, const Replacement *x, const Replacement *y)
{
	return x->len == y->len &&
		memcmp(stmt + x->start, stmt + y->start, x->len) == 0;
}

/* Order replacements by the text they replace, then by position */
static int
compare_values(const void *a, const void *b, void *arg)
{
	const ValueOrder *o = arg;
	const Replacement *x = &o->list->items[*(const int *) a];
	const Replacement *y = &o->list->items[*(const int *) b];
	int			c;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	c = memcmp(o->stmt + x->start, o->stmt + y->start, x->len);
	if (c != 0)
		return c;
	return pg_cmp_s32(x->start, y->start);
}

/*
 * The placeholder number of each replacement when one value gets one
 * number: numbered after first, in the order of each value's first
 * occurrence in the text
 */
static int *
number_by_value(const char *stmt, const ReplacementList *list, int first)
{
	ValueOrder	o = {stmt, list};
	int			n = list->count;
	int		   *order = palloc(n * sizeof(int));
	int		   *leader = palloc(n * sizeof(int));
	int		   *numbers = palloc(n * sizeof(int));

	for (int i = 0; i < n; i++)
		order[i] = i;
	qsort_arg(order, n, sizeof(int), compare_values, &o);
	/* each value's first occurrence leads its run of equal values */
	for (int k = 0; k < n; k++)
	{
		int			i = order[k];

		if (k > 0 &&
			same_value(stmt, &list->items[order[k - 1]], &list->items[i]))
			leader[i] = leader[order[k - 1]];
		else
			leader[i] = i;
	}
	for (int i = 0; i < n; i++)
		numbers[i] = leader[i] == i ? ++first : numbers[leader[i]];
	pfree(order);
	pfree(leader);
	return numbers;
}

/*
 * Write stmt with its replacements made.  Constants become $n numbered after
 * the highest parameter the statement uses, in text order (if by_value, a
 * value written more than once gets one number); parameters are kept as
 * written, unless lists were squashed (then everything is renumbered, so
 * the numbers have no gaps).  Where only recorded constants are replaced,
 * this is pg_stat_statements' text, byte for byte.
 */
static char *
apply_replacements(const char *stmt, int len, const ReplacementList *list,
				   const JumbleState *jstate, bool by_value, int *out_len)
{
	StringInfoData buf;
	bool		renumber = jstate != NULL && jstate->has_squashed_lists;
	int			placeholder = jstate != NULL ? jstate->highest_extern_param_id : 0;
	int			copied = 0;
	int		   *numbers = NULL;

	if (list->unlocated > 0 && !renumber)
		placeholder = Max(placeholder, list->highest_param);
	if (by_value && jstate == NULL)
		numbers = number_by_value(stmt, list, placeholder);

	initStringInfo(&buf);
	for (int i = 0; i < list->count; i++)
	{
		const Replacement *r = &list->items[i];

		if (r->extern_param && !renumber)
			continue;
		appendBinaryStringInfo(&buf, stmt + copied, r->start - copied);
		appendStringInfo(&buf, "$%d",
						 numbers != NULL ? numbers[i] : ++placeholder);
		if (r->squashed)
			appendStringInfoString(&buf, " /*, ... */");
		copied = r->start + r->len;
	}
	appendBinaryStringInfo(&buf, stmt + copied, len - copied);
	if (numbers != NULL)
		pfree(numbers);
	*out_len = buf.len;
	return buf.data;
}

/*
 * The text to store for the statement query[0..query_len): palloc'd,
 * *out_len bytes, with no literal value left; NULL if the statement cannot
 * be scanned, so nothing in it can be told apart from a value.  jstate,
 * if not NULL, has the constant locations parse analysis recorded, relative
 * to the source string, in which the statement starts at query_loc.
 * scs is the standard_conforming_strings it was lexed with, as far as
 * known.  by_value: one number per value (pgsq_normalize_plan).
 * *unlocated (if not NULL) is set to the number of literals found that no
 * recorded location covered.
 */
static char *
normalize(const JumbleState *jstate, const char *query, int query_loc,
		  int query_len, PgsqScs scs, bool by_value, int *out_len,
		  int *unlocated)
{
	char	   *stmt = pnstrdup(query, query_len);
	int			count = jstate != NULL ? jstate->clocations_count : 0;
	LocationLen *locs = NULL;
	ReplacementList list = {0};
	char	   *result = NULL;
	bool		failed = false;

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
		if (scs == PGSQ_SCS_HERE)
			scs = pgsq_scs_lexed_here();
#ifdef PGSQ_SCANNER_READS_SCS
		/* without a backslash, either setting reads the text alike */
		if (scs == PGSQ_SCS_UNKNOWN && memchr(stmt, '\\', query_len) != NULL)
			failed = !scan_either_way(stmt, query_len, locs, count, &list);
		else
#endif
			failed = !scan_statement(stmt, query_len, locs, count,
									 scs != PGSQ_SCS_OFF, &list);
	}

	if (!failed && list.count == 0)
	{
		/* nothing to replace: the copy is the text */
		result = stmt;
		stmt = NULL;
		*out_len = query_len;
	}
	else if (!failed)
		result = apply_replacements(stmt, query_len, &list, jstate, by_value,
									out_len);
	if (unlocated != NULL)
		*unlocated = failed ? 0 : list.unlocated;
	if (list.items != NULL)
		pfree(list.items);
	if (locs != NULL)
		pfree(locs);
	if (stmt != NULL)
		pfree(stmt);
	return result;
}

/* The text to store for a statement: see normalize */
char *
pgsq_normalize(const JumbleState *jstate, const char *query, int query_loc,
			   int query_len, PgsqScs scs, int *out_len, int *unlocated)
{
	return normalize(jstate, query, query_loc, query_len, scs, false,
					 out_len, unlocated);
}

/*
 * The text to store for a plan (EXPLAIN's text, len bytes): as a
 * statement's without recorded constants, but a value written several
 * times (a custom plan's parameter in an index and a recheck condition)
 * gets one number, as the parameter of a generic plan keeps its own
 */
char *
pgsq_normalize_plan(const char *text, int len, PgsqScs scs, int *out_len)
{
	return normalize(NULL, text, 0, len, scs, true, out_len, NULL);
}
