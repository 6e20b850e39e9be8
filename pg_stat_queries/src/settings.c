/*-------------------------------------------------------------------------
 *
 * settings.c
 *		Every configuration parameter of pg_stat_queries, defined in one place.
 *
 * The names, meanings and defaults follow pg_stat_statements, except that
 * max and query_text_memory take effect at reload instead of restart.  The
 * read-only pg_stat_statements.* settings of the drop-in are here too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/pgstat_internal.h"
#include "utils/varlena.h"

#include "pg_stat_queries.h"

static const struct config_enum_entry track_level_options[] = {
	{"none", PGSQ_TRACK_NONE, false},
	{"top", PGSQ_TRACK_TOP, false},
	{"all", PGSQ_TRACK_ALL, false},
	{NULL, 0, false}
};

int			pgsq_max = 5000;
int			pgsq_max_plans = 1000;
int			pgsq_track = PGSQ_TRACK_TOP;
bool		pgsq_track_utility = true;
bool		pgsq_track_planning = false;
bool		pgsq_save = true;
int			pgsq_query_text_memory = 16 * 1024;
int			pgsq_min_sweep_interval = 250;
double		pgsq_sample_rate = 1.0;
bool		pgsq_direct_scan = true;

/*
 * pg_stat_statements' settings, shown with our values for the tools that
 * read them (the drop-in, README "Using existing monitoring tools"); they
 * cannot be set: pg_stat_queries' own settings are the ones that count.
 */
static int	pgss_max_shown = 5000;
static int	pgss_track_shown = PGSQ_TRACK_TOP;
static bool pgss_track_utility_shown = true;
static bool pgss_track_planning_shown = false;
static bool pgss_save_shown = true;

/* SHOW pg_stat_statements.max: our max */
static const char *
show_pgss_max(void)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "%d", pgsq_max);
	return buf;
}

/* SHOW pg_stat_statements.track: our track */
static const char *
show_pgss_track(void)
{
	return track_level_options[pgsq_track].name;
}

/* SHOW of a boolean, as PostgreSQL shows them */
static inline const char *
show_bool(bool value)
{
	return value ? "on" : "off";
}

/* SHOW pg_stat_statements.track_utility: ours */
static const char *
show_pgss_track_utility(void)
{
	return show_bool(pgsq_track_utility);
}

/* SHOW pg_stat_statements.track_planning: ours */
static const char *
show_pgss_track_planning(void)
{
	return show_bool(pgsq_track_planning);
}

/* SHOW pg_stat_statements.save: ours */
static const char *
show_pgss_save(void)
{
	return show_bool(pgsq_save);
}

/* Is contrib's pg_stat_statements in shared_preload_libraries too? */
static bool
pgss_preloaded(void)
{
	char	   *libs = pstrdup(shared_preload_libraries_string);
	List	   *elems;
	ListCell   *lc;
	bool		found = false;

	if (!SplitDirectoriesString(libs, ',', &elems))
		return false;
	foreach(lc, elems)
	{
		const char *name = lfirst(lc);
		const char *base = strrchr(name, '/');
		size_t		len;

		base = base ? base + 1 : name;
		len = strlen(base);
		if (len > 3 && strcmp(base + len - 3, ".so") == 0)
			len -= 3;
		if (len == strlen("pg_stat_statements") &&
			strncmp(base, "pg_stat_statements", len) == 0)
			found = true;
	}
	list_free_deep(elems);
	pfree(libs);
	return found;
}

