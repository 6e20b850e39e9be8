# bench/lib/common.sh -- helpers shared by bench/run and bench/callgrind.sh
# (sourced, not run).  Needs scripts/lib.sh sourced first.
#
# The server and the clients run as the unprivileged test user when we are
# root: every path they touch lives under $BENCH_DIR, owned by that user.

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

bench_say() { printf '[bench %5ds] %s\n' $(( $(date +%s) - BENCH_START )) "$*"; }
bench_die() { echo "bench: $*" >&2; exit 1; }

# Quote one word for a shell command line
q() { printf '%q' "$1"; }

# Run a command line as the test user in $BENCH_DIR with our binaries first in PATH
as_bench_user() {
	as_test_user "cd $(q "$BENCH_DIR") && export PATH=$(q "$PGBIN"):\$PATH PGHOST=$(q "$SOCKDIR") PGPORT=$PORT PGDATABASE=bench && $1"
}

# psql as the test user, one command, unaligned tuples only
bench_psql() {
	as_bench_user "psql -X -q -At -v ON_ERROR_STOP=1 -c $(q "$1")"
}

# The Python that draws the charts: the first python3 that can import
# matplotlib (the one in PATH, else Debian's), or the one in PATH.
bench_find_python() {
	local py
	for py in python3 /usr/bin/python3; do
		if command -v "$py" >/dev/null && "$py" -c "import matplotlib" 2>/dev/null; then
			echo "$py"
			return 0
		fi
	done
	echo python3
}

