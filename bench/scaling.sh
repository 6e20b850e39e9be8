#!/usr/bin/env bash
#
# bench/scaling.sh -- cost per statement as the number of known statements
# grows, measured with callgrind's cache simulation.
#
# Usage: bench/scaling.sh      (bench/run calls it at the end in full mode)
#        SIZES="1 1000" CONFIGS="none pgsq" bench/scaling.sh   (a quick run)
#        bench/scaling.sh --side-by-side   (each configuration as a run of
#            its own, all at once, then --combine; bench/run does this)
#        bench/scaling.sh --combine DIR...   (join runs made side by side,
#            each with its own CONFIGS and OUT_DIR; see combine_runs), e.g.
#            CONFIGS=pgsq OUT_DIR=/tmp/q BENCH_PORT=55552 bench/scaling.sh &
#            sleep 30   # the first run installs the extension
#            CONFIGS=pgss NATIVE=0 INSTALL_EXT=0 OUT_DIR=/tmp/s BENCH_PORT=55551 bench/scaling.sh &
#            CONFIGS=none NATIVE=0 INSTALL_EXT=0 OUT_DIR=/tmp/n BENCH_PORT=55550 bench/scaling.sh &
#            wait; bench/scaling.sh --combine /tmp/n /tmp/s /tmp/q
#
# The statements: K distinct ones, "SELECT abalance FROM pgbench_accounts aK
# WHERE aid = N" for K = 1..size.  PostgreSQL 18 jumbles a relation by its
# alias, so each alias is a query id of its own, all on one table, each as
# cheap as the others.  pgbench -M simple substitutes :k into the alias
# (variables of -M prepared become parameters, which an alias cannot be).
#
# For each configuration (none, pgss = pg_stat_statements, pgsq =
# pg_stat_queries; .max = SC_MAX, above the largest size) the postmaster of a
# throw-away cluster runs under valgrind --tool=callgrind --cache-sim=yes
# (bench/lib/callgrind.sh) with --dump-before=pg_sleep.  For each size the
# extension is reset, then ONE pgbench connection (so one backend) runs
# bench/workloads/scaling.sql, which
#
#   1. warms up: every statement in turn, twice (entries created at the first
#      pass; pg_stat_queries' backend keeps a reference to a statement it runs
#      again, so after the second pass every statement has one);
#   2. settles: SC_SETTLE x K statements, each one of the K at random, not
#      measured.  The warm-up runs the statements in order, and the lines it
#      touched once (for pg_stat_queries, the statistics system's references
#      its second pass creates, 5.6 MB at 50,000 statements) still fill
#      much of the simulated last-level cache long after: the cache turns
#      over only as fast as it misses.  Measured right after the warm-up, the
#      phases below found what it left, not what a server that has run these
#      statements for a while has in its caches (at 50,000 statements, LL
#      misses per statement of pg_stat_queries and pg_stat_statements: 0.76
#      and 0.45 with no settling, 0.53 and 0.34 after one pass, 0.17 and 0.27
#      after four);
#   3. runs "SELECT pg_stat_force_next_flush()" (the backend flushes its
#      statistics as it goes idle: pg_stat_queries merges all it has pending)
#      and "SELECT pg_sleep(0)": callgrind dumps the backend's counts so far
#      (connection, warm-up, settling) and starts again from zero;
#   4. runs SC_LO statements, each one of the K at random (fixed seed, random
#      aid), then the flush and pg_sleep(0) again: the dump holds phase 1;
#   5. runs SC_HI statements the same way, then the flush and pg_sleep(0):
#      phase 2.  So each phase holds the merges of its own statements and no
#      other's, wherever pg_stat_queries' once-a-second flushes fall;
#   6. repeats 4 and 5, SC_REPEATS times in all.
#
#   per statement = (phase 2 - phase 1) / (SC_HI - SC_LO)   for Ir, D1 misses
#                   (D1mr + D1mw) and LL misses (ILmr + DLmr + DLmw), the
#                   median over the repeats (each repeat's in scaling.tsv)
#   added         = the median over the repeats of: per statement - per
#                   statement of none at the same size in the same repeat
#                   (the same statements and rows in every configuration, so
#                   what they share cancels: heap lines read for the first
#                   time fall from about 2 to 1.5 LL misses per statement
#                   between repeats, for all three alike)
#
# Why repeats and a median: a backend's memory touched for the first time
# misses in every cache, once.  pg_stat_queries' pending array is reused
# batch after batch, so its lines miss only when a batch is larger than any
# before, and batches are a wall-clock second of statements: how many
# depends on the machine's load (a side-by-side run speeds up as the other
# configurations finish).  At 1,000 statements one such batch in phase 2
# put 315 write misses in pgsq_counters_clear, add_pending and
# pgsq_hist_start (0.157 per statement) into a run whose other misses were
# none's to the miss.  The median of three repeats measures the steady
# state; each repeat's is shown, so a one-time cost stays visible.  When
# the load changes through the run, records can fall in more than one
# repeat, so the LL misses of those first touches are also counted apart
# (inclusive, in pending_first_use and resize_pending, where pg_stat_queries
# writes a position of its pending array for the first time or grows it):
# scaling.md shows them per repeat, and LL added without them.
#   corrected     = the same with the inclusive Ir of ExecIndexScan and
#                   pq_getbyte taken out of both sides: like bench/callgrind.sh,
#                   they vary between runs of the same code (page state; whether
#                   the client's next message is already there, which depends
#                   on valgrind's scheduling) by more than the differences
#                   measured, and no extension runs code inside them
#
# Both phases start and end inside the same marker statement, so its cost
# and everything before cancel.  Statements that the warm-up left behind in
# the extension: counted after the run (entries column, K + the marker).
#
# pg_stat_queries merges pending counters into shared entries about once a
# second of wall-clock time; under valgrind a second holds far fewer
# statements, so at small sizes its merge cost per statement is somewhat
# overstated (at large sizes nearly every statement's entry needs a merge of
# its own anyway).  The simulated caches are set explicitly (SC_CACHES), to
# this machine's L1 caches and its L3 as the last level (valgrind's own
# detection finds a 512 MB 2-way LL in this virtual machine); they are written
# to scaling.md.
#
# Merges at the machine's own speed.  pg_stat_queries merges a statement's
# pending counters into its shared entry once per batch, about once a
# wall-clock second; under valgrind that second holds some hundred
# statements instead of thousands, so nearly every execution of a statement
# among many is a batch of its own.  For pg_stat_queries the run also
# records, per size: the merges per statement in the measured phase
# (calls of pgsq_merge_locked, bench/lib/cg_calls.py) and the instructions
# of one batch (per call, inclusive: starting the statement's pending
# counts, add_pending; merging them, flush_one); then, with the server not
# under valgrind,
# the merges per statement of the same workload at full speed, counted by
# a perf uprobe on pgsq_merge_locked over two runs of NATIVE_T1 and
# NATIVE_T2 seconds (their difference cancels connection start and the
# merge at exit).  "Ir added at the native merge rate" = Ir added - (merges
# under valgrind - merges native) per statement x instructions per batch: a
# model from measured parts, shown next to the measurement, not instead.
# Needs root and perf (Debian's linux-perf); skipped otherwise.
#
# Output (OUT_DIR): scaling.tsv (per statement and added figures, then the
# raw phase totals), and through bench/report.py --scaling scaling.md and
# scaling.png; scaling_profile_CONFIG.txt: callgrind_annotate --inclusive of
# phase 2 at the largest size, for pgss and pgsq.
#
# Duration (2 cores, release build, default settings): see scaling.md.
#
# Environment: PGSQ_BENCH_FLAVOR (release), CONFIGS ("none pgss pgsq"),
# SIZES ("1 100 1000 10000 50000"), SC_MAX (60000), SC_LO (1000),
# SC_HI (3000), SC_REPEATS (3), SC_SEED (1), SC_SETTLE (4),
# SC_CACHES ("--I1=32768,8,64 --D1=49152,12,64 --LL=33554432,16,64"),
# NATIVE (1: measure the native merge rate), NATIVE_T1 (5), NATIVE_T2 (15),
# OUT_DIR (bench/results), PGSQ_BENCH_DIR (/tmp), BENCH_PORT (55532),
# KEEP_CLUSTER (0; 1 keeps the cluster and every dump), INSTALL_EXT (1).

