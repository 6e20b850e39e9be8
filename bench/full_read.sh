#!/usr/bin/env bash
#
# bench/full_read.sh -- what reading the whole view costs, pg_stat_queries
# (by its own name and through its pg_stat_statements drop-in) against
# contrib's pg_stat_statements, and what such a reader costs the statements
# being counted (issue 43).
#
# Usage:
#   bench/full_read.sh           full run (release build, about 10 minutes),
#                                results in bench/results/ (bench/run calls it
#                                in full mode)
#   bench/full_read.sh --smoke   quick self-check (assert build, small sizes,
#                                one round, under a minute), results in the
#                                temporary work directory; prints "1 passed,
#                                0 failed" or "0 passed, 1 failed" and exits
#                                non-zero when something does not work
#   PG_MAJOR=19 OUT_DIR=bench/results/pg19 bench/full_read.sh
#   bench/full_read.sh --profile   part 1 at SIZES (5000) only, then perf
#                                (perf record --call-graph dwarf) on the
#                                reading backend of each reader and query of
#                                PROFILE_READERS and PROFILE_QUERIES, reading
#                                for about PROFILE_SECONDS; writes only
#                                OUT_DIR/full_read_profile_perf.txt (self time
#                                by object, then CPU ms per read: in total, in
#                                the functions of PROFILE_FUNCS, in page faults
#                                and per symbol; bench/lib/perf_breakdown.py)
#
# Two servers run side by side from the same build, with the same settings
# (fsync off, track_utility off, save off, as bench/run's otherwise):
#   pgsq  preloads pg_stat_queries (query_text_memory 64MB, so that every
#         text is kept) and has its drop-in: the compat directory first in
#         extension_control_path and CREATE EXTENSION pg_stat_statements in
#         the same database, so both names read our statistics
#   pgss  preloads contrib's pg_stat_statements
#
# Part 1, read times.  Cases, each on both servers:
#   N         N distinct statements "SELECT cI FROM t WHERE cJ = 1" over a
#             225-column table, for each N of SIZES (smallest first; a larger
#             size adds statements to the smaller one's), max = MAX
#   N+T tables  MANY_STMTS such statements beside MANY_TABLES one-row tables,
#             each with a statistics entry (created, given a row and read
#             once in DO blocks, so that no statement is counted), on newly
#             initialized clusters
# Four readers, each a psql session: ours (pg_stat_queries), dropin (the
# drop-in's pg_stat_statements, same server), pgss, and table, a reference:
# our view's rows of the case copied into plain tables on our server
# (full_read_rows, and full_read_rows_notext for the reads without texts),
# whose reads cost what sending those rows costs with no function behind
# them, the least any view with our columns could take.  ROUNDS rounds, each
# with new sessions; in a round, query by query of
#   SELECT count(*) FROM v | SELECT * FROM v | SELECT * FROM v(false)
# a warm-up read by each reader, then READS reads by each, the readers
# taking turns read by read (the order rotating with every read, query and
# round), so that a burst of load from elsewhere hits them alike.  Each read
# is "\g /dev/null" under psql's \timing (server time and transfer,
# connection excluded).  Reported: the median of all timed reads, and its
# ratio to pg_stat_statements'.
#
# Part 2, writers under a reader: bench/run's "unique" workload (pgbench,
# CLIENTS clients, -M simple, random 3-way joins over UNIQUE_TABLES one-row
# tables: a new query id almost every time; bench/workloads/unique.sql),
# max = WUR_MAX, WUR_DURATION seconds, while one more session reads the full
# view (SELECT * FROM pg_stat_queries, or pg_stat_statements) again and
# again without pause (pgbench -c 1, bench/workloads/full_read.sql); with
# WUR_BASELINE=1 also without that reader.  WUR_ROUNDS rounds, the order of
# the configurations rotating with each round; the server restarts (empty
# statistics) before each run.  Wait events of the active client backends
# are sampled once a second, the writers' and the reader's apart
# (bench/workloads/waits_by_app.sql).
#
# Outputs in OUT_DIR: full_read.md (the tables), full_read.tsv (per case,
# query and reader: median, quartiles, ratio to pg_stat_statements),
# full_read_reads.tsv (every timed read), full_read_cases.tsv (rows, tables
# with statistics and the 1-minute load average before and after, per case), full_read_wur.tsv (every writers-under-
# reader run, with its waits), full_read_env.txt; written by
# bench/lib/full_read_report.py.
#
# Environment (full / smoke):
#   PG_MAJOR           18                   18 or 19
#   PGSQ_BENCH_FLAVOR  release / assert     which build of /opt/pgsq
#   SIZES              "5000 50000" / "300" statements of the plain cases
#   MANY_TABLES        10000 / 200          tables of the many-tables case (0: no such case)
#   MANY_STMTS         5000 / 300           statements beside them
#   MAX                60000 / 1000         .max of both extensions in part 1
#   ROUNDS             5 / 1
#   READS              7 / 2                timed reads per session
#   WUR_ROUNDS         3 / 1                rounds of part 2 (0: no part 2)
#   WUR_DURATION       20 / 3               seconds per run
#   WUR_BASELINE       1 / 0                also run the writers without the reader
#   WUR_MAX            5000 / 100           .max of both extensions in part 2
#   UNIQUE_TABLES      1000 / 60            tables u1..uN of the writers' joins
#   CLIENTS            4 x cores            writer clients (pgbench -c)
#   THREADS            min(CLIENTS, cores)
#   SHARED_BUFFERS     256MB / 128MB        per server
#   OUT_DIR            bench/results / the work directory's results
#   PGSQ_BENCH_DIR     /tmp/fullread        parent of the throw-away work directory
#                                           (clusters, sockets, logs)
#   BENCH_PORT         5650                 first port tried; two are used
#   KEEP_CLUSTER       0                    1 keeps the work directory
#   INSTALL_EXT        1                    build and install pg_stat_queries into
#                                           the build first when stale (0: never)
#
# Example: SIZES=5000 MANY_TABLES=0 WUR_ROUNDS=0 ROUNDS=3 bench/full_read.sh

