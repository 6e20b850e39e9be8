-- Statements that end under another user than they were parsed under, or
-- whose entry is gone when they end, keep the normalized text that parse
-- analysis produced: never NULL, never a literal.
SET pg_stat_queries.track = 'all';
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
CREATE ROLE regress_switch_a;
CREATE ROLE regress_switch_b;
CREATE ROLE regress_switch_definer;
GRANT regress_switch_b TO regress_switch_a;

-- SET / RESET SESSION AUTHORIZATION, quoted and not, and SET LOCAL
SET SESSION AUTHORIZATION 'regress_switch_a';
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION regress_switch_a;
RESET SESSION AUTHORIZATION;
BEGIN;
SET LOCAL SESSION AUTHORIZATION 'regress_switch_a';
COMMIT;

-- SET ROLE and RESET ROLE
SET SESSION AUTHORIZATION regress_switch_a;
SET ROLE 'regress_switch_b';
RESET ROLE;
SET ROLE regress_switch_b;
RESET ROLE;
RESET SESSION AUTHORIZATION;

-- A SECURITY DEFINER function: the call is counted for its caller, the
-- statements inside (track = all) for the definer
CREATE FUNCTION switch_definer(n int) RETURNS int LANGUAGE plpgsql
  SECURITY DEFINER AS $$
DECLARE
  r int;
BEGIN
  SELECT count(*) + n + 100 INTO r FROM pg_roles WHERE rolname = current_user;
  RETURN r;
END $$;
ALTER FUNCTION switch_definer(int) OWNER TO regress_switch_definer;
GRANT EXECUTE ON FUNCTION switch_definer(int) TO regress_switch_a;
SET SESSION AUTHORIZATION regress_switch_a;
SELECT switch_definer(7) AS secdef;
SELECT switch_definer(8) AS secdef;
RESET SESSION AUTHORIZATION;

SELECT r.rolname, s.toplevel, s.calls, s.query
  FROM pg_stat_queries s JOIN pg_roles r ON r.oid = s.userid
 WHERE s.query IS NULL OR s.query ~* '(authorization|role|switch|secdef|pg_roles)'
 ORDER BY s.query COLLATE "C", r.rolname, s.toplevel;

-- no row without text, and no literal of ours anywhere
SELECT count(*) AS without_text FROM pg_stat_queries WHERE query IS NULL;
SELECT count(*) AS with_literal FROM pg_stat_queries
 WHERE query !~ '^CREATE FUNCTION'
   AND query ~ '''regress_switch|\(7\)|\(8\)|\m100\M';

-- A statement that resets its own entry: re-created when it ends, with its
-- normalized text
SELECT pg_stat_queries_reset(0, 0, 0) IS NOT NULL AS self_reset;
SELECT calls, query FROM pg_stat_queries ORDER BY query COLLATE "C";

-- A statement without constants gets the text of the execution that ended,
-- as in pg_stat_statements: one that fails leaves no text for it
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
CREATE TABLE switch_t (a int);
INSERT INTO switch_t VALUES (5);
SELECT a / (a - a) FROM switch_t;
TRUNCATE switch_t;
select a / (a - a) from switch_t;
SELECT calls, query FROM pg_stat_queries WHERE query ~* 'a - a' ORDER BY query COLLATE "C";

-- A prepared statement run at another nesting level (EXPLAIN EXECUTE, with
-- track = all) takes the normalized text of its top-level sibling
PREPARE switch_prep(int) AS SELECT count(*) FROM switch_t WHERE a = $1 AND a <> 42;
EXECUTE switch_prep(1);
EXPLAIN (COSTS OFF) EXECUTE switch_prep(2);
SELECT toplevel, calls, query FROM pg_stat_queries WHERE query ~ 'switch_t WHERE'
 ORDER BY toplevel, query COLLATE "C";
DEALLOCATE switch_prep;
DROP TABLE switch_t;

DROP FUNCTION switch_definer(int);
DROP ROLE regress_switch_a;
DROP ROLE regress_switch_b;
DROP ROLE regress_switch_definer;
