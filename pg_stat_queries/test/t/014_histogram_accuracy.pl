# The 2% bound of the latency percentiles on synthetic times, outside the
# server: test/unit/histogram_check.c, built here against src/histogram.c
# with the installation's compiler and headers, counts times from a
# microsecond to ten hours (spread over ratios up to 10,000, point masses,
# bimodal, adversarial) in several histograms, merges them, and compares
# every percentile from 0.01% to 100% with the true nearest-rank time.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename qw(dirname);
use Cwd qw(abs_path);

my $root = abs_path(dirname(__FILE__) . '/../..');
my $bin = "$PostgreSQL::Test::Utils::tmp_check/histogram_check";

# the compiler, flags and libraries PostgreSQL was built with
sub pg_config
{
	my ($what) = @_;
	my ($stdout, $stderr) = run_command([ 'pg_config', $what ]);
	chomp $stdout;
	return $stdout;
}

my @cmd = (
	split(' ', pg_config('--cc')),
	split(' ', pg_config('--cflags')),
	'-I', "$root/src", '-I', pg_config('--includedir-server'),
	"$root/test/unit/histogram_check.c", "$root/src/histogram.c",
	'-L' . pg_config('--libdir'), '-lpgcommon', '-lpgport',
	split(' ', pg_config('--libs')), '-lm', '-o', $bin);
my ($out, $err) = run_command(\@cmd);
ok(-x $bin, 'the check builds') or diag("@cmd\n$out\n$err");

my ($stdout, $stderr) = run_command([$bin]);
like($stdout, qr/^\d+ cases, \d+ percentiles checked, 0 above 2%, worst 1\.9\d+%$/m,
	'every percentile within 2% of the true one')
  or diag("$stdout\n$stderr");
note($stdout);

done_testing();
