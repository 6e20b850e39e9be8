/*-------------------------------------------------------------------------
 *
 * guard.h
 *		Running our work so that its errors never reach the statement or
 *		the process it runs in (guard.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_GUARD_H
#define PGSQ_GUARD_H

#include "postgres.h"

/* Work to run guarded */
typedef void (*PgsqGuardedFn) (void *arg);

extern bool pgsq_shared_alloc(PgsqGuardedFn fn, void *arg);
extern bool pgsq_run_guarded(PgsqGuardedFn fn, void *arg, const char *what);

#endif							/* PGSQ_GUARD_H */
