-- A flush that an error cuts short merges nothing twice: counts merged
-- before the error are not merged again by the next flush, and those not
-- yet merged are, once.  The error is injected after the first statement's
-- counts are merged (injection point pg-stat-queries-flush-merged).  That
-- needs a server built with --enable-injection-points, as
-- scripts/install-postgres builds the assert flavour on which the tests
-- run: without it, the test fails.
CREATE EXTENSION injection_points;
SELECT injection_points_set_local();
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

-- three statements with pending counts: the first execution of each made
-- its entry, the second waits in this backend's pending table
SELECT 1 AS flush_a;
SELECT 1, 2 AS flush_b;
SELECT 1, 2, 3 AS flush_c;
SELECT 1 AS flush_a;
SELECT 1, 2 AS flush_b;
SELECT 1, 2, 3 AS flush_c;

-- reading the view merges this backend's pending counts first: the error
-- comes after the first statement's are merged (caught, in one statement,
-- so that no flush at idle sees the injection point)
DO $$
BEGIN
  PERFORM injection_points_attach('pg-stat-queries-flush-merged', 'error');
  BEGIN
    PERFORM count(*) FROM pg_stat_queries;
  EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'flush cut short: %', SQLERRM;
  END;
  PERFORM injection_points_detach('pg-stat-queries-flush-merged');
END $$;

-- each ran twice: two calls each, none counted twice, none lost
SELECT query, calls FROM pg_stat_queries
 WHERE query LIKE '%AS flush\_%' ORDER BY query COLLATE "C";

-- a statement whose counts were merged before the error counts on
SELECT 1 AS flush_a;
SELECT query, calls FROM pg_stat_queries
 WHERE query LIKE '%AS flush\_%' ORDER BY query COLLATE "C";

DROP EXTENSION injection_points;
