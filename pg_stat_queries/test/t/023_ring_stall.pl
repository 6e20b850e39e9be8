# A writer of the sweep's ring stalled between reserving its position and
# writing it (injection point pg-stat-queries-ring-reserved, action wait):
# passes by the ring wait at that position while it stalls, and once it has
# written, eviction goes on and new statements are tracked.  (The wedge the
# ring clear guards against needs a full pass to begin during the stall,
# then a lap of the ring; a pass by the ring that reaches the stalled
# position first waits there, so this test does not bring it about: the
# ring's head and tail are noted for that.)
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $capacity = 4096;    # the ring's smallest size (max = 100 asks for less)

my $node = PostgreSQL::Test::Cluster->new('ring_stall');
$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.max = 100
pg_stat_queries.min_sweep_interval = 0
pg_stat_queries.track = all
pg_stat_queries.save = off
));
$node->start;
ok($node->check_extension('injection_points'), 'injection points available');
$node->safe_psql('postgres',
	'CREATE EXTENSION pg_stat_queries; CREATE EXTENSION injection_points');

# new statements, one query id per alias, $count of them from $first on,
# stopping early once the ring's head reaches $head_until (if given)
sub run_new
{
	my ($prefix, $count, $head_until) = @_;
	$head_until //= -1;
	$node->safe_psql('postgres', qq(
DO \$\$
DECLARE
  h bigint;
BEGIN
  FOR i IN 1..$count LOOP
    EXECUTE format('SELECT FROM pg_am $prefix%s', i);
    IF $head_until >= 0 THEN
      SELECT ring_head INTO h FROM pg_stat_queries_consistency();
      EXIT WHEN h >= $head_until;
    END IF;
  END LOOP;
END \$\$;
));
}

sub info
{
	return split /\|/,
	  $node->safe_psql('postgres',
		'SELECT evicted_entries, untracked_executions FROM pg_stat_queries_info');
}

sub ring_head
{
	return $node->safe_psql('postgres',
		'SELECT ring_head FROM pg_stat_queries_consistency()');
}

# the table at its bound, passes going on
run_new('warm', 500);

# A full reset leaves the number of entries to be counted again: the next
# pass, once the table is full again, is a full one, whose start clears the
# ring.
$node->safe_psql('postgres', 'SELECT pg_stat_queries_reset()');

# a backend stalls right after reserving a position in the ring
# (the attaching statement's own entry, or its plan's, would be made when
# it ends, and stall there: two statements of its shape make them first)
my $stalled = $node->background_psql('postgres');
$stalled->query_safe(
	"SELECT injection_points_set_local();
	 SELECT injection_points_attach('pg-stat-queries-unused-1', 'notice');
	 SELECT injection_points_attach('pg-stat-queries-unused-2', 'notice');
	 SELECT injection_points_attach('pg-stat-queries-ring-reserved', 'wait')");
$stalled->query_until(qr/stalling/,
	"\\echo stalling\nSELECT FROM pg_am stalled_writer;\n");
$node->wait_for_event('client backend', 'pg-stat-queries-ring-reserved');
ring_head();    # a statement known from now on
my $reserved_by = ring_head();

# The others fill the table, and go round the ring: a writer one lap later
# would reuse the stalled one's slot (the fixed ring keeps its tail at the
# unwritten position, and stays full).
run_new('lap', 3 * $capacity, $reserved_by + $capacity + 10);
note('ring head and tail after the lap: '
	  . $node->safe_psql('postgres',
		'SELECT ring_head, ring_tail FROM pg_stat_queries_consistency()')
	  . ", stalled writer's position below $reserved_by");
my ($evicted_before, $untracked_before) = info();

# the stalled writer writes
$node->safe_psql('postgres',
	"SELECT injection_points_wakeup('pg-stat-queries-ring-reserved')");
$stalled->quit;

# eviction goes on: new statements evict others, and are tracked
run_new('after', 2000);
my ($evicted_after, $untracked_after) = info();
cmp_ok($evicted_after - $evicted_before, '>', 1000,
	'eviction goes on once the stalled writer wrote ('
	  . ($evicted_after - $evicted_before) . ' evicted)');
cmp_ok($untracked_after - $untracked_before, '<', 200,
	'new statements are tracked ('
	  . ($untracked_after - $untracked_before) . ' refused)');

my $log = slurp_file($node->logfile);
unlike($log, qr/TRAP:|terminated by signal/, 'no backend crashed');
$node->stop;
done_testing();
