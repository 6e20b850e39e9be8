# The same workload, run once under pg_stat_statements and once under
# pg_stat_queries (each alone, with matching settings), must give the same
# rows: normalized text, toplevel, calls, rows and plans.  Where
# pg_stat_statements leaves a literal in a text (the values of utility
# statements the parser does not locate), ours has a placeholder there: the
# texts are compared with every literal and placeholder read as one, and
# ours must have no literal left.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use Test::More;

my $workload = 'test/data/parity_workload.sql';

# Run the workload under one extension and return its rows as text
sub rows_under
{
	my ($ext, $track) = @_;
	my $node = PostgreSQL::Test::Cluster->new("parity_${ext}_$track");
	$node->init;
	$node->append_conf(
		'postgresql.conf', qq(
shared_preload_libraries = '$ext'
$ext.track = $track
$ext.track_planning = on
$ext.track_utility = on
));
	$node->start;
	$node->safe_psql('postgres', "CREATE EXTENSION $ext");
	my $reset = $ext eq 'pg_stat_statements' ? 'pg_stat_statements_reset' : 'pg_stat_queries_reset';
	$node->safe_psql('postgres', "SELECT $reset()");
	# errors in the workload are part of it: ON_ERROR_STOP stays off
	$node->psql('postgres', undef, extra_params => [ '-f', $workload ]);
	my $rows = $node->safe_psql(
		'postgres', qq(
SELECT toplevel, calls, rows, plans, regexp_replace(query, '\\s+', ' ', 'g')
  FROM $ext
 WHERE query !~ 'pg_stat_(statements|queries)' AND calls + plans > 0
 ORDER BY query COLLATE "C", toplevel));
	ok(!$node->log_contains('TRAP:|PANIC|terminated by signal'),
		"$ext (track = $track): no crash");
	$node->stop;
	return $rows;
}

# A text with each literal and each placeholder as '?'; *$literals counts
# the literals.  Quoted identifiers and comments are kept as they are.
sub placeholders_as_one
{
	my ($text, $literals) = @_;
	my $out = '';
	$$literals = 0;
	while (length $text)
	{
		if ($text =~ s/^("(?:[^"]|"")*"|--[^\n]*|\/\*.*?\*\/)//s)
		{
			$out .= $1;
		}
		elsif ($text =~ s/^\$\d+//)
		{
			$out .= '?';
		}
		elsif ($text =~ s/^(\$(?:[A-Za-z_][A-Za-z_0-9]*)?\$)//)
		{
			my $tag = $1;
			$text =~ s/^.*?\Q$tag\E//s;
			$out .= '?';
			$$literals++;
		}
		elsif ($text =~ s/^(?:[eE]'(?:[^'\\]|\\.|'')*'|(?:[bBxX]|[uU]&)?'(?:[^']|'')*')//s
			|| $text =~ s/^(?:0[xXoObB][0-9A-Fa-f_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)//)
		{
			$out .= '?';
			$$literals++;
		}
		elsif ($text =~ s/^([A-Za-z_][A-Za-z_0-9\$]*|.)//s)
		{
			$out .= $1;
		}
	}
	return $out;
}

# Rows with their texts read by placeholders_as_one, sorted; the texts of
# ours that keep a literal, and those that differ from pg_stat_statements'
sub compared_rows
{
	my ($rows, $leaks) = @_;
	my @out;
	for my $row (split /\n/, $rows)
	{
		my ($head, $text) = $row =~ /^((?:[^|]*\|){4})(.*)$/;
		my $literals;
		push @out, $head . placeholders_as_one($text, \$literals);
		push @$leaks, $text if $leaks && $literals;
	}
	return join("\n", sort @out);
}

for my $track ('top', 'all')
{
	my $pgss = rows_under('pg_stat_statements', $track);
	my $pgsq = rows_under('pg_stat_queries', $track);
	my $n = () = $pgss =~ /\n/g;
	cmp_ok($n, '>', 40, "workload produced many rows (track = $track)");
	my @leaks;
	is( compared_rows($pgsq, \@leaks),
		compared_rows($pgss),
		"same rows as pg_stat_statements, literals aside (track = $track)");
	is_deeply(\@leaks, [], "no literal in our texts (track = $track)");
	my %ours = map { $_ => 1 } split /\n/, $pgsq;
	my @differ = grep { !$ours{$_} } split /\n/, $pgss;
	note scalar(@differ)
	  . " of pg_stat_statements' rows keep a literal where ours does not:\n"
	  . join("\n", @differ);
	cmp_ok(scalar(@differ), '<', $n / 2,
		"most texts are pg_stat_statements' own (track = $track)");
}

done_testing();
