-- Per-plan statistics: pg_stat_queries_plans has one row per plan a
-- statement ran (plan ids from the plan's shape, not its costs or
-- constants), with literal-free EXPLAIN (COSTS OFF) texts; the plans have
-- a bound of their own (max_plans) and go with their statement's reset.
-- Plan ids are never printed: rows, calls and texts are.
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SELECT max_plans, num_plans, untracked_plans
  FROM pg_stat_queries_info;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
CREATE TABLE plans_t (a int, b text) WITH (autovacuum_enabled = off);
INSERT INTO plans_t SELECT g, 'v' || g FROM generate_series(1, 10000) g;
CREATE INDEX plans_t_a ON plans_t (a);
ANALYZE plans_t;

-- The current user's plans of the statements whose text is like the
-- pattern (the merges of one flush may come in any order: by calls)
CREATE FUNCTION plans_of(pattern text)
RETURNS TABLE (query text, calls bigint, plan text)
LANGUAGE sql AS $$
  SELECT s.query, p.calls, p.plan
    FROM pg_stat_queries_plans p
    JOIN pg_stat_queries s USING (userid, dbid, queryid, toplevel)
   WHERE s.query LIKE pattern
     AND s.userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)
   ORDER BY s.query COLLATE "C", p.calls DESC, p.plan COLLATE "C"
$$;
-- Do the plans' calls of those statements add up to the statements' calls?
CREATE FUNCTION plans_sum_up(pattern text)
RETURNS TABLE (statements bigint, plans bigint, calls_match boolean)
LANGUAGE sql AS $$
  SELECT count(DISTINCT s.queryid), count(p.planid),
         bool_and(s.calls = (SELECT sum(p2.calls) FROM pg_stat_queries_plans p2
                              WHERE p2.queryid = s.queryid
                                AND p2.userid = s.userid
                                AND p2.dbid = s.dbid
                                AND p2.toplevel = s.toplevel))
    FROM pg_stat_queries s
    JOIN pg_stat_queries_plans p USING (userid, dbid, queryid, toplevel)
   WHERE s.query LIKE pattern
$$;

-- A plan that flips with the index: index scan, then (index dropped) a
-- sequential scan, then (index re-created) an index scan again.  Indexes
-- are named by OID in a plan id: the re-created index is a new plan.
SELECT b FROM plans_t WHERE a = 42;
SELECT b FROM plans_t WHERE a = 43;
DROP INDEX plans_t_a;
SELECT b FROM plans_t WHERE a = 44;
CREATE INDEX plans_t_a ON plans_t (a);
SELECT b FROM plans_t WHERE a = 45;
SELECT b FROM plans_t WHERE a = 46;
SELECT b FROM plans_t WHERE a = 47;
SELECT * FROM plans_of('SELECT b FROM plans_t WHERE a = %');
SELECT * FROM plans_sum_up('SELECT b FROM plans_t WHERE a = %');

-- A plan that flips with enable_*: index scan, bitmap scan, sequential
-- scan, and back to the first plan (one row, calls added up)
SELECT a, b FROM plans_t WHERE a < 3 ORDER BY a;
SET enable_indexscan = off;
SELECT a, b FROM plans_t WHERE a < 3 ORDER BY a;
SELECT a, b FROM plans_t WHERE a < 4 ORDER BY a;
SET enable_bitmapscan = off;
SELECT a, b FROM plans_t WHERE a < 3 ORDER BY a;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT a, b FROM plans_t WHERE a < 2 ORDER BY a;
SELECT a, b FROM plans_t WHERE a < 2 ORDER BY a;
SELECT * FROM plans_of('SELECT a, b FROM plans_t WHERE a < %');
SELECT * FROM plans_sum_up('SELECT a, b FROM plans_t WHERE a < %');