# Install the Debian packages a full benchmark needs when they are missing:
# valgrind for bench/callgrind.sh, perf for bench/scaling.sh's merge count at full
# speed, matplotlib for the charts.  Without root
# (or without the package) we say so and go on: the chart is then skipped.
# Sets and exports BENCH_PYTHON (see bench_find_python).
bench_install_tools() {
	local want="" pkg
	command -v valgrind >/dev/null || want="$want valgrind"
	command -v perf >/dev/null || want="$want linux-perf"
	BENCH_PYTHON=$(bench_find_python)
	"$BENCH_PYTHON" -c "import matplotlib" 2>/dev/null || want="$want python3-matplotlib"
	if [ -n "$want" ] && [ "$(id -u)" -ne 0 ]; then
		bench_say "missing:$want (run as root to have them installed)"
	elif [ -n "$want" ]; then
		bench_say "installing:$want"
		for pkg in $want; do
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$pkg" \
				>/dev/null 2>&1 ||
				{ apt-get update -q >/dev/null 2>&1 &&
				  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$pkg" \
					>/dev/null 2>&1; } ||
				bench_say "could not install $pkg"
		done
		BENCH_PYTHON=$(bench_find_python)
	fi
	export BENCH_PYTHON
}

# Which build: release|assert.  Sets PGBIN and PG_CONFIG.
bench_pick_build() {
	local flavor=$1
	PG_CONFIG=$(pg_config_of "$flavor")
	PGBIN=$(dirname "$PG_CONFIG")
	[ -f "$PGSQ_CACHE/$PG_MAJOR-$flavor/.complete" ] ||
		bench_die "PostgreSQL $PG_MAJOR $flavor build missing or incomplete under $PGSQ_CACHE (see scripts/install-postgres)"
	[ -x "$PGBIN/pgbench" ] || bench_die "no pgbench in $PGBIN"
}

# Fingerprint of the sources pg_stat_queries is built from in this tree
bench_extension_sources_sum() {
	(cd "$REPO_ROOT" &&
		find pg_stat_queries/src pg_stat_queries/sql pg_stat_queries/compat mk \
			pg_stat_queries/Makefile pg_stat_queries/pg_stat_queries.control \
			-type f \( -name '*.[ch]' -o -name '*.sql' -o -name '*.mk' \
			-o -name Makefile -o -name '*.control' \) 2>/dev/null |
		LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -d' ' -f1
}

# Build pg_stat_queries from a private copy of its sources (not to disturb
# builds in the working tree) and install it into the chosen build, unless
# the installed library was built here from exactly these sources: a stamp
# next to it holds their fingerprint and the library's own, so a library
# installed since by other means does not pass either.  (Comparing times
# would take a library installed from another checkout, built later, for
# this one's.)
bench_install_extension() {
	local lib stamp sum
	lib="$("$PG_CONFIG" --pkglibdir)/pg_stat_queries.so"
	stamp="$lib.sources"
	sum=$(bench_extension_sources_sum)
	if [ -f "$lib" ] && [ -f "$stamp" ] &&
		[ "$(cat "$stamp")" = "$sum $(sha256sum <"$lib" | cut -d' ' -f1)" ]; then
		bench_say "pg_stat_queries already installed from these sources in $(dirname "$lib")"
		return 0
	fi
	if [ ! -w "$(dirname "$lib")" ]; then
		bench_die "$lib is missing or stale and $(dirname "$lib") is not writable (run as root, or: make -C pg_stat_queries PG_CONFIG=$PG_CONFIG install)"
	fi
	local build
	build=$(mktemp -d "${TMPDIR:-/tmp}/pgsq-bench-build.XXXXXX")
	# its Makefile includes ../mk/*.mk
	(cd "$REPO_ROOT" && tar --exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude=results \
		--exclude='tmp_*' -cf - pg_stat_queries mk) | tar -C "$build" -xf -
	bench_say "building pg_stat_queries for $PG_CONFIG"
	if ! make -s -C "$build/pg_stat_queries" PG_CONFIG="$PG_CONFIG" install >"$build/make.log" 2>&1; then
		cat "$build/make.log" >&2
		rm -rf "$build"
		bench_die "building pg_stat_queries failed"
	fi
	rm -rf "$build"
	echo "$sum $(sha256sum <"$lib" | cut -d' ' -f1)" >"$stamp"
}

# Start the server (core files allowed: see bench_core_backtraces) with the settings in the file named by $1 (copied to
# bench_run.conf, which postgresql.conf includes).  Waits until it accepts
# connections.
bench_start() {
	local conf=$1
	as_test_user "cp $(q "$conf") $(q "$DATADIR/bench_run.conf")"
	as_bench_user "pg_ctl -c -D $(q "$DATADIR") -l $(q "$BENCH_DIR/server.log") -w -t 120 -s start" ||
		{ tail -n 30 "$BENCH_DIR/server.log" >&2; return 1; }
}

# One-row tables PREFIX1..PREFIXn (churn128, unique, mixed): $1 = prefix, $2 = n
bench_make_tables() {
	bench_psql "DO \$\$ BEGIN FOR i IN 1..$2 LOOP
		EXECUTE format('CREATE TABLE $1%s (id int NOT NULL)', i);
		EXECUTE format('INSERT INTO $1%s VALUES (1)', i);
	END LOOP; END \$\$" >/dev/null
}

# The EXIT trap of a script with a throw-away work directory: stop its
# server, remove the directory (kept with KEEP_CLUSTER=1), exit with $1
# (default: the status the script exited with)
bench_finish() {
	local rc=${1:-$?}
	if [ -n "${DATADIR:-}" ] && [ -f "$DATADIR/postmaster.pid" ]; then
		bench_stop
	fi
	if [ -n "${BENCH_DIR:-}" ] && [ -d "$BENCH_DIR" ]; then
		if [ "${KEEP_CLUSTER:-0}" = 1 ]; then echo "bench: keeping $BENCH_DIR"; else rm -rf "$BENCH_DIR"; fi
	fi
	exit "$rc"
}

bench_stop() {
	[ -f "$DATADIR/postmaster.pid" ] || return 0
	as_bench_user "pg_ctl -D $(q "$DATADIR") -m fast -w -t 30 -s stop" >/dev/null 2>&1 ||
		as_bench_user "pg_ctl -D $(q "$DATADIR") -m immediate -w -s stop" >/dev/null 2>&1 || true
}

# initdb a cluster in $DATADIR with the benchmark's base settings ($1 = extra
# lines appended to postgresql.conf)
bench_initdb() {
	local extra=$1
	as_test_user "rm -rf $(q "$DATADIR") && mkdir -p $(q "$DATADIR") $(q "$SOCKDIR")"
	as_bench_user "initdb -D $(q "$DATADIR") -U $(q "$PGSQ_TEST_USER") -A trust -E UTF8 --locale=C >$(q "$BENCH_DIR/initdb.log") 2>&1" ||
		{ cat "$BENCH_DIR/initdb.log" >&2; return 1; }
	as_test_user "cat >> $(q "$DATADIR/postgresql.conf")" <<EOF

# --- pg_stat_queries benchmark (bench/) ---
listen_addresses = ''
port = $PORT
unix_socket_directories = '$SOCKDIR'
max_connections = $MAX_CONNECTIONS
shared_buffers = $SHARED_BUFFERS
fsync = off
synchronous_commit = off
full_page_writes = off
max_wal_size = 4GB
checkpoint_timeout = 30min
autovacuum = off
log_min_messages = warning
log_line_prefix = '%m [%p] %b '
$extra
include_if_exists = 'bench_run.conf'
EOF
}

# Backtraces of core files a crashed server process left in $DATADIR (then
# removes them); prints nothing when there are none
bench_core_backtraces() {
	local core
	for core in "$DATADIR"/core*; do
		[ -f "$core" ] || continue
		echo "--- backtrace of $(basename "$core")"
		if command -v gdb >/dev/null 2>&1; then
			gdb -batch -nx -ex 'bt 25' "$PGBIN/postgres" "$core" 2>/dev/null | grep -E '^#' | head -n 25
		else
			echo "(gdb not installed)"
		fi
		rm -f "$core"
	done
}
