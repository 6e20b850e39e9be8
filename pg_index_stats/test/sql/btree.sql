-- B-tree indexes: every column of pg_index_stats() must equal pgstatindex().
CREATE EXTENSION pgstattuple;
CREATE EXTENSION pg_index_stats;

-- Names of the columns whose values differ between the two functions
-- (an empty array means the rows are identical, NaN included).
CREATE FUNCTION btree_mismatch(idx regclass) RETURNS text[]
LANGUAGE sql AS $$
  SELECT coalesce(array_agg(o.key ORDER BY o.key), '{}')
  FROM pg_index_stats(idx) AS ours,
       pgstatindex(idx) AS theirs,
       jsonb_each(to_jsonb(ours)) AS o
       JOIN jsonb_each(to_jsonb(theirs)) AS t USING (key)
  WHERE o.value IS DISTINCT FROM t.value
$$;

-- Whole-row comparison, as a second independent check.
CREATE FUNCTION btree_same(idx regclass) RETURNS boolean
LANGUAGE sql AS $$
  SELECT ours IS NOT DISTINCT FROM theirs
  FROM pg_index_stats(idx) AS ours, pgstatindex(idx) AS theirs
$$;

-- empty index: only a metapage, so both ratios are NaN
CREATE TABLE bt_empty (a int);
CREATE INDEX bt_empty_a ON bt_empty (a);
SELECT btree_same('bt_empty_a'), btree_mismatch('bt_empty_a');
SELECT * FROM pg_index_stats('bt_empty_a');

-- built in key order: the primary key grows by inserts of ascending keys,
-- the payload index by a sorted CREATE INDEX build
CREATE TABLE bt_seq (id int PRIMARY KEY, payload text);
INSERT INTO bt_seq SELECT g, 'row ' || g FROM generate_series(1, 20000) g;
CREATE INDEX bt_seq_payload ON bt_seq (payload);
SELECT btree_same('bt_seq_pkey'), btree_mismatch('bt_seq_pkey');
SELECT version, tree_level, leaf_pages > 1 AS many_leaves,
       leaf_fragmentation = 0 AS unfragmented
  FROM pg_index_stats('bt_seq_pkey');
-- ascending inserts of a fixed data set give a fully predictable layout
SELECT * FROM pg_index_stats('bt_seq_pkey');
SELECT btree_same('bt_seq_payload'), btree_mismatch('bt_seq_payload');

-- filled by inserts in a scrambled (but deterministic) order: page splits
-- leave right siblings at lower block numbers
CREATE TABLE bt_rand (k int, t text);
CREATE INDEX bt_rand_k ON bt_rand (k);
CREATE UNIQUE INDEX bt_rand_t ON bt_rand (t);
CREATE INDEX bt_rand_multi ON bt_rand (t, k);
INSERT INTO bt_rand
  SELECT (g * 7919) % 20011, md5(((g * 7919) % 20011)::text)
  FROM generate_series(1, 20010) g;
SELECT btree_same('bt_rand_k'), btree_mismatch('bt_rand_k');
SELECT btree_same('bt_rand_t'), btree_mismatch('bt_rand_t');
SELECT btree_same('bt_rand_multi'), btree_mismatch('bt_rand_multi');
SELECT tree_level >= 1 AS has_root_above_leaves,
       leaf_fragmentation > 0 AS fragmented,
       avg_leaf_density BETWEEN 1 AND 100 AS density_in_range
  FROM pg_index_stats('bt_rand_k');

-- deleted pages: empty out a key range and let VACUUM unlink the leaves
CREATE TABLE bt_del (id int) WITH (autovacuum_enabled = off);
INSERT INTO bt_del SELECT g FROM generate_series(1, 50000) g;
CREATE INDEX bt_del_id ON bt_del (id);
DELETE FROM bt_del WHERE id BETWEEN 5000 AND 45000;
VACUUM bt_del;
SELECT btree_same('bt_del_id'), btree_mismatch('bt_del_id');
SELECT deleted_pages > 0 AS has_deleted_pages,
       index_size = pg_relation_size('bt_del_id') AS size_matches
  FROM pg_index_stats('bt_del_id');

-- a temporary index of our own session is readable
CREATE TEMP TABLE bt_temp AS SELECT g AS a FROM generate_series(1, 3000) g;
CREATE INDEX bt_temp_a ON bt_temp (a);
SELECT btree_same('bt_temp_a'), btree_mismatch('bt_temp_a');
