# Temporary indexes of another session must be refused with
# ERRCODE_FEATURE_NOT_SUPPORTED (SQLSTATE 0A000) by both functions, while the
# owning session can read them.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('other_temp');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_index_stats');

# The owner keeps its session (and so its temporary objects) open.
my $owner = $node->background_psql('postgres');
$owner->query_safe(
	q{CREATE TEMP TABLE tmp_t AS SELECT g AS a FROM generate_series(1, 2000) g;
	  CREATE INDEX tmp_bt ON tmp_t (a);
	  CREATE INDEX tmp_h ON tmp_t USING hash (a);});

my $bt_oid = $owner->query_safe(q{SELECT 'tmp_bt'::regclass::oid});
my $h_oid = $owner->query_safe(q{SELECT 'tmp_h'::regclass::oid});
chomp($bt_oid, $h_oid);
like($bt_oid, qr/^\d+$/, 'owner sees its temporary B-tree index');

# The owning session reads its own temporary indexes without trouble.
is( $owner->query_safe(q{SELECT leaf_pages > 0 FROM pg_index_stats('tmp_bt')}),
	't', 'owner can read its temporary B-tree index');
is( $owner->query_safe(
		q{SELECT live_items FROM pg_hash_index_stats('tmp_h')}),
	'2000', 'owner can read its temporary hash index');

# Any other session is turned away with a clear error and SQLSTATE.
foreach my $case (
	[ 'pg_index_stats', $bt_oid, 'tmp_bt' ],
	[ 'pg_hash_index_stats', $h_oid, 'tmp_h' ])
{
	my ($func, $oid, $name) = @$case;
	my ($stdout, $stderr);
	my $ret = $node->psql(
		'postgres',
		"\\set VERBOSITY verbose\nSELECT * FROM $func(${oid}::oid::regclass)",
		stdout => \$stdout,
		stderr => \$stderr);
	isnt($ret, 0, "$func fails on another session's temporary index");
	like(
		$stderr,
		qr/ERROR:  0A000: cannot read temporary index "$name" of another session/,
		"$func reports feature_not_supported for another session's temp index"
	);
}

$owner->quit;
$node->stop;

done_testing();
