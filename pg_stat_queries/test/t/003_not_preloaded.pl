# Without shared_preload_libraries the extension installs, and its functions
# fail with a clear error instead of crashing or returning nothing.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('not_preloaded');
$node->init;
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');
for my $sql ('SELECT * FROM pg_stat_queries', 'SELECT pg_stat_queries_reset()',
	'SELECT * FROM pg_stat_queries_info')
{
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	isnt($ret, 0, "$sql fails");
	like($err, qr/pg_stat_queries must be loaded via "shared_preload_libraries"/,
		"$sql explains why");
	like($err, qr/ERROR:  55000|ERROR:/, "$sql raises an ERROR");
}
my ($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT * FROM pg_stat_queries_info");
like($err, qr/55000/, 'SQLSTATE is object_not_in_prerequisite_state');

# LOAD in a session is harmless
is($node->safe_psql('postgres', "LOAD 'pg_stat_queries'; SELECT 1"), '1',
	'LOAD without preloading does nothing harmful');
$node->stop;
done_testing();