set -euo pipefail

SMOKE=0
PROFILE=0
for arg in "$@"; do
	case "$arg" in
		--smoke) SMOKE=1 ;;
		--profile) PROFILE=1 ;;
		-h|--help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "bench/full_read.sh: unknown argument $arg (try --help)" >&2; exit 2 ;;
	esac
done

source "$(dirname "$0")/../scripts/lib.sh"
source "$(dirname "$0")/lib/common.sh"
BENCH_START=$(date +%s)

CORES=$(nproc)
if [ "$SMOKE" = 1 ]; then
	FLAVOR=${PGSQ_BENCH_FLAVOR:-assert}
	SIZES=${SIZES:-300}
	MANY_TABLES=${MANY_TABLES:-200}
	MANY_STMTS=${MANY_STMTS:-300}
	MAX=${MAX:-1000}
	ROUNDS=${ROUNDS:-1}
	READS=${READS:-2}
	WUR_ROUNDS=${WUR_ROUNDS:-1}
	WUR_DURATION=${WUR_DURATION:-3}
	WUR_BASELINE=${WUR_BASELINE:-0}
	WUR_MAX=${WUR_MAX:-100}
	UNIQUE_TABLES=${UNIQUE_TABLES:-60}
	SHARED_BUFFERS=${SHARED_BUFFERS:-128MB}
elif [ "$PROFILE" = 1 ]; then
	command -v perf >/dev/null || bench_die "--profile needs perf (Debian: linux-perf)"
	FLAVOR=${PGSQ_BENCH_FLAVOR:-release}
	SIZES=${SIZES:-5000}
	MANY_TABLES=${MANY_TABLES:-0}
	MANY_STMTS=${MANY_STMTS:-5000}
	MAX=${MAX:-60000}
	ROUNDS=${ROUNDS:-3}
	READS=${READS:-7}
	WUR_ROUNDS=0
	WUR_DURATION=0
	WUR_BASELINE=0
	WUR_MAX=${WUR_MAX:-5000}
	UNIQUE_TABLES=${UNIQUE_TABLES:-1000}
	SHARED_BUFFERS=${SHARED_BUFFERS:-256MB}
	PROFILE_READERS=${PROFILE_READERS:-"ours pgss"}
	PROFILE_QUERIES=${PROFILE_QUERIES:-"count star"}
	PROFILE_SECONDS=${PROFILE_SECONDS:-8}
	PROFILE_FREQ=${PROFILE_FREQ:-999}
	# functions whose inclusive time is reported
	PROFILE_FUNCS=${PROFILE_FUNCS:-ExecMakeTableFunctionResult,pgsq_collect_entries,pg_stat_statements_internal,tuplestore_putvalues,pgsq_hist_percentiles,pgsq_text_copy,pnstrdup,LWLockAcquire,dshash_seq_next,hash_seq_search,qtext_load_file,numeric_in,tuplestore_end,printtup,float8out,int8out,timestamptz_out,socket_putmessage}
