-- Clock-sweep eviction keeps the table within max + 5%, and max changes at
-- reload
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
ALTER SYSTEM SET pg_stat_queries.max = 100;
-- passes as fast as statements come (the gap between them is tested below)
ALTER SYSTEM SET pg_stat_queries.min_sweep_interval = 0;
SELECT pg_reload_conf();
-- until this backend has the new settings
\o /dev/null
SELECT 1 WHERE current_setting('pg_stat_queries.min_sweep_interval') <> '0' \watch i=0.01 c=3000 m=1
\o
SHOW pg_stat_queries.max;

-- plans before them, of statements that ran twice
SELECT num_plans AS plans_before FROM pg_stat_queries_info \gset

-- 300 statements with distinct query ids (one more column each)
\set ECHO none
\o /dev/null
SELECT format('SELECT %s', string_agg('1', ', ')) AS stmt
  FROM generate_series(1, 300) n, LATERAL generate_series(1, n) c
 GROUP BY n ORDER BY n \gexec
\o
\set ECHO all

SELECT num_entries <= 105 AS within_bound, num_entries >= 50 AS kept_some,
       dealloc > 0 AS swept, evicted_entries > 0 AS evicted,
       last_eviction_time IS NOT NULL AS eviction_time
  FROM pg_stat_queries_info;
SELECT count(*) <= 105 AS view_within_bound FROM pg_stat_queries;
-- each ran once: none got a plan entry, whether its execution was counted
-- (its plan kept for a second) or refused at the bound (its plan counted in
-- untracked_plans); only the read of plans_before, run twice now
SELECT num_plans - :plans_before AS new_plans FROM pg_stat_queries_info;

-- texts of evicted entries are freed with them: the stored texts are
-- those shown, statements' and plans' (plans have room of their own: those
-- of evicted statements are kept, below max_plans); this statement's own
-- is stored when it ends
SELECT i.query_text_bytes - (SELECT sum(octet_length(query) + 1) FROM pg_stat_queries)
         - (SELECT coalesce(sum(octet_length(plan) + 1), 0) FROM pg_stat_queries_plans)
       AS texts_not_shown
  FROM pg_stat_queries_info i;

-- the most recent statements survive their first pass
SELECT count(*) = 5 AS newest_kept FROM pg_stat_queries
 WHERE query IN (SELECT format('SELECT %s', string_agg('$' || c, ', ' ORDER BY c))
                   FROM generate_series(296, 300) n, LATERAL generate_series(1, n) c
                  GROUP BY n);

-- raising max needs no restart
ALTER SYSTEM SET pg_stat_queries.max = 1000;
SELECT pg_reload_conf();
-- until this backend has the new settings
\o /dev/null
SELECT 1 WHERE current_setting('pg_stat_queries.max') <> '1000' \watch i=0.01 c=3000 m=1
\o
\set ECHO none
\o /dev/null
SELECT format('SELECT %s', string_agg('2', ', ')) AS stmt
  FROM generate_series(301, 500) n, LATERAL generate_series(1, n) c
 GROUP BY n ORDER BY n \gexec
\o
\set ECHO all
SELECT num_entries >= 250 AS grew, max FROM pg_stat_queries_info;

-- A pass that found nothing to evict (every entry new, or used since its
-- last visit) is not followed by another one within min_sweep_interval,
-- even at the bound: statements without an entry are then not tracked,
-- and no entry in use is evicted.
ALTER SYSTEM SET pg_stat_queries.max = 100;
ALTER SYSTEM SET pg_stat_queries.min_sweep_interval = '1h';
SELECT pg_reload_conf();
-- until this backend has the new settings
\o /dev/null
SELECT 1 WHERE current_setting('pg_stat_queries.min_sweep_interval') <> '1h' \watch i=0.01 c=3000 m=1
\o
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
\set ECHO none
\o /dev/null
SELECT format('SELECT %s', string_agg('3', ', ')) AS stmt
  FROM generate_series(1, 200) n, LATERAL generate_series(1, n) c
 GROUP BY n ORDER BY n \gexec
\o
\set ECHO all
-- (dealloc counts only passes that evicted, as pg_stat_statements' does:
-- tools read it as "max is too small")
SELECT evicted_entries AS evicted, dealloc = 0 AS no_dealloc,
       num_entries BETWEEN 100 AND 105 AS at_bound,
       untracked_executions >= 90 AS refused
  FROM pg_stat_queries_info;
-- the plans of executions refused get no entry of their own (it would have
-- no statement): they count in untracked_plans
SELECT num_plans AS plans, untracked_plans >= 90 AS plans_untracked
  FROM pg_stat_queries_info;

-- The interval is read when a pass is to begin: lowering it takes effect
-- at once, and sweeping evicts again.
ALTER SYSTEM SET pg_stat_queries.min_sweep_interval = 0;
SELECT pg_reload_conf();
-- until this backend has the new settings
\o /dev/null
SELECT 1 WHERE current_setting('pg_stat_queries.min_sweep_interval') <> '0' \watch i=0.01 c=3000 m=1
\o
\set ECHO none
\o /dev/null
SELECT format('SELECT %s', string_agg('4', ', ')) AS stmt
  FROM generate_series(1, 50) n, LATERAL generate_series(1, n) c
 GROUP BY n ORDER BY n \gexec
\o
\set ECHO all
SELECT evicted_entries > 0 AS evicted, num_entries <= 105 AS within_bound
  FROM pg_stat_queries_info;

-- Below max, passes are min_sweep_interval apart: a statement run more
-- often keeps its entry while others come and go, even if its counts are
-- never merged meanwhile (all of this is one statement, so this backend
-- merges nothing before the end).  New statements come slowly enough for
-- the table to stay below max.
ALTER SYSTEM SET pg_stat_queries.min_sweep_interval = '200ms';
SELECT pg_reload_conf();
-- until this backend has the new settings
\o /dev/null
SELECT 1 WHERE current_setting('pg_stat_queries.min_sweep_interval') <> '200ms' \watch i=0.01 c=3000 m=1
\o
SET pg_stat_queries.track = 'all';
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
DO $$
BEGIN
  FOR i IN 1..130 LOOP
    EXECUTE 'SELECT 5' || repeat(', 5', i);
    EXECUTE 'SELECT upper(''frequent'')';
    PERFORM pg_sleep(0.05);
  END LOOP;
END
$$;
SELECT query, calls, rows FROM pg_stat_queries WHERE query = 'SELECT upper($1)';
SELECT evicted_entries > 0 AS evicted FROM pg_stat_queries_info;
RESET pg_stat_queries.track;

ALTER SYSTEM RESET pg_stat_queries.max;
ALTER SYSTEM RESET pg_stat_queries.min_sweep_interval;
SELECT pg_reload_conf();
