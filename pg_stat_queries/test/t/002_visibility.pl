# Statements of other sessions become visible: while those sessions are
# busy (also inside one long transaction, about once a second), and after
# they go idle; a session always sees its own statements at once.  Waits
# are bounded by the harness timeout only, not by the wall clock: what is
# checked is what is visible, and in which state the other session is.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $node = PostgreSQL::Test::Cluster->new('visible');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_queries'");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');

# own statements: visible immediately, even inside a transaction
is( $node->safe_psql(
		'postgres', "BEGIN; SELECT 'own' AS own_stmt; SELECT calls FROM pg_stat_queries WHERE query = 'SELECT \$1 AS own_stmt'; COMMIT;"),
	"own\n1",
	'a session sees its own statement at once');

# Column aliases are not part of the query id, so each statement below has
# its own number of columns to get an entry of its own.

# another session that goes idle after its statement
my $idle = $node->background_psql('postgres');
my $idle_pid = $idle->query_safe('SELECT pg_backend_pid()');
$idle->query_safe("SELECT 'idle', 2 AS idle_stmt");
ok( $node->poll_query_until(
		'postgres', "SELECT count(*) = 1 FROM pg_stat_queries WHERE query = 'SELECT \$1, \$2 AS idle_stmt'"),
	'an idle session\'s statement becomes visible');
# merged while the session is still there, idle, with nothing else run
is( $node->safe_psql(
		'postgres',
		"SELECT calls, (SELECT state FROM pg_stat_activity WHERE pid = $idle_pid) FROM pg_stat_queries WHERE query = 'SELECT \$1, \$2 AS idle_stmt'"),
	'1|idle',
	'merged with its one call by the session while it stays idle');

# another session inside one long transaction, running statements every
# 0.1 s until another session sees them, the harness timeout at most
# (its first execution, before the transaction, makes the entry with its
# count: the executions inside have pending counts to merge)
my $busy = $node->background_psql('postgres');
my $busy_pid = $busy->query_safe('SELECT pg_backend_pid()');
$busy->query_safe("SELECT 'busy', 2, 3 AS busy_stmt");
$busy->query_safe('BEGIN');
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
my ($runs, $seen) = (1, '');
while (time < $deadline)
{
	$busy->query_safe("SELECT 'busy', 2, 3 AS busy_stmt");
	$runs++;
	$seen = $node->safe_psql('postgres',
		"SELECT calls, (SELECT state FROM pg_stat_activity WHERE pid = $busy_pid) FROM pg_stat_queries WHERE query = 'SELECT \$1, \$2, \$3 AS busy_stmt' AND calls > 1");
	last if $seen ne '';
	sleep(0.1);
}
my ($seen_calls, $seen_state) = split(/\|/, $seen);
ok(defined $seen_calls && $seen_calls > 1 && $seen_calls <= $runs,
	'a busy session\'s statements show up ('
	  . ($seen_calls // 'none') . " of $runs calls)");
# merged about once a second: within tens of statements, not after the
# 256 a busy backend runs between clock reads outside a transaction block
ok($runs <= 60, "shown within a few seconds of statements ($runs runs)");
is($seen_state, 'idle in transaction',
	'before its transaction ends');
$busy->query_safe('COMMIT');

# totals are exact once everybody flushed
$busy->quit;
$idle->quit;
ok( $node->poll_query_until(
		'postgres',
		"SELECT calls FROM pg_stat_queries WHERE query = 'SELECT \$1, \$2, \$3 AS busy_stmt'",
		$runs),
	"every call of the busy statement merged ($runs)");

ok(!$node->log_contains('TRAP:|PANIC|terminated by signal'), 'no crash or assertion failure in the log');
$node->stop;
done_testing();
