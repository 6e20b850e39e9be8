#!/usr/bin/env bash
#
# bench/index_stats.sh -- time pgstattuple's pgstatindex() against
# pg_index_stats() on B-tree indexes of several sizes, cold and warm cache,
# in several I/O configurations.  Not part of CI.
#
# The script builds a throw-away cluster with the release build, installs
# pg_index_stats into that build, creates one index built in key order
# ("sequential") and one filled in random key order ("fragmented") per size,
# then measures both functions:
#
#   cold: restart the server and drop the kernel page cache before every
#         call; the two functions alternate (ABBA order), REPEATS calls each
#   warm: in one session per index, load the index into shared_buffers
#         (pg_prewarm), call each function WARM_WARMUP times untimed, then
#         WARM_CALLS times each, alternating (ABBA order)
#
# Every call is timed on the server (clock_timestamp() around the call in a
# PL/pgSQL helper), so client round trips are not part of the figures.  The
# tables report medians; speedup = median pgstatindex / median pg_index_stats.
#
# Configurations (CONFIGS, applied identically to both functions):
#   sync          io_method=sync, everything else at its default
#   worker        io_method=worker, everything else at its default
#   worker-tuned  io_method=worker, io_workers=8, effective_io_concurrency=64
#
# Results (in OUT_DIR): index_stats.md (median times, speedup, verdict on
# the targets, load average), index_stats.csv (every sample,
# with the 1-minute load average when it was taken) and, when matplotlib can
# be imported, index_stats.png (speedup per configuration).
#
# Environment:
#   SIZES           index sizes in MB (default "20 200 1024")
#   REPEATS         cold calls per function and configuration (default 7)
#   WARM_CALLS      timed warm calls per function and configuration (default 31)
#   WARM_WARMUP     untimed warm calls per function first (default 3)
#   CONFIGS         configurations to test (default "sync worker worker-tuned";
#                   IO_METHODS is accepted as an older name)
#   PGBIN           PostgreSQL binaries (default /opt/pgsq/18-release/bin)
#   PGSQ_BENCH_DIR  cluster directory (default /tmp/pg_index_stats_bench)
#   BENCH_PORT      port of the throw-away server (default 54329)
#   KEEP_CLUSTER    set to 1 to keep the cluster (and its data) afterwards
#   OUT_DIR         where the results go (default bench/results)
#
# Dropping the page cache needs root (or sudo); the server itself runs as the
# "postgres" user when the script is started as root.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PGBIN=${PGBIN:-/opt/pgsq/18-release/bin}
SIZES=${SIZES:-"20 200 1024"}
REPEATS=${REPEATS:-7}
WARM_CALLS=${WARM_CALLS:-31}
WARM_WARMUP=${WARM_WARMUP:-3}
CONFIGS=${CONFIGS:-${IO_METHODS:-"sync worker worker-tuned"}}
BENCH_DIR=${PGSQ_BENCH_DIR:-/tmp/pg_index_stats_bench}
PORT=${BENCH_PORT:-54329}
RESULTS="${OUT_DIR:-$ROOT/bench/results}"
DATA="$BENCH_DIR/data"
SAMPLES="$RESULTS/index_stats.csv"
START=$(date +%s)

log() { printf '[index_stats %5ds] %s\n' $(( $(date +%s) - START )) "$*" >&2; }
die() { echo "index_stats.sh: $*" >&2; exit 1; }

[ -x "$PGBIN/pg_ctl" ] || die "no PostgreSQL binaries in $PGBIN"
[ -f "$(dirname "$PGBIN")/.complete" ] || die "release build in $(dirname "$PGBIN") is not complete"
for v in REPEATS WARM_CALLS WARM_WARMUP; do
	case "${!v}" in '' | *[!0-9]*) die "$v must be a non-negative integer" ;; esac
done
[ "$REPEATS" -ge 1 ] || die "REPEATS must be at least 1"
[ "$WARM_CALLS" -ge 1 ] || die "WARM_CALLS must be at least 1"
for c in $CONFIGS; do
	case "$c" in sync | worker | worker-tuned) ;; *) die "unknown configuration $c" ;; esac
