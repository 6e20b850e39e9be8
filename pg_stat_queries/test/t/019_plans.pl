# Per-plan statistics across backends and restarts: plans and their texts
# and counts survive a clean restart, two backends running one statement
# count into one plan, and a plan that flips while pgbench runs (its index
# dropped) leaves two plans whose calls add up to the statement's.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('plans');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_queries'\nmax_parallel_workers_per_gather = 0\njit = off"
);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');
$node->safe_psql(
	'postgres', q{
CREATE TABLE plans_t (a int, b text) WITH (autovacuum_enabled = off);
INSERT INTO plans_t SELECT g, 'v' || g FROM generate_series(1, 10000) g;
CREATE INDEX plans_t_a ON plans_t (a);
ANALYZE plans_t;
});

# The plans of the statements with this text: "calls|plan" lines, most
# calls first
sub plans_of
{
	my ($query) = @_;
	return $node->safe_psql(
		'postgres', qq{
SELECT p.calls || '|' || p.plan
  FROM pg_stat_queries_plans p
  JOIN pg_stat_queries s USING (userid, dbid, queryid, toplevel)
 WHERE s.query = '$query'
 ORDER BY p.calls DESC, p.plan COLLATE "C"});
}

# The calls of the statement with this text, the sum of its plans' calls,
# and the number of its plans: "calls|plan calls|plans"
sub sums_sql
{
	my ($query) = @_;
	return qq{
SELECT s.calls || '|' || coalesce(sum(p.calls), 0) || '|' || count(p.planid)
  FROM pg_stat_queries s
  LEFT JOIN pg_stat_queries_plans p USING (userid, dbid, queryid, toplevel)
 WHERE s.query = '$query'
 GROUP BY s.calls};
}

sub sums_of
{
	return $node->safe_psql('postgres', sums_sql(@_));
}

# Wait for the counts of backends that have ended: a backend merges its
# last counts as it exits, after its client has seen it disconnect
sub wait_for_sums
{
	my ($query, $expected, $name) = @_;
	ok($node->poll_query_until('postgres', sums_sql($query), $expected),
		$name)
	  or diag('got ' . sums_of($query));
}

# (a) plans survive a clean restart: ids, calls, texts and times
my $q = 'SELECT b FROM plans_t WHERE a = $1';
$node->safe_psql('postgres',
	join('', map { "SELECT b FROM plans_t WHERE a = $_;\n" } 1 .. 4));
$node->safe_psql('postgres',
	"DROP INDEX plans_t_a;\n"
	  . join('', map { "SELECT b FROM plans_t WHERE a = $_;\n" } 5 .. 7));
wait_for_sums($q, '7|7|2', "the plans' calls add up to the statement's");
is( plans_of($q),
	"4|Index Scan using plans_t_a on plans_t\n  Index Cond: (a = \$1)\n"
	  . "3|Seq Scan on plans_t\n  Filter: (a = \$1)",
	'two plans of the statement, with their calls and texts');

my $saved_sql = q{
SELECT p.queryid, p.planid, p.calls, p.total_exec_time, p.min_exec_time,
       p.max_exec_time, p.rows, p.first_executed, p.last_executed, p.plan
  FROM pg_stat_queries_plans p
  JOIN pg_stat_queries s USING (userid, dbid, queryid, toplevel)
 WHERE s.query = 'SELECT b FROM plans_t WHERE a = $1'
 ORDER BY p.queryid, p.planid};
my $before = $node->safe_psql('postgres', $saved_sql);
# (this read of the counts is itself counted, once, before the restart)
my $info_sql = 'SELECT num_entries, num_plans FROM pg_stat_queries_info';
my ($entries, $num_plans) = split(/\|/, $node->safe_psql('postgres', $info_sql));
cmp_ok($num_plans, ">=", 2, "plans counted ($num_plans)");
$node->restart;
is($node->safe_psql('postgres', $saved_sql),
	$before, 'plans, their counters, times and texts survive a clean restart');
