-- Workload run against pg_stat_statements and pg_stat_queries alike by
-- test/t/004_pgss_parity.pl; both must report the same rows.
CREATE TABLE parity (id int PRIMARY KEY, v text, n numeric);
INSERT INTO parity SELECT g, 'v' || g, g * 1.5 FROM generate_series(1, 200) g;
INSERT INTO parity VALUES (1001, 'x', -1), (1002, 'y', -2.5e3);
UPDATE parity SET v = 'u' WHERE id BETWEEN 5 AND 9;
DELETE FROM parity WHERE id = 1002;
SELECT count(*) FROM parity WHERE v LIKE 'v1%';
SELECT count(*) FROM parity WHERE v LIKE 'v2%';
SELECT id FROM parity WHERE id IN (1, 2, 3, 4) ORDER BY id;
SELECT id FROM parity WHERE id IN (5, 6) ORDER BY id;
SELECT id FROM parity WHERE id = ANY (ARRAY[7, 8, 9]) ORDER BY id;
SELECT -1 AS neg, +2 AS pos, -3.5 AS negf, 1e-3 AS tiny;
SELECT $tag$dollar$tag$, $$plain$$, E'esc\n', U&'\0041', B'1010', X'ff', N'nat';
SELECT /* inline comment */ 'c' -- trailing comment
  AS commented;
SELECT 1 \; SELECT 2, 3 \; SELECT 'three', 4, 5;
WITH w AS (SELECT id FROM parity WHERE id < 10) SELECT count(*) FROM w;
VALUES (1, 'a'), (2, 'b');
SELECT * FROM (VALUES (1), (2), (3)) v(x) WHERE x > 1;
PREPARE pp(int, text) AS SELECT count(*) FROM parity WHERE id > $1 AND v <> $2;
EXECUTE pp(10, 'a');
EXECUTE pp(20, 'b');
DEALLOCATE pp;
SELECT count(*) FROM parity WHERE id > $1 \bind 5 \g
SELECT count(*) FROM parity WHERE id > $1 \bind 6 \g
CREATE FUNCTION parity_f(k int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE c bigint;
BEGIN
  SELECT count(*) INTO c FROM parity WHERE id < k;
  PERFORM 1 + 2;
  RETURN c;
END $$;
SELECT parity_f(50);
SELECT parity_f(60);
DO $$ BEGIN PERFORM parity_f(3); END $$;
CREATE FUNCTION parity_sql(k int) RETURNS int LANGUAGE sql AS 'SELECT k * 2';
SELECT parity_sql(4);
BEGIN;
SAVEPOINT s1;
UPDATE parity SET n = n + 1 WHERE id = 1;
ROLLBACK TO SAVEPOINT s1;
RELEASE SAVEPOINT s1;
COMMIT;
BEGIN;
DECLARE cur CURSOR FOR SELECT id FROM parity ORDER BY id;
FETCH 5 FROM cur;
FETCH NEXT FROM cur;
CLOSE cur;
COMMIT;
COPY (SELECT id FROM parity WHERE id <= 3) TO STDOUT;
CREATE TABLE parity_ctas AS SELECT id FROM parity WHERE id < 20;
CREATE MATERIALIZED VIEW parity_mv AS SELECT id FROM parity WHERE id < 30;
REFRESH MATERIALIZED VIEW parity_mv;
EXPLAIN (COSTS OFF) SELECT * FROM parity WHERE id = 42;
SET work_mem = '5MB';
SET LOCAL work_mem = '6MB';
RESET work_mem;
SHOW work_mem;
ANALYZE parity;
VACUUM parity_ctas;
CREATE INDEX parity_v ON parity (v);
ALTER TABLE parity ADD COLUMN extra int DEFAULT 7;
SELECT 1 / 0;
SELECT pg_sleep(0.01);
SELECT repeat('long', 300) = 'never' AS long_statement_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx;
DROP MATERIALIZED VIEW parity_mv;
DROP TABLE parity_ctas;
DROP FUNCTION parity_f(int);
DROP FUNCTION parity_sql(int);
DROP TABLE parity;
