-- pg_stat_queries.sample_rate: a fraction of top-level statements is
-- measured; nested statements follow their top-level statement; parse
-- analysis still creates entries with normalized texts.
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SHOW pg_stat_queries.sample_rate;
SET pg_stat_queries.sample_rate = 1.5;
SET pg_stat_queries.sample_rate = -0.1;

-- rate 0: nothing measured, but a new statement gets its entry and its
-- normalized text at parse analysis (shown once an execution is sampled)
SET pg_stat_queries.sample_rate = 0;
CREATE TABLE sampling_t (a int);
SELECT count(*) FROM sampling_t WHERE a = 42;
SELECT count(*) FROM sampling_t WHERE a = 42;
SET pg_stat_queries.sample_rate = 1;
SELECT count(*) AS unsampled_seen FROM pg_stat_queries
 WHERE query LIKE '%sampling_t%';
SELECT count(*) FROM sampling_t WHERE a = 7;
SELECT calls, query FROM pg_stat_queries WHERE query LIKE '%sampling_t%'
 ORDER BY query COLLATE "C";
-- no literal reached a text because of sampling
SELECT count(*) AS with_literal FROM pg_stat_queries WHERE query LIKE '%42%';

-- rate 0.5 over 400 executions: about half are counted (far from 0 and 400)
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SET pg_stat_queries.sample_rate = 0.5;
\set ECHO none
\o /dev/null
SELECT 'SELECT count(*) FROM sampling_t WHERE a > 1' FROM generate_series(1, 400) \gexec
\o
\set ECHO all
SET pg_stat_queries.sample_rate = 1;
SELECT calls BETWEEN 120 AND 280 AS about_half, rows = calls AS rows_of_sampled
  FROM pg_stat_queries WHERE query = 'SELECT count(*) FROM sampling_t WHERE a > $1';

-- nested statements follow their top-level statement (track = all)
SET pg_stat_queries.track = 'all';
CREATE FUNCTION sampling_f() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r bigint;
BEGIN
  SELECT count(*) INTO r FROM sampling_t WHERE a < 0;
  RETURN r;
END $$;
SET pg_stat_queries.sample_rate = 0.5;
\set ECHO none
\o /dev/null
SELECT 'SELECT sampling_f()' FROM generate_series(1, 200) \gexec
\o
\set ECHO all
SET pg_stat_queries.sample_rate = 1;
SELECT top.calls BETWEEN 50 AND 150 AS about_half,
       nested.calls = top.calls AS nested_follow
  FROM pg_stat_queries top, pg_stat_queries nested
 WHERE top.query = 'SELECT sampling_f()' AND top.toplevel
   AND nested.query LIKE 'SELECT count(*)%sampling_t WHERE a < $1' AND NOT nested.toplevel;
RESET pg_stat_queries.track;
RESET pg_stat_queries.sample_rate;
DROP FUNCTION sampling_f();
DROP TABLE sampling_t;