set -uo pipefail

source "$(dirname "$0")/../scripts/lib.sh"
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/callgrind.sh"
BENCH_START=$(date +%s)

FLAVOR=${PGSQ_BENCH_FLAVOR:-release}
CONFIGS=${CONFIGS:-"none pgss pgsq"}
SIZES=${SIZES:-"1 100 1000 10000 50000"}
SC_MAX=${SC_MAX:-60000}
SC_LO=${SC_LO:-1000}
SC_HI=${SC_HI:-3000}
SC_SEED=${SC_SEED:-1}
SC_SETTLE=${SC_SETTLE:-4}
SC_REPEATS=${SC_REPEATS:-3}
SC_CACHES=${SC_CACHES:-"--I1=32768,8,64 --D1=49152,12,64 --LL=33554432,16,64"}
OUT_DIR=${OUT_DIR:-$BENCH_ROOT/results}
KEEP_CLUSTER=${KEEP_CLUSTER:-0}
NATIVE=${NATIVE:-1}
NATIVE_T1=${NATIVE_T1:-5}
NATIVE_T2=${NATIVE_T2:-15}
SHARED_BUFFERS=128MB
MAX_CONNECTIONS=20
TSV=scaling.tsv

for c in $CONFIGS; do
	case "$c" in none|pgss|pgsq) ;; *) bench_die "unknown configuration $c" ;; esac
