/*-------------------------------------------------------------------------
 *
 * qtext.h
 *		Normalized query texts in shared memory (qtext.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_QTEXT_H
#define PGSQ_QTEXT_H

#include "entry.h"
#include "utils/dsa.h"

/*
 * What an entry's text pointer holds (PgsqSharedEntry.text_state).  CLOSED:
 * its text was taken away because the entry is being dropped, and none may
 * be given to it any more, lest that one be lost with the entry; a new life
 * of the entry (reused by the statistics system) opens it again.
 */
typedef enum PgsqTextState
{
	PGSQ_TEXT_NONE = 0,
	PGSQ_TEXT_STORED,
	PGSQ_TEXT_CLOSED,
} PgsqTextState;

/*
 * Is the entry closed to texts?  Its text is taken, and it closed, under its
 * lock before it is dropped (pgsq_text_take), and opened again only when a
 * new life of it starts (pgsq_text_reopen).  Read without the lock, on the
 * entry's first line, it tells a backend that the entry it remembers is
 * dropped or about to be.
 */
static inline bool
pgsq_text_closed(PgsqSharedEntry *entry)
{
	return pg_atomic_read_u32(&entry->text_state) == PGSQ_TEXT_CLOSED;
}

extern Size pgsq_qtext_shmem_size(void);
extern void pgsq_qtext_shmem_init(PgsqSharedState *state, bool found);
extern void pgsq_qtext_attach(void);
extern dsa_area *pgsq_text_area(void);
extern dsa_pointer pgsq_text_area_alloc(Size size);

extern dsa_pointer pgsq_text_prepare(const char *text, int len, int encoding);
extern void pgsq_text_discard(dsa_pointer text);
extern void pgsq_text_give_new(PgsqSharedEntry *entry, dsa_pointer text,
							   TimestampTz now);
extern bool pgsq_text_give(PgsqSharedEntry *entry, const PgsqKey *key,
						   dsa_pointer text);
extern void pgsq_text_give_locked(PgsqSharedEntry *entry, dsa_pointer text);
extern dsa_pointer pgsq_text_take(PgsqSharedEntry *entry);
extern void pgsq_text_reopen(PgsqSharedEntry *entry);
extern TimestampTz pgsq_text_stored_at(PgsqSharedEntry *entry);
extern const char *pgsq_text_peek(PgsqSharedEntry *entry, int *len,
								  int *encoding, TimestampTz *stored_at);
extern char *pgsq_text_copy(PgsqSharedEntry *entry, int *len, int *encoding,
							TimestampTz *stored_at);
extern const char *pgsq_text_bytes(dsa_pointer text, int *len,
								   int *encoding, TimestampTz *stored_at);
extern void pgsq_text_set_stored_at(dsa_pointer text, TimestampTz stored_at);

/*
 * Has the entry a text, or is it closed to texts (so none need be made)?
 * Read without its lock: a hint.
 */
static inline bool
pgsq_text_hint(PgsqSharedEntry *entry)
{
	return pg_atomic_read_u32(&entry->text_state) != PGSQ_TEXT_NONE;
}

#endif							/* PGSQ_QTEXT_H */
