/*-------------------------------------------------------------------------
 *
 * compat.h
 *		Every difference between the PostgreSQL versions we build against.
 *
 * pg_stat_queries supports PostgreSQL 18 and later.  Code elsewhere uses the
 * names defined here and never tests PG_VERSION_NUM itself, so a new major
 * version means editing this one file.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_COMPAT_H
#define PGSQ_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 180000
#error "pg_stat_queries requires PostgreSQL 18 or later"
#endif

/*
 * Custom cumulative statistics kind IDs.  IDs 24..32 are reserved for
 * extensions; see https://wiki.postgresql.org/wiki/CustomCumulativeStats.
 * 24 is PGSTAT_KIND_EXPERIMENTAL, so we take others and let them be
 * overridden at build time should they clash with another extension.
 *
 * PGSQ_STATS_KIND is registered for its callbacks and holds no entry (ours
 * are in a table of our own, table.c).
 * PGSQ_LEGACY_STATS_KIND is the kind version 1.1 of the library wrote into
 * that file: it stays registered, with that version's entry size, so that
 * PostgreSQL can still read a file that holds such entries; restore.c
 * converts them to our entries once and drops them.
 */
#ifndef PGSQ_STATS_KIND
#define PGSQ_STATS_KIND 28
#endif
#ifndef PGSQ_LEGACY_STATS_KIND
#define PGSQ_LEGACY_STATS_KIND 27
#endif

/*
 * PostgreSQL 19 changed, for us:
 *
 * - post_parse_analyze_hook takes a const JumbleState (we never change it);
 * - planner_hook takes an ExplainState too, passed on as it came;
 * - LWLockNewTrancheId takes the tranche's name, which no process registers
 *	 any more;
 * - WalUsage counts the bytes of full-page images (wal_fpi_bytes);
 * - the scanner lost escape_string_warning, and standard_conforming_strings,
 *	 which can no longer be off;
 * - pg_attribute_always_inline is spelled pg_always_inline;
 * - executions know whether their plan was generic or custom
 *	 (PlannedStmt.planOrigin), which pg_stat_statements 1.13 counts.
 */
#if PG_VERSION_NUM >= 190000
#define PGSQ_HOOK_JUMBLESTATE const JumbleState
#define PGSQ_PLANNER_EXTRA_PARAMS , struct ExplainState *es
#define PGSQ_PLANNER_EXTRA_ARGS , es
#define pgsq_new_tranche_id(name) LWLockNewTrancheId(name)
#define pgsq_register_tranche(id, name) ((void) 0)
#define PGSQ_WALUSAGE_FIELDS 5
#define PGSQ_HAS_WAL_FPI_BYTES 1
#define PGSQ_HAS_PLAN_ORIGIN 1
#define pgsq_plan_cache_of(pstmt) \
	((pstmt)->planOrigin == PLAN_STMT_CACHE_GENERIC ? PGSQ_PLAN_GENERIC : \
	 (pstmt)->planOrigin == PLAN_STMT_CACHE_CUSTOM ? PGSQ_PLAN_CUSTOM : \
	 PGSQ_PLAN_NOT_CACHED)
#define pgsq_always_inline pg_always_inline
#else
#define PGSQ_HOOK_JUMBLESTATE JumbleState
#define PGSQ_PLANNER_EXTRA_PARAMS
#define PGSQ_PLANNER_EXTRA_ARGS
#define pgsq_new_tranche_id(name) LWLockNewTrancheId()
#define pgsq_register_tranche(id, name) LWLockRegisterTranche(id, name)
#define PGSQ_WALUSAGE_FIELDS 4
#define PGSQ_SCANNER_WARNS_ESCAPES 1
#define PGSQ_SCANNER_READS_SCS 1
#define pgsq_plan_cache_of(pstmt) PGSQ_PLAN_NOT_CACHED
#define pgsq_always_inline pg_attribute_always_inline
#endif

#endif							/* PGSQ_COMPAT_H */
