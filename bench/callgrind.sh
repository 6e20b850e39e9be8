#!/usr/bin/env bash
#
# bench/callgrind.sh -- instructions each extension adds per statement.
#
# Usage: bench/callgrind.sh      (bench/run calls it at the end in full mode)
#
# For each configuration (none, pgss = pg_stat_statements, pgsq =
# pg_stat_queries) the postmaster of a small throw-away cluster runs under
# `valgrind --tool=callgrind` (forked backends are followed, one output file
# per process), then, after a warm-up connection, one client runs
# `pgbench -n -S -M prepared -c 1 -t N` for N = CG_T_LO and N = CG_T_HI.
# The backend that served the benchmark is the process with the most
# instructions among those that exited during that pgbench run.
#
#   per statement = (Ir(N=hi) - Ir(N=lo)) / (hi - lo)   (connection costs cancel)
#   added         = per statement - per statement of none
#
# and also the simple (Ir(N=hi) - Ir_none(N=hi)) / hi.
#
# Two parts of the backend's work vary between runs of the same code by more
# than the differences being measured: the index scan (about a hundred
# instructions per statement: the state of heap and index pages) and the
# reads of the client's messages (up to 300: whether the next message is
# already there or the backend waits for it, which depends on how valgrind
# schedules client and server).  For the hot workload the inclusive Ir of
# ExecIndexScan and pq_getbyte in the same backend is recorded too, and
# "added, corrected" takes their difference to none out (no extension runs
# code inside them; pg_stat_statements' instrumentation is around the scan).
# Same code twice: "added" 665 and 1,019, corrected 785 and 808.
#
# Output: OUT_DIR/callgrind.tsv (config, t_lo, ir_lo, t_hi, ir_hi), a table
# on stdout, and when OUT_DIR/runs.tsv exists, results.md is regenerated.
# pg_stat_queries merges its counters about once a second of wall-clock time;
# under valgrind a second holds far fewer statements, so its merge cost per
# statement is somewhat overstated here, not understated.
#
# CG_WORKLOAD=unique measures new statements instead: the random 3-way
# joins of bench/workloads/unique.sql over CG_UNIQUE_TABLES one-row tables
# (-M simple, fixed random seed), with max = CG_MAX (100) for both
# extensions, so that after the warm-up nearly every statement creates an
# entry and evicts one.  That holds for pg_stat_queries only while its
# sweep keeps up: a table at its bound whose last pass evicted nothing
# leaves new statements untracked for the rest of min_sweep_interval
# (250 ms), which costs far less than tracking them and would not compare
# with pg_stat_statements, which tracks every one.  At full speed most of
# this stream is left untracked (2,095 of 3,000 statements); under valgrind
# none is.  So for pg_stat_queries the executions left untracked and the
# entries evicted in each measured run are read from pg_stat_queries_info,
# written to callgrind_unique_tracking.tsv and warned about if any was
# left untracked.  CG_PGSQ_SETTINGS adds settings for pg_stat_queries.
# Its output goes to callgrind_unique.tsv and does not touch results.md.
#
# CG_WORKLOAD=hot-simple is the hot workload in the simple protocol
# (pgbench -S -M simple): every execution is parsed, analyzed and planned
# again, as for most drivers' unnamed statements.  Its output goes to
# callgrind_simple.tsv and does not touch results.md.  In every workload
# "none" computes query ids too (compute_query_id = on), as both extensions
# have PostgreSQL do: the 3,000 or so instructions of jumbling a statement
# at each parse are PostgreSQL's, not an extension's.
#
# CG_WORKLOAD=write measures pgbench's built-in TPC-B-like transaction
# (-M prepared, three UPDATEs, a SELECT and an INSERT between BEGIN and
# END): statements that write WAL and dirty blocks, whose counters
# pg_stat_queries keeps in a chunk beside the entry.  "Per statement" is
# then per transaction.  Its output goes to callgrind_write.tsv and does
# not touch results.md.
#
# CONFIGS may also name pgsq-sampleR: pg_stat_queries with sample_rate = R.
#
# CG_REPEATS=R runs every configuration R times, interleaved (none, pgss,
# pgsq, none, ...), each a fresh server; the table shows each repeat's
# figures against the none run of the same repeat, then their medians.
# The unique workload wants it: its figures move by a few hundred
# instructions per statement between runs of the same code (pg_stat_queries'
# sweep slices and reference collection run by the clock, so how much of
# that work falls in a measured run varies).  Rows of the TSV carry their
# repeat in a last column.
#
# Environment: PGSQ_BENCH_FLAVOR (release), CONFIGS ("none pgss pgsq"),
# CG_WORKLOAD (hot), CG_REPEATS (1), CG_T_LO (1000), CG_T_HI (3000), CG_WARMUP (500),
# CG_UNIQUE_TABLES (200), CG_MAX (100), CG_PGSQ_SETTINGS (""), OUT_DIR (bench/results),
# PGSQ_BENCH_DIR (/tmp), BENCH_PORT (55532), KEEP_CLUSTER (0), INSTALL_EXT (1).

