#!/usr/bin/env bash
#
# bench/shm_full.sh -- new statements with a full /dev/shm: pg_stat_queries
# (this tree's library and an earlier revision's) side by side with
# pg_stat_statements.
#
# Usage: bench/shm_full.sh [REV]     (REV: the revision to compare with,
#                                     default main)
#
# Needs root: each server runs in a mount namespace of its own (unshare -m)
# whose /dev/shm is a fresh tmpfs of SHM_SIZE, so that dynamic shared
# memory segments (dynamic_shared_memory_type = posix) run out after a few
# megabytes, as in a container with a small /dev/shm.  The servers run as
# the test user.  pg_stat_statements keeps its entries in the server's
# fixed shared memory, which is not in /dev/shm; our entries and texts are
# in DSA areas, which grow by segments there.
#
# A throw-away cluster gets 60 one-row tables and is copied once per
# configuration.  Then, REPEATS times, one server per configuration is
# started with empty statistics, and all of them run at the same time, each
# under its own CLIENTS pgbench clients, random 3-way joins (8,000 shapes,
# no aliases: each new to the statistics at first) for DURATION seconds:
# the load of the machine, whatever else runs on it, weighs on all alike.
# For each configuration and run: transactions, failed transactions, the
# CPU time its server's processes spent per 1,000 transactions (the
# postmaster's reaped children, the client backends among them), and, at
# the end, the bytes used in its /dev/shm and the LOG lines of ours saying
# that an allocation failed.
#
# Configurations: pgss (pg_stat_statements), tree (this tree's library),
# rev (REV's library); libraries are built here, not installed, and named
# by path in shared_preload_libraries.
#
# Output: a table on stdout and OUT_DIR/shm_full_<major>.tsv.
# Environment: PG_MAJOR (18), PGSQ_BENCH_FLAVOR (assert), DURATION (20),
# REPEATS (3), CLIENTS (4), THREADS (2), SHM_SIZE (2m), CONFIGS
# ("pgss tree rev"), OUT_DIR (bench/results), PGSQ_BENCH_DIR (/tmp).

set -uo pipefail

source "$(dirname "$0")/../scripts/lib.sh"
source "$(dirname "$0")/lib/common.sh"

BENCH_START=$(date +%s)
REV=${1:-main}
FLAVOR=${PGSQ_BENCH_FLAVOR:-assert}
DURATION=${DURATION:-20}
REPEATS=${REPEATS:-3}
CLIENTS=${CLIENTS:-4}
THREADS=${THREADS:-2}
SHM_SIZE=${SHM_SIZE:-2m}
CONFIGS=${CONFIGS:-"pgss tree rev"}
OUT_DIR=${OUT_DIR:-$REPO_ROOT/bench/results}

[ "$(id -u)" -eq 0 ] || bench_die "needs root (a mount namespace per server)"
bench_pick_build "$FLAVOR"
ensure_test_user
BENCH_DIR=$(mktemp -d "${PGSQ_BENCH_DIR:-/tmp}/pgsq-shm-full.XXXXXX") || bench_die "cannot create work directory"
chmod 755 "$BENCH_DIR"
DATADIR=$BENCH_DIR/data
SOCKDIR=$BENCH_DIR/sock
PORT=$(free_port "${BENCH_PORT:-55432}")
BASE_PORT=$PORT
MAX_CONNECTIONS=$((CLIENTS + 20))
SHARED_BUFFERS=128MB
mkdir -p "$OUT_DIR"

# Point DATADIR, PORT and LOG at configuration $1's server
declare -A PORT_OF=()
use_config() {
	DATADIR=$BENCH_DIR/data-$1
	PORT=${PORT_OF[$1]:-$BASE_PORT}
	LOG=$BENCH_DIR/server-$1.log
}

# Stop every server of ours, whatever happens
finish() {
	local rc=$? c
	for c in $CONFIGS; do
		use_config "$c"
		bench_stop
	done
	DATADIR=$BENCH_DIR/data
	bench_finish "$rc"
}
trap finish EXIT

# Build the library of a source tree ($2) in BENCH_DIR/$1; prints the .so
build_library() {
	local name=$1 src=$2
	mkdir -p "$BENCH_DIR/$name"
	cp -r "$src/pg_stat_queries" "$src/mk" "$BENCH_DIR/$name/"
	make -s -C "$BENCH_DIR/$name/pg_stat_queries" PG_CONFIG="$PG_CONFIG" clean >/dev/null 2>&1
	make -s -C "$BENCH_DIR/$name/pg_stat_queries" PG_CONFIG="$PG_CONFIG" >"$BENCH_DIR/$name.log" 2>&1 ||
		{ cat "$BENCH_DIR/$name.log" >&2; bench_die "building $name failed"; }
	echo "$BENCH_DIR/$name/pg_stat_queries/pg_stat_queries.so"
}

declare -A LIB=()
for c in $CONFIGS; do
	case "$c" in
		pgss) ;;
		tree) LIB[tree]=$(build_library tree "$REPO_ROOT") || exit 1 ;;
		rev)
			mkdir -p "$BENCH_DIR/rev-src"
			git -C "$REPO_ROOT" archive "$REV" pg_stat_queries mk | tar -x -C "$BENCH_DIR/rev-src" ||
				bench_die "cannot extract $REV from the repository's history"
			LIB[rev]=$(build_library rev "$BENCH_DIR/rev-src") || exit 1
			;;
		*) bench_die "unknown configuration $c" ;;
	esac
