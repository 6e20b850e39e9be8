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
extern void pgsq_unpark_if_waited(void);

extern PGDLLIMPORT bool pgsq_any_parked;

/*
 * At a statement's end: set parked counts into their entries once they
 * have waited long enough.  Inline, as it runs for every statement: the
 * statement start time is already known, so the check costs no clock read.
 */
static inline void
pgsq_unpark_waited(void)
{
	if (unlikely(pgsq_any_parked))
		pgsq_unpark_if_waited();
}

#endif							/* PGSQ_PARKED_H */
