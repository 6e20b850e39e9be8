# A hot plan keeps its entry while other plans churn at their bound: with
# max_plans = 40, two clients run a statement whose 200 plans (one per
# partition) fight for room, and a prepared statement runs beside them,
# thousands of times a second, far more often than min_sweep_interval
# (set to 2 s here: even a sanitizer build on a loaded machine runs the hot
# statement more often than that, and at the bound passes are not paced by
# it, so the churning clients run many).  Its plan must keep every call, as
# its statement does.  Three busy clients on few cores: the hot one is off
# the CPU now and then while the churning ones run many passes of the
# plans' sweep.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('hot_plan');
$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.max_plans = 40
pg_stat_queries.min_sweep_interval = '2s'
max_parallel_workers_per_gather = 0
jit = off
fsync = off
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');
$node->safe_psql(
	'postgres', q{
CREATE TABLE pt (k int, x int) PARTITION BY RANGE (k);
SELECT format('CREATE TABLE pt_%s PARTITION OF pt FOR VALUES FROM (%s) TO (%s)',
              i, i * 100, (i + 1) * 100)
  FROM generate_series(0, 199) i \gexec
INSERT INTO pt SELECT i, i FROM generate_series(0, 19999) i;
CREATE INDEX ON pt (k);
CREATE TABLE t (id int, v int, w int);
INSERT INTO t SELECT i, i / 10, i FROM generate_series(1, 100000) i;
CREATE INDEX t_v ON t (v);
VACUUM ANALYZE pt, t;
});
$node->safe_psql('postgres', 'SELECT pg_stat_queries_reset()');

my $dir = PostgreSQL::Test::Utils::tempdir;
my $hot_script = "$dir/hot.sql";
my $many_script = "$dir/many.sql";
open(my $fh, '>', $hot_script) or die;
print $fh "\\set v random(1, 10000)\nSELECT count(w) FROM t WHERE v = :v;\n";
close $fh;
open($fh, '>', $many_script) or die;
print $fh "\\set k random(0, 19999)\nSELECT count(*) FROM pt WHERE k = :k;\n";
close $fh;

my @conn = ('-h', $node->host, '-p', $node->port, 'postgres');
my $hot_query = 'SELECT count(w) FROM t WHERE v = $1';

# The hot statement's calls and its plans' calls: "calls|plan calls"
my $sums = qq{
SELECT s.calls || '|' || coalesce(sum(p.calls), 0)
  FROM pg_stat_queries s
  LEFT JOIN pg_stat_queries_plans p USING (userid, dbid, queryid, toplevel)
 WHERE s.query = '$hot_query'
 GROUP BY s.calls};

# The hot plan gets its entry before the churn begins
my $warmup = 20;
$node->command_ok(
	[ 'pgbench', '-n', '-M', 'prepared', '-t', $warmup, '-f', $hot_script, @conn ],
	'hot statement, alone');
ok($node->poll_query_until('postgres', $sums, "$warmup|$warmup"),
	'the hot plan has an entry with every call');

# The hot client, and the churning clients in runs of counted transactions
# until it is done
my $hot_xacts = 10000;
my $hot_out = "$dir/hot.out";
my $hot = IPC::Run::start(
	[
		'pgbench', '-n', '-M', 'prepared', '-t', $hot_xacts,
		'-f', $hot_script, @conn
	],
	'>', $hot_out, '2>&1');
my ($runs, $failed) = (0, 0);
while ($hot->pumpable)
{
	$failed++
	  unless IPC::Run::run(
		[
			'pgbench', '-n', '-M', 'simple', '-c', '2', '-j', '2',
			'-t', '500', '-f', $many_script, @conn
		],
		'>', '/dev/null', '2>&1');
	$runs++;
	# "process ended prematurely" once it is done: pumpable says so next
	eval { $hot->pump_nb };
}
$hot->finish;
is($failed, 0, 'the churning runs succeeded');
my $out = slurp_file($hot_out);
like(
	$out,
	qr{number of transactions actually processed: $hot_xacts/$hot_xacts},
	'hot client ran all its transactions')
  or diag($out);
note("churning runs: $runs");

# Every backend has merged its counts once the statement has them all
my $total = $warmup + $hot_xacts;
ok( $node->poll_query_until(
		'postgres', qq{SELECT calls = $total FROM pg_stat_queries
 WHERE query = '$hot_query'}),
	'the hot statement has every call');
is($node->safe_psql('postgres', $sums),
	"$total|$total", 'the hot plan kept every call of its statement');

# The plans did churn: they were at their bound, some refused or evicted
my $info = $node->safe_psql('postgres',
	'SELECT num_plans, untracked_plans, evicted_entries FROM pg_stat_queries_info'
);
note("num_plans|untracked_plans|evicted_entries: $info");
my ($num_plans, $untracked, $evicted) = split /\|/, $info;
ok($num_plans >= 36 && $untracked + $evicted > 0,
	'the partitions\' plans filled their room and were refused or evicted');

$node->stop;
done_testing();
