-- The direct scan: a read of pg_stat_queries(), the drop-in's
-- pg_stat_statements() or pg_stat_queries_changed() in FROM is a custom
-- scan that makes only the columns the query uses, without a tuplestore.
-- Its rows and values are the function scan's (pg_stat_queries.direct_scan
-- = off), and so are its privilege checks.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_stat_queries;
RESET client_min_messages;
SELECT set_config('extension_control_path',
                  (SELECT setting FROM pg_config WHERE name = 'SHAREDIR')
                  || '/pg_stat_queries_compat:$system', false) IS NOT NULL AS t;
CREATE EXTENSION pg_stat_statements;
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
CREATE TABLE ds_t (a int);
INSERT INTO ds_t VALUES (1), (2), (3);
SELECT count(*) FROM ds_t WHERE a = 1;
SELECT count(*) FROM ds_t WHERE a > 1;
SELECT * FROM ds_t ORDER BY a;
SELECT pg_stat_force_next_flush();

-- the plans: a custom scan for the views and the functions in FROM, with
-- the columns used only (the query identifiers differ between versions)
CREATE FUNCTION ds_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF, VERBOSE) ' || q LOOP
    IF line NOT LIKE 'Query Identifier%' THEN
      RETURN NEXT line;
    END IF;
  END LOOP;
END $$;
EXPLAIN (COSTS OFF) SELECT * FROM pg_stat_queries;
SELECT ds_explain('SELECT count(*) FROM pg_stat_statements');
SELECT ds_explain('SELECT query, calls FROM pg_stat_queries WHERE calls > 1');
EXPLAIN (COSTS OFF) SELECT * FROM pg_stat_queries_changed(now(), false);
-- not for a call with another relation's values, WITH ORDINALITY, or
-- other functions
EXPLAIN (COSTS OFF)
  SELECT * FROM ds_t, LATERAL pg_stat_queries(ds_t.a > 1) s;
EXPLAIN (COSTS OFF) SELECT * FROM pg_stat_queries(true) WITH ORDINALITY;
EXPLAIN (COSTS OFF) SELECT * FROM generate_series(1, 3);
-- nor for a function given SET or SECURITY DEFINER: only its call applies
-- them; the direct scan comes back when they go
ALTER FUNCTION pg_stat_queries(boolean) SET work_mem = '1MB';
EXPLAIN (COSTS OFF) SELECT count(*) FROM pg_stat_queries;
ALTER FUNCTION pg_stat_queries(boolean) RESET ALL;
ALTER FUNCTION pg_stat_queries(boolean) SECURITY DEFINER;
EXPLAIN (COSTS OFF) SELECT count(*) FROM pg_stat_queries;
ALTER FUNCTION pg_stat_queries(boolean) SECURITY INVOKER;
EXPLAIN (COSTS OFF) SELECT count(*) FROM pg_stat_queries;

-- the same rows and values as the function scan, in every row type; the
-- reads themselves are not tracked, so that both see the same statements
SET pg_stat_queries.track = none;
CREATE TEMP TABLE ds_direct AS SELECT * FROM pg_stat_queries;
CREATE TEMP TABLE ds_direct_notext AS SELECT * FROM pg_stat_queries(false);
CREATE TEMP TABLE ds_direct_pgss AS SELECT * FROM pg_stat_statements;
CREATE TEMP TABLE ds_direct_changed AS
  SELECT * FROM pg_stat_queries_changed('-infinity', true);
SET pg_stat_queries.direct_scan = off;
EXPLAIN (COSTS OFF) SELECT * FROM pg_stat_queries;
CREATE TEMP TABLE ds_function AS SELECT * FROM pg_stat_queries;
CREATE TEMP TABLE ds_function_notext AS SELECT * FROM pg_stat_queries(false);
CREATE TEMP TABLE ds_function_pgss AS SELECT * FROM pg_stat_statements;
CREATE TEMP TABLE ds_function_changed AS
  SELECT * FROM pg_stat_queries_changed('-infinity', true);
RESET pg_stat_queries.direct_scan;
SELECT (SELECT count(*) FROM ds_direct) >= 4 AS rows_enough,
       (SELECT count(*) FROM ds_direct) = (SELECT count(*) FROM ds_function) AS same_count,
       NOT EXISTS (SELECT * FROM ds_direct EXCEPT ALL SELECT * FROM ds_function)
   AND NOT EXISTS (SELECT * FROM ds_function EXCEPT ALL SELECT * FROM ds_direct) AS same_rows,
       NOT EXISTS (SELECT * FROM ds_direct_notext EXCEPT ALL SELECT * FROM ds_function_notext)
   AND NOT EXISTS (SELECT * FROM ds_function_notext EXCEPT ALL SELECT * FROM ds_direct_notext) AS same_notext,
       NOT EXISTS (SELECT * FROM ds_direct_pgss EXCEPT ALL SELECT * FROM ds_function_pgss)
   AND NOT EXISTS (SELECT * FROM ds_function_pgss EXCEPT ALL SELECT * FROM ds_direct_pgss) AS same_pgss,
       NOT EXISTS (SELECT * FROM ds_direct_changed EXCEPT ALL SELECT * FROM ds_function_changed)
   AND NOT EXISTS (SELECT * FROM ds_function_changed EXCEPT ALL SELECT * FROM ds_direct_changed) AS same_changed;