-- While one plan alone runs, its counts are its statement's (a backend's
-- pending counts of the plan mirror the statement's until another plan
-- runs): the same calls, times, percentiles, rows and blocks.  Over a
-- flip and back, the plans' counts add up to the statement's, whether or
-- not a merge came in between.
PREPARE plans_m1(int) AS SELECT count(b) FROM plans_t WHERE a < $1;
EXECUTE plans_m1(10);
EXECUTE plans_m1(20);
EXECUTE plans_m1(30);
EXECUTE plans_m1(40);
DEALLOCATE plans_m1;
SELECT p.calls = s.calls AS calls, p.rows = s.rows AS rows,
       p.total_exec_time = s.total_exec_time AS total,
       p.min_exec_time = s.min_exec_time AS min,
       p.max_exec_time = s.max_exec_time AS max,
       p.mean_exec_time = s.mean_exec_time AS mean,
       p.stddev_exec_time = s.stddev_exec_time AS stddev,
       p.p50_exec_time = s.p50_exec_time AND p.p99_exec_time = s.p99_exec_time
         AS percentiles,
       p.shared_blks_hit = s.shared_blks_hit AS hit,
       p.shared_blks_read = s.shared_blks_read AS read
  FROM pg_stat_queries s
  JOIN pg_stat_queries_plans p USING (userid, dbid, queryid, toplevel)
 WHERE s.query LIKE 'PREPARE plans_m1%';
PREPARE plans_m2(int) AS SELECT count(a) FROM plans_t WHERE a < $1;
EXECUTE plans_m2(10);
EXECUTE plans_m2(20);
EXECUTE plans_m2(30);
SET enable_indexscan = off;
SET enable_bitmapscan = off;
EXECUTE plans_m2(10);
EXECUTE plans_m2(20);
RESET enable_indexscan;
RESET enable_bitmapscan;
EXECUTE plans_m2(10);
DEALLOCATE plans_m2;
SELECT count(*) AS plans, sum(p.calls) = s.calls AS calls,
       sum(p.rows) = s.rows AS rows,
       abs(sum(p.total_exec_time) - s.total_exec_time) < 1e-9 AS total,
       min(p.min_exec_time) = s.min_exec_time AS min,
       max(p.max_exec_time) = s.max_exec_time AS max,
       sum(p.shared_blks_hit) = s.shared_blks_hit AS hit
  FROM pg_stat_queries s
  JOIN pg_stat_queries_plans p USING (userid, dbid, queryid, toplevel)
 WHERE s.query LIKE 'PREPARE plans_m2%'
 GROUP BY s.calls, s.rows, s.total_exec_time, s.min_exec_time,
          s.max_exec_time, s.shared_blks_hit;
SELECT calls FROM plans_of('PREPARE plans_m2%');

-- Two statements run in turn (each found at its own quick place), one of
-- them flipping its plan in the middle: each statement's plans add up to it
PREPARE plans_t1(int) AS SELECT max(b) FROM plans_t WHERE a < $1;
PREPARE plans_t2(int) AS SELECT min(b) FROM plans_t WHERE a < $1;
EXECUTE plans_t1(10);
EXECUTE plans_t2(10);
EXECUTE plans_t1(20);
EXECUTE plans_t2(20);
SET enable_indexscan = off;
SET enable_bitmapscan = off;
EXECUTE plans_t1(10);
EXECUTE plans_t2(10);
RESET enable_indexscan;
RESET enable_bitmapscan;
EXECUTE plans_t2(30);
DEALLOCATE plans_t1;
DEALLOCATE plans_t2;
SELECT * FROM plans_of('PREPARE plans_t_%');
SELECT * FROM plans_sum_up('PREPARE plans_t_%');

-- Custom and generic plans of the same shape share one row and one text
PREPARE plans_q(int) AS SELECT b FROM plans_t WHERE a = $1;
SET plan_cache_mode = force_custom_plan;
EXECUTE plans_q(1);
EXECUTE plans_q(2);
SET plan_cache_mode = force_generic_plan;
EXECUTE plans_q(3);
EXECUTE plans_q(4);
EXECUTE plans_q(5);
RESET plan_cache_mode;
DEALLOCATE plans_q;
SELECT * FROM plans_of('PREPARE plans_q%');
SELECT * FROM plans_sum_up('PREPARE plans_q%');

