-- Room claimed for a new entry is given back when an error comes before
-- the entry is made (injection point pg-stat-queries-create-entry, after
-- the claim and the text): 150 such errors at max = 100 leave the bound
-- as it was, and new statements still get entries.
CREATE EXTENSION IF NOT EXISTS injection_points;
SELECT injection_points_set_local();
ALTER SYSTEM SET pg_stat_queries.max = 100;
SELECT pg_reload_conf();
-- until this backend has the new value
\o /dev/null
SELECT 1 WHERE current_setting('pg_stat_queries.max') <> '100' \watch i=0.01 c=2000 m=1
\o
SHOW pg_stat_queries.max;
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SET pg_stat_queries.track = 'all';

-- The same function runs three times: twice with notices (so that each of
-- its own statements and plans has an entry: a plan's is made at its second
-- run), then with errors for its new statements
CREATE FUNCTION rc_run(action text, lo int, hi int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM injection_points_attach('pg-stat-queries-create-entry', action);
  FOR n IN lo..hi LOOP
    BEGIN
      EXECUTE 'SELECT ' || (SELECT string_agg('1', ', ')
                              FROM generate_series(1, n)) || ' FROM (VALUES (1)) AS rc(x)';
    EXCEPTION WHEN OTHERS THEN
      NULL;
    END;
  END LOOP;
  PERFORM injection_points_detach('pg-stat-queries-create-entry');
END $$;
SET client_min_messages = warning;
SELECT rc_run('notice', 301, 301);
SELECT rc_run('notice', 301, 301);
RESET client_min_messages;
-- reading the view merges this backend's counts, new plans' entries made
SELECT count(*) > 0 AS merged FROM pg_stat_queries;
SELECT rc_run('error', 1, 150);
SELECT count(*) AS failed_statements_tracked FROM pg_stat_queries
 WHERE query LIKE '%AS rc(x)' AND length(query) < 1000;

DO $$
BEGIN
  FOR n IN 201..220 LOOP
    EXECUTE 'SELECT ' || (SELECT string_agg('1', ', ')
                            FROM generate_series(1, n)) || ' FROM (VALUES (1)) AS rc(x)';
  END LOOP;
END $$;
RESET pg_stat_queries.track;
SELECT count(*) AS new_statements FROM pg_stat_queries
 WHERE query LIKE '%AS rc(x)' AND length(query) > 1000;
SELECT untracked_executions FROM pg_stat_queries_info;

ALTER SYSTEM RESET pg_stat_queries.max;
SELECT pg_reload_conf();
\o /dev/null
SELECT 1 WHERE current_setting('pg_stat_queries.max') = '100' \watch i=0.01 c=2000 m=1
\o
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
DROP FUNCTION rc_run;