set -uo pipefail

source "$(dirname "$0")/../scripts/lib.sh"
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/callgrind.sh"
BENCH_START=$(date +%s)

FLAVOR=${PGSQ_BENCH_FLAVOR:-release}
CONFIGS=${CONFIGS:-"none pgss pgsq"}
T_LO=${CG_T_LO:-1000}
T_HI=${CG_T_HI:-3000}
WARMUP=${CG_WARMUP:-500}
REPEATS=${CG_REPEATS:-1}
[ "$REPEATS" -ge 1 ] 2>/dev/null || bench_die "CG_REPEATS must be a positive number"
OUT_DIR=${OUT_DIR:-$BENCH_ROOT/results}
KEEP_CLUSTER=${KEEP_CLUSTER:-0}
WORKLOAD=${CG_WORKLOAD:-hot}
UNIQUE_TABLES=${CG_UNIQUE_TABLES:-200}
CG_MAX=${CG_MAX:-100}
case "$WORKLOAD" in
	hot) TSV=callgrind.tsv ;;
	hot-simple) TSV=callgrind_simple.tsv ;;
	unique) TSV=callgrind_unique.tsv ;;
	write) TSV=callgrind_write.tsv ;;
	*) bench_die "unknown CG_WORKLOAD $WORKLOAD (hot, unique or write)" ;;
esac
SHARED_BUFFERS=128MB
MAX_CONNECTIONS=20

cg_prepare callgrind
bench_say "callgrind with $PGBIN, work directory $BENCH_DIR, port $PORT; N = $T_LO and $T_HI"
if [ "$WORKLOAD" = unique ]; then
	bench_make_tables u "$UNIQUE_TABLES" || bench_die "creating tables failed"
	as_test_user "cat > $(q "$BENCH_DIR/unique.sql")" <"$BENCH_ROOT/workloads/unique.sql"
	as_bench_user "vacuumdb -q -z bench" || bench_die "vacuumdb failed"
fi
bench_stop

# The measured statements: $1 = number of transactions
workload_pgbench() {
	case "$WORKLOAD" in
		hot) echo "pgbench -n -S -M prepared -c 1 -t $1 bench" ;;
		hot-simple) echo "pgbench -n -S -M simple -c 1 -t $1 bench" ;;
		write) echo "pgbench -n -M prepared -c 1 -t $1 bench" ;;
		unique) echo "pgbench -n -M simple -c 1 -t $1 --random-seed=${2:-1} -D ntables=$UNIQUE_TABLES -f $(q "$BENCH_DIR/unique.sql") bench" ;;
	esac
}

# Inclusive instructions of the index scan and of the reads of client
# messages in a callgrind file: core work that varies between runs of the
# same code (see above) and that no extension's code runs inside
scan_ir_of() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk '/:ExecIndexScan \[/ { gsub(",", "", $1); if ($1 > s) s = $1 }
			/:pq_getbyte \[/ { gsub(",", "", $1); if ($1 > r) r = $1 }
			END { print s + r }'
}

# pg_stat_queries' tracking counters, "untracked evicted", for the unique workload
tracking() {
	bench_psql "SELECT untracked_executions, evicted_entries FROM pg_stat_queries_info" | tr '|' ' '
}

printf 'config\tt_lo\tir_lo\tt_hi\tir_hi\tscan_lo\tscan_hi\trepeat\n' >"$BENCH_DIR/$TSV"
[ "$WORKLOAD" = unique ] &&
	printf 'config\tstatements\tuntracked\tevicted\n' >"$BENCH_DIR/callgrind_unique_tracking.tsv"
