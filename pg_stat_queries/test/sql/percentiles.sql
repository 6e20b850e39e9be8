-- Latency percentiles: p50/p95/p99_exec_time and pg_stat_queries_histogram()
-- against execution times known independently; merging across backends;
-- a window that had to move; min/max resets; privileges.
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SET pg_stat_queries.track = 'all';

-- The true execution times are the statement's own: each nested pg_sleep
-- adds its time to total_exec_time, read before and after it (a backend's
-- read merges its own counts first), so percentiles are checked against
-- the very times the histogram counted.
CREATE TABLE pct_durations (ms float8);
CREATE FUNCTION pct_sleep(ms float8) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  before float8;
  after float8;
BEGIN
  SELECT coalesce(sum(total_exec_time), 0) INTO before FROM pg_stat_queries
   WHERE query = 'SELECT pg_sleep(ms / $2)';
  PERFORM pg_sleep(ms / 1000.0);
  SELECT sum(total_exec_time) INTO after FROM pg_stat_queries
   WHERE query = 'SELECT pg_sleep(ms / $2)';
  INSERT INTO pct_durations VALUES (after - before);
END $$;

-- 80 sleeps of 2 ms and 20 of 100 ms, in two backends (the second half
-- after a reconnection), so the histogram is merged from both
SELECT count(pct_sleep(CASE WHEN i % 5 = 0 THEN 100 ELSE 2 END))
  FROM generate_series(1, 50) i;
\c
SET pg_stat_queries.track = 'all';
SELECT count(pct_sleep(CASE WHEN i % 5 = 0 THEN 100 ELSE 2 END))
  FROM generate_series(1, 50) i;

-- all 100 executions, 80 fast and 20 slow, in the histogram, whose buckets
-- are eighteenths of a doubling (ratios 1.0385 to 1.0400)
SELECT calls, sum(h.count) AS counted,
       sum(h.count) FILTER (WHERE h.upper_bound <= 50) AS fast,
       sum(h.count) FILTER (WHERE h.lower_bound >= 50) AS slow,
       bool_and(h.upper_bound / h.lower_bound BETWEEN 1.0384 AND 1.0401) AS eighteenth_of_doubling
  FROM pg_stat_queries s,
       pg_stat_queries_histogram(s.userid, s.dbid, s.queryid, s.toplevel) h
 WHERE s.query = 'SELECT pg_sleep(ms / $2)'
 GROUP BY calls;

-- each percentile within 2% of the true one (nearest rank, as
-- percentile_disc)
WITH truth AS (
  SELECT percentile_disc(0.50) WITHIN GROUP (ORDER BY ms) AS p50,
         percentile_disc(0.95) WITHIN GROUP (ORDER BY ms) AS p95,
         percentile_disc(0.99) WITHIN GROUP (ORDER BY ms) AS p99,
         count(*) AS n
    FROM pct_durations)
SELECT truth.n,
       abs(p50_exec_time / truth.p50 - 1) <= 0.02 AS p50_ok,
       abs(p95_exec_time / truth.p95 - 1) <= 0.02 AS p95_ok,
       abs(p99_exec_time / truth.p99 - 1) <= 0.02 AS p99_ok,
       p50_exec_time < 50 AND p95_exec_time > 50 AS fast_and_slow,
       p50_exec_time >= min_exec_time AND p99_exec_time <= max_exec_time AS within_min_max
  FROM pg_stat_queries, truth
 WHERE query = 'SELECT pg_sleep(ms / $2)';

-- The window spans about 10,700 times its fastest bucket: times far below
-- a slower one are counted in its lowest bucket, which then starts at the
-- minimum; the upper percentiles stay within the bound.  Fast times in one
-- backend, slow ones in another: the merge moves the window.
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
TRUNCATE pct_durations;
SELECT count(pct_sleep(0)) FROM generate_series(1, 30);
\c
SET pg_stat_queries.track = 'all';
SELECT pct_sleep(1000);
SELECT min(h.lower_bound) = min(s.min_exec_time) AS lowest_starts_at_min,
       sum(h.count) FILTER (WHERE h.upper_bound < 100) AS fast_count,
       sum(h.count) FILTER (WHERE h.lower_bound > 100) AS slow_count
  FROM pg_stat_queries s,
       pg_stat_queries_histogram(s.userid, s.dbid, s.queryid, s.toplevel) h
 WHERE s.query = 'SELECT pg_sleep(ms / $2)'
 GROUP BY s.queryid;
