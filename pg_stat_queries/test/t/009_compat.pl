# The pg_stat_statements drop-in where it must refuse (contrib's also
# preloaded, pg_stat_queries not preloaded) and through pg_dump / restore.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('compat');
$node->init;
my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
my $path = "$sharedir/pg_stat_queries_compat:\$system";
# the drop-in presents contrib's version of the server's major version
my $pg_major = (split(/[.\s]/, `pg_config --version`))[1] =~ s/\D.*//r;
my $compat_version = $pg_major == 18 ? '1.12' : '1.13';

# Start (or restart) the node with these preloaded libraries
sub restart_with
{
	my ($libs) = @_;
	$node->stop if defined $node->{_pid};
	# later lines win over earlier ones
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = '$libs'\nextension_control_path = '$path'");
	$node->start;
}

# Try to create the drop-in; returns (exit code, stderr)
sub try_create
{
	my ($stdout, $stderr);
	my $rc = $node->psql('postgres',
		"\\set VERBOSITY verbose\nCREATE EXTENSION pg_stat_statements",
		stdout => \$stdout, stderr => \$stderr);
	return ($rc, $stderr);
}

sub compat_exists
{
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'");
}

# contrib's pg_stat_statements preloaded as well: refused, nothing created
restart_with('pg_stat_queries,pg_stat_statements');
my ($rc, $err) = try_create();
isnt($rc, 0, 'refused with contrib pg_stat_statements also preloaded');
like($err, qr/55000.*contrib pg_stat_statements is also preloaded/s,
	'says why, with SQLSTATE 55000');
like($err, qr/HINT:.*shared_preload_libraries/s, 'with a hint');
is(compat_exists(), '0', 'nothing half-created');
is( $node->safe_psql(
		'postgres',
		"SELECT setting = '5000' AND context = 'postmaster' FROM pg_settings WHERE name = 'pg_stat_statements.max'"
	),
	't',
	"contrib's own settings stand when contrib is preloaded");

# pg_stat_queries not preloaded: refused with SQLSTATE 55000
restart_with('');
($rc, $err) = try_create();
isnt($rc, 0, 'refused without pg_stat_queries preloaded');
like($err, qr/55000.*pg_stat_queries must be loaded via "shared_preload_libraries"/s,
	'says why, with SQLSTATE 55000');
like($err, qr/HINT:.*Add pg_stat_queries to shared_preload_libraries/s,
	'with a hint');
is(compat_exists(), '0', 'nothing half-created');

# the opt-in as documented: created, dumped and restored
restart_with('pg_stat_queries');
($rc, $err) = try_create();
is($rc, 0, 'created with the opt-in');
$node->safe_psql('postgres', 'SELECT 42 AS answer');
is( $node->safe_psql(
		'postgres',
		"SELECT calls FROM pg_stat_statements WHERE query = 'SELECT \$1 AS answer'"),
	'1',
	'the drop-in reads pg_stat_queries');

my $dump = $node->basedir . '/compat.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres') ],
	'pg_dump of a database with the drop-in');
my $list = `pg_restore -l '$dump'`;
like($list, qr/EXTENSION - pg_stat_statements/, 'the dump holds the extension, not its objects');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok(
	[ 'pg_restore', '-d', $node->connstr('restored'), $dump ],
	'pg_restore into another database');
is( $node->safe_psql(
		'restored',
		"SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements'"),
	$compat_version,
	'restored as the drop-in');
is( $node->safe_psql(
		'restored',
		"SELECT count(*) > 0 FROM pg_stat_statements WHERE query = 'SELECT \$1 AS answer'"),
	't',
	'the restored drop-in reads pg_stat_queries');

unlike(slurp_file($node->logfile), qr/TRAP:|PANIC/, 'no assertion failure');

done_testing();
