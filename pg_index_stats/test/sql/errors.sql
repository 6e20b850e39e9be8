-- Relations that the statistics functions must refuse, and privileges.

-- not an index at all
CREATE TABLE err_tab (a int, b int[], t text);
INSERT INTO err_tab SELECT g, ARRAY[g], g::text FROM generate_series(1, 100) g;
CREATE VIEW err_view AS SELECT * FROM err_tab;
CREATE SEQUENCE err_seq;
SELECT * FROM pg_index_stats('err_tab');
SELECT * FROM pg_hash_index_stats('err_tab');
SELECT * FROM pg_index_stats('err_view');
SELECT * FROM pg_hash_index_stats('err_seq');

-- OIDs of no relation: none ever (0), none yet (the largest), and an
-- index dropped since its OID was taken (below, as its OID varies)
SELECT * FROM pg_index_stats(0);
SELECT * FROM pg_hash_index_stats(4294967295);
SELECT * FROM pg_hash_index_stats('0');
CREATE INDEX err_gone ON err_tab (a);
SELECT 'err_gone'::regclass::oid AS gone_oid \gset
DROP INDEX err_gone;

-- an index of the wrong access method
CREATE INDEX err_gin ON err_tab USING gin (b);
CREATE INDEX err_hash ON err_tab USING hash (a);
CREATE INDEX err_btree ON err_tab (a);
SELECT * FROM pg_index_stats('err_gin');
SELECT * FROM pg_index_stats('err_hash');
SELECT * FROM pg_hash_index_stats('err_btree');

-- partitioned indexes have no storage; their partitions' indexes do
CREATE TABLE err_parted (a int) PARTITION BY RANGE (a);
CREATE TABLE err_parted_1 PARTITION OF err_parted FOR VALUES FROM (0) TO (1000);
INSERT INTO err_parted SELECT g FROM generate_series(0, 999) g;
CREATE INDEX err_parted_a ON err_parted (a);
CREATE INDEX err_parted_h ON err_parted USING hash (a);
SELECT * FROM pg_index_stats('err_parted_a');
SELECT * FROM pg_hash_index_stats('err_parted_h');
SELECT leaf_pages FROM pg_index_stats('err_parted_1_a_idx');

-- invalid indexes left behind by failed concurrent builds
INSERT INTO err_tab VALUES (1, NULL, 'dup');
CREATE UNIQUE INDEX CONCURRENTLY err_invalid_bt ON err_tab (a);
CREATE INDEX CONCURRENTLY err_invalid_h ON err_tab USING hash ((100 / (a - 50)));
SELECT indexrelid::regclass, indisvalid FROM pg_index
  WHERE indexrelid IN ('err_invalid_bt'::regclass, 'err_invalid_h'::regclass)
  ORDER BY 1;
SELECT * FROM pg_index_stats('err_invalid_bt');
SELECT * FROM pg_hash_index_stats('err_invalid_h');

-- privileges: EXECUTE is revoked from PUBLIC and granted to
-- pg_stat_scan_tables
CREATE ROLE regress_pis_user;
GRANT SELECT ON err_tab TO regress_pis_user;
SET ROLE regress_pis_user;
SELECT leaf_pages FROM pg_index_stats('err_btree');
SELECT live_items FROM pg_hash_index_stats('err_hash');
RESET ROLE;
GRANT pg_stat_scan_tables TO regress_pis_user;
SET ROLE regress_pis_user;
SELECT leaf_pages FROM pg_index_stats('err_btree');
SELECT live_items FROM pg_hash_index_stats('err_hash');
RESET ROLE;
SELECT routine_name, grantee, privilege_type FROM information_schema.routine_privileges
  WHERE routine_name IN ('pg_index_stats', 'pg_hash_index_stats')
    AND grantee <> current_user
  ORDER BY routine_name, grantee;

-- the SQLSTATE of every refusal above
CREATE FUNCTION sqlstate_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'no error';
EXCEPTION WHEN others THEN
  RETURN SQLSTATE;
END
$$;
CREATE ROLE regress_pis_nopriv;
GRANT EXECUTE ON FUNCTION sqlstate_of(text) TO regress_pis_nopriv;
SELECT fn, rel, sqlstate_of(format('SELECT * FROM %s(%L)', fn, rel)) AS sqlstate
  FROM (VALUES ('pg_index_stats', '0'),
               ('pg_hash_index_stats', '4294967295'),
               ('pg_index_stats', 'err_tab'),
               ('pg_index_stats', 'err_view'),
               ('pg_hash_index_stats', 'err_seq'),
               ('pg_index_stats', 'err_gin'),
               ('pg_hash_index_stats', 'err_btree'),
               ('pg_index_stats', 'err_parted_a'),
               ('pg_hash_index_stats', 'err_parted_h'),
               ('pg_index_stats', 'err_invalid_bt'),
               ('pg_hash_index_stats', 'err_invalid_h'),
               ('pg_index_stats', 'err_btree'),
               ('pg_hash_index_stats', 'err_hash')) AS c(fn, rel);
SELECT sqlstate_of(format('SELECT * FROM pg_index_stats(%s)', :gone_oid)) AS dropped_btree,
       sqlstate_of(format('SELECT * FROM pg_hash_index_stats(%s)', :gone_oid)) AS dropped_hash;
SET ROLE regress_pis_nopriv;
SELECT sqlstate_of('SELECT * FROM pg_index_stats(''err_btree'')') AS btree_nopriv,
       sqlstate_of('SELECT * FROM pg_hash_index_stats(''err_hash'')') AS hash_nopriv;
RESET ROLE;
DROP FUNCTION sqlstate_of(text);
DROP ROLE regress_pis_nopriv;
DROP OWNED BY regress_pis_user;
DROP ROLE regress_pis_user;
