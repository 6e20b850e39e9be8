-- The plan of a new statement's first execution is kept in a small memo
-- (128 places) until the statement runs again in the session; when another
-- statement takes its place, or the session ends, it is counted under its
-- plan (if the plan has an entry by then) or in untracked_plans.  So the
-- plans' calls add up to the statements' calls, less untracked_plans.
SET max_parallel_workers_per_gather = 0;
SET jit = off;
CREATE TABLE memo_t (a int) WITH (autovacuum_enabled = off);
INSERT INTO memo_t SELECT g FROM generate_series(1, 100) g;
ANALYZE memo_t;

-- The statements below (their calls, their plans' calls and plans) and
-- the plans counted untracked since the last full reset
CREATE FUNCTION memo_sums(OUT statements bigint, OUT calls numeric,
                          OUT plan_calls numeric, OUT plans bigint,
                          OUT untracked bigint)
LANGUAGE sql AS $$
  SELECT count(*), sum(s.calls), coalesce(sum(p.calls), 0),
         coalesce(sum(p.plans), 0),
         (SELECT untracked_plans FROM pg_stat_queries_info)
    FROM pg_stat_queries s
    LEFT JOIN LATERAL (SELECT sum(calls) AS calls, count(*) AS plans
                         FROM pg_stat_queries_plans p
                        WHERE p.queryid = s.queryid AND p.userid = s.userid
                          AND p.dbid = s.dbid
                          AND p.toplevel = s.toplevel) p ON true
   WHERE s.query LIKE 'SELECT count(*) FROM memo_t WHERE a <> $1%'
$$;

-- 200 new statements, then the same 200 again, in one session: many take
-- the memo place of one before it runs again
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
\set ECHO none
\o /dev/null
SELECT format('SELECT count(*) FROM memo_t WHERE %s', string_agg('a <> 0', ' AND ')) AS stmt
  FROM generate_series(1, 200) n, LATERAL generate_series(1, n) c,
       generate_series(1, 2) twice
 GROUP BY twice, n ORDER BY twice, n \gexec
\o
\set ECHO all
-- every plan has both calls of its statement
SELECT statements, calls, plan_calls, plans FROM memo_sums();

-- 20 new statements, each run once in a session of its own: their plans
-- are counted untracked when the session ends
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
\c
SET max_parallel_workers_per_gather = 0;
\set ECHO none
\o /dev/null
SELECT format('SELECT count(*) FROM memo_t WHERE %s', string_agg('a <> 0', ' AND ')) AS stmt
  FROM generate_series(1, 20) n, LATERAL generate_series(1, n) c
 GROUP BY n ORDER BY n \gexec
\o
\set ECHO all
SELECT statements, calls, plan_calls, plans FROM memo_sums();
\c
-- until that session's exit has counted them
\o /dev/null
SELECT 1 FROM memo_sums() WHERE untracked < calls - plan_calls \watch i=0.01 c=3000 m=1
\o
SELECT statements, calls, plan_calls, untracked >= calls - plan_calls AS counted
  FROM memo_sums();
-- a second session runs them again: now their plans get entries
SET max_parallel_workers_per_gather = 0;
\set ECHO none
\o /dev/null
SELECT format('SELECT count(*) FROM memo_t WHERE %s', string_agg('a <> 0', ' AND ')) AS stmt
  FROM generate_series(1, 20) n, LATERAL generate_series(1, n) c
 GROUP BY n ORDER BY n \gexec
\o
\set ECHO all
SELECT statements, calls, plan_calls, plans,
       untracked >= calls - plan_calls AS counted
  FROM memo_sums();

DROP FUNCTION memo_sums();
DROP TABLE memo_t;
