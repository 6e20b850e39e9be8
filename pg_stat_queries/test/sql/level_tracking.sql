-- track = top / all / none, and the toplevel column
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

CREATE FUNCTION lt_add(a int, b int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RETURN (SELECT a + b);
END $$;

SET pg_stat_queries.track = 'top';
SELECT lt_add(1, 2);
DO $$ BEGIN PERFORM 1 + 1; END $$;
SELECT toplevel, calls, query FROM pg_stat_queries ORDER BY query COLLATE "C", toplevel;

SET pg_stat_queries.track = 'all';
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SELECT lt_add(3, 4);
DO $$ BEGIN PERFORM 1 + 1; END $$;
SELECT toplevel, calls, query FROM pg_stat_queries ORDER BY query COLLATE "C", toplevel;

-- nothing at all with none
SET pg_stat_queries.track = 'none';
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SELECT lt_add(5, 6);
SELECT count(*) AS tracked FROM pg_stat_queries;
RESET pg_stat_queries.track;
DROP FUNCTION lt_add;
