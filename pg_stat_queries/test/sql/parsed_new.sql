-- A new statement with constants gets its entry when it ends, holding its
-- first execution, with the text normalized from the constants' locations
-- parse analysis saw; should anything else come first, the entry is made
-- then, without counts, with that same text (as pg_stat_statements makes it
-- at parse analysis).  Each statement below has a shape of its own (its
-- number of columns), so a query id of its own.
CREATE TABLE pn_t (a int);
CREATE FUNCTION pn_show(pattern text)
RETURNS TABLE (query text, calls bigint, failed_calls bigint, toplevel bool)
LANGUAGE sql AS $$
  SELECT query, calls, failed_calls, toplevel FROM pg_stat_queries
   WHERE query LIKE pattern ORDER BY query COLLATE "C", toplevel
$$;
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

-- run once, and twice
SELECT 11 AS pn_once;
SELECT 12, 12 AS pn_twice;
SELECT 13, 13 AS pn_twice;
SELECT * FROM pn_show('%pn_once') UNION ALL SELECT * FROM pn_show('%pn_twice');

-- prepared, then run after the backend went idle (a flush came first)
PREPARE pn_prep AS SELECT 21, 21, 21 AS pn_prepared;
EXECUTE pn_prep;
EXECUTE pn_prep;
DEALLOCATE pn_prep;
-- prepared and run in one query string: EXECUTE waits for it
PREPARE pn_prep2 AS SELECT 22, 22, 22, 22 AS pn_prepared2 \; EXECUTE pn_prep2;
DEALLOCATE pn_prep2;
SELECT * FROM pn_show('PREPARE pn_prep%');

-- extended protocol: two statements parsed, then both run; the first gets
-- its entry when the second is parsed
SELECT 31, 31, 31, 31, 31 AS pn_parsed1 \parse pn_s1
SELECT 32, 32, 32, 32, 32, 32 AS pn_parsed2 \parse pn_s2
\bind_named pn_s1 \g
\bind_named pn_s2 \g
\bind_named pn_s2 \g
SELECT * FROM pn_show('%pn_parsed_');
\close_prepared pn_s1
\close_prepared pn_s2

-- an execution that fails: counted in the entry, which has the text
SELECT 41 / (SELECT count(*) FROM pn_t) AS pn_fails;
SELECT * FROM pn_show('%pn_fails');

-- an execution not sampled: the entry is made without counts, and has the
-- text normalized from the constants when a later execution is counted
SET pg_stat_queries.sample_rate = 0;
SELECT 51, 51, 51, 51, 51, 51, 51 AS pn_unsampled;
RESET pg_stat_queries.sample_rate;
SELECT * FROM pn_show('%pn_unsampled');
SELECT 52, 52, 52, 52, 52, 52, 52 AS pn_unsampled;
SELECT * FROM pn_show('%pn_unsampled');

-- nested statements, each new: the inner one's parse analysis comes while
-- the outer waits, which gets its entry then
SET pg_stat_queries.track = 'all';
CREATE FUNCTION pn_inner() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RETURN (SELECT 61 + 1 AS pn_inner);
END $$;
SELECT pn_inner() + 63 AS pn_outer;
SELECT pn_inner() + 64 AS pn_outer;
RESET pg_stat_queries.track;
SELECT * FROM pn_show('%pn_inner)') UNION ALL SELECT * FROM pn_show('%pn_outer');

-- no literal reaches a text made later
SELECT count(*) AS literals FROM pg_stat_queries
 WHERE query ~ '(11|12|13|21|22|31|32|41|51|52|61|63|64)';

-- an error making the entry of a statement that did not end first (here
-- one injected) is that statement's, not the one parsed meanwhile: the
-- second Parse succeeds, the first statement goes without an entry, and the
-- second gets one when it runs.  (The injection point's own statements get
-- their entries, and their plans', first, so that none is made while it
-- raises errors.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS injection_points;
RESET client_min_messages;
SELECT injection_points_set_local();
SELECT injection_points_attach('pg-stat-queries-create-entry', 'notice');
SELECT injection_points_detach('pg-stat-queries-create-entry');
SELECT injection_points_attach('pg-stat-queries-create-entry', 'notice');
SELECT injection_points_detach('pg-stat-queries-create-entry');
SELECT injection_points_attach('pg-stat-queries-create-entry', 'error');
SELECT 71, 71, 71, 71, 71, 71, 71, 71 AS pn_err1 \parse pn_e1
SELECT 72, 72, 72, 72, 72, 72, 72, 72, 72 AS pn_err2 \parse pn_e2
SELECT injection_points_detach('pg-stat-queries-create-entry');
\bind_named pn_e2 \g
SELECT * FROM pn_show('%pn_err_');
\close_prepared pn_e1
\close_prepared pn_e2

DROP FUNCTION pn_inner();
DROP FUNCTION pn_show(text);
DROP TABLE pn_t;