else
	FLAVOR=${PGSQ_BENCH_FLAVOR:-release}
	SIZES=${SIZES:-"5000 50000"}
	MANY_TABLES=${MANY_TABLES:-10000}
	MANY_STMTS=${MANY_STMTS:-5000}
	MAX=${MAX:-60000}
	ROUNDS=${ROUNDS:-5}
	READS=${READS:-7}
	WUR_ROUNDS=${WUR_ROUNDS:-3}
	WUR_DURATION=${WUR_DURATION:-20}
	WUR_BASELINE=${WUR_BASELINE:-1}
	WUR_MAX=${WUR_MAX:-5000}
	UNIQUE_TABLES=${UNIQUE_TABLES:-1000}
	SHARED_BUFFERS=${SHARED_BUFFERS:-256MB}
fi
CLIENTS=${CLIENTS:-$((4 * CORES))}
THREADS=${THREADS:-$(( CLIENTS < CORES ? CLIENTS : CORES ))}
MAX_CONNECTIONS=$((CLIENTS + 20))
INSTALL_EXT=${INSTALL_EXT:-1}
KEEP_CLUSTER=${KEEP_CLUSTER:-0}
COLUMNS_N=225
TABLES_PER_DO=500

SIZES=$(printf '%s\n' $SIZES | sort -n | tr '\n' ' ')
SIZES=${SIZES% }
for n in $SIZES $MANY_STMTS; do
	[ "$n" -ge 1 ] && [ "$n" -le $((COLUMNS_N * COLUMNS_N)) ] ||
		bench_die "statement counts must be within 1..$((COLUMNS_N * COLUMNS_N)) (got $n)"
	[ "$n" -lt "$MAX" ] || bench_die "MAX ($MAX) must be above every statement count (got $n)"
done
[ "$UNIQUE_TABLES" -ge 6 ] || bench_die "UNIQUE_TABLES must be >= 6"
[ "$READS" -ge 1 ] && [ "$ROUNDS" -ge 1 ] || bench_die "READS and ROUNDS must be >= 1"

# --- work directory, two servers, cleanup ----------------------------------
# common.sh's helpers work on one server, named by BENCH_DIR, DATADIR and
# PORT: use_server points them at one of ours (all share SOCKDIR).
WORK=""
BG_PIDS=()
declare -A SERVER_PORT
use_server() {
	BENCH_DIR=$WORK/$1
	DATADIR=$BENCH_DIR/data
	PORT=${SERVER_PORT[$1]:-0}
}

finish() {
	local rc=$? p s
	set +e
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	if [ -n "$WORK" ]; then
		for s in pgsq pgss; do
			use_server "$s"
			bench_stop
		done
		if [ "$KEEP_CLUSTER" = 1 ]; then echo "bench: keeping $WORK"; else rm -rf "$WORK"; fi
	fi
	if [ "$SMOKE" = 1 ]; then
		if [ "$rc" -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
	fi
	exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM HUP

bench_pick_build "$FLAVOR"
if [ "$INSTALL_EXT" = 1 ]; then
	bench_install_extension
fi
for lib in pg_stat_statements pg_stat_queries; do
	[ -f "$("$PG_CONFIG" --pkglibdir)/$lib.so" ] || bench_die "$lib.so missing in $("$PG_CONFIG" --pkglibdir)"
done
COMPAT_DIR=$("$PG_CONFIG" --sharedir)/pg_stat_queries_compat
[ -f "$COMPAT_DIR/extension/pg_stat_statements.control" ] ||
	bench_die "the drop-in is not installed in $COMPAT_DIR (make -C pg_stat_queries PG_CONFIG=$PG_CONFIG install)"

ensure_test_user
PARENT=${PGSQ_BENCH_DIR:-/tmp/fullread}
mkdir -p "$PARENT"
chmod 755 "$PARENT"
WORK=$(mktemp -d "$PARENT/run.XXXXXX") || bench_die "cannot create work directory"
chmod 755 "$WORK"
[ "$(id -u)" -eq 0 ] && chown "$PGSQ_TEST_USER" "$WORK"
SOCKDIR=$WORK/sock
SERVER_PORT[pgsq]=$(free_port "${BENCH_PORT:-5650}")
SERVER_PORT[pgss]=$(free_port $((SERVER_PORT[pgsq] + 1)))
as_test_user "mkdir -p $(q "$WORK/pgsq") $(q "$WORK/pgss") $(q "$WORK/workloads") $(q "$SOCKDIR")"
tar -C "$BENCH_ROOT/workloads" -cf - . | as_test_user "tar -C $(q "$WORK/workloads") -xf -"
W=$WORK/workloads
if [ "$SMOKE" = 1 ]; then
	OUT_DIR=${OUT_DIR:-$WORK/results}
else
	OUT_DIR=${OUT_DIR:-$BENCH_ROOT/results}
fi
mkdir -p "$OUT_DIR"
TSV=$WORK/full_read_reads.tsv
WUR_TSV=$WORK/full_read_wur.tsv
CASES_TSV=$WORK/full_read_cases.tsv

bench_say "build $PGBIN ($FLAVOR), work directory $WORK, ports ${SERVER_PORT[pgsq]} (pgsq) ${SERVER_PORT[pgss]} (pgss)"
if [ "$PROFILE" = 1 ]; then
	{ echo "# bench/full_read.sh --profile, $("$PGBIN/postgres" --version) ($FLAVOR build), $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$REPO_ROOT" rev-parse --short HEAD) (pg_stat_queries sources as of $(git -C "$REPO_ROOT" log -1 --format=%h -- pg_stat_queries mk))"
	  echo; } >"$OUT_DIR/full_read_profile_perf.txt"
fi
bench_say "sizes: $SIZES; many tables: $MANY_TABLES beside $MANY_STMTS statements; $ROUNDS rounds x $READS reads;" \
	"writers under a reader: $WUR_ROUNDS rounds x ${WUR_DURATION}s, $CLIENTS clients"

# Settings of server $1 with .max $2 (the part run with bench_start)
conf_file() {
	local s=$1 max=$2 f=$WORK/$1/conf_$2.conf
	{
		case "$s" in
			pgsq) echo "shared_preload_libraries = 'pg_stat_queries'"
			      echo "pg_stat_queries.max = $max"
			      echo "pg_stat_queries.track_utility = off"
			      echo "pg_stat_queries.save = off"
			      echo "pg_stat_queries.query_text_memory = 64MB"
			      echo "extension_control_path = '$COMPAT_DIR:\$system'" ;;
			pgss) echo "shared_preload_libraries = 'pg_stat_statements'"
			      echo "pg_stat_statements.max = $max"
			      echo "pg_stat_statements.track_utility = off"
			      echo "pg_stat_statements.save = off" ;;
		esac
	} | as_test_user "cat > $(q "$f")"
	echo "$f"
}

