-- What an execution's time and usage cover: every ExecutorRun call of a
-- cursor but not the time between them, AFTER triggers, and statements
-- whose cursors outlive or die with subtransactions
SET pg_stat_queries.track = 'all';
SET pg_stat_queries.track_utility = off;
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

-- a cursor fetched row by row: the three 20 ms rows count, the 200 ms
-- pauses between fetches do not; one call of three rows
DO $$
DECLARE
  c refcursor;
  r record;
BEGIN
  OPEN c FOR SELECT pg_sleep(0.02) AS slow_row FROM generate_series(1, 3);
  LOOP
    FETCH c INTO r;
    EXIT WHEN NOT FOUND;
    PERFORM pg_sleep(0.2);
  END LOOP;
  CLOSE c;
END $$;
SELECT calls, rows, total_exec_time >= 60 AS rows_timed,
       total_exec_time < 600 AS pauses_not_timed
  FROM pg_stat_queries WHERE query LIKE 'SELECT pg_sleep($1) AS slow_row%';

-- AFTER triggers run in ExecutorFinish and count, also under a SELECT
-- with a data-modifying WITH
CREATE TABLE measure_t (id int);
CREATE FUNCTION measure_slow_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_sleep(0.05);
  RETURN NULL;
END $$;
CREATE TRIGGER measure_slow AFTER INSERT ON measure_t
  FOR EACH STATEMENT EXECUTE FUNCTION measure_slow_trigger();
INSERT INTO measure_t VALUES (1);
WITH ins AS (INSERT INTO measure_t VALUES (2) RETURNING id)
SELECT count(*) AS inserted FROM ins;
SELECT query, calls, total_exec_time >= 50 AS trigger_timed
  FROM pg_stat_queries
 WHERE query LIKE 'INSERT INTO measure_t%' OR query LIKE 'WITH ins AS%'
 ORDER BY query COLLATE "C";

-- cursors closed in another order than opened: each keeps its own totals
BEGIN;
DECLARE ca CURSOR FOR SELECT g AS cursor_a FROM generate_series(1, 5) g;
DECLARE cb CURSOR FOR SELECT g + 1 AS cursor_b FROM generate_series(1, 5) g;
FETCH 2 FROM ca;
FETCH 1 FROM cb;
CLOSE ca;
DECLARE cc CURSOR FOR SELECT g * 2 AS cursor_c FROM generate_series(1, 5) g;
FETCH 3 FROM cc;
FETCH 2 FROM cb;
CLOSE cb;
CLOSE cc;
COMMIT;
SELECT query, calls, rows FROM pg_stat_queries
 WHERE query LIKE '%AS cursor_%' ORDER BY query COLLATE "C";

-- subtransactions: a cursor opened in one that commits belongs to the
-- parent and is still measured after a sibling aborts; a statement that
-- fails in an aborted one is not recorded, and leaves nothing behind
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
DO $$
DECLARE
  c refcursor;
  r record;
  n int := 0;
BEGIN
  BEGIN
    OPEN c FOR SELECT g AS outlives_block FROM generate_series(1, 4) g;
  EXCEPTION WHEN others THEN
    RAISE;
  END;
  FOR i IN 1 .. 50 LOOP
    BEGIN
      PERFORM 1 / (g - 2) AS fails_midway FROM generate_series(1, 3) g;
    EXCEPTION WHEN division_by_zero THEN
      n := n + 1;
    END;
  END LOOP;
  LOOP
    FETCH c INTO r;
    EXIT WHEN NOT FOUND;
  END LOOP;
  CLOSE c;
  RAISE NOTICE 'caught % errors', n;
END $$;
SELECT query, calls, rows FROM pg_stat_queries
 WHERE query LIKE '%outlives_block%' OR query LIKE '%fails_midway%'
 ORDER BY query COLLATE "C";
-- later statements are still measured
SELECT 'after the aborts' AS after_aborts;
SELECT calls, rows FROM pg_stat_queries WHERE query LIKE '%AS after_aborts';

-- a cursor's statement whose entry a reset dropped while the cursor was open
-- gets a new entry when it ends, with its text normalized from what parse
-- analysis saw, although other statements were parsed at its level after it
DO $$
DECLARE
  c refcursor;
  r record;
BEGIN
  OPEN c FOR SELECT g AS reset_while_open FROM generate_series(1, 3) g;
  FETCH c INTO r;
  PERFORM pg_stat_queries_reset();
  PERFORM 'parsed after the cursor' AS parsed_between;
  LOOP
    FETCH c INTO r;
    EXIT WHEN NOT FOUND;
  END LOOP;
  CLOSE c;
END $$;
SELECT query, calls, rows FROM pg_stat_queries
 WHERE query IS NULL OR query LIKE '%reset_while_open%';

-- a cursor closed without a FETCH never ran: nothing measured, even in the
-- slot a statement that read blocks and took time has just given back
BEGIN;
SELECT count(*) AS read_before FROM measure_t, pg_sleep(0.01);
DECLARE never CURSOR FOR SELECT id AS never_fetched FROM measure_t;
CLOSE never;
COMMIT;
SELECT calls, rows, shared_blks_hit + shared_blks_read AS blocks,
       total_exec_time AS exec_time
  FROM pg_stat_queries WHERE query LIKE '%AS never_fetched%';
SELECT shared_blks_hit + shared_blks_read > 0 AS blocks,
       total_exec_time >= 10 AS exec_time
  FROM pg_stat_queries WHERE query LIKE '%AS read_before%';

DROP TABLE measure_t;
DROP FUNCTION measure_slow_trigger;
RESET pg_stat_queries.track;
RESET pg_stat_queries.track_utility;