-- A partitioned table: the custom plans read one partition (pruned at
-- planning), the generic plan appends all of them (pruned when run): two
-- plans.  (A custom plan reading another partition is another plan.)
CREATE TABLE plans_p (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE plans_p1 PARTITION OF plans_p FOR VALUES FROM (0) TO (100);
CREATE TABLE plans_p2 PARTITION OF plans_p FOR VALUES FROM (100) TO (200);
CREATE TABLE plans_p3 PARTITION OF plans_p FOR VALUES FROM (200) TO (300);
CREATE TABLE plans_p4 PARTITION OF plans_p FOR VALUES FROM (300) TO (400);
INSERT INTO plans_p SELECT g, g FROM generate_series(0, 399) g;
ANALYZE plans_p;
PREPARE plans_pq(int) AS SELECT count(*) FROM plans_p WHERE k = $1;
SET plan_cache_mode = force_custom_plan;
EXECUTE plans_pq(150);
EXECUTE plans_pq(160);
SET plan_cache_mode = force_generic_plan;
EXECUTE plans_pq(150);
RESET plan_cache_mode;
DEALLOCATE plans_pq;
SELECT * FROM plans_of('PREPARE plans_pq%');
SELECT * FROM plans_sum_up('PREPARE plans_pq%');

-- No literal of a statement reaches a plan's text: constants as written,
-- folded, turned into arrays or derived by the planner (a LIKE prefix's
-- bounds) all become $n
CREATE INDEX plans_t_b ON plans_t (b text_pattern_ops);
-- (twice: a plan's text is made when it runs again)
SELECT count(*) AS planted FROM plans_t WHERE b = 'planted_secret_4711';
SELECT count(*) AS planted FROM plans_t WHERE b LIKE 'planted_secret_4711%';
SELECT count(*) AS planted FROM plans_t WHERE b ~ 'planted_secret_4711' AND a > 5;
SELECT count(*) AS planted FROM plans_t WHERE a = 987654321;
SELECT count(*) AS planted FROM plans_t WHERE a = 987654320 + 1 AND b <> 'planted_secret_4711';
SELECT count(*) AS planted FROM plans_t WHERE a IN (987654321, 987654322, 5);
SELECT count(*) AS planted FROM plans_t WHERE a::text = 'planted_secret_4711' || 987654321;
SELECT count(*) AS planted FROM generate_series(1, 987654321 % 10) g
 WHERE g::text <> 'planted_secret_4711';
SELECT count(*) AS planted FROM plans_t WHERE b = 'planted_secret_4711';
SELECT count(*) AS planted FROM plans_t WHERE b LIKE 'planted_secret_4711%';
SELECT count(*) AS planted FROM plans_t WHERE b ~ 'planted_secret_4711' AND a > 5;
SELECT count(*) AS planted FROM plans_t WHERE a = 987654321;
SELECT count(*) AS planted FROM plans_t WHERE a = 987654320 + 1 AND b <> 'planted_secret_4711';
SELECT count(*) AS planted FROM plans_t WHERE a IN (987654321, 987654322, 5);
SELECT count(*) AS planted FROM plans_t WHERE a::text = 'planted_secret_4711' || 987654321;
SELECT count(*) AS planted FROM generate_series(1, 987654321 % 10) g
 WHERE g::text <> 'planted_secret_4711';
SELECT plan FROM plans_of('SELECT count(*) AS planted %');
SELECT count(*) AS planted_found FROM pg_stat_queries_plans
 WHERE position('planted' in plan) > 0 OR position('4711' in plan) > 0
    OR position('98765432' in plan) > 0 OR plan LIKE '%secret%';
DROP INDEX plans_t_b;

-- The plans changed at or after a time, only
SELECT pg_stat_force_next_flush();
SELECT now() AS plans_t1 \gset
SELECT b FROM plans_t WHERE a = 48;
SELECT s.query, p.calls
  FROM pg_stat_queries_plans(true, :'plans_t1') p
  JOIN pg_stat_queries s USING (userid, dbid, queryid, toplevel)
 WHERE s.query LIKE '%plans_t WHERE%' ORDER BY s.query COLLATE "C", p.calls;
SELECT count(*) AS future FROM pg_stat_queries_plans(true, now() + interval '1 hour');
SELECT (SELECT count(*) FROM pg_stat_queries_plans(true, '-infinity')) >=
       (SELECT count(*) FROM pg_stat_queries_plans(true, :'plans_t1')) AS all_rows;
-- showtext off: no texts
SELECT count(*) > 0 AS rows, count(plan) AS texts
  FROM pg_stat_queries_plans(false);

-- Privileges: another user's plans have no query id, plan id or text for
-- a role without pg_read_all_stats; its own have
CREATE ROLE regress_plans_plain;
CREATE ROLE regress_plans_reader IN ROLE pg_read_all_stats;
GRANT SELECT ON plans_t TO regress_plans_plain, regress_plans_reader;
SELECT b FROM plans_t WHERE a = 49;
SELECT b FROM plans_t WHERE a = 49;
SET ROLE regress_plans_plain;
SELECT b FROM plans_t WHERE a = 50;
SELECT b FROM plans_t WHERE a = 50;
SELECT userid = (SELECT oid FROM pg_roles WHERE rolname = current_user) AS own,
       count(*) > 0 AS present, count(queryid) > 0 AS queryids,
       count(planid) > 0 AS planids, count(plan) > 0 AS texts,
       bool_and(calls > 0) AS calls
  FROM pg_stat_queries_plans GROUP BY 1 ORDER BY 1;
SELECT plan FROM pg_stat_queries_plans
 WHERE userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)
   AND plan LIKE '%plans_t%';
RESET ROLE;
SET ROLE regress_plans_reader;
SELECT count(*) = count(queryid) AND count(*) = count(planid) AND
       count(plan) > 0 AS sees_all
  FROM pg_stat_queries_plans;
RESET ROLE;

-- Reset by query id drops that statement's plans, not the others'
SELECT queryid AS flip_qid FROM pg_stat_queries
 WHERE query = 'SELECT a, b FROM plans_t WHERE a < $1 ORDER BY a' \gset
SELECT count(*) AS flip_plans FROM pg_stat_queries_plans
 WHERE queryid = :flip_qid;
SELECT count(*) > 0 AS other_plans FROM pg_stat_queries_plans
 WHERE queryid <> :flip_qid;
SELECT pg_stat_queries_reset(0, 0, :flip_qid) IS NOT NULL AS t;
SELECT count(*) AS flip_plans FROM pg_stat_queries_plans
 WHERE queryid = :flip_qid;
SELECT count(*) AS flip_statements FROM pg_stat_queries
 WHERE queryid = :flip_qid;
SELECT * FROM plans_of('SELECT b FROM plans_t WHERE a = %');
-- a full reset drops them all (the reset's own statement, new after it,
-- has no plan row until it runs again)
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SELECT count(*) AS plans_left, count(*) FILTER (WHERE plan = 'Result') AS results
  FROM pg_stat_queries_plans;

-- The plan of a new statement's first execution is counted when the
-- statement runs again in this backend: a statement run once has no plan
-- row (no plan entry made for a statement that may never run again), one
-- run twice has both executions in its plan
SELECT count(*) FROM plans_t WHERE a > 9990;
SELECT s.calls, count(p.planid) AS plans
  FROM pg_stat_queries s
  LEFT JOIN pg_stat_queries_plans p USING (userid, dbid, queryid, toplevel)
 WHERE s.query LIKE 'SELECT count(*) FROM plans_t WHERE a > %'
 GROUP BY s.calls;
SELECT count(*) FROM plans_t WHERE a > 9980;
SELECT * FROM plans_of('SELECT count(*) FROM plans_t WHERE a > %');

-- The bound: with max_plans = 20, 200 statements with a plan each keep
-- at most 21 plans (max_plans + 5%), and no statement is evicted for them
ALTER SYSTEM SET pg_stat_queries.max_plans = 20;
ALTER SYSTEM SET pg_stat_queries.min_sweep_interval = 0;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
SHOW pg_stat_queries.max_plans;
SELECT b FROM plans_t WHERE a = 51;
\set ECHO none
\o /dev/null
SELECT format('SELECT count(*) FROM plans_t WHERE %s', string_agg('a <> 0', ' AND ')) AS stmt
  FROM generate_series(1, 200) n, LATERAL generate_series(1, n) c,
       generate_series(1, 2) twice
 GROUP BY n, twice ORDER BY n, twice \gexec
\o
\set ECHO all
SELECT num_plans <= 21 AS within_bound, num_plans >= 10 AS kept_some,
       max_plans
  FROM pg_stat_queries_info;
SELECT count(*) <= 21 AS view_within_bound FROM pg_stat_queries_plans;
SELECT count(*) AS statements_kept FROM pg_stat_queries
 WHERE query LIKE 'SELECT count(*) FROM plans_t WHERE a <> $1%';
SELECT query, calls FROM pg_stat_queries
 WHERE query = 'SELECT b FROM plans_t WHERE a = $1';
SELECT evicted_entries > 0 AS evicted FROM pg_stat_queries_info;
-- the newest plans are kept
SELECT count(*) AS newest_plans_kept FROM plans_of('SELECT count(*) FROM plans_t WHERE a <> $1%')
 WHERE (length(plan) - length(replace(plan, 'a <> $1)', ''))) / 8 = 200;

-- a full reset drops the plans and zeroes the count of those refused
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SELECT num_plans <= 1 AS plans_gone, untracked_plans FROM pg_stat_queries_info;

-- max_plans = 0: no plan is tracked, statements still are
ALTER SYSTEM SET pg_stat_queries.max_plans = 0;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
SHOW pg_stat_queries.max_plans;
SELECT count(*) FROM plans_t WHERE a = 7 OR b = 'x';
SELECT count(*) AS statements FROM pg_stat_queries
 WHERE query = 'SELECT count(*) FROM plans_t WHERE a = $1 OR b = $2';
SELECT count(*) AS plans FROM plans_of('SELECT count(*) FROM plans_t WHERE a = $1 OR b = $2');
-- a plan cached now has no plan id ...
SET plan_cache_mode = force_generic_plan;
PREPARE plans_cached(int) AS SELECT b FROM plans_t WHERE a = $1 AND b <> 'cached';
EXECUTE plans_cached(1);
EXECUTE plans_cached(2);

ALTER SYSTEM RESET pg_stat_queries.max_plans;
ALTER SYSTEM RESET pg_stat_queries.min_sweep_interval;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
SHOW pg_stat_queries.max_plans;

-- ... and gets one at its first execution once plans are tracked again
EXECUTE plans_cached(3);
EXECUTE plans_cached(4);
EXECUTE plans_cached(5);
SELECT calls FROM pg_stat_queries
 WHERE query LIKE '%SELECT b FROM plans_t WHERE a = $1 AND b <> $2';
SELECT calls, plan FROM plans_of('%SELECT b FROM plans_t WHERE a = $1 AND b <> $2');
DEALLOCATE plans_cached;
RESET plan_cache_mode;

DROP OWNED BY regress_plans_plain, regress_plans_reader;
DROP ROLE regress_plans_plain, regress_plans_reader;
DROP FUNCTION plans_of(text), plans_sum_up(text);
DROP TABLE plans_t, plans_p;
