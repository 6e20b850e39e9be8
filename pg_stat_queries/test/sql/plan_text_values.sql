-- Plan texts keep no value that the literal rule cannot tell from a word:
-- boolean constants, which EXPLAIN prints as the keywords true and false,
-- and file_fdw's file or program, printed from the foreign table's
-- options, become placeholders.  Quoted identifiers stay.
SET max_parallel_workers_per_gather = 0;
SET jit = off;
CREATE TABLE ptv_t ("true" int, b bool) WITH (autovacuum_enabled = off);
INSERT INTO ptv_t SELECT g, g % 2 = 0 FROM generate_series(1, 10) g;
CREATE EXTENSION file_fdw;
CREATE SERVER ptv_files FOREIGN DATA WRAPPER file_fdw;
COPY (SELECT 1 WHERE false) TO '/tmp/pg_stat_queries_ptv_Zq7001x.csv';
CREATE FOREIGN TABLE ptv_f (a int) SERVER ptv_files
  OPTIONS (filename '/tmp/pg_stat_queries_ptv_Zq7001x.csv');
CREATE FOREIGN TABLE ptv_p (a int) SERVER ptv_files
  OPTIONS (program 'echo Zq7002x > /dev/null');
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

-- each twice around a merge (reading the view): a plan gets its text at its
-- first execution once its counts were merged
SELECT count(*) FROM ptv_t WHERE num_nulls("true", true, b) = 0;
SELECT count(*) FROM ptv_t WHERE false;
SELECT count(*) FROM ptv_f;
SELECT count(*) FROM ptv_p;
SELECT count(*) > 0 AS merged FROM pg_stat_queries;
SELECT count(*) FROM ptv_t WHERE num_nulls("true", true, b) = 0;
SELECT count(*) FROM ptv_t WHERE false;
SELECT count(*) FROM ptv_f;
SELECT count(*) FROM ptv_p;

SELECT p.plan
  FROM pg_stat_queries s
  JOIN pg_stat_queries_plans p USING (userid, dbid, queryid, toplevel)
 WHERE s.query LIKE '%ptv_%' AND p.plan IS NOT NULL
 ORDER BY p.plan COLLATE "C";
SELECT count(*) AS values_kept FROM pg_stat_queries_plans
 WHERE plan ~ 'Zq700' OR plan ~ '(^|[^"a-z])(true|false)([^"a-z]|$)';

DROP FOREIGN TABLE ptv_f, ptv_p;
DROP SERVER ptv_files;
DROP EXTENSION file_fdw;
DROP TABLE ptv_t;
