-- Pending counts are kept in this backend's "pg_stat_queries pending"
-- memory context until they are merged.  A burst of statements grows it;
-- batches that need much less give the memory back.

-- The table is there, at its first size, before this session's first
-- statement ends: it is made when the server starts and inherited, so that
-- it does not land above a statement's executor memory (docs/design.md,
-- "Backend memory made at server start").  This must stay the file's first
-- statement.
SELECT count(*) AS contexts, bool_and(total_bytes > 30000) AS reserved
  FROM pg_backend_memory_contexts WHERE name = 'pg_stat_queries pending';

SET pg_stat_queries.track = 'all';
SELECT pg_stat_queries_reset() IS NOT NULL AS reset;

-- 2,000 statements (one query id per alias), each run twice: the first run
-- of a new statement is merged at once, the second is pending, and so are
-- the counts of its plan (plans' entries take pending positions too: the
-- array grows to what statements and plans need together)
DO $$
BEGIN
  FOR i IN 1..2000 LOOP
    EXECUTE format('SELECT FROM pg_am c%s', i);
    EXECUTE format('SELECT FROM pg_am c%s', i);
  END LOOP;
END $$;

SELECT total_bytes > 1000000 AS grown
  FROM pg_backend_memory_contexts WHERE name = 'pg_stat_queries pending';
SELECT total_bytes AS grown_bytes
  FROM pg_backend_memory_contexts WHERE name = 'pg_stat_queries pending' \gset

-- reading the view merges this backend's pending counts first
SELECT count(*) AS statements, min(calls) AS min_calls, max(calls) AS max_calls
  FROM pg_stat_queries WHERE query LIKE 'SELECT FROM pg_am c%';

-- each read merges what ran since: the read before it, a small batch (the
-- first read's count went into the entry it created).  One or two small
-- batches do not shrink the array (it would grow again at the next batch of
-- the usual size) ...
DO $$
BEGIN
  FOR i IN 1..3 LOOP
    PERFORM count(*) FROM pg_stat_queries;
  END LOOP;
END $$;
SELECT total_bytes > 1000000 AS still_grown
  FROM pg_backend_memory_contexts WHERE name = 'pg_stat_queries pending';

-- ... but four in a row halve it: the memory shrinks (nineteen small
-- batches halve it four times, to a sixteenth of what it grew to)
DO $$
BEGIN
  FOR i IN 1..16 LOOP
    PERFORM count(*) FROM pg_stat_queries;
  END LOOP;
END $$;

SELECT total_bytes * 10 < :grown_bytes AS shrunk
  FROM pg_backend_memory_contexts WHERE name = 'pg_stat_queries pending';

-- Inside one statement that runs many others (a DO, a CALL) the backend
-- never goes idle: 4,096 statements pending are merged at once, so the table
-- stays at that size (4,500 statements, each run twice, held 12 MB before)
SELECT pg_stat_queries_reset() IS NOT NULL AS reset;
DO $$
DECLARE
  bytes bigint;
BEGIN
  FOR i IN 1..4500 LOOP
    EXECUTE format('SELECT FROM pg_am e%s', i);
    EXECUTE format('SELECT FROM pg_am e%s', i);
  END LOOP;
  SELECT total_bytes INTO bytes
    FROM pg_backend_memory_contexts WHERE name = 'pg_stat_queries pending';
  RAISE NOTICE 'pending table bounded inside the statement: %',
    bytes < 8000000;
END $$;
SELECT count(*) AS statements, min(calls) AS min_calls, max(calls) AS max_calls
  FROM pg_stat_queries WHERE query LIKE 'SELECT FROM pg_am e%';
SELECT pg_stat_queries_reset() IS NOT NULL AS reset;

-- Failures inside one long statement are noted once per statement,
-- however often it fails: a loop catching 20,000 errors of one nested
-- statement leaves this backend's top memory context about as it was, and
-- every failure is counted
SELECT total_bytes AS top_before
  FROM pg_backend_memory_contexts WHERE name = 'TopMemoryContext' \gset
DO $$
BEGIN
  FOR i IN 1..20000 LOOP
    BEGIN
      PERFORM i / 0 AS fail_many;
    EXCEPTION WHEN division_by_zero THEN NULL;
    END;
  END LOOP;
END $$;
SELECT total_bytes - :top_before < 100000 AS top_memory_kept
  FROM pg_backend_memory_contexts WHERE name = 'TopMemoryContext';
SELECT query, calls, failed_calls, last_failed_sqlstate
  FROM pg_stat_queries WHERE query LIKE '%AS fail_many';

RESET pg_stat_queries.track;
