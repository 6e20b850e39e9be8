-- No value typed into a statement reaches a stored text, whatever the
-- statement: every string, number, bit-string and dollar-quoted literal
-- becomes a placeholder, including the values the parser keeps as plain
-- strings in utility statements (passwords, options, connection strings,
-- payloads, bodies, labels, file names), for statements that succeed and
-- statements that fail, top level and nested.  Identifiers stay as written.
-- Every planted value contains "Planted"; each failing variant prints only
-- its SQLSTATE.
SET pg_stat_queries.track = 'all';
SELECT pg_stat_queries_reset() IS NOT NULL AS t;

-- role passwords, and the form psql's \password sends (a SCRAM verifier)
CREATE ROLE regress_lit_alice LOGIN PASSWORD 'PlantedPassword01';
ALTER ROLE regress_lit_alice PASSWORD 'PlantedPassword02';
ALTER ROLE regress_lit_alice PASSWORD 'PlantedPassword02b';
CREATE USER regress_lit_bob PASSWORD 'PlantedPassword03' VALID UNTIL '2999-01-01';
ALTER USER regress_lit_bob WITH ENCRYPTED PASSWORD 'PlantedPassword04';
ALTER USER regress_lit_bob PASSWORD 'SCRAM-SHA-256$4096:UGxhbnRlZFNhbHQwMDAwMQ==$oJtsR/CKuRlI4Wvdei2EBBLYQIQHX+BHd428Z+Jen0Y=:SYwe7RoyT9xrOaAh/3IjW5BBCaU+HIl0R3jlTY9XVZ4=';
ALTER ROLE regress_lit_alice SET application_name = 'PlantedSetting05';
\set VERBOSITY sqlstate
CREATE ROLE regress_lit_alice PASSWORD 'PlantedPassword06';
ALTER ROLE regress_lit_nobody PASSWORD 'PlantedPassword07';
CREATE USER regress_lit_carol PASSWORD 'PlantedPassword08' CONNECTION LIMIT -5;
\set VERBOSITY default

-- foreign servers and user mappings
CREATE FOREIGN DATA WRAPPER regress_lit_fdw;
CREATE SERVER regress_lit_server FOREIGN DATA WRAPPER regress_lit_fdw
  OPTIONS (host 'PlantedHost09', port '5999');
ALTER SERVER regress_lit_server OPTIONS (SET host 'PlantedHost10');
CREATE USER MAPPING FOR regress_lit_alice SERVER regress_lit_server
  OPTIONS (user 'regress_lit_alice', password 'PlantedPassword11');
ALTER USER MAPPING FOR regress_lit_alice SERVER regress_lit_server
  OPTIONS (SET password 'PlantedPassword12');
\set VERBOSITY sqlstate
CREATE SERVER regress_lit_server FOREIGN DATA WRAPPER regress_lit_fdw
  OPTIONS (host 'PlantedHost13');
CREATE USER MAPPING FOR regress_lit_nobody SERVER regress_lit_server
  OPTIONS (password 'PlantedPassword14');
\set VERBOSITY default

-- subscriptions: created without connecting; then one that cannot connect
-- and one whose connection string is malformed
SET client_min_messages = error;
CREATE SUBSCRIPTION regress_lit_sub
  CONNECTION 'dbname=regress_lit password=PlantedPassword15'
  PUBLICATION regress_lit_pub WITH (connect = false);
ALTER SUBSCRIPTION regress_lit_sub
  CONNECTION 'dbname=regress_lit password=PlantedPassword16';
\set VERBOSITY sqlstate
CREATE SUBSCRIPTION regress_lit_sub2
  CONNECTION 'host=/nonexistent/regress_lit port=1 password=PlantedPassword17'
  PUBLICATION regress_lit_pub;
CREATE SUBSCRIPTION regress_lit_sub3
  CONNECTION 'password=PlantedPassword18 malformed'
  PUBLICATION regress_lit_pub WITH (connect = false);
\set VERBOSITY default
ALTER SUBSCRIPTION regress_lit_sub SET (slot_name = NONE);
DROP SUBSCRIPTION regress_lit_sub;
RESET client_min_messages;

