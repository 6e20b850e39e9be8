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
 * PGSQ_STATS_KIND holds our entries; they are never written to the
 * statistics system's file (savefile.c writes them to a file of ours).
 * PGSQ_LEGACY_STATS_KIND is the kind version 1.1 of the library wrote into
 * that file: it stays registered, with that version's entry size, so that
 * PostgreSQL can still read a file that holds such entries; legacy.c
 * converts them to our entries once and drops them.
 */
#ifndef PGSQ_STATS_KIND
#define PGSQ_STATS_KIND 28
#endif
#ifndef PGSQ_LEGACY_STATS_KIND
#define PGSQ_LEGACY_STATS_KIND 27
#endif

#endif							/* PGSQ_COMPAT_H */
