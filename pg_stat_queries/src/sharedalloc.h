/*-------------------------------------------------------------------------
 *
 * sharedalloc.h
 *		Allocating shared memory without ever failing a statement
 *		(sharedalloc.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_SHAREDALLOC_H
#define PGSQ_SHAREDALLOC_H

#include "postgres.h"

/* Work that allocates shared memory, run by pgsq_shared_alloc */
typedef void (*PgsqSharedAllocFn) (void *arg);

extern bool pgsq_shared_alloc(PgsqSharedAllocFn fn, void *arg);

#endif							/* PGSQ_SHAREDALLOC_H */