-- notifications (nobody listens): NOTIFY and pg_notify, and payloads too
-- long for them
NOTIFY regress_lit_chan, 'PlantedPayload19';
SELECT pg_notify('regress_lit_chan', 'PlantedPayload20');
SELECT 'PlantedPayload21' || repeat('x', 8000) AS payload \gset
\set VERBOSITY sqlstate
NOTIFY regress_lit_chan, :'payload';
SELECT pg_notify('regress_lit_chan', 'PlantedPayload22' || repeat('x', 8000));
\set VERBOSITY default

-- DO blocks, dollar-quoted with and without a tag, and in plain quotes;
-- the nested statements they run are tracked too (track = all)
DO $$BEGIN PERFORM 'PlantedBody23'; END$$;
DO LANGUAGE plpgsql 'BEGIN PERFORM 24 + 1000000; END';
\set VERBOSITY sqlstate
DO $body$BEGIN RAISE EXCEPTION 'PlantedBody25'; END$body$;
\set VERBOSITY default

-- function bodies: a string, a dollar-quoted string, a standard SQL body;
-- one that fails validation
CREATE FUNCTION regress_lit_f() RETURNS text LANGUAGE sql
  AS $fn$ SELECT 'PlantedBody26' $fn$;
CREATE FUNCTION regress_lit_g() RETURNS text LANGUAGE sql
  AS 'SELECT ''PlantedBody27''';
CREATE FUNCTION regress_lit_h() RETURNS text LANGUAGE sql
  BEGIN ATOMIC SELECT 'PlantedBody28'; END;
SELECT regress_lit_f(), regress_lit_g(), regress_lit_h();
\set VERBOSITY sqlstate
CREATE FUNCTION regress_lit_bad() RETURNS text LANGUAGE sql
  AS $fn$ SELECT 'PlantedBody29' FROM regress_lit_nowhere $fn$;
\set VERBOSITY default

-- comments and security labels (no label provider is loaded: it fails)
CREATE TABLE regress_lit_t (a text, "Mixed Case ""Ident""" int);
COMMENT ON TABLE regress_lit_t IS 'PlantedComment30';
COMMENT ON COLUMN regress_lit_t."Mixed Case ""Ident""" IS E'PlantedComment31\n';
\set VERBOSITY sqlstate
COMMENT ON TABLE regress_lit_nowhere IS 'PlantedComment32';
SECURITY LABEL ON TABLE regress_lit_t IS 'PlantedLabel33';
SECURITY LABEL FOR regress_lit_provider ON ROLE regress_lit_alice IS 'PlantedLabel34';
\set VERBOSITY default

-- COPY file names (in the data directory) and programs
INSERT INTO regress_lit_t VALUES ('row');
SELECT setting || '/regress_lit_PlantedFile35.csv' AS copyfile
  FROM pg_settings WHERE name = 'data_directory' \gset
COPY regress_lit_t TO :'copyfile';
COPY regress_lit_t FROM :'copyfile';
COPY regress_lit_t TO PROGRAM 'cat >/dev/null # PlantedProgram36';
\set VERBOSITY sqlstate
COPY regress_lit_t FROM 'regress_lit_PlantedFile37_missing.csv';
\set VERBOSITY default

-- settings: values as strings and numbers (a value written as an
-- identifier is a constant to the parser, and a placeholder as in
-- pg_stat_statements)
SET application_name = 'PlantedSetting38';
SET search_path = "LitSchemaIdent", public;
SET statement_timeout = 987654;
SET TIME ZONE 'America/Santiago';
\set VERBOSITY sqlstate
SET work_mem = 'PlantedSetting40';
SET extra_float_digits = 97531;
\set VERBOSITY default
RESET application_name;
RESET search_path;
RESET statement_timeout;
RESET TIME ZONE;

-- database options
CREATE DATABASE regress_lit_db TEMPLATE template0 ENCODING 'SQL_ASCII'
  LC_COLLATE 'C' LC_CTYPE 'C' CONNECTION LIMIT 3;
\set VERBOSITY sqlstate
CREATE DATABASE regress_lit_db2 TEMPLATE template0 LOCALE 'PlantedLocale41';
\set VERBOSITY default
DROP DATABASE regress_lit_db;

