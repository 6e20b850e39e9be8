/*-------------------------------------------------------------------------
 *
 * parked.h
 *		Counts kept aside while a reference is stale (parked.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_PARKED_H
#define PGSQ_PARKED_H

#include "entry.h"
#include "textsource.h"

extern void pgsq_park_ready(void);
extern PgsqCounters *pgsq_park(const PgsqKey *key, const PgsqTextSource *src);
extern void pgsq_unpark_all(void);
extern void pgsq_unpark_waited(void);

#endif							/* PGSQ_PARKED_H */