SELECT count(*) > 0 AS has_texts, count(*) FILTER (WHERE query IS NOT NULL) = 0 AS notext_null
  FROM ds_direct_notext;

-- a subset of the columns, an expression of them, a restriction
SELECT query, calls, calls * 2 AS twice FROM pg_stat_queries
 WHERE query LIKE '%ds_t%' ORDER BY query COLLATE "C";
SELECT count(*) FROM pg_stat_queries WHERE query LIKE '%ds_t WHERE%';
-- two scans in one query, both live at once (a join)
SELECT a.query, a.calls = b.calls AS same
  FROM pg_stat_queries a JOIN pg_stat_statements b USING (queryid, userid, dbid, toplevel)
 WHERE a.query LIKE '%ds_t%' ORDER BY a.query COLLATE "C";
-- joined, and rescanned for each outer row (a parameter changed: the
-- entries are read again), as a function scan is
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*) FROM ds_t, pg_stat_queries s
 WHERE s.query LIKE '%ds_t WHERE a %' AND s.calls >= ds_t.a;
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT line LIKE '%SubPlan%' OR line LIKE '%Custom Scan%' AS shown
  FROM ds_explain('SELECT (SELECT count(*) FROM pg_stat_queries s WHERE s.calls >= ds_t.a) FROM ds_t') AS line
 WHERE line LIKE '%SubPlan%' OR line LIKE '%Custom Scan%';
SELECT a, (SELECT count(*) FROM pg_stat_queries s
            WHERE s.query LIKE '%ds_t WHERE a %' AND s.calls >= ds_t.a) AS n
  FROM ds_t ORDER BY a;
-- a call with another relation's values is a function scan, as before
SELECT count(*) FROM ds_t, LATERAL pg_stat_queries(ds_t.a > 1) s
 WHERE s.query LIKE '%ds_t WHERE%';
-- a scrollable cursor reads backwards
BEGIN;
DECLARE ds_c SCROLL CURSOR FOR
  SELECT query FROM pg_stat_queries WHERE query LIKE '%ds_t%' ORDER BY query COLLATE "C";
FETCH 2 FROM ds_c;
FETCH BACKWARD 1 FROM ds_c;
COMMIT;
DECLARE ds_c2 SCROLL CURSOR WITH HOLD FOR
  SELECT calls FROM pg_stat_statements WHERE query LIKE '%ds_t%';
FETCH LAST FROM ds_c2;
FETCH ABSOLUTE 1 FROM ds_c2;
CLOSE ds_c2;
-- arguments from parameters; NULL arguments to the strict functions: no rows
PREPARE ds_p(bool) AS SELECT count(*) > 0 AS t FROM pg_stat_queries($1);
EXECUTE ds_p(true);
EXECUTE ds_p(NULL);
DEALLOCATE ds_p;
SELECT count(*) FROM pg_stat_queries_changed(NULL, true);
-- an error while reading, then a read that works
SELECT 1 / (calls - calls) FROM pg_stat_queries LIMIT 1;
SELECT count(*) > 0 AS t FROM pg_stat_queries;
RESET pg_stat_queries.track;

-- privileges: without EXECUTE on the function, both scans refuse;
-- pg_read_all_stats is needed for others' texts and query IDs, as before
CREATE ROLE ds_reader;
GRANT SELECT ON pg_stat_queries TO ds_reader;
REVOKE EXECUTE ON FUNCTION pg_stat_queries(boolean) FROM PUBLIC;
SET ROLE ds_reader;
SELECT count(*) FROM pg_stat_queries;
SET pg_stat_queries.direct_scan = off;
SELECT count(*) FROM pg_stat_queries;
RESET pg_stat_queries.direct_scan;
RESET ROLE;
GRANT EXECUTE ON FUNCTION pg_stat_queries(boolean) TO PUBLIC;
SET ROLE ds_reader;
SELECT count(*) FILTER (WHERE query = '<insufficient privilege>') > 0 AS hidden,
       count(*) FILTER (WHERE query = '<insufficient privilege>'
                          AND queryid IS NOT NULL) = 0 AS no_ids
  FROM pg_stat_queries;
RESET ROLE;
REVOKE SELECT ON pg_stat_queries FROM ds_reader;
DROP ROLE ds_reader;
DROP TABLE ds_t;
DROP FUNCTION ds_explain(text);
DROP EXTENSION pg_stat_statements;
-- a prepared read is planned again when its function is replaced, here
-- with the extension
PREPARE ds_q AS SELECT count(*) > 0 AS t FROM pg_stat_queries(true);
EXECUTE ds_q;
DROP EXTENSION pg_stat_queries;
CREATE EXTENSION pg_stat_queries;
EXECUTE ds_q;
DEALLOCATE ds_q;