done
largest=0
for s in $SIZES; do
	[ "$s" -ge 1 ] 2>/dev/null || bench_die "bad size $s"
	[ "$s" -lt "$SC_MAX" ] || bench_die "size $s must be below SC_MAX ($SC_MAX)"
	[ "$s" -gt "$largest" ] && largest=$s
done
[ "$SC_HI" -gt "$SC_LO" ] || bench_die "SC_HI must be above SC_LO"
[ "$SC_REPEATS" -ge 1 ] 2>/dev/null || bench_die "bad SC_REPEATS $SC_REPEATS"

# --combine DIR...: the OUT_DIRs of runs made side by side, each with
# CONFIGS of its own (none, pgss and pgsq as three processes finish in about
# half the time on two cores: the simulation does not depend on load, and
# the merges per statement of pg_stat_queries, which do, rise only at the
# sizes where they are below one).  Each run keeps its raw totals in
# OUT_DIR/raw; they are joined into one table in OUT_DIR, nothing is run.
combine_runs() {
	local d f n
	bench_install_tools
	bench_pick_build "$FLAVOR"
	mkdir -p "$OUT_DIR"
	BENCH_DIR=$(mktemp -d "${PGSQ_BENCH_DIR:-/tmp}/pgsq-scaling-combine.XXXXXX")
	trap 'rm -rf "$BENCH_DIR"' EXIT
	raw=$BENCH_DIR/scaling_raw.tsv
	native_done=0
	RUN_SECONDS=0
	n=0
	for d in "$@"; do
		[ -f "$d/raw/scaling_raw.tsv" ] || bench_die "$d: no raw/scaling_raw.tsv (not a run of this script)"
		if [ "$n" = 0 ]; then head -n 1 "$d/raw/scaling_raw.tsv" >"$raw"; fi
		tail -n +2 "$d/raw/scaling_raw.tsv" >>"$raw"
		for f in scaling_batches.tsv scaling_native.tsv; do
			[ -f "$d/raw/$f" ] && cp "$d/raw/$f" "$BENCH_DIR/$f"
		done
		[ -f "$d/raw/caches.txt" ] && cp "$d/raw/caches.txt" "$BENCH_DIR/caches.txt"
		for f in "$d"/scaling_profile_*.txt; do
			[ -f "$f" ] && [ "$(cd "$(dirname "$f")" && pwd)" != "$(cd "$OUT_DIR" && pwd)" ] && cp "$f" "$OUT_DIR/"
		done
		f=$(sed -n 's/^duration=\([0-9]*\)s$/\1/p' "$d/scaling_env.txt" 2>/dev/null)
		[ -n "$f" ] && [ "$f" -gt "$RUN_SECONDS" ] && RUN_SECONDS=$f
		n=$((n + 1))
	done
	[ -f "$BENCH_DIR/scaling_native.tsv" ] && native_done=1
	# the settings the runs were made with (the first run's)
	SETTINGS=$(sed -n 's/^settings=//p' "$1/scaling_env.txt" 2>/dev/null)
	RUN_COMMIT=$(sed -n 's/^commit=//p' "$1/scaling_env.txt" 2>/dev/null)
	f=$(sed -n 's/^settings=.*SC_SETTLE=\([0-9]*\).*/\1/p' "$1/scaling_env.txt" 2>/dev/null)
	SC_SETTLE=${f:-$SC_SETTLE}
	CONFIGS=$(tail -n +2 "$raw" | cut -f1 | awk '!seen[$0]++' | tr '\n' ' ')
	RUNS="$n runs side by side"
}

