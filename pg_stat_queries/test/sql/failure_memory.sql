-- Failures of many distinct statements inside one statement are bounded in
-- memory as those of one statement are: past a few hundred notes, or 1 MB
-- of their texts, they are counted at the next statement's start, and the
-- memory of notes counted goes back (but for the arrays of 64 notes),
-- TopMemoryContext keeping none.
-- 2,000 distinct statements of 5 kB (a literal) failing in one DO held
-- 10 MB, and TopMemoryContext kept most of it once the session was idle.
SET pg_stat_queries.track = 'all';
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SELECT sum(total_bytes) AS before_bytes FROM pg_backend_memory_contexts
 WHERE name IN ('TopMemoryContext', 'pg_stat_queries failures') \gset

CREATE FUNCTION fm_bytes() RETURNS bigint LANGUAGE sql
  AS $$SELECT sum(total_bytes)::bigint FROM pg_backend_memory_contexts
         WHERE name IN ('TopMemoryContext', 'pg_stat_queries failures')$$;

DO $$
DECLARE
  pad text := repeat('x', 5000);
  before bigint := fm_bytes();
  peak bigint := 0;
BEGIN
  FOR i IN 1..2000 LOOP
    BEGIN
      -- a distinct query id each: the shape of the expression differs
      EXECUTE 'SELECT 1/0, ' || repeat('3+', i % 400) || '3, ' ||
              repeat('4*', i / 400) || '4, ''' || pad || '''';
    EXCEPTION WHEN division_by_zero THEN NULL;
    END;
    IF i % 100 = 0 THEN
      peak := greatest(peak, fm_bytes());
    END IF;
  END LOOP;
  RAISE NOTICE 'bounded inside the statement: %',
    peak - before < 3000000;
END $$;

-- once idle (the flush counts what is left), nothing is kept
SELECT pg_stat_force_next_flush();
SELECT fm_bytes() - :before_bytes < 1000000 AS given_back,
       (SELECT total_bytes FROM pg_backend_memory_contexts
         WHERE name = 'pg_stat_queries failures') <= 16384 AS failures_empty;

-- every failure was counted, and every statement has its text
SELECT count(*) AS statements, sum(failed_calls) AS failed,
       count(*) FILTER (WHERE query LIKE '%xxx%') AS with_literal
  FROM pg_stat_queries WHERE query LIKE 'SELECT $1/$2, %';

DROP FUNCTION fm_bytes();
RESET pg_stat_queries.track;
