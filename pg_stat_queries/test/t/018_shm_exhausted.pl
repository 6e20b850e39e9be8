# Dynamic shared memory exhausted: no statement may fail because of us.
#
# The server runs with every file it writes limited to 1 MB (ulimit -f;
# PostgreSQL ignores SIGXFSZ, so a write past the limit fails with EFBIG).
# Dynamic shared memory segments are files too: once the statistics
# system's and our text area's first megabytes are used, creating a
# segment fails ("could not resize shared memory segment ... File too
# large"), as it does with a full /dev/shm.  Four clients then run
# thousands of new statements: every transaction must succeed, the
# executions that found no memory are counted as untracked, our views read
# without error, a statement tracked before keeps being counted, and the
# log says why.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $tables = 60;
my $limit_kb = 1024;

my $node = PostgreSQL::Test::Cluster->new('shm');
# 1 MB WAL segments fit the file size limit
$node->init(extra => ['--wal-segsize=1']);
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.max = 20000
pg_stat_queries.query_text_memory = 64MB
pg_stat_queries.save = off
autovacuum = off
log_statement = none
log_connections = off
log_disconnections = off
min_dynamic_shared_memory = 0
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');
$node->safe_psql('postgres',
	join('', map { "CREATE TABLE u$_ (id int); INSERT INTO u$_ VALUES (1);\n" } 1 .. $tables));
# nothing left to set hint bits on or write back after the restart
$node->safe_psql('postgres', 'VACUUM FREEZE; CHECKPOINT');
$node->stop;

# Restart with the file size limit: pg_ctl, found first in PATH, is a
# wrapper that lowers it for the postmaster and all its children.
my $wrapdir = PostgreSQL::Test::Utils::tempdir;
my $real_pg_ctl = $node->config_data('--bindir') . '/pg_ctl';
open(my $fh, '>', "$wrapdir/pg_ctl") or die;
print $fh "#!/bin/bash\nulimit -f $limit_kb\nexec '$real_pg_ctl' \"\$@\"\n";
close $fh;
chmod 0755, "$wrapdir/pg_ctl";
{
	local $ENV{PATH} = "$wrapdir:$ENV{PATH}";
	$node->start;
}
my $log_offset = -s $node->logfile;

$node->safe_psql('postgres', 'SELECT count(*) FROM u1');
$node->safe_psql('postgres', 'SELECT count(*) FROM u1');

# Distinct statements: a three-way join, one table from each third, 8,000
# shapes (no aliases: PostgreSQL 18 jumbles a relation by its alias)
my $dir = PostgreSQL::Test::Utils::tempdir;
open($fh, '>', "$dir/new.sql") or die;
print $fh qq(\\set a random(1, 20)
\\set b random(21, 40)
\\set c random(41, 60)
SELECT count(*) FROM u:a, u:b, u:c WHERE u:a.id = u:b.id AND u:b.id = u:c.id;
);
close $fh;

my ($out, $err) = ('', '');
my $ok = IPC::Run::run(
	[
		'pgbench', '-n', '-c', '4', '-j', '2', '-t', '1500',
		'-f', "$dir/new.sql",
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$out, '2>', \$err);
ok($ok, 'pgbench with new statements completed') or diag($err);
like($out, qr/number of failed transactions: 0 /,
	'no transaction failed');
like($out, qr/number of transactions actually processed: 6000/,
	'every transaction ran');

# the fault was hit: some executions found no room and were not tracked
my ($untracked, $entries) = split /\|/, $node->safe_psql('postgres',
	'SELECT untracked_executions, num_entries FROM pg_stat_queries_info');
cmp_ok($untracked, '>', 0,
	"executions not tracked for want of shared memory ($untracked, $entries entries)");
ok($node->log_contains(qr/pg_stat_queries could not allocate shared memory \(SQLSTATE 53/,
		$log_offset), 'the log says why');
ok(!$node->log_contains(qr/TRAP:|PANIC|server process .* was terminated/,
		$log_offset), 'no crash');

# our views and functions read without error, and counts go on
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) > 0 FROM pg_stat_queries WHERE query LIKE 'SELECT count(*) FROM u1%'"),
	't', 'the view reads');
$node->safe_psql('postgres', 'SELECT count(*) FROM u1');
$node->poll_query_until('postgres',
	"SELECT calls = 3 FROM pg_stat_queries WHERE query = 'SELECT count(*) FROM u1'")
  or die 'a statement tracked before the fault is no longer counted';
pass('a statement tracked before keeps being counted');
is($node->safe_psql('postgres', 'SELECT pg_stat_queries_reset() IS NOT NULL'),
	't', 'reset works');

# after a reset frees entries, new statements are tracked again
$node->safe_psql('postgres', 'SELECT count(*) FROM u2 x, u3 y WHERE x.id = y.id');
$node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_queries WHERE query LIKE '%FROM u2 x, u3 y%'")
  or die 'no new entry after a reset';
pass('new statements are tracked again once memory is free');

$node->stop;
done_testing();
