# A restore that fails is retried, never lost for the uptime nor done twice:
# an error after the first statement of our file is restored (injection
# point pg-stat-queries-restored-statement) leaves the file and the flag;
# the next backend, or the checkpointer at shutdown, goes on from there.
# A single-user session restores and saves like a normal start.
#
# The injected error needs a server built with --enable-injection-points
# (scripts/install-postgres builds the assert flavour so); elsewhere that
# part is skipped.
use strict;
use warnings FATAL => 'all';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('restore_retry');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_queries'\nwal_level = replica\nmax_wal_senders = 2");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');

my $ours = $node->data_dir . '/pg_stat/pg_stat_queries.stat';
# three statements (query IDs differ by shape, not by alias)
my %runs = (
	"SELECT 'one' AS first_one" => 3,
	"SELECT 'two' AS second_one, 2 AS b" => 5,
	"SELECT 'three' AS third_one, 3 AS b, 3 AS c" => 7);

sub calls
{
	return $node->safe_psql(
		'postgres', q{
SELECT string_agg(calls::text, ',' ORDER BY calls)
  FROM pg_stat_queries WHERE query LIKE 'SELECT $1 AS %\_one%'});
}

foreach my $sql (sort keys %runs)
{
	$node->safe_psql('postgres', join('', map { "$sql;\n" } 1 .. $runs{$sql}));
}
my $expected = '3,5,7';
is(calls(), $expected, 'statements counted');

# a connection that restores nothing: a database walsender
my $walsender = $node->connstr('postgres') . ' replication=database';

# the assert build that the tests run on has injection points: without
# them, this fails instead of passing having checked nothing
ok($node->check_extension('injection_points'), 'injection points available');
{
	$node->safe_psql('postgres', 'CREATE EXTENSION injection_points');
	$node->restart;
	$node->safe_psql('postgres',
		"SELECT injection_points_attach('pg-stat-queries-restored-statement', 'error')",
		connstr => $walsender);

	# the first backend restores one statement, then fails
	my $offset = -s $node->logfile;
	is($node->safe_psql('postgres', 'SELECT 1'),
		'1', 'a backend whose restore fails starts and works');
	ok( $node->log_contains(
			qr/pg_stat_queries could not restore the statistics saved at the last shutdown: error triggered for injection point/,
			$offset),
		'the failed restore is logged');
	ok(-e $ours, 'the file stays for the next backend');

	# the next one goes on from there, once
	$node->safe_psql('postgres',
		"SELECT injection_points_detach('pg-stat-queries-restored-statement')",
		connstr => $walsender);
	is(calls(), $expected, 'the next backend restores the rest, none twice');
	ok(!-e $ours, 'the file is removed once restored');

	# the checkpointer, when no backend came: it fails, keeps the file as
	# it is, and the next start restores it whole; and a restore that keeps
	# failing is tried by three backends, then left alone for a while
	$node->restart;
	$node->safe_psql('postgres',
		"SELECT injection_points_attach('pg-stat-queries-restored-statement', 'error')",
		connstr => $walsender);
	$offset = -s $node->logfile;
	$node->safe_psql('postgres', 'SELECT 1') for 1 .. 5;
	my $tries = () = slurp_file($node->logfile, $offset) =~
	  /could not restore the statistics saved at the last shutdown/g;
	is($tries, 3, 'five connections while the restore keeps failing: three attempts');
	$offset = -s $node->logfile;
	$node->stop;
	ok( $node->log_contains(
			qr/pg_stat_queries keeps its statistics file "pg_stat\/pg_stat_queries.stat" as it is/,
			$offset),
		'a restore that fails at shutdown keeps the file');
	ok(-e $ours, 'the file is still there');
	$node->start;
	is(calls(), $expected, 'restored whole at the next start');
}

# single-user mode restores the saved statistics and saves its own
$node->stop;
ok(-e $ours, 'saved at a clean shutdown');
my ($out, $err);
my $in = "SELECT 'single' AS single_user_one, 4 AS b, 4 AS c, 4 AS d;\n" x 2;
IPC::Run::run(
	[ 'postgres', '--single', '-D', $node->data_dir, 'postgres' ],
	'<' => \$in,
	'>' => \$out,
	'2>' => \$err)
  or die "single-user mode failed: $err";
$node->start;
is( calls(),
	'2,3,5,7',
	'a single-user session keeps the saved statistics and saves its own');

$node->stop;
done_testing();
