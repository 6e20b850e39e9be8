-- A text is scanned for literals the way PostgreSQL lexed it, whatever the
-- scanner settings are when it is normalized.  Every planted value contains
-- "Zq9"; none may reach a stored text.

-- backslash_quote only decides whether \' in a string is an error: a failure
-- lexed with it on is counted, and its text made, after ROLLBACK set it back
-- to off, and it still gets its text (it had none: the scan failed)
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SET backslash_quote = off;
BEGIN;
SET LOCAL backslash_quote = on;
\set VERBOSITY sqlstate
DO E'x\' Zq9021x';
\set VERBOSITY default
ROLLBACK;
SELECT query, calls, failed_calls FROM pg_stat_queries WHERE query LIKE 'DO %';
RESET backslash_quote;

-- On PostgreSQL 19 standard_conforming_strings is always on
-- (scanner_settings_1.out)
SELECT current_setting('server_version_num')::int >= 190000 AS scs_always_on
\gset
\if :scs_always_on
\quit
\endif

-- On 18, with standard_conforming_strings off a backslash in '...' escapes
-- the next character: 'a\', ' is one string, where 'a\' is one with it on.
CREATE FOREIGN DATA WRAPPER regress_scs_fdw;

-- A session that never changed it lexed every text with it: even a text
-- that both settings can read, differently, gets its text
\c
PREPARE regress_scs_p AS SELECT 'a\', 'Zq9005x', 5 -- '
;
SELECT pg_stat_queries_reset() IS NOT NULL AS t;
SELECT 'a\', 'Zq9000x' -- '
;
SELECT query, calls FROM pg_stat_queries WHERE query LIKE 'SELECT $1, $2 %';

-- A prepared statement whose entry is gone (reset above, evicted as well),
-- run after a SET: its text is made when it ends.  This backend has lexed
-- texts with both settings now, and both read this text, differently: it
-- gets no text.
SET standard_conforming_strings = off;
EXECUTE regress_scs_p;
RESET standard_conforming_strings;
SELECT query FROM pg_stat_queries WHERE query LIKE '%Zq9%';
DEALLOCATE regress_scs_p;

-- A query string that sets it: PostgreSQL lexes every statement in it with
-- the setting in force before the first one ran, and parse analysis of the
-- second (or its end, for a statement with no constant located) comes after
-- the SET
\c
SET standard_conforming_strings = off \; SELECT 'a\', 'Zq9001x', 1, 1 -- '
;
RESET standard_conforming_strings;
SET standard_conforming_strings = off \; CREATE SERVER regress_scs_s1 FOREIGN DATA WRAPPER regress_scs_fdw OPTIONS (host 'a\', dbname 'Zq9002x') -- '
;
RESET standard_conforming_strings;
SELECT query FROM pg_stat_queries WHERE query LIKE '%Zq9%';

-- the other way: lexed with it off, normalized with it on
\c
SET standard_conforming_strings = off;
SET standard_conforming_strings = on \; SELECT 'b\' Zq9003x ' -- '
;
SELECT query FROM pg_stat_queries WHERE query LIKE '%Zq9%';

-- A failure counted after ROLLBACK undid the SET it was lexed under
\c
BEGIN;
SET standard_conforming_strings = off;
\set VERBOSITY sqlstate
DO 'x\' Zq9004x ' -- '
;
\set VERBOSITY default
ROLLBACK;
SELECT query, calls, failed_calls FROM pg_stat_queries WHERE query LIKE '%Zq9%';

-- Where only one setting can read a text, that one lexed it: it gets its
-- text, in a session that used both
\c
SET standard_conforming_strings = off;
SELECT 'it\'s', 'Zq9006x', 6, 6, 6;
RESET standard_conforming_strings;
SELECT query, calls FROM pg_stat_queries WHERE query LIKE 'SELECT $1, $2, $3, %';

-- the statements of this file that could not get a text are tracked
SELECT calls, failed_calls FROM pg_stat_queries WHERE query IS NULL
 ORDER BY calls, failed_calls;

-- the same texts for pg_stat_queries_changed() and the drop-in
SELECT count(*) AS changed_texts_with_planted_values
  FROM pg_stat_queries_changed('-infinity') WHERE query LIKE '%Zq9%';
SELECT set_config('extension_control_path',
                  (SELECT setting FROM pg_config WHERE name = 'SHAREDIR')
                  || '/pg_stat_queries_compat:$system', false) IS NOT NULL AS t;
CREATE EXTENSION pg_stat_statements;
SELECT count(*) AS dropin_texts_with_planted_values
  FROM pg_stat_statements WHERE query LIKE '%Zq9%';
DROP EXTENSION pg_stat_statements;
RESET extension_control_path;

DROP SERVER regress_scs_s1;
DROP FOREIGN DATA WRAPPER regress_scs_fdw;
