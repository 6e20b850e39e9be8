# Shutdown never costs PostgreSQL its own statistics: when writing our file
# fails at a clean shutdown (an error injected into the save, a directory
# where our temporary file goes), PostgreSQL still writes its statistics
# file, our file is not left half-written, and the server log says why.
# When the postmaster dies, the checkpointer exits without saving ours (nor
# does PostgreSQL save its own).
#
# The injected error needs a server built with --enable-injection-points
# (scripts/install-postgres builds the assert flavour so); elsewhere that
# part is skipped.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('shutdown_save');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_queries'");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');

my $ours = $node->data_dir . '/pg_stat/pg_stat_queries.stat';
my $ours_tmp = "$ours.tmp";

# Insert rows into a new table, and wait for PostgreSQL to count them
sub insert_rows
{
	my ($table, $n) = @_;
	$node->safe_psql('postgres',
		"CREATE TABLE $table (a int); INSERT INTO $table SELECT generate_series(1, $n)"
	);
	$node->poll_query_until('postgres',
		"SELECT n_tup_ins = $n FROM pg_stat_user_tables WHERE relname = '$table'"
	) or die "rows of $table not counted";
}

sub inserted
{
	my ($table) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relname = '$table'"
	);
}

sub calls_of
{
	my ($query) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(sum(calls), 0) FROM pg_stat_queries WHERE query = '$query'"
	);
}

# An error in the middle of writing our file
SKIP:
{
	skip 'injection points not available', 7
	  unless $node->check_extension('injection_points');

	$node->safe_psql('postgres', 'CREATE EXTENSION injection_points');
	insert_rows('kept_a', 42);
	$node->safe_psql('postgres', "SELECT 'lost' AS ours") for 1 .. 3;
	is(calls_of('SELECT $1 AS ours'), '3', 'statement counted');
	$node->safe_psql('postgres',
		"SELECT injection_points_attach('pg-stat-queries-save', 'error')");
	my $offset = -s $node->logfile;
	$node->stop;
	ok( $node->log_contains(
			qr/pg_stat_queries could not write its statistics file: error triggered for injection point pg-stat-queries-save/,
			$offset),
		'the failed save is logged');
	ok( !$node->log_contains(qr/checkpointer process .* exited/, $offset),
		'the checkpointer exited normally');
	ok(!-e $ours_tmp, 'no temporary file left');
	ok(!-e $ours, 'no file of ours');
	$node->start;
	is(inserted('kept_a'), '42',
		"PostgreSQL's own counters survive a failed save of ours");
	is(calls_of('SELECT $1 AS ours'), '0', 'our statistics are lost');
}

# A directory where our temporary file goes: nothing of ours is written
insert_rows('kept_b', 17);
mkdir $ours_tmp or die "mkdir $ours_tmp: $!";
my $offset = -s $node->logfile;
$node->stop;
ok($node->log_contains(qr/could not open file ".*pg_stat_queries.stat.tmp"/, $offset),
	'the unwritable file is logged');
ok(!-e $ours, 'no file of ours');
rmdir $ours_tmp or die "rmdir $ours_tmp: $!";
$node->start;
is(inserted('kept_b'), '17',
	"PostgreSQL's own counters survive an unwritable file of ours");

# The postmaster dies while a backend lives: the checkpointer exits on its
# own, and must not save (no clean shutdown: PostgreSQL does not either)
$node->safe_psql('postgres', "SELECT 'orphaned' AS ours");
my $session = $node->background_psql('postgres');
$session->query_safe('SELECT 1');
my $checkpointer = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'");
ok(!-e $ours, 'no file of ours before the postmaster dies');
$node->kill9;
for (my $i = 0; $i < 10 * $PostgreSQL::Test::Utils::timeout_default; $i++)
{
	last unless kill(0, $checkpointer);
	usleep(100_000);
}
ok(!kill(0, $checkpointer), 'the checkpointer exited after the postmaster');
ok(!-e $ours && !-e $ours_tmp,
	'no file of ours written when the postmaster dies');
eval { $session->quit; };

# the other processes follow; the server starts again (crash recovery)
my $started = 0;
for (my $i = 0; $i < 10 * $PostgreSQL::Test::Utils::timeout_default; $i++)
{
	$started = $node->start(fail_ok => 1);
	last if $started;
	usleep(100_000);
}
ok($started, 'the server starts after the postmaster died');
is(calls_of('SELECT $1 AS ours'), '0', 'statistics discarded by the crash');

$node->stop;
done_testing();
