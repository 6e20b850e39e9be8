-- Executions that ended in an error: failed_calls, failed_exec_time and
-- last_failed_sqlstate, at each level a failure passes through; calls and
-- every other counter keep counting completed executions only; no error
-- message and no literal is kept.
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
CREATE TABLE fail_keys (k int PRIMARY KEY);
INSERT INTO fail_keys VALUES (1);

-- a unique violation, the first execution of its statement: the entry is
-- made with its normalized text, and counts no completed execution
INSERT INTO fail_keys VALUES (1);
INSERT INTO fail_keys VALUES (2);
INSERT INTO fail_keys VALUES (2);
-- a statement without constants that fails at its first execution
INSERT INTO fail_keys SELECT k FROM fail_keys;
-- division by zero, raised by the planner (constant folding) and by the
-- executor
SELECT 1 / 0 AS fail_planned;
SELECT k / 0 AS fail_executed FROM fail_keys;
-- a failing cast of a literal: the literal never reaches the text
SELECT x::int AS fail_cast FROM (VALUES ('sensitive-value')) v(x);
-- the time until the error counts for failures in the executor; planning
-- is not measured (track_planning is off), and completed statements have
-- none
SELECT query, calls, rows, failed_calls, last_failed_sqlstate,
       failed_exec_time > 0 AS failed_time
  FROM pg_stat_queries
 WHERE query LIKE '%fail\_%' AND query NOT LIKE '%pg_stat_queries%'
 ORDER BY query COLLATE "C";
SELECT count(*) AS texts_with_the_literal
  FROM pg_stat_queries WHERE query LIKE '%sensitive%';

-- statement_timeout: the time it ran before being cancelled
SET statement_timeout = '200ms';
SELECT pg_sleep(2) AS fail_timeout;
RESET statement_timeout;
SELECT calls, failed_calls, last_failed_sqlstate,
       failed_exec_time BETWEEN 150 AND 1900 AS ran_until_cancelled
  FROM pg_stat_queries WHERE query = 'SELECT pg_sleep($1) AS fail_timeout';

-- errors in nested statements (track = all) count at their own level and,
-- when they propagate, for the statement that called them; an error
-- caught by an exception block counts for the nested statement only
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SET pg_stat_queries.track = 'all';
CREATE FUNCTION fail_insert(k int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO fail_keys VALUES (k);
  RETURN k;
END $$;
CREATE FUNCTION fail_insert_caught(k int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO fail_keys VALUES (k);
  RETURN k;
EXCEPTION WHEN unique_violation THEN
  RETURN -1;
END $$;
SELECT fail_insert(1);
SELECT fail_insert(3);
SELECT fail_insert_caught(1);
SELECT fail_insert_caught(4);
SELECT toplevel, query, calls, failed_calls, last_failed_sqlstate
  FROM pg_stat_queries
 WHERE query LIKE '%fail\_insert%' OR query LIKE 'INSERT INTO fail_keys%'
 ORDER BY query COLLATE "C", toplevel;

-- the latest failure's SQLSTATE
SELECT fail_insert(NULL);
SELECT toplevel, query, calls, failed_calls, last_failed_sqlstate
  FROM pg_stat_queries
 WHERE query = 'INSERT INTO fail_keys VALUES (k)';
RESET pg_stat_queries.track;

-- a permission check failing in ExecutorStart, top-level and nested
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
CREATE ROLE regress_fail_user;
CREATE TABLE fail_secret (a int);
CREATE FUNCTION fail_read_secret() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  PERFORM a AS fail_nested_read FROM fail_secret;
  RETURN 1;
END $$;
SELECT 1 % 0 AS fail_superuser;
SET pg_stat_queries.track = 'all';
SET ROLE regress_fail_user;
SELECT a AS fail_read FROM fail_secret;
SELECT fail_read_secret();
RESET ROLE;
RESET pg_stat_queries.track;
SELECT userid::regrole, toplevel, query, calls, failed_calls,
       last_failed_sqlstate, failed_exec_time = 0 AS failed_at_start
  FROM pg_stat_queries
 WHERE query LIKE '%fail\_%read%' AND query NOT LIKE '%pg_stat_queries%'
 ORDER BY query COLLATE "C", toplevel;

-- another user's failures: counts visible, text and query ID not
SET ROLE regress_fail_user;
SELECT query, queryid IS NULL AS queryid_hidden, failed_calls,
       last_failed_sqlstate
  FROM pg_stat_queries
 WHERE userid <> 'regress_fail_user'::regrole AND failed_calls > 0;
RESET ROLE;

-- sampled out: not counted, as calls are not (aliases are not part of a
-- query ID: each statement below has a shape of its own)
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SET pg_stat_queries.sample_rate = 0;
SELECT 1 / 0 AS fail_unsampled;
RESET pg_stat_queries.sample_rate;
SELECT count(*) AS unsampled_rows
  FROM pg_stat_queries WHERE query LIKE '%fail\_unsampled%';

-- pg_stat_queries_changed() has statements that only failed, too
SELECT now() AS before_failure \gset
SELECT 2 / 0 + 1 AS fail_changed;
SELECT query, calls, failed_calls, last_failed_sqlstate
  FROM pg_stat_queries_changed(:'before_failure')
 WHERE query LIKE '%fail\_changed%';

-- a permission check failing in ExecutorStart while errors are not logged
-- (no report reaches emit_log_hook): that failure is not counted, and the
-- next transaction's error, a division by zero the planner folds, finds
-- nothing of the failed statement to look at (its memory is gone)
SET log_min_messages = fatal;
SET ROLE regress_fail_user;
SELECT a AS fail_unlogged FROM fail_secret;
RESET ROLE;
RESET log_min_messages;
SELECT 4 / 0 - 4 AS fail_after_unlogged;
SELECT query, calls, failed_calls, last_failed_sqlstate
  FROM pg_stat_queries
 WHERE query LIKE '%fail\_%unlogged%'
 ORDER BY query COLLATE "C";

DROP FUNCTION fail_insert(int);
DROP FUNCTION fail_insert_caught(int);
DROP FUNCTION fail_read_secret();
DROP TABLE fail_keys, fail_secret;
DROP ROLE regress_fail_user;

-- A session whose last statement failed, in an entry made for it at parse
-- analysis and never merged into, counts the failure as it exits: nothing
-- of ours may fail there (the text area is detached by then).
SELECT pg_stat_queries_reset() IS NOT NULL AS reset;
SELECT 3 / 0 AS fail_at_exit;
\c -
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXIT WHEN EXISTS (SELECT 1 FROM pg_stat_queries
                       WHERE query LIKE '%fail\_at\_exit%' AND failed_calls = 1);
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT query, calls, failed_calls FROM pg_stat_queries
 WHERE query LIKE '%fail\_at\_exit%';
