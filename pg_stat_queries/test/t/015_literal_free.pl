# No value typed into a statement reaches our saved file.  The statements
# of test/sql/literals.sql (passwords, user mappings, servers,
# subscriptions, NOTIFY and pg_notify, DO blocks, function bodies, COMMENT,
# SECURITY LABEL, COPY file names, SET values, CREATE DATABASE options, each
# also failing) run with track = all; after a clean restart neither the
# restored texts nor the file, read byte by byte, holds any planted value,
# while the statements' texts are there, normalized.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $script = 'test/sql/literals.sql';
my $sql = slurp_file($script);

# Every planted value: the quoted strings holding "Planted", and the SCRAM
# verifier standing for what psql's \password sends
my %planted = map { $_ => 1 } ($sql =~ /(Planted\w*)/g);
my ($verifier) = $sql =~ /'(SCRAM-SHA-256\$[^']+)'/;
$planted{$verifier} = 1;
cmp_ok(scalar(keys %planted), '>', 35, 'the script plants many values');

my $node = PostgreSQL::Test::Cluster->new('literal_free');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.save = on
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_queries');
# its failing statements are part of it: no stop on error
my ($rc, $out, $err) = $node->psql(
	'postgres', undef,
	on_error_stop => 0,
	extra_params => [ '-f', $script ]);
is($rc, 0, 'the script ran to its end');
my $texts = $node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_queries WHERE query ~ 'regress_lit'");
cmp_ok($texts, '>', 40, "its statements' texts are stored");

$node->restart;
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_stat_queries WHERE query ~ 'regress_lit'"),
	$texts,
	'after a clean restart the texts are restored');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM pg_stat_queries
 WHERE query ~ 'Planted|SCRAM' OR query LIKE '%''%'}),
	'0',
	'no restored text holds a planted value or a quoted string');

# a clean stop writes the file again: read it raw
$node->stop;
my $file = $node->data_dir . '/pg_stat/pg_stat_queries.stat';
ok(-s $file, 'the statistics are saved');
my $bytes = slurp_file($file);
my @found = grep { index($bytes, $_) >= 0 } sort keys %planted;
is_deeply(\@found, [], 'no planted value is in the saved file');
ok($bytes !~ /Planted/, 'nor any part of one');
ok( $bytes =~
	  /CREATE USER MAPPING FOR regress_lit_alice SERVER regress_lit_server\s+OPTIONS \(user \$1, password \$2\)/,
	'the file holds the normalized texts');
ok(!$node->log_contains(qr/TRAP:|terminated by signal|PANIC/),
	'no server process crashed');

done_testing();