# A new cluster for server $1 with .max $2, started, database bench, the
# extensions (on pgsq both pg_stat_queries and the drop-in)
fresh_server() {
	local s=$1 max=$2
	use_server "$s"
	bench_stop
	bench_initdb "" || bench_die "initdb of $s failed"
	bench_start "$(conf_file "$s" "$max")" || bench_die "server $s did not start"
	as_bench_user "createdb bench" || bench_die "createdb on $s failed"
	case "$s" in
		pgsq) bench_psql "CREATE EXTENSION pg_stat_queries; CREATE EXTENSION pg_stat_statements" ;;
		pgss) bench_psql "CREATE EXTENSION pg_stat_statements" ;;
	esac
	# the table of the statements, in a DO block as everything that is not
	# measured: its statements are nested, not counted
	bench_psql "DO \$\$ BEGIN
		EXECUTE (SELECT format('CREATE TABLE t (%s)', string_agg(format('c%s int', i), ', '))
		           FROM generate_series(1, $COLUMNS_N) i);
		EXECUTE (SELECT format('INSERT INTO t SELECT %s FROM generate_series(1, 10) g',
		                       string_agg('g', ', ')) FROM generate_series(1, $COLUMNS_N));
	END \$\$" >/dev/null
}

restart_server() {
	local s=$1 max=$2
	use_server "$s"
	bench_stop
	bench_start "$(conf_file "$s" "$max")" || bench_die "server $s did not restart"
}

# The statements number from+1 .. from+count: "SELECT cI FROM t WHERE cJ = 1"
# for the k-th pair (I, J) in order (I outer)
statements_file() {
	local from=$1 count=$2 f=$WORK/stmts_$1_$2.sql
	if [ ! -f "$f" ]; then
		awk -v from="$from" -v count="$count" -v n="$COLUMNS_N" 'BEGIN {
			for (k = from; k < from + count; k++)
				printf "SELECT c%d FROM t WHERE c%d = 1;\n", int(k / n) + 1, k % n + 1
		}' | as_test_user "cat > $(q "$f")"
	fi
	echo "$f"
}

# Run statements from+1 .. from+count on both servers (side by side)
fill_both() {
	local f s pids=()
	f=$(statements_file "$1" "$2")
	for s in pgsq pgss; do
		use_server "$s"
		as_bench_user "psql -X -q -o /dev/null -v ON_ERROR_STOP=1 -f $(q "$f")" &
		pids+=($!)
	done
	for s in "${pids[@]}"; do wait "$s" || bench_die "running the statements failed"; done
}

