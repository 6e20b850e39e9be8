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
extern char *pgsq_qtext_fetch(const PgsqKey *key, int *encoding);
extern void pgsq_qtext_remove(const PgsqKey *key);
extern void pgsq_qtext_remove_all(void);
extern void pgsq_qtext_drop_orphans(void);

#endif							/* PGSQ_QTEXT_H */
