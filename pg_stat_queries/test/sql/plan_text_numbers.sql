-- Placeholders in plan texts: a parameter EXPLAIN prints ($n, a generic
-- plan's) keeps its number wherever it appears; constants are numbered
-- after the largest parameter, and a value written more than once in one
-- plan (a custom plan's parameter in a bitmap scan's index and recheck
-- conditions) gets one number.
SET max_parallel_workers_per_gather = 0;
SET jit = off;
CREATE TABLE numbers_t (id int, v int, w int) WITH (autovacuum_enabled = off);
INSERT INTO numbers_t SELECT g, g / 10, g FROM generate_series(1, 100000) g;
CREATE INDEX numbers_t_v ON numbers_t (v);
ANALYZE numbers_t;
-- bitmap scans: the condition is printed twice
SET enable_indexscan = off;
SET enable_seqscan = off;
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

-- The plan texts of the statements whose text is like the pattern
CREATE FUNCTION numbers_plans(pattern text)
RETURNS TABLE (calls bigint, plan text)
LANGUAGE sql AS $$
  SELECT p.calls, p.plan
    FROM pg_stat_queries_plans p
    JOIN pg_stat_queries s USING (userid, dbid, queryid, toplevel)
   WHERE s.query LIKE pattern
   ORDER BY p.plan COLLATE "C"
$$;

-- a generic plan: the parameter's own number, twice; the constant next
SET plan_cache_mode = force_generic_plan;
PREPARE numbers_generic(int) AS
  SELECT count(w) FROM numbers_t WHERE v = $1 AND w <> 7;
EXECUTE numbers_generic(3700);
EXECUTE numbers_generic(3701);
EXECUTE numbers_generic(3702);
-- a custom plan: the parameter's value, twice, gets one number
SET plan_cache_mode = force_custom_plan;
PREPARE numbers_custom(int) AS
  SELECT count(w) FROM numbers_t WHERE v = $1 AND w <> 7 AND id > 0;
EXECUTE numbers_custom(3700);
EXECUTE numbers_custom(3700);
EXECUTE numbers_custom(3701);
RESET plan_cache_mode;
-- constants: one value, one number; two values, two numbers
SELECT count(w) FROM numbers_t WHERE v = 3700 AND w <> 3700 AND id <> 12;
SELECT count(w) FROM numbers_t WHERE v = 3700 AND w <> 3700 AND id <> 12;
-- booleans too
SELECT count(w) FROM numbers_t WHERE v = 5 AND coalesce(w > 3, true) AND coalesce(id > 2, true);
SELECT count(w) FROM numbers_t WHERE v = 5 AND coalesce(w > 3, true) AND coalesce(id > 2, true);
SELECT * FROM numbers_plans('%count(w) FROM numbers_t%');
-- no value is left in any of them
SELECT count(*) AS texts,
       count(*) FILTER (WHERE plan ~ '3700|3701|3702|\m7\M|\m12\M|\mtrue\M')
         AS with_values
  FROM numbers_plans('%count(w) FROM numbers_t%');

RESET enable_indexscan;
RESET enable_seqscan;
DEALLOCATE numbers_generic;
DEALLOCATE numbers_custom;
DROP FUNCTION numbers_plans(text);
DROP TABLE numbers_t;
