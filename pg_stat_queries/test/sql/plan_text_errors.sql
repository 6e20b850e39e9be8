-- An error inside the EXPLAIN that makes a plan's text fails nothing and
-- leaves nothing behind: the statement succeeds, its plan is counted
-- without a text, and the backend still takes a cancel (the error had
-- zeroed the interrupt holdoff count that EXPLAIN ran under).  The error
-- is injected once EXPLAIN has run (injection point
-- pg-stat-queries-plan-text), which the assert build has.
CREATE EXTENSION injection_points;
SELECT injection_points_set_local();
SET max_parallel_workers_per_gather = 0;
SET jit = off;
CREATE TABLE pte_t (a int) WITH (autovacuum_enabled = off);
INSERT INTO pte_t SELECT generate_series(1, 100);
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SELECT injection_points_attach('pg-stat-queries-plan-text', 'error');

-- a plan's text is made at its first execution after its counts were
-- merged (reading the view merges them)
SELECT count(*) FROM pte_t WHERE a > 50;
SELECT count(*) AS merged FROM pg_stat_queries WHERE query LIKE '%pte_t WHERE%';
SELECT count(*) FROM pte_t WHERE a > 50;
SELECT count(*) FROM pte_t WHERE a > 50;

-- still cancellable
SET statement_timeout = '200ms';
SELECT pg_sleep(3);
RESET statement_timeout;

SELECT s.calls, p.calls AS plan_calls, p.plan IS NULL AS no_plan_text
  FROM pg_stat_queries s
  JOIN pg_stat_queries_plans p USING (userid, dbid, queryid, toplevel)
 WHERE s.query LIKE '%pte_t WHERE%';

-- once EXPLAIN succeeds again, the plan gets its text
SELECT injection_points_detach('pg-stat-queries-plan-text');
SELECT count(*) FROM pte_t WHERE a > 50;
SELECT s.calls, p.calls AS plan_calls, p.plan
  FROM pg_stat_queries s
  JOIN pg_stat_queries_plans p USING (userid, dbid, queryid, toplevel)
 WHERE s.query LIKE '%pte_t WHERE%';
DROP TABLE pte_t;
