-- What the cumulative statistics system's own operations do to our entries:
-- pg_stat_reset(), pg_stat_reset_shared(), pg_stat_force_next_flush(),
-- pg_stat_clear_snapshot(), stats_fetch_consistency and DROP DATABASE.
-- Only pg_stat_queries_reset() and eviction remove our entries.
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

-- The store's own accounting must match what the views show: every entry
-- is visible, and every stored text belongs to a visible entry, a
-- statement's (pg_stat_queries) or a plan's (pg_stat_queries_plans: plans'
-- texts share the text area).  This check's own statement has no constant,
-- so, as with pg_stat_statements, its entry is created, with its text, when
-- it ends: the first time it runs, it is not there yet.
CREATE FUNCTION store_consistent() RETURNS bool LANGUAGE sql AS $$
  WITH shown AS (SELECT count(*) AS n,
                        coalesce(sum(octet_length(query) + 1), 0) AS bytes
                   FROM pg_stat_queries),
       plans AS (SELECT count(*) AS n,
                        coalesce(sum(octet_length(plan) + 1), 0) AS bytes
                   FROM pg_stat_queries_plans)
  SELECT i.num_entries = shown.n
     AND i.num_plans = plans.n
     AND i.query_text_bytes = shown.bytes + plans.bytes
    FROM pg_stat_queries_info i, shown, plans
$$;

-- 40 distinct statements, 3 times each
CREATE TABLE ops_t (a int);
\set ECHO none
\o /dev/null
SELECT format('SELECT %s FROM ops_t WHERE a = %s;', repeat('a, ', i) || 'a', i)
  FROM generate_series(1, 40) i, generate_series(1, 3) r \gexec
\o
\set ECHO all

CREATE TEMP TABLE ops_before AS
  SELECT queryid, calls, total_exec_time, query FROM pg_stat_queries
   WHERE query LIKE 'SELECT a, % FROM ops_t WHERE a = $1';
SELECT count(*) AS statements, sum(calls) AS calls FROM ops_before;
SELECT store_consistent();

-- pg_stat_reset() resets this database's tables and functions, not us
SELECT pg_stat_reset();
SELECT count(*) AS statements, sum(s.calls) AS calls,
       bool_and(s.total_exec_time = b.total_exec_time) AS times_kept,
       bool_and(s.query = b.query) AS texts_kept
  FROM pg_stat_queries s JOIN ops_before b USING (queryid);
SELECT store_consistent();
-- and the statements go on counting from where they were
SELECT a, a FROM ops_t WHERE a = 1;
SELECT calls FROM pg_stat_queries WHERE query = 'SELECT a, a FROM ops_t WHERE a = $1';

-- pg_stat_reset_shared(), with and without a target: fixed-size statistics only
SELECT pg_stat_reset_shared();
SELECT pg_stat_reset_shared('io');
SELECT pg_stat_reset_shared('wal');
SELECT count(*) AS statements, sum(s.calls) AS calls
  FROM pg_stat_queries s JOIN ops_before b USING (queryid);
SELECT store_consistent();

-- pg_stat_force_next_flush() and pg_stat_clear_snapshot() change nothing we show
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
SELECT count(*) AS statements, sum(s.calls) AS calls
  FROM pg_stat_queries s JOIN ops_before b USING (queryid);

-- stats_fetch_consistency: the view always reads the live shared entries, so
-- in every mode a statement run since the last read shows at the next read,
-- even inside one transaction (the snapshot applies to pgstat_fetch_* only)
SET stats_fetch_consistency = snapshot;
BEGIN;
SELECT calls FROM pg_stat_queries WHERE query = 'SELECT a, a, a FROM ops_t WHERE a = $1';
SELECT a, a, a FROM ops_t WHERE a = 2;
SELECT calls FROM pg_stat_queries WHERE query = 'SELECT a, a, a FROM ops_t WHERE a = $1';
COMMIT;
SET stats_fetch_consistency = cache;
BEGIN;
SELECT a, a, a FROM ops_t WHERE a = 2;
SELECT calls FROM pg_stat_queries WHERE query = 'SELECT a, a, a FROM ops_t WHERE a = $1';
COMMIT;
SET stats_fetch_consistency = none;
SELECT a, a, a FROM ops_t WHERE a = 2;
SELECT calls FROM pg_stat_queries WHERE query = 'SELECT a, a, a FROM ops_t WHERE a = $1';
RESET stats_fetch_consistency;

-- DROP DATABASE: the dropped database's statements stay, with their texts,
-- until eviction or pg_stat_queries_reset() removes them, as in
-- pg_stat_statements; the accounting stays exact either way.
CREATE DATABASE ops_doomed;
\c ops_doomed
SELECT 'doomed' AS d1;
SELECT 'doomed' AS d2, 2 AS two;
CREATE TABLE doomed_t (a int);
INSERT INTO doomed_t VALUES (1), (2);
\c contrib_regression
SELECT oid AS doomed_oid FROM pg_database WHERE datname = 'ops_doomed' \gset
SELECT query, calls FROM pg_stat_queries WHERE dbid = :doomed_oid ORDER BY query COLLATE "C";
DROP DATABASE ops_doomed;
SELECT query, calls FROM pg_stat_queries WHERE dbid = :doomed_oid ORDER BY query COLLATE "C";
SELECT store_consistent();
SELECT pg_stat_queries_reset(0, :doomed_oid, 0) IS NOT NULL AS t;
SELECT count(*) AS left_of_doomed FROM pg_stat_queries WHERE dbid = :doomed_oid;
SELECT store_consistent();

DROP TABLE ops_t;
DROP FUNCTION store_consistent();
