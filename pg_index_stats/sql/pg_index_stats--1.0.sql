/* pg_index_stats 1.0: SQL-level definitions of the index statistics functions */

\echo Use "CREATE EXTENSION pg_index_stats" to load this file. \quit

-- Page-level summary of a B-tree index; the columns mirror pgstattuple's
-- pgstatindex(regclass) so that the two can be compared directly.
CREATE FUNCTION pg_index_stats(IN index_oid regclass,
    OUT version int4,
    OUT tree_level int4,
    OUT index_size int8,
    OUT root_block_no int8,
    OUT internal_pages int8,
    OUT leaf_pages int8,
    OUT empty_pages int8,
    OUT deleted_pages int8,
    OUT avg_leaf_density float8,
    OUT leaf_fragmentation float8)
AS 'MODULE_PATHNAME', 'pg_index_stats_btree'
LANGUAGE C STRICT PARALLEL RESTRICTED;

-- Page-level summary of a hash index; the columns mirror pgstattuple's
-- pgstathashindex(regclass).
CREATE FUNCTION pg_hash_index_stats(IN index_oid regclass,
    OUT version int4,
    OUT bucket_pages int8,
    OUT overflow_pages int8,
    OUT bitmap_pages int8,
    OUT unused_pages int8,
    OUT live_items int8,
    OUT dead_items int8,
    OUT free_percent float8)
AS 'MODULE_PATHNAME', 'pg_index_stats_hash'
LANGUAGE C STRICT PARALLEL RESTRICTED;

-- Reading whole indexes is a monitoring privilege: only superusers and
-- members of pg_stat_scan_tables may call these functions by default.
REVOKE EXECUTE ON FUNCTION pg_index_stats(regclass) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION pg_hash_index_stats(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_index_stats(regclass) TO pg_stat_scan_tables;
GRANT EXECUTE ON FUNCTION pg_hash_index_stats(regclass) TO pg_stat_scan_tables;