# MANY_TABLES one-row tables m1..mN with statistics entries on server $1,
# in DO blocks of TABLES_PER_DO (one transaction each: the lock table)
make_many_tables() {
	local f=$WORK/$1/many_tables.sql b
	use_server "$1"
	for ((b = 0; b < MANY_TABLES; b += TABLES_PER_DO)); do
		echo "DO \$\$ BEGIN FOR i IN $((b + 1))..$((b + TABLES_PER_DO < MANY_TABLES ? b + TABLES_PER_DO : MANY_TABLES)) LOOP
			EXECUTE format('CREATE TABLE m%s (id int)', i);
			EXECUTE format('INSERT INTO m%s VALUES (1)', i);
			EXECUTE format('SELECT count(*) FROM m%s', i);
		END LOOP; END \$\$;"
	done | as_test_user "cat > $(q "$f")"
	as_bench_user "psql -X -q -o /dev/null -v ON_ERROR_STOP=1 -f $(q "$f")"
}

# Wait until server $1's view $2 counts at least $3 rows (ours shows another
# session's statements once it merged them: at its exit); prints the count
wait_for_rows() {
	local s=$1 view=$2 want=$3 n=0 i
	use_server "$s"
	for ((i = 0; i < 300; i++)); do
		n=$(bench_psql "SELECT count(*) FROM $view")
		[ "$n" -ge "$want" ] && break
		sleep 0.1
	done
	[ "$n" -ge "$want" ] || bench_die "$s: $view has $n rows, expected at least $want"
	echo "$n"
}

# Readers: psql sessions kept open, one per reader, fed through FIFOs so
# that their reads can alternate one by one.  open_reader NAME SERVER
declare -A RD_IN RD_OUT RD_PID
open_reader() {
	local name=$1 fin=$WORK/reader_$1.in fout=$WORK/reader_$1.out fd
	use_server "$2"
	rm -f "$fin" "$fout"
	mkfifo "$fin" "$fout"
	# stdbuf: psql's output goes to a pipe, where stdio would hold it back
	# (and without the other readers' ends of their FIFOs: a reader sees the
	# end of its input only when every copy of the writing end is closed)
	(
		for fd in "${RD_IN[@]}" "${RD_OUT[@]}"; do exec {fd}>&-; done
		as_bench_user "stdbuf -oL psql -X -q -v ON_ERROR_STOP=1"
	) <"$fin" >"$fout" 2>&1 &
	RD_PID[$name]=$!
	BG_PIDS+=("${RD_PID[$name]}")
	exec {fd}>"$fin"
	RD_IN[$name]=$fd
	exec {fd}<"$fout"
	RD_OUT[$name]=$fd
	echo '\timing on' >&"${RD_IN[$name]}"
}

close_reader() {
	local name=$1 fd
	fd=${RD_IN[$name]}
	exec {fd}>&-
	fd=${RD_OUT[$name]}
	exec {fd}<&-
	wait "${RD_PID[$name]}" || bench_die "reader $name failed"
	rm -f "$WORK/reader_$name.in" "$WORK/reader_$name.out"
}

# One read of $2 by reader $1: prints psql's time (ms)
read_once() {
	local name=$1 sql=$2 line t="" out=""
	printf '%s \\g /dev/null\n\\echo @@done\n' "$sql" >&"${RD_IN[$name]}"
	while IFS= read -r -t 600 -u "${RD_OUT[$name]}" line; do
		case "$line" in
			Time:*) t=${line#Time: }; t=${t%% *} ;;
			@@done) echo "$t"; return 0 ;;
			*) out="$out$line"$'\n' ;;
		esac
	done
	echo "$out" >&2
	bench_die "reader $name: $sql failed"
}

reader_server() { case "$1" in ours|dropin|table) echo pgsq ;; pgss) echo pgss ;; esac; }
reader_view() {
	case "$1" in
		ours) echo pg_stat_queries ;;
		table) echo full_read_rows ;;
		*) echo pg_stat_statements ;;
	esac
}
# The SQL of query $1 on view $2 (the table reader's rows without texts are
# a table of their own)
query_sql() {
	case "$1:$2" in
		count:*) echo "SELECT count(*) FROM $2" ;;
		star:*) echo "SELECT * FROM $2" ;;
		notext:full_read_rows) echo "SELECT * FROM full_read_rows_notext" ;;
		notext:*) echo "SELECT * FROM $2(false)" ;;
	esac
}

# The reference reader "table": our view's rows of this case, with and
# without texts, copied into plain tables on our server, so that reading
# them costs only what sending the same rows costs, with no function
# behind them (in a DO block: nothing of it is counted)
snapshot_rows() {
	use_server pgsq
	bench_psql "SET client_min_messages = warning; DO \$\$ BEGIN
		DROP TABLE IF EXISTS full_read_rows, full_read_rows_notext;
		CREATE TABLE full_read_rows AS SELECT * FROM pg_stat_queries(true);
		CREATE TABLE full_read_rows_notext AS SELECT * FROM pg_stat_queries(false);
	END \$\$" >/dev/null
	bench_psql "VACUUM full_read_rows, full_read_rows_notext" >/dev/null
}

