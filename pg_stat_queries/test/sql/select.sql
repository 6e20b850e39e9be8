-- Basic tracking and normalization of plain statements
CREATE EXTENSION pg_stat_queries;
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

-- constants become $n; same shape, same entry
SELECT 1 AS "int";
SELECT 2 AS "int";
SELECT 'hello'
  -- a comment in the middle
  AS "text";
SELECT 'world' AS "text";
SELECT 1 + 1 AS two, -5 AS neg, -5.5e3 AS negexp;
SELECT 3 + 3 AS two, -7 AS neg, 2.0 AS negexp;
SELECT $q$dollar 'quoted'$q$ AS dq, E'esc\'aped' AS esc, B'101' AS bits, X'1F' AS hex;
SELECT $$other$$ AS dq, E'x' AS esc, B'1' AS bits, X'FF' AS hex;
/* leading comment */ SELECT 42 AS answer;

-- the parameters of a statement keep their numbers
PREPARE p1(int) AS SELECT $1 + 10 AS plus;
EXECUTE p1(1);
EXECUTE p1(2);
DEALLOCATE p1;

-- extended protocol
SELECT $1::int * 2 AS twice \bind 21 \g
SELECT $1::int * 2 AS twice \bind 22 \g

-- lists of constants are squashed into one placeholder
SELECT 1 WHERE 1 IN (1, 2, 3);
SELECT 1 WHERE 1 IN (4, 5, 6, 7, 8);

-- several statements in one string are tracked one by one
SELECT 10 AS a \; SELECT 20 AS b, 30 AS c;

-- a very long statement
SELECT count(*) FROM (SELECT repeat('x', 10) AS x FROM generate_series(1, 3)) s WHERE x <> 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

SELECT query, calls, rows FROM pg_stat_queries ORDER BY query COLLATE "C";

-- no literal value reached any stored text
SELECT count(*) AS leaked FROM pg_stat_queries
 WHERE query ~ '(hello|world|dollar|quoted|aped|101|1F|FF|other|aaaa)';

-- min <= mean <= max; the (population) stddev is 0 exactly when every call
-- took the same time, and at most half the range
SELECT query, calls, min_exec_time <= mean_exec_time AND mean_exec_time <= max_exec_time AS ordered,
       (stddev_exec_time > 0) = (max_exec_time > min_exec_time)
       AND stddev_exec_time <= (max_exec_time - min_exec_time) / 2 * (1 + 1e-9) AS stddev_ok,
       total_exec_time > 0 AS timed
  FROM pg_stat_queries WHERE query LIKE 'SELECT $1 AS "int"';

-- showtext = false hides text only
SELECT count(*) > 0 AS rows_without_text FROM pg_stat_queries(false) WHERE query IS NULL;
SELECT count(*) AS texts_with_false FROM pg_stat_queries(false) WHERE query IS NOT NULL;