done

# Run a command as the cluster owner.
if [ "$(id -u)" -eq 0 ]; then
	as_owner() { runuser -u postgres -- "$@"; }
	OWNER=postgres
else
	as_owner() { "$@"; }
	OWNER=$(id -un)
fi

# Drop the kernel page cache so that the next read comes from the device.
drop_caches() {
	sync
	if [ "$(id -u)" -eq 0 ]; then
		echo 1 >/proc/sys/vm/drop_caches
	else
		echo 1 | sudo tee /proc/sys/vm/drop_caches >/dev/null
	fi
}

psql_bench() { as_owner "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$BENCH_DIR" -p "$PORT" -d postgres "$@"; }
pg_ctl_bench() { as_owner "$PGBIN/pg_ctl" -D "$DATA" -l "$BENCH_DIR/server.log" -w "$@" >/dev/null; }

cleanup() {
	if [ -f "$DATA/postmaster.pid" ]; then
		pg_ctl_bench stop -m fast || true
	fi
	if [ "${KEEP_CLUSTER:-0}" != 1 ]; then
		rm -rf "$BENCH_DIR"
	fi
}
trap cleanup EXIT

log "installing pg_index_stats into $(dirname "$PGBIN")"
make -C "$ROOT/pg_index_stats" PG_CONFIG="$PGBIN/pg_config" install -s >/dev/null

log "creating cluster in $BENCH_DIR"
rm -rf "$BENCH_DIR"
mkdir -p "$BENCH_DIR" "$RESULTS"
chown "$OWNER" "$BENCH_DIR"
as_owner "$PGBIN/initdb" -D "$DATA" -A trust -U postgres --no-sync >/dev/null

# Enough shared_buffers to keep the largest index resident for warm runs.
max_size=0
for s in $SIZES; do
	case "$s" in '' | *[!0-9]*) die "SIZES must list integers (MB)" ;; esac
	if [ "$s" -gt "$max_size" ]; then max_size=$s; fi
done
sb_mb=$(( max_size * 2 + 256 ))
cat >>"$DATA/postgresql.conf" <<EOF
port = $PORT
listen_addresses = ''
unix_socket_directories = '$BENCH_DIR'
shared_buffers = ${sb_mb}MB
max_wal_size = 8GB
wal_level = minimal
max_wal_senders = 0
fsync = off
synchronous_commit = off
autovacuum = off
maintenance_work_mem = 1GB
EOF
pg_ctl_bench start

psql_bench -c "CREATE EXTENSION pgstattuple" -c "CREATE EXTENSION pg_prewarm" \
	-c "CREATE EXTENSION pg_index_stats"

# time_calls(funcs, index, rounds): call each function of the array "funcs"
# on "index" in every round, reversing the order in every other round, and
# return one row (round, function, milliseconds) per call, measured around
# the call only.
psql_bench <<'EOF'
CREATE FUNCTION time_calls(funcs text[], idx regclass, rounds int)
RETURNS TABLE (round int, func text, ms float8)
LANGUAGE plpgsql AS $$
DECLARE
  order_ text[];
  t0 timestamptz;
BEGIN
  FOR r IN 1 .. rounds LOOP
    round := r;
    order_ := CASE WHEN r % 2 = 1 THEN funcs
              ELSE ARRAY(SELECT funcs[i] FROM generate_subscripts(funcs, 1, true) i) END;
    FOREACH func IN ARRAY order_ LOOP
      t0 := clock_timestamp();
      EXECUTE format('SELECT 1 FROM %I($1)', func) USING idx;
      ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
      RETURN NEXT;
    END LOOP;
  END LOOP;
END
$$;
EOF

# Create the sequential and fragmented index of every size.  Row counts are
# calibrated for int4 keys: about 47k keys per MB at the default fillfactor
# of a sorted build, about 36k per MB after random-order insertion.
for s in $SIZES; do
	log "creating ${s} MB indexes"
	psql_bench <<EOF