# Part 1 for one case named $1 (both servers filled)
measure_case() {
	local case=$1 r qi q k i rd sql t rows_ours rows_pgss missing
	local -a readers=(ours dropin pgss table)
	local -a queries=(count star notext)
	local nr=${#readers[@]}
	rows_ours=$(wait_for_rows pgsq pg_stat_queries "$2")
	rows_pgss=$(wait_for_rows pgss pg_stat_statements "$2")
	snapshot_rows
	use_server pgsq
	missing=$(bench_psql "SELECT texts_missing FROM pg_stat_queries_info")
	[ "$missing" = 0 ] || bench_die "pgsq: $missing texts missing (query_text_memory too small)"
	local tables
	tables=$(bench_psql "SELECT count(*) FROM pg_stat_user_tables WHERE n_tup_ins > 0")
	local load_before
	load_before=$(cut -d' ' -f1 /proc/loadavg)
	bench_say "case $case: rows ours $rows_ours, pgss $rows_pgss; tables with statistics: $tables"
	for ((r = 1; r <= ROUNDS; r++)); do
		for rd in "${readers[@]}"; do open_reader "$rd" "$(reader_server "$rd")"; done
		for qi in 0 1 2; do
			q=${queries[$qi]}
			# read 0 of each reader is its warm-up for this query
			for ((i = 0; i <= READS; i++)); do
				for ((k = 0; k < nr; k++)); do
					rd=${readers[$(((k + r + qi + i) % nr))]}
					sql=$(query_sql "$q" "$(reader_view "$rd")")
					t=$(read_once "$rd" "$sql")
					[ -n "$t" ] || bench_die "reader $rd: no time for $sql"
					[ "$i" = 0 ] || printf '%s\t%s\t%s\t%s\t%d\t%s\n' "$case" "$r" "$q" "$rd" "$i" "$t" >>"$TSV"
				done
			done
		done
		for rd in "${readers[@]}"; do close_reader "$rd"; done
		BG_PIDS=()
		bench_say "case $case: round $r of $ROUNDS done"
	done
	# the machine's load average before and after: how busy it was otherwise
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$case" "$rows_ours" "$rows_pgss" "$tables" "$load_before" \
		"$(cut -d' ' -f1 /proc/loadavg)" >>"$CASES_TSV"
}

# perf on the backend of one reader session per reader and query, for case
# $1 (after its measured reads, whose median sets the number of reads)
profile_case() {
	local case=$1 q rd sql med n pid i data rpid perfpid
	local txt=$OUT_DIR/full_read_profile_perf.txt
	for q in $PROFILE_QUERIES; do
		for rd in $PROFILE_READERS; do
			med=$(awk -F'\t' -v c="$case" -v q="$q" -v rd="$rd" '$1 == c && $3 == q && $4 == rd { print $6 }' "$TSV" |
				sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
			n=$(awk -v s="$PROFILE_SECONDS" -v m="$med" 'BEGIN { n = int(s * 1000 / m); print (n < 20 ? 20 : n) }')
			sql=$(query_sql "$q" "$(reader_view "$rd")")
			use_server "$(reader_server "$rd")"
			{ sleep 2; for ((i = 0; i < n; i++)); do echo "$sql \\g /dev/null"; done; } |
				as_bench_user "PGAPPNAME=full_read_profile psql -X -q -v ON_ERROR_STOP=1" &
			rpid=$!
			pid=""
			for ((i = 0; i < 50; i++)); do
				pid=$(bench_psql "SELECT pid FROM pg_stat_activity WHERE application_name = 'full_read_profile'")
				[ -z "$pid" ] || break
				sleep 0.05
			done
			[ -n "$pid" ] || bench_die "no backend for the profiled session"
			data=$WORK/perf_${q}_$rd.data
			# perf stops when the backend exits, at the end of the session
			perf record -q -F "$PROFILE_FREQ" --call-graph dwarf,16384 -o "$data" -p "$pid" >/dev/null 2>&1 &
			perfpid=$!
			BG_PIDS=("$perfpid")
			wait "$rpid" || bench_die "the profiled session failed"
			wait "$perfpid" || true
			BG_PIDS=()
			bench_say "profiled $sql ($rd): $n reads, median ${med} ms"
			{
				echo "=== case $case: $sql ($rd), $n reads (median of the measured reads: $med ms)"
				perf report -i "$data" --no-children --sort dso --stdio -g none 2>/dev/null | grep '^# Samples' || true
				echo "--- self time by object"
				perf report -i "$data" --no-children --sort dso --stdio -g none 2>/dev/null |
					grep -v '^#' | grep -v '^$' | sed 's/ *$//' | head -n 8
				echo "--- per read (bench/lib/perf_breakdown.py)"
				python3 "$BENCH_ROOT/lib/perf_breakdown.py" "$data" "$n" "$PROFILE_FREQ" "$PROFILE_FUNCS"
				echo
			} >>"$txt"
		done
	done
}

# --- part 1 -----------------------------------------------------------------
printf 'case\tround\tquery\treader\tread\tms\n' >"$TSV"
printf 'case\trows_ours\trows_pgss\ttables_with_stats\tload_before\tload_after\n' >"$CASES_TSV"
for s in pgsq pgss; do fresh_server "$s" "$MAX"; done
done_n=0
for n in $SIZES; do
	bench_say "running statements $((done_n + 1))..$n on both servers"
	fill_both "$done_n" $((n - done_n))
	done_n=$n
	measure_case "$n" "$n"
	if [ "$PROFILE" = 1 ]; then profile_case "$n"; fi
done

# --- part 2: writers under a reader -------------------------------------------
summarize_waits() {
	# "token:count,..." over the samples of file $1, most frequent first, for
	# the tokens that start with $2 (R: or W:), that prefix removed
	awk -v p="$2" '/^S/ { for (i = 2; i <= NF; i++) if (index($i, p) == 1) n[substr($i, 3)]++ }
		END { for (e in n) print n[e], e }' "$1" | sort -k1,1rn -k2 |
		awk '{ printf "%s%s:%s", (NR > 1 ? "," : ""), $2, $1 }'
}

ext_counts() {
	case "$1" in
		pgss) bench_psql "SELECT (SELECT count(*) FROM pg_stat_statements), dealloc, '-' FROM pg_stat_statements_info" | tr '|' '\t' ;;
		pgsq) bench_psql "SELECT num_entries, evicted_entries, untracked_executions FROM pg_stat_queries_info" | tr '|' '\t' ;;
	esac
}

