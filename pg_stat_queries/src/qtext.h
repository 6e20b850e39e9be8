/*-------------------------------------------------------------------------
 *
 * qtext.h
 *		Normalized query texts in shared memory (qtext.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_QTEXT_H
#define PGSQ_QTEXT_H

#include "pg_stat_queries.h"

extern Size pgsq_qtext_shmem_size(void);
extern void pgsq_qtext_shmem_init(PgsqSharedState *state, bool found);
extern void pgsq_qtext_init_backend(void);
extern void pgsq_qtext_attach(void);
extern bool pgsq_qtext_store(const PgsqKey *key, const char *text, int len,
							 int encoding, bool is_new);
extern char *pgsq_qtext_fetch(const PgsqKey *key, TimestampTz since,
							  int *encoding, TimestampTz *stored_at);
extern void pgsq_qtext_remove(const PgsqKey *key);
extern void pgsq_qtext_remove_all(void);
extern void pgsq_qtext_drop_orphans(void);

/*
 * An entry's has_text hint spares a lookup of its text, but a text can be
 * removed (reset, eviction) just after a backend found it and before it set
 * the hint, for an entry of the same statement created meanwhile.  So the
 * hint records the text epoch read before the text was looked up or stored,
 * and every removal of texts advances the epoch afterwards: a hint set
 * before a removal no longer matches.
 */
static inline uint32
pgsq_qtext_epoch(void)
{
	return pg_atomic_read_u32(&pgsq_state->text_epoch);
}

/* Does the hint say the entry's text is stored? */
static inline bool
pgsq_text_hint_valid(PgsqSharedEntry *entry)
{
	uint32		hint = pg_atomic_read_u32(&entry->has_text);

	return hint != 0 && hint == pgsq_qtext_epoch() + 1;
}

/* The text was found or stored; epoch was read before looking */
static inline void
pgsq_text_hint_set(PgsqSharedEntry *entry, uint32 epoch)
{
	pg_atomic_write_u32(&entry->has_text, epoch + 1);
}

#endif							/* PGSQ_QTEXT_H */