BEGIN;
CREATE TABLE seq_$s (k int4);
INSERT INTO seq_$s SELECT g FROM generate_series(1, $(( s * 47000 ))) g;
COMMIT;
CREATE INDEX seq_${s}_k ON seq_$s (k);
BEGIN;
CREATE TABLE frag_$s (k int4);
CREATE INDEX frag_${s}_k ON frag_$s (k);
INSERT INTO frag_$s SELECT hashint4(g) FROM generate_series(1, $(( s * 36000 ))) g;
COMMIT;
VACUUM ANALYZE seq_$s, frag_$s;
CHECKPOINT;
EOF
done
psql_bench -c "CREATE TABLE warmup (k int4 PRIMARY KEY)" -c "INSERT INTO warmup VALUES (1)"

# Verify the functions agree on every benchmark index before timing them.
for s in $SIZES; do
	for layout in seq frag; do
		same=$(psql_bench -At -c "SELECT a IS NOT DISTINCT FROM b FROM pg_index_stats('${layout}_${s}_k') a, pgstatindex('${layout}_${s}_k') b")
		[ "$same" = t ] || die "pg_index_stats and pgstatindex disagree on ${layout}_${s}_k"
	done
done

load1() { cut -d' ' -f1 /proc/loadavg; }

# Apply configuration $1 and restart the server.
apply_config() {
	local io=worker workers=DEFAULT eic=DEFAULT
	case "$1" in
		sync) io=sync ;;
		worker-tuned) workers=8 eic=64 ;;
	esac
	psql_bench -c "ALTER SYSTEM SET io_method = '$io'" \
		-c "ALTER SYSTEM SET io_workers = $workers" \
		-c "ALTER SYSTEM SET effective_io_concurrency = $eic"
	pg_ctl_bench restart -m fast
}