wur_run() {
	local r=$1 s=$2 reader=$3 tag="wur_r$1_$2_$3"
	local out=$WORK/$tag.out rout=$WORK/$tag.reader waits=$WORK/$tag.waits
	local view tps reads=- sampler rpid="" i
	view=pg_stat_queries
	[ "$s" = pgss ] && view=pg_stat_statements
	restart_server "$s" "$WUR_MAX"
	{ cat "$W/waits_by_app.sql"; echo "\\watch i=1 c=$WUR_DURATION"; } | as_test_user "cat > $(q "$WORK/$s/waits.sql")"
	as_bench_user "psql -X -q -At -f $(q "$WORK/$s/waits.sql")" >"$waits" 2>&1 &
	sampler=$!
	BG_PIDS=("$sampler")
	if [ "$reader" = reader ]; then
		as_bench_user "PGAPPNAME=full_read_reader pgbench -n -M simple -c 1 -j 1 -T $WUR_DURATION -D view=$view -f $(q "$W/full_read.sql") bench" >"$rout" 2>&1 &
		rpid=$!
		BG_PIDS+=("$rpid")
	fi
	as_bench_user "pgbench -n -M simple -c $CLIENTS -j $THREADS -T $WUR_DURATION -D ntables=$UNIQUE_TABLES -f $(q "$W/unique.sql") bench" >"$out" 2>&1 ||
		{ cat "$out" >&2; bench_die "$tag: pgbench failed"; }
	if [ -n "$rpid" ]; then
		wait "$rpid" || { cat "$rout" >&2; bench_die "$tag: the reader failed"; }
		reads=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$rout")
	fi
	wait "$sampler" || true
	BG_PIDS=()
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$out" | tail -n 1)
	[ -n "$tps" ] || { cat "$out" >&2; bench_die "$tag: no tps"; }
	# let the writers' backends exit (ours merges their last counters then)
	for ((i = 0; i < 100; i++)); do
		[ "$(bench_psql "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")" = 0 ] && break
		sleep 0.1
	done
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$s" "$reader" "$tps" "$reads" "$(ext_counts "$s")" \
		"$(grep -c '^S' "$waits" || true)" "$(summarize_waits "$waits" W:)" "$(summarize_waits "$waits" R:)" >>"$WUR_TSV"
	bench_say "run $tag: tps $tps, reads $reads, waits of writers: $(summarize_waits "$waits" W:); of the reader: $(summarize_waits "$waits" R:)"
}