done
chown -R "$PGSQ_TEST_USER" "$BENCH_DIR"

bench_say "build $PGBIN ($FLAVOR), /dev/shm of $SHM_SIZE each, $CLIENTS clients each, ${DURATION}s x $REPEATS, side by side: $CONFIGS (rev = $REV)"
bench_initdb "dynamic_shared_memory_type = posix
min_dynamic_shared_memory = 0
log_min_messages = log" || bench_die "initdb failed"

# The tables, made once with a /dev/shm of the usual size
bench_start /dev/null || bench_die "the server did not start"
as_bench_user "createdb bench" || bench_die "createdb failed"
bench_make_tables u 60
bench_psql "VACUUM FREEZE" >/dev/null
bench_psql "CHECKPOINT" >/dev/null
bench_stop
cat >"$BENCH_DIR/new.sql" <<'EOF'
\set a random(1, 20)
\set b random(21, 40)
\set c random(41, 60)
SELECT count(*) FROM u:a, u:b, u:c WHERE u:a.id = u:b.id AND u:b.id = u:c.id;
EOF
chown "$PGSQ_TEST_USER" "$BENCH_DIR/new.sql"

# A copy of the cluster per configuration, each on a port of its own
port=$BASE_PORT
for c in $CONFIGS; do
	port=$(free_port $((port + 1)))
	PORT_OF[$c]=$port
	use_config "$c"
	as_test_user "cp -a $(q "$BENCH_DIR/data") $(q "$DATADIR")"
	{
		case "$c" in
			pgss) echo "shared_preload_libraries = 'pg_stat_statements'" ;;
			*) printf "shared_preload_libraries = '%s'\npg_stat_queries.save = off\n" "${LIB[$c]}" ;;
		esac
		echo "port = $port"
	} | as_test_user "cat > $(q "$DATADIR/bench_run.conf")"
done

# Start configuration $1's server in a mount namespace with a small /dev/shm
start_small_shm() {
	use_config "$1"
	as_test_user ": > $(q "$LOG")"
	unshare -m sh -c "mount -t tmpfs -o size=$SHM_SIZE,mode=1777 tmpfs /dev/shm &&
		su $(q "$PGSQ_TEST_USER") -s /bin/bash -c $(q "cd $(q "$BENCH_DIR") && $(q "$PGBIN/pg_ctl") -D $(q "$DATADIR") -l $(q "$LOG") -w -t 120 -s start")" ||
		{ tail -n 30 "$LOG" >&2; return 1; }
}

# CPU time, in clock ticks, of the reaped children of process $1
children_ticks() {
	awk '{ sub(/^.*\) /, ""); print $14 + $15 }' "/proc/$1/stat"
}

TSV=$OUT_DIR/shm_full_$PG_MAJOR.tsv
printf 'run\tconfig\ttransactions\tfailed\tcpu_ms_per_1000_tx\tshm_used_kb\talloc_failure_logs\n' >"$TSV"
TICK_MS=$((1000 / $(getconf CLK_TCK)))
declare -A PID=() TICKS=() BENCH_PID=()
for ((r = 1; r <= REPEATS; r++)); do
	for c in $CONFIGS; do
		start_small_shm "$c" || bench_die "$c: the server did not start"
		PID[$c]=$(head -n 1 "$DATADIR/postmaster.pid")
		TICKS[$c]=$(children_ticks "${PID[$c]}")
	done
	# all at once
	for c in $CONFIGS; do
		use_config "$c"
		as_bench_user "pgbench -n -c $CLIENTS -j $THREADS -T $DURATION -f $(q "$BENCH_DIR/new.sql") >$(q "$BENCH_DIR/pgbench-$c.out") 2>&1" &
		BENCH_PID[$c]=$!
	done
	for c in $CONFIGS; do
		wait "${BENCH_PID[$c]}"
	done
	for c in $CONFIGS; do
		use_config "$c"
		out=$(cat "$BENCH_DIR/pgbench-$c.out")
		tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
		failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
		used=$(nsenter -m -t "${PID[$c]}" df -k --output=used /dev/shm | tail -n 1 | tr -d ' ')
		# the client backends are reaped once they have exited
		for ((i = 0; i < 50; i++)); do
			[ "$(bench_psql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'")" = 0 ] && break
			sleep 0.1
		done
		sleep 0.2
		ticks=$(($(children_ticks "${PID[$c]}") - TICKS[$c]))
		cpu=$((${tx:-0} > 0 ? ticks * TICK_MS * 1000 / tx : 0))
		bench_stop
		logs=$(grep -c "pg_stat_queries could not allocate shared memory" "$LOG")
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$c" "${tx:-0}" "${failed:-?}" "$cpu" "$used" "$logs" >>"$TSV"
		bench_say "run $r $c: ${tx:-0} transactions, ${failed:-?} failed, $cpu ms of server CPU per 1,000, /dev/shm ${used} kB used, $logs allocation-failure LOG lines"
		[ -n "$tx" ] || { tail -n 20 <<<"$out"; tail -n 20 "$LOG"; }
	done
done

echo
column -t -s $'\t' "$TSV"
echo
awk -F'\t' 'NR > 1 { n[$2]++; t[$2] += $3; u[$2] += $5 }
	END { for (c in n) printf "%-6s mean %d transactions, %d ms of server CPU per 1,000, in %d runs\n", c, t[c] / n[c], u[c] / n[c], n[c] }' "$TSV" | sort
