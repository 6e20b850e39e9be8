/*-------------------------------------------------------------------------
 *
 * hooks.h
 *		Planner, executor and utility hooks (hooks.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_HOOKS_H
#define PGSQ_HOOKS_H

#include "postgres.h"

extern void pgsq_install_hooks(void);

#endif							/* PGSQ_HOOKS_H */
