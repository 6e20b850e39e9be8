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
 * Custom cumulative statistics kind ID.  IDs 24..32 are reserved for
 * extensions; see https://wiki.postgresql.org/wiki/CustomCumulativeStats.
 * 24 is PGSTAT_KIND_EXPERIMENTAL, so we take another one and let it be
 * overridden at build time should it clash with another extension.
 */
#ifndef PGSQ_STATS_KIND
#define PGSQ_STATS_KIND 27
#endif

#endif							/* PGSQ_COMPAT_H */
