# On a hot standby, pg_stat_queries tracks the standby's own read-only
# statements in its own memory: nothing is replicated from the primary, and
# resetting or evicting on one server leaves the other alone.  A clean
# restart of the standby restores what it had, like the primary.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_queries'");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');
$primary->safe_psql('postgres',
	'CREATE TABLE standby_t AS SELECT g AS a FROM generate_series(1, 10) g');
$primary->backup('backup');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

# statements on each side
$primary->safe_psql('postgres',
	join('', map { "SELECT count(*) AS on_primary FROM standby_t WHERE a > $_;\n" } 1 .. 3));
$primary->wait_for_replay_catchup($standby);
$standby->safe_psql('postgres',
	join('', map { "SELECT count(*) AS on_standby FROM standby_t WHERE a < $_;\n" } 1 .. 5));

my $text_standby = 'SELECT count(*) AS on_standby FROM standby_t WHERE a < $1';
my $text_primary = 'SELECT count(*) AS on_primary FROM standby_t WHERE a > $1';

sub calls_of
{
	my ($node, $text) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(sum(calls), 0) FROM pg_stat_queries WHERE query = '$text'"
	);
}

# another session's counts are merged when it exits, which may finish after
# psql returned: wait for them (README: visible within a few seconds)
ok( $standby->poll_query_until('postgres',
		"SELECT coalesce(sum(calls), 0) = 5 FROM pg_stat_queries WHERE query = '$text_standby'"),
	'standby counts its own statements');
ok( $primary->poll_query_until('postgres',
		"SELECT coalesce(sum(calls), 0) = 3 FROM pg_stat_queries WHERE query = '$text_primary'"),
	'the primary has merged its own');
is(calls_of($standby, $text_primary), '0',
	'primary statements are not replicated to the standby');
is(calls_of($primary, $text_standby), '0',
	'standby statements do not reach the primary');
is(calls_of($primary, $text_primary), '3', 'primary counts its own');

# the standby's view and info agree with each other
is( $standby->safe_psql(
		'postgres',
		'SELECT query_text_bytes >= octet_length($$' . $text_standby
		  . '$$) + 1 FROM pg_stat_queries_info'),
	't',
	'standby accounts for its texts');

# a reset on the primary is not replayed on the standby, and vice versa
$primary->safe_psql('postgres', 'SELECT pg_stat_queries_reset()');
$primary->wait_for_replay_catchup($standby);
is(calls_of($standby, $text_standby), '5', 'primary reset leaves the standby alone');
$primary->safe_psql('postgres', 'SELECT count(*) AS on_primary FROM standby_t WHERE a > 7');
$standby->safe_psql('postgres', 'SELECT pg_stat_queries_reset()');
is(calls_of($standby, $text_standby), '0', 'standby reset works on a standby');
is(calls_of($primary, $text_primary), '1', 'standby reset leaves the primary alone');

# clean restart of the standby: its statistics come back
$standby->safe_psql('postgres',
	join('', map { "SELECT count(*) AS on_standby FROM standby_t WHERE a < $_;\n" } 1 .. 2));
$standby->restart;
is(calls_of($standby, $text_standby), '2',
	'standby statistics survive its clean restart');

# promotion: the former standby keeps tracking as a primary
$standby->promote;
$standby->safe_psql('postgres', 'INSERT INTO standby_t VALUES (42)');
is( $standby->safe_psql(
		'postgres',
		"SELECT calls FROM pg_stat_queries WHERE query = 'INSERT INTO standby_t VALUES (\$1)'"),
	'1',
	'writes counted after promotion');
is(calls_of($standby, $text_standby), '2', 'statistics kept across promotion');

foreach my $node ($primary, $standby)
{
	my $log = slurp_file($node->logfile);
	unlike($log, qr/TRAP:|PANIC/, $node->name . ': no assertion failure');
}

done_testing();