SELECT calls, p99_exec_time BETWEEN 1000 * 0.98 AND max_exec_time AS p99_ok,
       (SELECT sum(count) FROM pg_stat_queries_histogram(userid, dbid, queryid, toplevel)) AS counted
  FROM pg_stat_queries WHERE query = 'SELECT pg_sleep(ms / $2)';

-- a min/max reset also empties the histogram: percentiles describe the
-- executions since minmax_stats_since, like min and max
SELECT pg_stat_queries_reset(0, 0, queryid, true) IS NOT NULL AS t
  FROM pg_stat_queries WHERE query = 'SELECT pg_sleep(ms / $2)';
SELECT calls, p50_exec_time IS NULL AS p50_null, p99_exec_time IS NULL AS p99_null,
       (SELECT count(*) FROM pg_stat_queries_histogram(userid, dbid, queryid, toplevel)) AS buckets
  FROM pg_stat_queries WHERE query = 'SELECT pg_sleep(ms / $2)';
SELECT pct_sleep(1);
SELECT calls, p50_exec_time = p99_exec_time AS one_time,
       p50_exec_time BETWEEN min_exec_time AND max_exec_time AS clamped,
       (SELECT sum(count) FROM pg_stat_queries_histogram(userid, dbid, queryid, toplevel)) AS counted
  FROM pg_stat_queries WHERE query = 'SELECT pg_sleep(ms / $2)';

-- unknown statement: no rows
SELECT count(*) FROM pg_stat_queries_histogram(10, 1, 42, true);

-- privileges: another user's histogram only with pg_read_all_stats, even
-- for a caller who knows its query ID
SELECT userid AS pct_owner, dbid AS pct_db, queryid AS pct_qid
  FROM pg_stat_queries WHERE query = 'SELECT pg_sleep(ms / $2)' \gset
CREATE ROLE regress_pct_user;
SET ROLE regress_pct_user;
SELECT count(*) AS others_buckets
  FROM pg_stat_queries_histogram(:pct_owner, :pct_db, :pct_qid, false);
SELECT 'mine' AS own_statement;
SELECT count(*) AS own_buckets
  FROM pg_stat_queries s,
       pg_stat_queries_histogram(s.userid, s.dbid, s.queryid, s.toplevel) h
 WHERE s.query = 'SELECT $1 AS own_statement';
RESET ROLE;
GRANT pg_read_all_stats TO regress_pct_user;
SET ROLE regress_pct_user;
SELECT count(*) AS others_buckets_granted
  FROM pg_stat_queries_histogram(:pct_owner, :pct_db, :pct_qid, false);
RESET ROLE;
DROP ROLE regress_pct_user;

-- Every execution is in its statement's histogram once, however its
-- counts came: a statement run once without constants (its entry made with
-- its first execution), once with constants (entry made at parse
-- analysis), several times in one batch, and in batches of one execution
-- each (a backend's counts holding a single time keep it in min_time only)
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SELECT 'once' AS pct_once;
SELECT 'constant', 1 AS pct_const;
SELECT count(*) AS pct_none FROM pct_durations;
CREATE FUNCTION pct_loop(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. n LOOP
    PERFORM i AS pct_in_loop;
  END LOOP;
END $$;
SELECT pct_loop(7);
SELECT pct_loop(1);
\c
SET pg_stat_queries.track = 'all';
SELECT pct_loop(1);
SELECT 'once' AS pct_once;
SELECT query, calls, counted
  FROM (SELECT s.query, s.calls,
               (SELECT sum(count)
                  FROM pg_stat_queries_histogram(s.userid, s.dbid, s.queryid,
                                                 s.toplevel)) AS counted
          FROM pg_stat_queries s
         WHERE s.query LIKE 'SELECT %pct\_%' AND s.query NOT LIKE '%pg_stat_queries%') x
 ORDER BY query;
SELECT count(*) AS statements,
       count(*) FILTER (WHERE counted IS DISTINCT FROM calls) AS miscounted
  FROM (SELECT s.calls,
               (SELECT sum(count)
                  FROM pg_stat_queries_histogram(s.userid, s.dbid, s.queryid,
                                                 s.toplevel)) AS counted
          FROM pg_stat_queries s
         WHERE s.calls > 0 AND s.minmax_stats_since = s.stats_since) x;
DROP FUNCTION pct_loop(int);

DROP FUNCTION pct_sleep(float8);
DROP TABLE pct_durations;
RESET pg_stat_queries.track;