# --side-by-side: each configuration of CONFIGS as a run of its own, all at
# once, on ports 10 apart from BENCH_PORT (free_port tries upwards, and the
# runs start together), then --combine into OUT_DIR.  The extension is
# installed first, once: a library replaced under a running server is not
# the one it loaded.
side_by_side() {
	local base c i=0 rc=0 dirs=() pids=()
	bench_install_tools
	bench_pick_build "$FLAVOR"
	if [ "${INSTALL_EXT:-1}" = 1 ]; then
		bench_install_extension || exit 1
	fi
	base=$(mktemp -d "${PGSQ_BENCH_DIR:-/tmp}/pgsq-scaling-sides.XXXXXX") ||
		bench_die "cannot create work directory"
	trap 'kill "${pids[@]}" 2>/dev/null; exit 130' INT TERM HUP
	for c in $CONFIGS; do
		CONFIGS=$c INSTALL_EXT=0 OUT_DIR=$base/$c BENCH_PORT=$((${BENCH_PORT:-55532} + 10 * i)) \
			"$0" >"$base/$c.log" 2>&1 &
		pids+=($!)
		dirs+=("$base/$c")
		i=$((i + 1))
	done
	bench_say "side by side: $CONFIGS (logs in $base)"
	for i in "${!pids[@]}"; do
		if ! wait "${pids[$i]}"; then
			tail -n 20 "${dirs[$i]}.log" >&2
			rc=1
		fi
	done
	[ "$rc" = 0 ] || bench_die "a run failed (logs in $base)"
	"$0" --combine "${dirs[@]}" || bench_die "--combine failed (runs in $base)"
	rm -rf "$base"
}

# Extension reset and the count of its entries for the K statements
ext_reset() {
	case "$1" in
		pgss) bench_psql "SELECT pg_stat_statements_reset()" >/dev/null ;;
		pgsq) bench_psql "SELECT pg_stat_queries_reset()" >/dev/null ;;
	esac
}
ext_entries() {
	local view
	case "$1" in pgss) view=pg_stat_statements ;; pgsq) view=pg_stat_queries ;; *) echo -; return ;; esac
	bench_psql "SELECT count(*) FROM $view WHERE query LIKE 'SELECT abalance FROM pgbench_accounts a%'"
}

# "Ir D1 LL" of one dump file
ev_of() {
	cg_totals "$1" | tr ' ' '\n' | awk -F= '{ v[$1] = $2 }
		END { printf "%d %d %d\n", v["Ir"], v["D1mr"] + v["D1mw"], v["ILmr"] + v["DLmr"] + v["DLmw"] }'
}

# Inclusive Ir of the two noisy parts of the core in one phase dump
noise_of() {
	"${BENCH_PYTHON:-python3}" "$BENCH_ROOT/lib/cg_calls.py" "$1" ExecIndexScan pq_getbyte |
		awk '{ s += $3 } END { printf "%d\n", s }'
}

# LL misses of pg_stat_queries' first touches of its pending array in one
# phase dump: inclusive, in pending_first_use (a position used for the first
# time) and resize_pending (the array grown or shrunk)
once_of() {
	"${BENCH_PYTHON:-python3}" "$BENCH_ROOT/lib/cg_calls.py" --events=ILmr,DLmr,DLmw "$1" \
		pending_first_use resize_pending | awk '{ s += $3 } END { printf "%d\n", s }'
}