is($node->safe_psql('postgres', $info_sql),
	($entries + 1) . "|" . ($num_plans + 1),
	'statements and plans counted as before the restart');
is(sums_of($q), '7|7|2', "the restored plans' calls still add up");

# the same plan after the restart counts into the restored entry
$node->safe_psql('postgres', 'SELECT b FROM plans_t WHERE a = 8');
wait_for_sums($q, '8|8|2', 'the restored entries go on counting');
like(plans_of($q), qr/^4\|Index Scan.*\n.*\n4\|Seq Scan/,
	'a restored plan goes on counting');

# a crash discards them (as it does statements)
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres',
		'SELECT count(*) FROM pg_stat_queries_plans WHERE plan LIKE \'%plans_t%\''),
	'0', 'plans are discarded after a crash');

# (b) two backends running one statement compute one plan id: one row
$node->safe_psql('postgres', 'CREATE INDEX plans_t_a ON plans_t (a)');
my $q2 = 'SELECT a, b FROM plans_t WHERE a < $1 ORDER BY a';
my $s1 = $node->background_psql('postgres');
my $s2 = $node->background_psql('postgres');
for my $i (1 .. 3)
{
	$s1->query_safe("SELECT a, b FROM plans_t WHERE a < $i ORDER BY a");
	$s2->query_safe("SELECT a, b FROM plans_t WHERE a < $i ORDER BY a");
}
$s2->query_safe("SELECT a, b FROM plans_t WHERE a < 9 ORDER BY a");
$s1->quit;
$s2->quit;
wait_for_sums($q2, '7|7|1', "one plan, whose calls are the statement's");
is( plans_of($q2),
	"7|Index Scan using plans_t_a on plans_t\n  Index Cond: (a < \$1)",
	'two backends count into one plan');

# (c) pgbench, the plan flipping while it runs: its index is dropped from
# another session
$node->safe_psql('postgres', 'SELECT pg_stat_queries_reset()');
my $script = $node->basedir . '/plans_bench.sql';
append_to_file($script,
	"\\set id random(1, 10000)\nSELECT b FROM plans_t WHERE a = :id;\n");
my ($out, $err) = ('', '');
my $h = IPC::Run::start(
	[
		'pgbench', '-n', '-M', 'prepared', '-c', '2', '-j', '2',
		'-T', '6', '-f', $script,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$out, '2>', \$err);

# once pgbench's executions are seen, the index goes
my $seen = 0;
for (1 .. 300)
{
	$seen = $node->safe_psql('postgres',
		"SELECT coalesce(sum(calls), 0) FROM pg_stat_queries WHERE query = '$q'");
	last if $seen > 0;
	usleep(20_000);
}
cmp_ok($seen, '>', 0, 'pgbench ran the statement before the flip');
$node->safe_psql('postgres', 'DROP INDEX plans_t_a');
ok($h->finish, 'pgbench succeeded') or diag($err);
my ($done) = $out =~ /number of transactions actually processed: (\d+)/;
cmp_ok($done // 0, '>', 0, "pgbench ran transactions ($done)");

# every transaction counted, for the statement and for one of two plans
wait_for_sums($q, "$done|$done|2",
	"two plans, whose calls add up to the statement's ($done)");
like(plans_of($q),
	qr/^\d+\|(Index Scan using plans_t_a on plans_t\n  Index Cond: \(a = \$1\)|Seq Scan on plans_t\n  Filter: \(a = \$1\))\n\d+\|(Index Scan|Seq Scan)/,
	'an index scan and a sequential scan');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_queries_plans
		   WHERE plan LIKE 'Index Scan using plans_t_a%' AND calls > 0}),
	'1',
	'the index scan counted before the flip');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_queries_plans
		   WHERE plan LIKE 'Seq Scan on plans_t%' AND calls > 0}),
	'1',
	'the sequential scan counted after it');

$node->stop;
done_testing();
