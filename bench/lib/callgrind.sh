# bench/lib/callgrind.sh -- the machinery of bench/callgrind.sh and
# bench/scaling.sh (sourced, not run; needs scripts/lib.sh and
# bench/lib/common.sh first): a throw-away cluster whose postmaster runs under
# valgrind --tool=callgrind, forked backends followed, one output file per
# process.
#
# Globals used: BENCH_DIR, DATADIR, SOCKDIR, PORT, PGBIN, KEEP_CLUSTER (and
# SHARED_BUFFERS, MAX_CONNECTIONS through bench_initdb).  PM_PID is the
# valgrind-ed postmaster while one runs.

PM_PID=""

# The common start of both scripts: tools, build (FLAVOR), pg_stat_queries
# installed unless INSTALL_EXT=0, OUT_DIR, the EXIT trap, and the cluster in
# a work directory named after $1 (see cg_setup_cluster)
cg_prepare() {
	bench_install_tools
	command -v valgrind >/dev/null || bench_die "valgrind is not installed"
	BENCH_DIR=""
	DATADIR=""
	trap cg_finish EXIT
	trap 'exit 130' INT TERM HUP
	bench_pick_build "$FLAVOR"
	if [ "${INSTALL_EXT:-1}" = 1 ]; then
		bench_install_extension || exit 1
	fi
	ensure_test_user
	mkdir -p "$OUT_DIR"
	cg_setup_cluster "$1"
}

# The EXIT trap of both scripts: bench_finish, and the valgrind-ed
# postmaster killed if one still runs
cg_finish() {
	local rc=$?
	[ -n "$PM_PID" ] && kill "$PM_PID" 2>/dev/null
	bench_finish "$rc"
}

# Work directory (named after $1), cluster and pgbench tables (scale 1):
# sets BENCH_DIR, DATADIR, SOCKDIR, PORT.  The server (not under valgrind)
# is left running, for more set-up; stop it with bench_stop.
cg_setup_cluster() {
	local name=$1
	BENCH_DIR=$(mktemp -d "${PGSQ_BENCH_DIR:-/tmp}/pgsq-$name.XXXXXX") || bench_die "cannot create work directory"
	chmod 755 "$BENCH_DIR"
	[ "$(id -u)" -eq 0 ] && chown "$PGSQ_TEST_USER" "$BENCH_DIR"
	DATADIR=$BENCH_DIR/data
	SOCKDIR=$BENCH_DIR/sock
	PORT=$(free_port "${BENCH_PORT:-55532}")
	bench_initdb "" || bench_die "initdb failed"
	echo "shared_preload_libraries = ''" | as_test_user "cat > $(q "$BENCH_DIR/none.conf")"
	bench_start "$BENCH_DIR/none.conf" || bench_die "server did not start"
	as_bench_user "createdb bench && pgbench -i -q -s 1 bench" >"$BENCH_DIR/init.log" 2>&1 ||
		{ cat "$BENCH_DIR/init.log"; bench_die "pgbench -i failed"; }
}

# The settings of a configuration: $1 = none, pgss, pgsq, pgsq-noplans
# (max_plans = 0: statements only) or pgsq-sampleR,
# $2 = .max of the extension; CG_PGSQ_SETTINGS adds lines for pgsq*
cg_config_settings() {
	local c=$1 max=$2
	case "$c" in
		none) echo "shared_preload_libraries = ''
compute_query_id = on" ;;
		pgss) echo "shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.save = off
pg_stat_statements.max = $max" ;;
		pgsq) echo "shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.save = off
pg_stat_queries.max = $max
${CG_PGSQ_SETTINGS:-}" ;;
		pgsq-noplans) echo "shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.save = off
pg_stat_queries.max = $max
pg_stat_queries.max_plans = 0
${CG_PGSQ_SETTINGS:-}" ;;
		pgsq-sample*) echo "shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.save = off
pg_stat_queries.max = $max
pg_stat_queries.sample_rate = ${c#pgsq-sample}
${CG_PGSQ_SETTINGS:-}" ;;
		*) bench_die "unknown configuration $c" ;;
	esac
}

# Start the postmaster under callgrind with configuration $1 (.max $2),
# output files in directory $3 (callgrind.out.PID), more valgrind options in
# $4; then create the configuration's extension and prewarm the pgbench
# tables, so that the measured connections do not differ by the pages (and
# checksums) they happen to read.  Server log: $BENCH_DIR/server_$1.log.
cg_start() {
	local c=$1 max=$2 out=$3 opts=${4:-} i ok=0
	cg_config_settings "$c" "$max" | as_test_user "cat > $(q "$DATADIR/bench_run.conf")"
	as_test_user "mkdir -p $(q "$out")"
	# the postmaster in the foreground of a background job, under callgrind
	as_bench_user "exec valgrind --tool=callgrind --trace-children=yes --dump-instr=no $opts \
		--callgrind-out-file=$(q "$out")/callgrind.out.%p postgres -D $(q "$DATADIR") \
		>$(q "$BENCH_DIR/server_$c.log") 2>&1" &
	PM_PID=$!
	for ((i = 0; i < 240; i++)); do
		if as_bench_user "pg_isready -q -d bench" 2>/dev/null; then ok=1; break; fi
		sleep 0.5
	done
	[ "$ok" = 1 ] || { tail -n 30 "$BENCH_DIR/server_$c.log"; bench_die "$c: server under valgrind did not start"; }
	case "$c" in
		pgss) bench_psql "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null ;;
		pgsq*) bench_psql "CREATE EXTENSION IF NOT EXISTS pg_stat_queries" >/dev/null ;;
	esac
	bench_psql "CREATE EXTENSION IF NOT EXISTS pg_prewarm" >/dev/null
	bench_psql "SELECT pg_prewarm('pgbench_accounts'), pg_prewarm('pgbench_accounts_pkey'), pg_prewarm('pgbench_branches'), pg_prewarm('pgbench_tellers')" >/dev/null ||
		bench_die "$c: pg_prewarm failed"
}

# Stop the valgrind-ed server of configuration $1 and report what it logged
cg_stop() {
	local c=$1
	as_bench_user "pg_ctl -D $(q "$DATADIR") -m fast -w -t 120 -s stop" >/dev/null 2>&1
	wait "$PM_PID" 2>/dev/null
	PM_PID=""
	grep -E 'TRAP|PANIC|terminated by signal' "$BENCH_DIR/server_$c.log" && bench_say "$c: server problems (see above)"
}

# The totals of one callgrind output file, as "event=value" words
# (Ir, and with --cache-sim=yes also Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw)
cg_totals() {
	awk '/^events:/ { n = split($0, ev, " ") }
		/^(summary|totals):/ { for (i = 2; i <= NF; i++) printf "%s%s=%s", (i > 2 ? " " : ""), ev[i], $i; print ""; exit }' "$1"
}

# Instructions (Ir) in one callgrind output file
ir_of() {
	awk '/^(summary|totals):/ { print $2; exit }' "$1"
}

# After a client run: the files of directory $1 not in the listing $2 (taken
# before the run), once the run's backends have exited and written them (at
# least $3 new files, default 2: the backend and pgbench's first connection)
cg_new_files() {
	local dir=$1 before=$2 want=${3:-2} new="" i
	for ((i = 0; i < 30; i++)); do
		sleep 1
		new=$(comm -13 <(echo "$before") <(ls "$dir"))
		[ -n "$new" ] && [ "$(echo "$new" | wc -l)" -ge "$want" ] && break
	done
	echo "$new"
}
