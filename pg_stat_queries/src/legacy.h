/*-------------------------------------------------------------------------
 *
 * legacy.h
 *		What version 1.1 of the library saved, read once (legacy.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_LEGACY_H
#define PGSQ_LEGACY_H

#include "postgres.h"

extern void pgsq_legacy_register(void);
extern int64 pgsq_legacy_convert_entries(void);
extern bool pgsq_legacy_read_texts(void);
extern void pgsq_legacy_discard_texts(void);

#endif							/* PGSQ_LEGACY_H */