for rep in $(seq 1 "$REPEATS"); do
	for c in $CONFIGS; do
		cg=$BENCH_DIR/cg_$c
		cg_start "$c" "$CG_MAX" "$cg"
		as_bench_user "$(workload_pgbench "$WARMUP" 2)" >/dev/null 2>&1 ||
			bench_die "$c: warm-up pgbench failed"
		sleep 2
		declare -A ir=()
		declare -A scan=()
		for t in $T_LO $T_HI; do
			track_before=""
			[ "$WORKLOAD" = unique ] && [[ $c == pgsq* ]] && track_before=$(tracking)
			before=$(ls "$cg")
			as_bench_user "$(workload_pgbench "$t")" >"$BENCH_DIR/pgbench_${c}_$t.log" 2>&1 ||
				{ cat "$BENCH_DIR/pgbench_${c}_$t.log"; bench_die "$c: pgbench -t $t failed"; }
			# the backend that served pgbench: the most instructions
			best=0
			best_file=""
			for f in $(cg_new_files "$cg" "$before"); do
				v=$(ir_of "$cg/$f")
				[ -n "$v" ] && [ "$v" -gt "$best" ] && best=$v && best_file=$cg/$f
			done
			[ -n "$best" ] && [ "$best" -gt 0 ] || bench_die "$c: no callgrind output for the pgbench backend"
			ir[$t]=$best
			scan[$t]=0
			[[ $WORKLOAD == hot* ]] && scan[$t]=$(scan_ir_of "$best_file")
			bench_say "$c: N=$t: $best instructions in the benchmark backend"
			if [ -n "$track_before" ]; then
				read -r u0 e0 <<<"$track_before"
				read -r u1 e1 <<<"$(tracking)"
				printf '%s\t%s\t%s\t%s\n' "$c" "$t" $((u1 - u0)) $((e1 - e0)) \
					>>"$BENCH_DIR/callgrind_unique_tracking.tsv"
				bench_say "$c: N=$t: $((u1 - u0)) executions untracked, $((e1 - e0)) entries evicted"
				[ $((u1 - u0)) -gt 0 ] &&
					bench_say "WARNING: $c left executions untracked: its figure is not the cost of tracking every new statement"
			fi
		done
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$T_LO" "${ir[$T_LO]}" "$T_HI" "${ir[$T_HI]}" \
			"${scan[$T_LO]}" "${scan[$T_HI]}" "$rep" >>"$BENCH_DIR/$TSV"
		cg_stop "$c"
	done
done
cp "$BENCH_DIR/$TSV" "$OUT_DIR/$TSV"
[ "$WORKLOAD" = unique ] && cp "$BENCH_DIR/callgrind_unique_tracking.tsv" "$OUT_DIR/"

awk -F'\t' -v repeats="$REPEATS" '
	function median(list,    m, v, i, j, t) {
		m = split(list, v, " ")
		for (i = 2; i <= m; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
	}
	NR > 1 { r = $8; c = $1
		per[c, r] = ($5 - $3) / ($4 - $2); scan[c, r] = ($7 - $6) / ($4 - $2); tot[c, r] = $5; n = $4
		if (!(c in seen)) { seen[c] = 1; order[++k] = c } }
	END {
		printf "%-6s %6s %16s %14s %14s %18s %20s\n", "config", "repeat", "Ir total (hi)", "Ir/statement", "added/stmt", "(total-none)/N", "added, corrected"
		for (r = 1; r <= repeats; r++)
			for (i = 1; i <= k; i++) { c = order[i]
				a = per[c, r] - per["none", r]; ac = a - (scan[c, r] - scan["none", r])
				A[c] = A[c] " " a; AC[c] = AC[c] " " ac
				printf "%-6s %6d %16d %14.0f %+14.0f %+18.0f %+20.0f\n", c, r, tot[c, r], per[c, r], a,
					(tot[c, r] - tot["none", r]) / n, ac }
		if (repeats > 1)
			for (i = 1; i <= k; i++) { c = order[i]
				printf "%-6s %6s %16s %14s %+14.0f %18s %+20.0f\n", c, "median", "", "", median(A[c]), "", median(AC[c]) }
	}' "$OUT_DIR/$TSV"
if [ "$WORKLOAD" = hot ] && [ -f "$OUT_DIR/runs.tsv" ] && [ -f "$OUT_DIR/env.txt" ]; then
	"${BENCH_PYTHON:-python3}" "$BENCH_ROOT/report.py" "$OUT_DIR"
fi