# "merges/statement instructions/batch" of pg_stat_queries in one phase dump
batch_figures() {
	"${BENCH_PYTHON:-python3}" "$BENCH_ROOT/lib/cg_calls.py" "$1" pgsq_merge_locked \
		add_pending flush_one |
		awk -v n="$SC_HI" '{ calls[$1] = $2; incl[$1] = $3 }
			END {
				b = 0
				for (f in calls) if (f != "pgsq_merge_locked" && calls[f] > 0) b += incl[f] / calls[f]
				printf "%.4f %.0f\n", calls["pgsq_merge_locked"] / n, b
			}'
}

# Merges per statement of pg_stat_queries at full speed, per size, into
# $BENCH_DIR/scaling_native.tsv; returns 1 if they cannot be counted
native_merge_rates() {
	local lib conf="$BENCH_DIR/native.conf" k t perf_pid out log n c
	local -A merges stmts
	[ "$(id -u)" -eq 0 ] || { bench_say "not root: merge rate at full speed not measured"; return 1; }
	command -v perf >/dev/null || { bench_say "no perf: merge rate at full speed not measured"; return 1; }
	lib="$("$PG_CONFIG" --pkglibdir)/pg_stat_queries.so"
	perf probe -q -d 'probe_pg_stat_queries:*' >/dev/null 2>&1
	perf probe -q -x "$lib" --add pgsq_merge_locked >/dev/null 2>&1 ||
		{ bench_say "perf probe on $lib failed: merge rate at full speed not measured"; return 1; }
	cg_config_settings pgsq "$SC_MAX" >"$conf"
	chmod a+r "$conf"
	bench_start "$conf" || bench_die "native server did not start"
	bench_psql "CREATE EXTENSION IF NOT EXISTS pg_stat_queries" >/dev/null
	printf 'size\tt1\tt2\tstmts1\tstmts2\tmerges1\tmerges2\tmerges_per_stmt\n' >"$BENCH_DIR/scaling_native.tsv"
	for k in $SIZES; do
		ext_reset pgsq
		# every statement once: entries and references exist before counting
		as_bench_user "pgbench -n -M simple -c 1 -t $k -D i=0 -D nstmt=$k -D warm=$k \
			-D m1=0 -D lo=1 -D hi=1 -D mend=0 -f scaling.sql bench" >"$BENCH_DIR/native_warm_$k.log" 2>&1 ||
			bench_die "native warm-up (size $k) failed"
		for t in $NATIVE_T1 $NATIVE_T2; do
			out="$BENCH_DIR/native_perf_${k}_$t.txt"
			log="$BENCH_DIR/native_pgbench_${k}_$t.log"
			# system-wide, no command: counts until interrupted
			perf stat -a -x, -e probe_pg_stat_queries:pgsq_merge_locked -o "$out" &
			perf_pid=$!
			sleep 1
			as_bench_user "pgbench -n -M simple -c 1 -T $t --random-seed=$SC_SEED -D i=0 -D nstmt=$k \
				-D warm=0 -D m1=0 -D lo=1 -D hi=1 -D mend=0 -f scaling.sql bench" >"$log" 2>&1 ||
				bench_die "native run (size $k, $t s) failed"
			sleep 1				# the backend's exit merges what it still has
			kill -INT "$perf_pid" 2>/dev/null
			wait "$perf_pid" 2>/dev/null
			c=$(awk -F, '/pgsq_merge_locked/ { print $1 }' "$out")
			n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$log")
			[ -n "$c" ] && [ -n "$n" ] || bench_die "native run (size $k, $t s): no count ($out, $log)"
			merges[$t]=$c
			stmts[$t]=$n
		done
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$k" "$NATIVE_T1" "$NATIVE_T2" \
			"${stmts[$NATIVE_T1]}" "${stmts[$NATIVE_T2]}" "${merges[$NATIVE_T1]}" "${merges[$NATIVE_T2]}" \
			"$(awk -v a="${merges[$NATIVE_T1]}" -v b="${merges[$NATIVE_T2]}" -v x="${stmts[$NATIVE_T1]}" -v y="${stmts[$NATIVE_T2]}" \
				'BEGIN { printf "%.4f", (b - a) / (y - x) }')" >>"$BENCH_DIR/scaling_native.tsv"
		bench_say "pgsq at full speed: $k statements: $(tail -n 1 "$BENCH_DIR/scaling_native.tsv" | cut -f8) merges per statement (${stmts[$NATIVE_T2]} statements in $NATIVE_T2 s)"
	done
	bench_stop
	perf probe -q -d 'probe_pg_stat_queries:*' >/dev/null 2>&1
	return 0
}