-- other literal forms in utility statements: bit strings, hexadecimal,
-- Unicode escapes, numbers with a sign, exponent or underscores
CREATE TABLE regress_lit_forms (
  a bit(4) DEFAULT B'1010',
  b bytea DEFAULT '\x506c616e746564',
  c text DEFAULT U&'Planted\0021',
  d numeric DEFAULT -1.5e3,
  e int DEFAULT 1_000_000,
  f int DEFAULT 0x50);
DROP TABLE regress_lit_forms;

-- in other statements, the numbers the parser keeps out of its constants
-- (positions, type modifiers); digits inside identifiers stay
SELECT 'PlantedConst42'::varchar(17) AS lit_v, 3 AS lit_w ORDER BY 1, 2;
SELECT count(*) AS lit_x FROM regress_lit_t t1, regress_lit_t t2;
SELECT a AS lit_y FROM regress_lit_t WHERE a = 'PlantedConst43' ORDER BY 1;

-- a text stored without the parser's locations: the prepared statement's
-- entry is reset, and its parse is no longer among those the backend keeps
-- (four per level) when it runs again; its literals are still replaced
PREPARE regress_lit_prep(int) AS
  SELECT $1 + 41 AS lit_prepared, 'PlantedPrepared44' AS lit_z;
EXECUTE regress_lit_prep(1);
SELECT pg_stat_queries_reset(0, 0, queryid) IS NOT NULL AS t
  FROM pg_stat_queries WHERE query LIKE '%lit_prepared%';
SELECT 1 AS lit_parsed_after;
SELECT 2 AS lit_parsed_after;
SELECT 3 AS lit_parsed_after;
SELECT 4 AS lit_parsed_after;
EXECUTE regress_lit_prep(2);
DEALLOCATE regress_lit_prep;
SELECT query, calls FROM pg_stat_queries
 WHERE query LIKE '%lit_prepared%' OR query IS NULL;

-- what is stored: no planted value anywhere, and no quote, so no string
-- literal of any form (identifiers here have none); the shape stays
SELECT count(*) AS texts_with_planted_values
  FROM pg_stat_queries WHERE query ~ 'Planted|UGxhbnRl|SCRAM';
SELECT count(*) AS texts_with_quotes
  FROM pg_stat_queries WHERE query LIKE '%''%';
SELECT query, toplevel, calls, failed_calls, last_failed_sqlstate
  FROM pg_stat_queries
 WHERE query !~ 'pg_stat_queries'
 ORDER BY query COLLATE "C", toplevel, calls, failed_calls;

-- the query id hashes the strings the parser keeps as such (passwords,
-- options): one entry per distinct value, all with the same text; constants
-- (SET's value) share one entry
SELECT query, count(*) AS entries
  FROM pg_stat_queries
 WHERE query IN ('ALTER ROLE regress_lit_alice PASSWORD $1',
                 'SET application_name = $1')
 GROUP BY query ORDER BY query COLLATE "C";

-- the same rule for pg_stat_queries_changed() and the drop-in
SELECT count(*) AS changed_texts_with_planted_values
  FROM pg_stat_queries_changed('-infinity')
 WHERE query ~ 'Planted|UGxhbnRl|SCRAM' OR query LIKE '%''%';
SELECT set_config('extension_control_path',
                  (SELECT setting FROM pg_config WHERE name = 'SHAREDIR')
                  || '/pg_stat_queries_compat:$system', false) IS NOT NULL AS t;
CREATE EXTENSION pg_stat_statements;
SELECT count(*) AS dropin_texts_with_planted_values
  FROM pg_stat_statements
 WHERE query ~ 'Planted|UGxhbnRl|SCRAM' OR query LIKE '%''%';
SELECT count(*) > 20 AS dropin_has_the_texts
  FROM pg_stat_statements WHERE query ~ 'regress_lit';
DROP EXTENSION pg_stat_statements;

-- clean up
DROP FUNCTION regress_lit_f(), regress_lit_g(), regress_lit_h();
DROP TABLE regress_lit_t;
DROP USER MAPPING FOR regress_lit_alice SERVER regress_lit_server;
DROP SERVER regress_lit_server;
DROP FOREIGN DATA WRAPPER regress_lit_fdw;
DROP ROLE regress_lit_alice, regress_lit_bob;
RESET pg_stat_queries.track;
