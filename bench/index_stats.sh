#!/usr/bin/env bash
#
# bench/index_stats.sh -- time pgstattuple's pgstatindex() against
# pg_index_stats() on B-tree indexes of several sizes, cold and warm cache,
# with io_method=sync and io_method=worker.  Not part of CI.
#
# The script builds a throw-away cluster with the release build, installs
# pg_index_stats into that build, creates one index built in key order
# ("sequential") and one filled in random key order ("fragmented") per size,
# then measures both functions interleaved, REPEATS times each:
#
#   cold: restart the server and drop the kernel page cache before every run
#   warm: load the index into shared_buffers (pg_prewarm) and run the function
#         once in the same session, then time the next run
#
# Results: bench/results/index_stats.md (median times and speedup),
# bench/results/index_stats.csv (every sample) and, when matplotlib can be
# imported, bench/results/index_stats.png (speedup per size/configuration).
#
# Environment:
#   SIZES           index sizes in MB (default "20 200 1024")
#   REPEATS         timed runs per function and configuration (default 5)
#   IO_METHODS      io_method values to test (default "sync worker")
#   PGBIN           PostgreSQL binaries (default /opt/pgsq/18-release/bin)
#   PGSQ_BENCH_DIR  cluster directory (default /tmp/pg_index_stats_bench)
#   BENCH_PORT      port of the throw-away server (default 54329)
#   KEEP_CLUSTER    set to 1 to keep the cluster (and its data) afterwards
#
# Dropping the page cache needs root (or sudo); the server itself runs as the
# "postgres" user when the script is started as root.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PGBIN=${PGBIN:-/opt/pgsq/18-release/bin}
SIZES=${SIZES:-"20 200 1024"}
REPEATS=${REPEATS:-5}
IO_METHODS=${IO_METHODS:-"sync worker"}
BENCH_DIR=${PGSQ_BENCH_DIR:-/tmp/pg_index_stats_bench}
PORT=${BENCH_PORT:-54329}
RESULTS="$ROOT/bench/results"
DATA="$BENCH_DIR/data"
SAMPLES="$RESULTS/index_stats.csv"
START=$(date +%s)

log() { printf '[index_stats %5ds] %s\n' $(( $(date +%s) - START )) "$*" >&2; }
die() { echo "index_stats.sh: $*" >&2; exit 1; }

[ -x "$PGBIN/pg_ctl" ] || die "no PostgreSQL binaries in $PGBIN"
[ -f "$(dirname "$PGBIN")/.complete" ] || die "release build in $(dirname "$PGBIN") is not complete"
case "$REPEATS" in '' | *[!0-9]*) die "REPEATS must be a positive integer" ;; esac
[ "$REPEATS" -ge 1 ] || die "REPEATS must be at least 1"

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

# Time one call of function $1 on index $2 in a fresh session; prints ms.
# cold: a call on a one-page index first loads the function's library and the
# catalog entries, so the timed call measures the scan of the index only.
# warm: the index is loaded into shared_buffers with pg_prewarm and scanned
# once by the same function in the same session (which also maps the shared
# buffers into this backend), then the next call is timed.
time_call() {
	local func=$1 index=$2 mode=$3 prep out
	if [ "$mode" = warm ]; then
		prep="SELECT pg_prewarm('$index'); SELECT 1 FROM $func('$index');"
	else
		prep="SELECT 1 FROM $func('warmup_pkey');"
	fi
	out=$(psql_bench <<EOF
$prep
\\timing on
SELECT 1 FROM $func('$index');
EOF
	)
	echo "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n 1
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "io_method,cache,size_mb,layout,index_mb,function,repeat,ms" >"$SAMPLES"
FUNCS="pgstatindex pg_index_stats"

for io in $IO_METHODS; do
	log "io_method=$io"
	psql_bench -c "ALTER SYSTEM SET io_method = '$io'"
	pg_ctl_bench restart -m fast
	for s in $SIZES; do
		for layout in seq frag; do
			index="${layout}_${s}_k"
			index_mb=$(psql_bench -At -c "SELECT round(pg_relation_size('$index') / 1048576.0, 1)")
			for r in $(seq 1 "$REPEATS"); do
				# alternate which function goes first in each round
				if [ $(( r % 2 )) -eq 1 ]; then order=$FUNCS; else order="pg_index_stats pgstatindex"; fi
				for f in $order; do
					pg_ctl_bench restart -m fast
					drop_caches
					ms=$(time_call "$f" "$index" cold)
					echo "$io,cold,$s,$layout,$index_mb,$f,$r,$ms" >>"$SAMPLES"
					log "$io cold $index $f #$r: $ms ms"
				done
				for f in $order; do
					ms=$(time_call "$f" "$index" warm)
					echo "$io,warm,$s,$layout,$index_mb,$f,$r,$ms" >>"$SAMPLES"
					log "$io warm $index $f #$r: $ms ms"
				done
			done
		done
	done
done

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
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem_gb=$(awk '/^MemTotal/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo)
summary="$BENCH_DIR/summary.csv"
echo "io_method,cache,size_mb,layout,index_mb,pgstatindex_ms,pg_index_stats_ms,speedup" >"$summary"
{
	echo "# pg_index_stats vs pgstatindex"
	echo
	echo "Environment: $pg_version ($build_kind), $(nproc) CPUs ($cpu), ${mem_gb} GB RAM," \
		"kernel $(uname -r), $disk read_ahead_kb $readahead, shared_buffers ${sb_mb}MB, default io_combine_limit/effective_io_concurrency," \
		"SIZES=\"$SIZES\", REPEATS=$REPEATS, $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo
	echo "Cold: server restarted and kernel page cache dropped before every run." \
		"Warm: index loaded with pg_prewarm and the function run once in the same session before the timed run." \
		"Functions interleaved; times are medians in ms (psql \\timing); speedup = pgstatindex / pg_index_stats."
	echo
	echo "| io_method | cache | size (MB) | layout | index MB | pgstatindex ms | pg_index_stats ms | speedup |"
	echo "|---|---|---|---|---|---|---|---|"
	for io in $IO_METHODS; do
		for cache in cold warm; do
			for s in $SIZES; do
				for layout in seq frag; do
					sel() { awk -F, -v io="$io" -v c="$cache" -v s="$s" -v l="$layout" -v f="$1" \
						'$1 == io && $2 == c && $3 == s && $4 == l && $6 == f { print $8 }' "$SAMPLES"; }
					a=$(sel pgstatindex | median)
					b=$(sel pg_index_stats | median)
					mb=$(awk -F, -v s="$s" -v l="$layout" '$3 == s && $4 == l { print $5; exit }' "$SAMPLES")
					sp=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')
					echo "$io,$cache,$s,$layout,$mb,$a,$b,$sp" >>"$summary"
					printf '| %s | %s | %s | %s | %s | %.1f | %.1f | %sx |\n' "$io" "$cache" "$s" "$layout" "$mb" "$a" "$b" "$sp"
				done
			done
		done
	done
	echo
	echo "Raw samples: index_stats.csv."
} >"$RESULTS/index_stats.md"

if python3 -c "import matplotlib" 2>/dev/null; then
	python3 - "$summary" "$RESULTS/index_stats.png" <<'EOF'
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
labels = [f"{r['size_mb']}MB {r['layout']}\n{r['io_method']} {r['cache']}" for r in rows]
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