printf 'round\tserver\treader\ttps\treads\tentries\tevicted\tuntracked\tsamples\twriter_waits\treader_waits\n' >"$WUR_TSV"
if [ "$WUR_ROUNDS" -ge 1 ]; then
	for s in pgsq pgss; do
		restart_server "$s" "$WUR_MAX"
		bench_make_tables u "$UNIQUE_TABLES"
		as_bench_user "vacuumdb -q -z bench"
	done
	for ((r = 1; r <= WUR_ROUNDS; r++)); do
		# pgsq first in odd rounds, pgss in even ones; without the reader
		# after it, in the other order (A B B A)
		if [ $((r % 2)) = 1 ]; then order="pgsq pgss"; back="pgss pgsq"; else order="pgss pgsq"; back="pgsq pgss"; fi
		for s in $order; do wur_run "$r" "$s" reader; done
		if [ "$WUR_BASELINE" = 1 ]; then
			for s in $back; do wur_run "$r" "$s" none; done
		fi
	done
fi

# --- part 1, many tables ------------------------------------------------------
if [ "$MANY_TABLES" -ge 1 ]; then
	case_name="${MANY_STMTS}+$((MANY_TABLES / 1000))k tables"
	[ "$MANY_TABLES" -lt 1000 ] && case_name="${MANY_STMTS}+${MANY_TABLES} tables"
	for s in pgsq pgss; do fresh_server "$s" "$MAX"; done
	bench_say "creating $MANY_TABLES tables with statistics entries on both servers"
	make_many_tables pgsq &
	p1=$!
	make_many_tables pgss &
	p2=$!
	wait "$p1" && wait "$p2" || bench_die "creating the tables failed"
	fill_both 0 "$MANY_STMTS"
	measure_case "$case_name" "$MANY_STMTS"
fi

# --- server logs, environment, report -----------------------------------------------
if [ "$PROFILE" = 1 ]; then
	bench_say "done: profile in $OUT_DIR/full_read_profile_perf.txt"
	exit 0
fi
failures=0
for s in pgsq pgss; do
	use_server "$s"
	errs=$(grep -E -A1 'ERROR|FATAL|PANIC|TRAP|terminated by signal|server process' "$BENCH_DIR/server.log" |
		grep -v 'terminating connection due to administrator command' || true)
	errs="$errs$(bench_core_backtraces)"
	if [ -n "$errs" ]; then
		{ echo "== server $s"; echo "$errs" | head -n 40; } | tee -a "$OUT_DIR/full_read_server_errors.log"
		failures=$((failures + 1))
	fi
done

{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	dirty=$(git -C "$REPO_ROOT" status --porcelain -- pg_stat_queries 2>/dev/null | grep -v '^??' | awk '{ print $2 }' | tr '\n' ' ' || true)
	echo "commit=$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null) (pg_stat_queries sources as of $(git -C "$REPO_ROOT" log -1 --format=%h -- pg_stat_queries mk 2>/dev/null))${dirty:+ plus uncommitted changes to ${dirty% }}"
	echo "cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1) x $CORES"
	echo "memory=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "postgres=$("$PGBIN/postgres" --version) ($FLAVOR build)"
	echo "settings=SIZES=${SIZES// /,} MANY_TABLES=$MANY_TABLES MANY_STMTS=$MANY_STMTS MAX=$MAX ROUNDS=$ROUNDS READS=$READS WUR_ROUNDS=$WUR_ROUNDS WUR_DURATION=${WUR_DURATION}s WUR_BASELINE=$WUR_BASELINE WUR_MAX=$WUR_MAX UNIQUE_TABLES=$UNIQUE_TABLES CLIENTS=$CLIENTS THREADS=$THREADS shared_buffers=$SHARED_BUFFERS"
	echo "smoke=$SMOKE"
} >"$OUT_DIR/full_read_env.txt"
cp "$TSV" "$WUR_TSV" "$CASES_TSV" "$OUT_DIR/"
python3 "$BENCH_ROOT/lib/full_read_report.py" "$OUT_DIR" || { bench_say "report failed"; failures=$((failures + 1)); }

if [ "$SMOKE" = 1 ]; then
	cat "$OUT_DIR/full_read.md"
	if [ "$WUR_ROUNDS" -ge 1 ]; then
		for s in pgsq pgss; do
			awk -F'\t' -v s="$s" 'NR > 1 && $2 == s && $3 == "reader" && $4 > 0 && $5 > 0 { ok = 1 } END { exit !ok }' "$WUR_TSV" ||
				{ echo "bench: $s produced no writers-under-reader run"; failures=$((failures + 1)); }
		done
	fi
fi
bench_say "done: $failures failure(s); results in $OUT_DIR"
[ "$failures" -eq 0 ]