/* Define pg_stat_statements' settings, read-only, showing ours */
static void
define_pgss_settings(void)
{
	DefineCustomIntVariable("pg_stat_statements.max",
							"Shows pg_stat_queries.max, for tools that read pg_stat_statements' settings.",
							NULL, &pgss_max_shown, 5000, 100, INT_MAX / 2,
							PGC_INTERNAL, 0, NULL, NULL, show_pgss_max);
	DefineCustomEnumVariable("pg_stat_statements.track",
							 "Shows pg_stat_queries.track, for tools that read pg_stat_statements' settings.",
							 NULL, &pgss_track_shown, PGSQ_TRACK_TOP,
							 track_level_options, PGC_INTERNAL, 0,
							 NULL, NULL, show_pgss_track);
	DefineCustomBoolVariable("pg_stat_statements.track_utility",
							 "Shows pg_stat_queries.track_utility, for tools that read pg_stat_statements' settings.",
							 NULL, &pgss_track_utility_shown, true,
							 PGC_INTERNAL, 0, NULL, NULL,
							 show_pgss_track_utility);
	DefineCustomBoolVariable("pg_stat_statements.track_planning",
							 "Shows pg_stat_queries.track_planning, for tools that read pg_stat_statements' settings.",
							 NULL, &pgss_track_planning_shown, false,
							 PGC_INTERNAL, 0, NULL, NULL,
							 show_pgss_track_planning);
	DefineCustomBoolVariable("pg_stat_statements.save",
							 "Shows pg_stat_queries.save, for tools that read pg_stat_statements' settings.",
							 NULL, &pgss_save_shown, true,
							 PGC_INTERNAL, 0, NULL, NULL, show_pgss_save);
}

/*
 * The sweep's floors (eviction.c computes them from max and max_plans):
 * zeroed when either changes, so that the next statement computes them anew
 */
PgsqSweepFloors pgsq_sweep_floors = {0, 0, 0};

/* max or max_plans changes: the sweep's floors follow */
static void
assign_max(int newval, void *extra)
{
	(void) newval;
	(void) extra;
	pgsq_sweep_floors.entries = 0;
}

/* Define the settings; _PG_init */
void
pgsq_define_settings(void)
{
	DefineCustomIntVariable("pg_stat_queries.max",
							"Sets the maximum number of statements tracked by pg_stat_queries.",
							"Takes effect at reload: lowering it evicts the least used entries.",
							&pgsq_max,
							5000,
							100,
							INT_MAX / 4,
							PGC_SIGHUP,
							0,
							NULL, assign_max, NULL);

	DefineCustomIntVariable("pg_stat_queries.max_plans",
							"Sets the maximum number of plans tracked by pg_stat_queries.",
							"Plans have room of their own beside max statements. 0 tracks no plans. Takes effect at reload.",
							&pgsq_max_plans,
							1000,
							0,
							INT_MAX / 4,
							PGC_SIGHUP,
							0,
							NULL, assign_max, NULL);

	DefineCustomEnumVariable("pg_stat_queries.track",
							 "Selects which statements are tracked by pg_stat_queries.",
							 NULL,
							 &pgsq_track,
							 PGSQ_TRACK_TOP,
							 track_level_options,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_stat_queries.track_utility",
							 "Selects whether utility commands are tracked by pg_stat_queries.",
							 NULL,
							 &pgsq_track_utility,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_stat_queries.track_planning",
							 "Selects whether planning duration is tracked by pg_stat_queries.",
							 NULL,
							 &pgsq_track_planning,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_stat_queries.save",
							 "Save pg_stat_queries statistics across server shutdowns.",
							 NULL,
							 &pgsq_save,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("pg_stat_queries.query_text_memory",
							"Sets the shared memory available for normalized query texts.",
							"Statements whose text does not fit are still tracked, with a NULL query.",
							&pgsq_query_text_memory,
							16 * 1024,
							0,
							INT_MAX / 2,
							PGC_SIGHUP,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("pg_stat_queries.min_sweep_interval",
							"Sets the minimum time between two visits of an entry by the eviction sweep.",
							"A statement run more often keeps its entry, unless the table is at its bound and was swept meanwhile.",
							&pgsq_min_sweep_interval,
							250,
							0,
							3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomRealVariable("pg_stat_queries.sample_rate",
							 "Sets the fraction of top-level statements measured and recorded.",
							 "Statements nested in one follow its decision; parse analysis still creates entries and stores texts.",
							 &pgsq_sample_rate,
							 1.0,
							 0.0,
							 1.0,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("pg_stat_queries.direct_scan",
							 "Reads the statistics views with a custom scan instead of a function scan.",
							 "Same rows and values, made only for the columns a query uses, without a tuplestore.",
							 &pgsq_direct_scan,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("pg_stat_queries");

	if (!pgss_preloaded())
		define_pgss_settings();
}