if [ "${1:-}" = --side-by-side ]; then
	side_by_side
	exit 0
fi
COMBINE=()
if [ "${1:-}" = --combine ]; then
	shift
	[ $# -gt 0 ] || bench_die "--combine needs the OUT_DIRs of the runs"
	COMBINE=("$@")
fi
RUNS="one run"
SETTINGS=""
RUN_COMMIT=""
if [ ${#COMBINE[@]} -gt 0 ]; then
	combine_runs "${COMBINE[@]}"
else
	cg_prepare scaling
	bench_say "scaling with $PGBIN, work directory $BENCH_DIR, port $PORT; sizes $SIZES; phases of $SC_LO and $SC_HI statements"
	as_test_user "cat > $(q "$BENCH_DIR/scaling.sql")" <"$BENCH_ROOT/workloads/scaling.sql"
	bench_stop

	raw=$BENCH_DIR/scaling_raw.tsv
	printf 'size\trepeat\tmerges_per_stmt\tbatch_ir\n' >"$BENCH_DIR/scaling_batches.tsv"
	printf 'config\tsize\trepeat\tentries\tt_lo\tt_hi\tir_lo\tir_hi\td1_lo\td1_hi\tll_lo\tll_hi\tnoise_lo\tnoise_hi\tonce_lo\tonce_hi\n' >"$raw"
	for c in $CONFIGS; do
		cg=$BENCH_DIR/cg_$c
		cg_start "$c" "$SC_MAX" "$cg" "--cache-sim=yes $SC_CACHES --dump-before=pg_sleep"
		for k in $SIZES; do
			ext_reset "$c"
			warm=$((2 * k))
			m1=$((warm + SC_SETTLE * k + 1))
			mend=$((m1 + SC_REPEATS * (SC_LO + SC_HI)))
			before=$(ls "$cg")
			as_bench_user "pgbench -n -M simple -c 1 -t $mend --random-seed=$SC_SEED -D i=0 -D nstmt=$k \
				-D warm=$warm -D m1=$m1 -D lo=$SC_LO -D hi=$SC_HI -D mend=$mend -f scaling.sql bench" \
				>"$BENCH_DIR/pgbench_${c}_$k.log" 2>&1 ||
				{ cat "$BENCH_DIR/pgbench_${c}_$k.log"; bench_die "$c: pgbench (size $k) failed"; }
			# the backend's files: the dumps at the markers (PID.1, then PID.2r
			# and PID.2r+1 for the phases of repeat r), then its exit's (PID);
			# the other new file is pgbench's first connection
			last=$((2 * SC_REPEATS + 1))
			new=$(cg_new_files "$cg" "$before" $((last + 2)))
			p=$(echo "$new" | sed -n "s/^callgrind\.out\.\([0-9]*\)\.$last\$/\1/p" | head -n 1)
			[ -n "$p" ] && [ -f "$cg/callgrind.out.$p.2" ] ||
				bench_die "$c: size $k: no dumps of the benchmark backend (new files: $(echo $new))"
			entries=$(ext_entries "$c")
			for ((r = 1; r <= SC_REPEATS; r++)); do
				lo_dump=$cg/callgrind.out.$p.$((2 * r))
				hi_dump=$cg/callgrind.out.$p.$((2 * r + 1))
				read -r ir1 d11 ll1 <<<"$(ev_of "$lo_dump")"
				read -r ir2 d12 ll2 <<<"$(ev_of "$hi_dump")"
				nz1=$(noise_of "$lo_dump")
				nz2=$(noise_of "$hi_dump")
				once1=0
				once2=0
				if [ "$c" = pgsq ]; then
					read -r mps bir <<<"$(batch_figures "$hi_dump")"
					printf '%s\t%s\t%s\t%s\n' "$k" "$r" "$mps" "$bir" >>"$BENCH_DIR/scaling_batches.tsv"
					once1=$(once_of "$lo_dump")
					once2=$(once_of "$hi_dump")
				fi
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$k" "$r" "$entries" \
					"$SC_LO" "$SC_HI" "$ir1" "$ir2" "$d11" "$d12" "$ll1" "$ll2" "$nz1" "$nz2" "$once1" "$once2" >>"$raw"
				bench_say "$c: $k statements ($entries entries), repeat $r: Ir/stmt $(( (ir2 - ir1) / (SC_HI - SC_LO) )), D1 $(( (d12 - d11) / (SC_HI - SC_LO) )), LL x1000 $(( 1000 * (ll2 - ll1) / (SC_HI - SC_LO) ))"
			done
			if [ "$k" = "$largest" ] && [ "$c" != none ]; then
				callgrind_annotate --inclusive=yes --threshold=99.5 "$cg/callgrind.out.$p.3" 2>/dev/null |
					head -n 120 >"$OUT_DIR/scaling_profile_$c.txt"
			fi
			# the dumps of earlier sizes are no longer needed (KEEP_CLUSTER=1 keeps
			# them all, to be read with callgrind_annotate)
			[ "$KEEP_CLUSTER" = 1 ] && new=
			for f in $new; do
				[ "$k" = "$largest" ] && [ "$f" = "callgrind.out.$p.3" ] && continue
				rm -f "$cg/$f"
			done
		done
		# the postmaster's file is still empty: take the lines from any dump
		grep -h '^desc: \(I1\|D1\|LL\) cache' "$cg"/callgrind.out.* |
			awk '!seen[$0]++' >"$BENCH_DIR/caches.txt"
		cg_stop "$c"
	done

	native_done=0
	if [[ " $CONFIGS " == *" pgsq "* ]] && [ "$NATIVE" = 1 ] && native_merge_rates; then
		native_done=1
	fi
	# the raw totals, for --combine
	mkdir -p "$OUT_DIR/raw"
	cp "$raw" "$BENCH_DIR/scaling_batches.tsv" "$BENCH_DIR/caches.txt" "$OUT_DIR/raw/"
	[ "$native_done" = 1 ] && cp "$BENCH_DIR/scaling_native.tsv" "$OUT_DIR/raw/"
	RUN_SECONDS=$(( $(date +%s) - BENCH_START ))
fi

# per statement (the median over the repeats) and added over none at the
# same size; pg_stat_queries' merges under valgrind, at full speed, and the
# model
"${BENCH_PYTHON:-python3}" "$BENCH_ROOT/report.py" --scaling-table "$BENCH_DIR" "$OUT_DIR" ||
	bench_die "report.py --scaling-table failed"
{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	dirty=$(git -C "$REPO_ROOT" status --porcelain -- pg_stat_queries 2>/dev/null | grep -v '^??' | awk '{ print $2 }' | tr '\n' ' ')
	echo "commit=${RUN_COMMIT:-$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null)${dirty:+ plus uncommitted changes to ${dirty% }}}"
	echo "cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1) x $(nproc)"
	echo "postgres=$("$PGBIN/postgres" --version) ($FLAVOR build)"
	echo "valgrind=$(valgrind --version)"
	echo "caches=$(sed 's/^desc: //' "$BENCH_DIR/caches.txt" | tr '\n' ';' | sed 's/;$//')"
	echo "settings=${SETTINGS:-SIZES=$SIZES SC_LO=$SC_LO SC_HI=$SC_HI SC_REPEATS=$SC_REPEATS SC_SETTLE=$SC_SETTLE SC_SEED=$SC_SEED max=$SC_MAX shared_buffers=$SHARED_BUFFERS pgbench -s 1 -M simple -c 1}"
	echo "settle=$SC_SETTLE"
	echo "runs=$RUNS (configurations: ${CONFIGS% })"
	echo "duration=${RUN_SECONDS}s"
} >"$OUT_DIR/scaling_env.txt"
"${BENCH_PYTHON:-python3}" "$BENCH_ROOT/report.py" --scaling "$OUT_DIR" || bench_die "report.py --scaling failed"
column -t -s $'\t' <(cut -f1-10,14 "$OUT_DIR/$TSV")
bench_say "done; results in $OUT_DIR/$TSV and scaling.md"