# One cold call of function $1 on index $2 in a fresh session; prints ms.
# A call on a one-page index first loads the function's library and the
# catalog entries, so the timed call measures the scan of the index only.
cold_call() {
	psql_bench -At <<EOF
SELECT 1 FROM $1('warmup_pkey') \g /dev/null
SELECT round(ms::numeric, 3) FROM time_calls(ARRAY['$1'], '$2', 1);
EOF
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "config,cache,size_mb,layout,index_mb,function,repeat,ms,load1" >"$SAMPLES"
FUNCS="pgstatindex pg_index_stats"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

for cfg in $CONFIGS; do
	log "configuration $cfg"
	apply_config "$cfg"
	for s in $SIZES; do
		for layout in seq frag; do
			index="${layout}_${s}_k"
			index_mb=$(psql_bench -At -c "SELECT round(pg_relation_size('$index') / 1048576.0, 1)")
			# cold: ABBA order over the repeats
			for r in $(seq 1 "$REPEATS"); do
				if [ $(( r % 2 )) -eq 1 ]; then order=$FUNCS; else order="pg_index_stats pgstatindex"; fi
				for f in $order; do
					pg_ctl_bench restart -m fast
					drop_caches
					ms=$(cold_call "$f" "$index")
					echo "$cfg,cold,$s,$layout,$index_mb,$f,$r,$ms,$(load1)" >>"$SAMPLES"
					log "$cfg cold $index $f #$r: $ms ms"
				done
			done
			# warm: one session, prewarm, untimed warm-up calls, then
			# WARM_CALLS alternating timed calls per function
			l=$(load1)
			psql_bench -At -F, <<EOF | awk -F, -v p="$cfg,warm,$s,$layout,$index_mb" -v l="$l" '{ print p "," $2 "," $1 "," $3 "," l }' >>"$SAMPLES"
SELECT pg_prewarm('$index') \g /dev/null
SELECT count(*) FROM time_calls(ARRAY['pgstatindex', 'pg_index_stats'], '$index', $WARM_WARMUP) \g /dev/null
SELECT round, func, round(ms::numeric, 3) FROM time_calls(ARRAY['pgstatindex', 'pg_index_stats'], '$index', $WARM_CALLS);
EOF
			log "$cfg warm $index: $WARM_CALLS calls each"
		done
	done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
LOAD_RANGE=$(awk -F, 'NR > 1 { if (min == "" || $9 < min) min = $9; if ($9 > max) max = $9 } END { print min "-" max }' "$SAMPLES")

# Summarize: median per configuration and the speedup of pg_index_stats.
pg_version=$("$PGBIN/postgres" --version)
# kernel read-ahead of the block device holding the cluster
disk=$(basename "$(df --output=source "$BENCH_DIR" | tail -n 1)")
[ -e "/sys/block/$disk" ] || disk=$(lsblk -no pkname "/dev/$disk" 2>/dev/null | head -n 1)
readahead=$(cat "/sys/block/$disk/queue/read_ahead_kb" 2>/dev/null || echo "?")
if "$PGBIN/pg_config" --configure | grep -q -- --enable-cassert; then
	build_kind="assert-enabled build"
else
	build_kind="release build, CFLAGS $("$PGBIN/pg_config" --cflags | grep -o -- '-O[0-9s]' | tail -n 1)"
fi
if "$PGBIN/pg_config" --configure | grep -q -- --with-liburing; then uring="built with liburing"; else uring="built without liburing, so io_method=io_uring is not available"; fi
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem_gb=$(awk '/^MemTotal/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo)
summary="$BENCH_DIR/summary.csv"
echo "config,cache,size_mb,layout,index_mb,pgstatindex_ms,pg_index_stats_ms,speedup,paired_speedup,pgstatindex_min,pgstatindex_max,pg_index_stats_min,pg_index_stats_max" >"$summary"
verdicts="$BENCH_DIR/verdicts.txt"
: >"$verdicts"
{
	echo "# pg_index_stats vs pgstatindex"
	echo
	echo "Environment: $pg_version ($build_kind, $uring), $(nproc) CPUs ($cpu), ${mem_gb} GB RAM," \
		"kernel $(uname -r), $disk read_ahead_kb $readahead, shared_buffers ${sb_mb}MB," \
		"SIZES=\"$SIZES\", REPEATS=$REPEATS (cold), WARM_CALLS=$WARM_CALLS after $WARM_WARMUP warm-up calls (warm)," \
		"$(date -u '+%Y-%m-%d %H:%M UTC')."
	echo
	echo "Load average (1, 5, 15 min) at the start: $LOAD_START; at the end: $LOAD_END;" \
		"1-minute load average over all samples: $LOAD_RANGE (it is in index_stats.csv for every sample)."
	echo
	echo "Configurations, applied identically to both functions:" \
		"**sync** = io_method=sync, **worker** = io_method=worker, both with every other setting at its default" \
		"(io_workers=3, effective_io_concurrency=16, io_combine_limit=128kB);" \
		"**worker-tuned** = io_method=worker with io_workers=8 and effective_io_concurrency=64 (not a default)."
	echo
	echo "Cold: server restarted and kernel page cache dropped before every call; $REPEATS calls per function, alternating (ABBA)." \
		"Warm: per index one session, index loaded with pg_prewarm, $WARM_WARMUP untimed calls per function," \
		"then $WARM_CALLS timed calls per function, alternating (ABBA)." \
		"Each call is timed on the server around the call only. Times are medians in ms (min-max in parentheses);" \
		"speedup = median pgstatindex / median pg_index_stats (the target column judges this figure);" \
		"paired = median over the rounds of pgstatindex / pg_index_stats for the two calls of one round, which ran back to back." \
		"Targets: cold >= 1.30x for 200 MB and 1 GB, warm >= 0.95x."
	echo
	echo "| config | cache | size (MB) | layout | index MB | pgstatindex ms | pg_index_stats ms | speedup | paired | target |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for cfg in $CONFIGS; do
		for cache in cold warm; do
			for s in $SIZES; do
				for layout in seq frag; do
					sel() { awk -F, -v c="$cfg" -v k="$cache" -v s="$s" -v l="$layout" -v f="$1" \
						'$1 == c && $2 == k && $3 == s && $4 == l && $6 == f { print $8 }' "$SAMPLES"; }
					a=$(sel pgstatindex | median)
					b=$(sel pg_index_stats | median)
					amin=$(sel pgstatindex | sort -g | head -n 1)
					amax=$(sel pgstatindex | sort -g | tail -n 1)
					bmin=$(sel pg_index_stats | sort -g | head -n 1)
					bmax=$(sel pg_index_stats | sort -g | tail -n 1)
					mb=$(awk -F, -v s="$s" -v l="$layout" '$3 == s && $4 == l { print $5; exit }' "$SAMPLES")
					sp=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')
					# calls of the same round ran next to each other: the
					# median of their ratios is less exposed to drifts of the
					# disk's speed than the ratio of the two medians
					paired=$(awk -F, -v c="$cfg" -v k="$cache" -v s="$s" -v l="$layout" \
						'$1 == c && $2 == k && $3 == s && $4 == l { t[$7 "," $6] = $8; r[$7] = 1 }
						 END { for (i in r) print t[i ",pgstatindex"] / t[i ",pg_index_stats"] }' "$SAMPLES" |
						median | awk '{ printf "%.2f", $1 }')
					if [ "$cache" = warm ]; then
						target=$(awk -v x="$sp" 'BEGIN { print (x >= 0.95) ? "met (>= 0.95x)" : "NOT met (< 0.95x)" }')
					elif [ "$s" -ge 200 ]; then
						target=$(awk -v x="$sp" 'BEGIN { print (x >= 1.3) ? "met (>= 1.30x)" : "NOT met (< 1.30x)" }')
					else
						target="-"
					fi
					[ "$target" = "-" ] || echo "$cfg $cache ${s} MB $layout: ${sp}x, $target" >>"$verdicts"
					echo "$cfg,$cache,$s,$layout,$mb,$a,$b,$sp,$paired,$amin,$amax,$bmin,$bmax" >>"$summary"
					printf '| %s | %s | %s | %s | %s | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %sx | %sx | %s |\n' \
						"$cfg" "$cache" "$s" "$layout" "$mb" "$a" "$amin" "$amax" "$b" "$bmin" "$bmax" "$sp" "$paired" "$target"
				done
			done
		done
	done
	echo
	echo "Targets not met:"
	echo
	if grep -q "NOT met" "$verdicts"; then
		grep "NOT met" "$verdicts" | sed 's/^/- /'
	else
		echo "- none"
	fi
	echo
	echo "Raw samples: index_stats.csv."
} >"$RESULTS/index_stats.md"

if "${BENCH_PYTHON:-python3}" -c "import matplotlib" 2>/dev/null; then
	"${BENCH_PYTHON:-python3}" - "$summary" "$RESULTS/index_stats.png" <<'EOF'
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
labels = [f"{r['size_mb']}MB {r['layout']}\n{r['config']} {r['cache']}" for r in rows]
values = [float(r["speedup"]) for r in rows]
colors = ["tab:blue" if r["cache"] == "cold" else "tab:orange" for r in rows]
fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.7), 5))
ax.bar(range(len(rows)), values, color=colors)
ax.axhline(1.0, color="black", linewidth=0.8)
ax.axhline(1.3, color="tab:blue", linewidth=0.8, linestyle="--", label="cold target 1.3x")
ax.axhline(0.95, color="tab:orange", linewidth=0.8, linestyle="--", label="warm target 0.95x")
ax.set_xticks(range(len(rows)))
ax.set_xticklabels(labels, rotation=90, fontsize=7)
ax.set_ylabel("speedup (pgstatindex time / pg_index_stats time)")
ax.set_title("pg_index_stats vs pgstatindex (blue: cold cache, orange: warm)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
EOF
	log "chart written to $RESULTS/index_stats.png"
else
	log "matplotlib not available: no chart"
fi

log "results in $RESULTS/index_stats.md"
cat "$RESULTS/index_stats.md"
