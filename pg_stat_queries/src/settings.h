/*-------------------------------------------------------------------------
 *
 * settings.h
 *		Configuration parameters (settings.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSQ_SETTINGS_H
#define PGSQ_SETTINGS_H

#include "postgres.h"

/* Values of pg_stat_queries.track */
typedef enum PgsqTrackLevel
{
	PGSQ_TRACK_NONE,
	PGSQ_TRACK_TOP,
	PGSQ_TRACK_ALL,
} PgsqTrackLevel;

extern int	pgsq_max;
extern int	pgsq_track;
extern bool pgsq_track_utility;
extern bool pgsq_track_planning;
extern bool pgsq_save;
extern int	pgsq_query_text_memory; /* kilobytes */
extern int	pgsq_min_sweep_interval;	/* milliseconds */
extern double pgsq_sample_rate;
extern bool pgsq_direct_scan;

extern void pgsq_define_settings(void);

#endif							/* PGSQ_SETTINGS_H */
