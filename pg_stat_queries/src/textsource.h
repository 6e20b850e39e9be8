/*-------------------------------------------------------------------------
 *
 * textsource.h
 *		The texts stored for statements (textsource.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_TEXTSOURCE_H
#define PGSQ_TEXTSOURCE_H

#include "entry.h"
#include "nodes/queryjumble.h"
#include "utils/dsa.h"

/*
 * Where a statement's text comes from, filled in by hooks.c and passed
 * down to where an entry may be created, so that the text is made only
 * when one is.
 */
typedef struct PgsqTextSource
{
	const char *source;			/* source text, maybe of several statements */
	int			location;		/* of the statement in it */
	int			len;			/* of the statement, 0: to the end */
	const JumbleState *jstate;	/* at parse analysis, else NULL */
	int			level;			/* nesting level it runs at */
	bool		located;		/* source is the statement itself, already cut
								 * out of its source text at location */
} PgsqTextSource;

extern dsa_pointer pgsq_statement_text(const PgsqKey *key,
									   const PgsqTextSource *src);
extern dsa_pointer pgsq_saved_text(const char *text, int len, int encoding,
								   bool literal_free);

#endif							/* PGSQ_TEXTSOURCE_H */
