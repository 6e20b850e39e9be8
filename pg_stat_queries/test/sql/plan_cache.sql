-- generic_plan_calls and custom_plan_calls: executions of a plan from the
-- plan cache, generic or custom, as pg_stat_statements 1.13 counts them.
-- PostgreSQL 19 tells how a plan was made (plan_cache.out); on 18 both
-- columns are NULL (plan_cache_1.out).
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
CREATE TABLE pc_t (a int);
PREPARE pc_stmt(int) AS SELECT count(*) FROM pc_t WHERE a = $1;
SET plan_cache_mode = force_generic_plan;
EXECUTE pc_stmt(1);
EXECUTE pc_stmt(2);
SET plan_cache_mode = force_custom_plan;
EXECUTE pc_stmt(3);
RESET plan_cache_mode;
-- a plan made for one execution is not cached
SELECT count(*) AS uncached FROM pc_t WHERE a = 4;
-- PL/pgSQL caches the plans of its statements too
CREATE FUNCTION pc_f(i int) RETURNS bigint LANGUAGE plpgsql AS
$$ BEGIN RETURN (SELECT count(*) FROM pc_t WHERE a > i); END $$;
SET pg_stat_queries.track = 'all';
SET plan_cache_mode = force_generic_plan;
SELECT pc_f(1), pc_f(2);
RESET plan_cache_mode;
RESET pg_stat_queries.track;
SELECT query, calls, generic_plan_calls, custom_plan_calls
  FROM pg_stat_queries WHERE query LIKE '%pc_t%' ORDER BY query COLLATE "C";
-- they are counters like the others: a reset zeroes them
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
EXECUTE pc_stmt(5);
SELECT query, calls, generic_plan_calls, custom_plan_calls
  FROM pg_stat_queries WHERE query LIKE '%pc_t%' ORDER BY query COLLATE "C";
DEALLOCATE pc_stmt;
DROP FUNCTION pc_f(int);
DROP TABLE pc_t;
