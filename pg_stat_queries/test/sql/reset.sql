-- Every reset variant
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
CREATE ROLE reset_a;
CREATE ROLE reset_b;
GRANT CREATE ON SCHEMA public TO reset_a, reset_b;
CREATE TABLE reset_t (a int);
GRANT SELECT ON reset_t TO reset_a, reset_b;

SET ROLE reset_a;
SELECT count(*) FROM reset_t WHERE a = 1;
SELECT 'a' AS who;
SET ROLE reset_b;
SELECT count(*) FROM reset_t WHERE a = 2;
SELECT 'b' AS who;
RESET ROLE;

-- by user
SELECT pg_stat_queries_reset((SELECT oid FROM pg_roles WHERE rolname = 'reset_a')) IS NOT NULL AS t;
SELECT r.rolname, s.query, s.calls FROM pg_stat_queries s JOIN pg_roles r ON r.oid = s.userid
 WHERE r.rolname LIKE 'reset_%' ORDER BY r.rolname, s.query COLLATE "C";

-- by query id
SELECT pg_stat_queries_reset(0, 0, queryid) IS NOT NULL AS t
  FROM pg_stat_queries WHERE query = 'SELECT $1 AS who';
SELECT r.rolname, s.query, s.calls FROM pg_stat_queries s JOIN pg_roles r ON r.oid = s.userid
 WHERE r.rolname LIKE 'reset_%' ORDER BY r.rolname, s.query COLLATE "C";

-- by database: another database's oid leaves ours alone
SELECT pg_stat_queries_reset(0, (SELECT oid FROM pg_database WHERE datname = 'template1')) IS NOT NULL AS t;
SELECT count(*) > 0 AS ours_kept FROM pg_stat_queries WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database());
SELECT pg_stat_queries_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database())) IS NOT NULL AS t;
SELECT query FROM pg_stat_queries ORDER BY query COLLATE "C";

-- minmax_only: min/max cleared, mean and stddev keep their history,
-- and min/max take the next execution's value
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SELECT pg_sleep(0.05);
SELECT pg_sleep(0.01);
CREATE TEMP TABLE before AS
  SELECT queryid, calls, mean_exec_time, stddev_exec_time, minmax_stats_since, stats_since
    FROM pg_stat_queries WHERE query = 'SELECT pg_sleep($1)';
SELECT calls, min_exec_time < max_exec_time AS spread, stddev_exec_time > 0 AS stddev
  FROM pg_stat_queries WHERE query = 'SELECT pg_sleep($1)';
SELECT pg_stat_queries_reset(0, 0, (SELECT queryid FROM before), true) IS NOT NULL AS t;
SELECT s.calls, s.min_exec_time = 0 AND s.max_exec_time = 0 AS minmax_cleared,
       s.mean_exec_time = b.mean_exec_time AS mean_kept,
       s.stddev_exec_time = b.stddev_exec_time AS stddev_kept,
       s.minmax_stats_since > b.minmax_stats_since AS minmax_since_moved,
       s.stats_since = b.stats_since AS since_kept
  FROM pg_stat_queries s, before b WHERE s.queryid = b.queryid;
SELECT pg_sleep(0.02);
SELECT s.calls, s.min_exec_time >= 20 AND s.min_exec_time = s.max_exec_time AS recovered,
       s.mean_exec_time < b.mean_exec_time AS mean_merged
  FROM pg_stat_queries s, before b WHERE s.queryid = b.queryid;

-- the full reset keeps nothing but itself and sets stats_reset
SELECT pg_stat_queries_reset() AS reset_at \gset
SELECT stats_reset = :'reset_at' AS info_reset FROM pg_stat_queries_info;
SELECT query, calls FROM pg_stat_queries ORDER BY query COLLATE "C";

-- only superusers by default, grantable
SET ROLE reset_a;
SELECT pg_stat_queries_reset();
RESET ROLE;
GRANT EXECUTE ON FUNCTION pg_stat_queries_reset(oid, oid, bigint, boolean) TO reset_a;
SET ROLE reset_a;
SELECT pg_stat_queries_reset() IS NOT NULL AS granted;
RESET ROLE;

DROP TABLE reset_t;
REVOKE CREATE ON SCHEMA public FROM reset_a, reset_b;
REVOKE EXECUTE ON FUNCTION pg_stat_queries_reset(oid, oid, bigint, boolean) FROM reset_a;
DROP ROLE reset_a, reset_b;
