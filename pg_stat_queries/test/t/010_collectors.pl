# pg_stat_queries_changed() as a collector uses it, under concurrent
# backends: a loop reads only what changed since the start of its previous
# read and keeps the latest row of each statement, while pgbench runs
# known statements, new statements and, once, a reset.  Checks: no change
# is missed (the collector's rows equal a full read at the end), nothing
# is returned once nothing changes, each text arrives once (at the entry's first read
# or after its entry was re-created), and reads are incremental.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $seconds = $ENV{PGSQ_COLLECTOR_SECONDS} // 8;

my $node = PostgreSQL::Test::Cluster->new('collectors');
$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.max = 5000
));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');
$node->safe_psql('postgres', 'CREATE DATABASE work');
$node->safe_psql('work',
	join('', map { "CREATE TABLE c$_ (id int); INSERT INTO c$_ VALUES (1);\n" } 1 .. 40));
my $work_oid =
  $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = 'work'");

my $dir = PostgreSQL::Test::Utils::tempdir;
sub script
{
	my ($name, $body) = @_;
	open(my $fh, '>', "$dir/$name") or die;
	print $fh $body;
	close $fh;
	return "$dir/$name";
}

# 20 known statements, hot; about 400 more that appear during the run
my $known = script('known.sql', qq(\\set t random(1, 20)
SELECT id FROM c:t WHERE id = 1;
));
my $new = script('new.sql', qq(\\set a random(1, 20)
\\set b random(21, 40)
SELECT c:a.id FROM c:a JOIN c:b USING (id) WHERE c:a.id > 0;
));

my ($out, $err) = ('', '');
my $bench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '4', '-j', '2', '-T', $seconds,
		'-f', "$known\@10", '-f', "$new\@1",
		'-h', $node->host, '-p', $node->port, 'work'
	],
	'>', \$out, '2>', \$err);

# One read: the rows of the work database's statements changed since
# $since, and the start time of this read for the next one
my $read_sql = q{
SELECT now(), c.userid, c.queryid, c.toplevel, c.calls, c.stats_since,
       c.query IS NOT NULL, c.text_stored_at, c.stats_since >= '%s',
       c.text_stored_at >= '%s'
  FROM (SELECT 1) one
  LEFT JOIN pg_stat_queries_changed('%s') c ON c.dbid = %s};

my %state;           # key -> [calls, stats_since, stored time of the text held]
my $since = '-infinity';
my ($reads, $rows_read, $unchanged, $texts_twice, $texts_fetched) = (0, 0, 0, 0, 0);
my $reset_done = 0;
my $start = time;

sub collect
{
	my $result =
	  $node->safe_psql('postgres', sprintf($read_sql, $since, $since, $since, $work_oid));
	my $next;
	foreach my $line (split /\n/, $result)
	{
		my ($now, $userid, $queryid, $toplevel, $calls, $stats_since,
			$has_text, $text_stored_at, $entry_new, $text_new)
		  = split /\|/, $line, -1;
		$next = $now;
		next if $userid eq '';
		my $key = "$userid/$queryid/$toplevel";
		my $old = $state{$key};
		$rows_read++;
		# merged while the previous read ran: returned by both
		$unchanged++
		  if defined $old && $old->[0] eq $calls && $old->[1] eq $stats_since;
		# a text comes again only if it was stored again or its entry is new
		# since the previous read started (which may or may not have seen it)
		my $recreated = !defined $old || $old->[1] ne $stats_since;
		$texts_twice++
		  if $has_text eq 't' && !$recreated && $entry_new ne 't'
		  && $text_new ne 't';
		# the text held, by its stored time; one stored since the text we
		# hold (the row's text_stored_at tells) but not sent is fetched
		my $held = defined $old ? $old->[2] : '';
		if ($has_text eq 't')
		{
			$held = $text_stored_at;
		}
		elsif ($text_stored_at ne '' && $text_stored_at ne $held)
		{
			$texts_fetched++;
			$held = $node->safe_psql('postgres',
				"SELECT text_stored_at FROM pg_stat_queries_changed('-infinity') WHERE queryid = $queryid AND query IS NOT NULL"
			);
		}
		$state{$key} = [ $calls, $stats_since, $held ];
	}
	$since = $next;
	$reads++;
}

while ($bench->pumpable)
{
	collect();
	if (!$reset_done && time - $start > $seconds / 2)
	{
		$node->safe_psql('postgres', 'SELECT pg_stat_queries_reset()');
		$reset_done = 1;
	}
	$bench->pump_nb;
	sleep(0.05);
}
$bench->finish;
is($bench->result(0), 0, 'pgbench succeeded') or diag($err);

# the benchmark's backends merged their last counts at exit
collect();

my $full = $node->safe_psql('postgres',
	"SELECT userid, queryid, toplevel, calls, stats_since, coalesce(text_stored_at::text, '') FROM pg_stat_queries_changed('-infinity') WHERE dbid = $work_oid"
);
my ($compared, $missed) = (0, 0);
foreach my $line (split /\n/, $full)
{
	my ($userid, $queryid, $toplevel, $calls, $stats_since, $text_stored_at)
	  = split /\|/, $line, -1;
	my $key = "$userid/$queryid/$toplevel";
	my $have = $state{$key};
	$compared++;
	if (   !defined $have
		|| $have->[0] ne $calls
		|| $have->[1] ne $stats_since
		|| $have->[2] ne $text_stored_at)
	{
		$missed++;
		diag("missed: $key has calls $calls, text of $text_stored_at; collector "
			  . (defined $have ? "$have->[0], text of $have->[2]" : 'nothing'));
	}
}
note("$reads reads, $rows_read rows read, $compared entries at the end");
cmp_ok($compared, '>', 100, 'the run created entries');
is($missed, 0,
	'no change missed: the collector\'s rows and texts equal a full read');
note("$unchanged rows returned again, merged while the read before ran");
is($texts_twice, 0, 'each text returned once per entry');
note("$texts_fetched texts stored before a read but sent with no row, fetched");
cmp_ok($texts_fetched, '<', $compared / 10,
	'texts are sent with their rows, a few fetched afterwards');
cmp_ok($reads, '>', 10, 'the collector read many times during the run');
cmp_ok($rows_read, '<', $reads * $compared / 2,
	'reads returned far fewer rows than full reads would');

# once idle, nothing of the work database changes
my $idle = $node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_queries_changed('$since') WHERE dbid = $work_oid");
is($idle, '0', 'nothing returned once nothing changes');

ok(!$node->log_contains('TRAP:|PANIC|terminated by signal'),
	'no crash or assertion failure in the log');
done_testing();
