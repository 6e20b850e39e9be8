#!/usr/bin/env bash
#
# bench/changed_read.sh -- what a collector's read costs: every statement
# (SELECT * FROM pg_stat_queries) against only what changed in the last
# minute (pg_stat_queries_changed(now() - interval '1 minute')).
#
# A release-build cluster with pg_stat_queries.max = CR_MAX gets CR_ENTRIES
# distinct statements (column pairs of a 230-column table, about 100-byte
# texts); after CR_AGE seconds, CR_CHANGED of them run again.  Then, REPEATS
# times, alternating, each read runs through psql into a file: the time is
# the client's (connection excluded: \timing around COPY ... TO STDOUT),
# the bytes are the size of the COPY output, which is what the client
# receives as data.  Medians are reported.
#
# Output: OUT_DIR/changed_read.md (and .tsv with every run).
#
# Environment: PGSQ_BENCH_FLAVOR (release), CR_ENTRIES (50000), CR_CHANGED
# (500), CR_MAX (60000), CR_AGE (65), REPEATS (7), OUT_DIR (bench/results),
# PGSQ_BENCH_DIR (/tmp), BENCH_PORT (55542), KEEP_CLUSTER (0), INSTALL_EXT (1).

set -uo pipefail

source "$(dirname "$0")/../scripts/lib.sh"
source "$(dirname "$0")/lib/common.sh"
BENCH_START=$(date +%s)

FLAVOR=${PGSQ_BENCH_FLAVOR:-release}
ENTRIES=${CR_ENTRIES:-50000}
CHANGED=${CR_CHANGED:-500}
MAX=${CR_MAX:-60000}
AGE=${CR_AGE:-65}
REPEATS=${REPEATS:-7}
OUT_DIR=${OUT_DIR:-$BENCH_ROOT/results}
COLUMNS_N=230
SHARED_BUFFERS=256MB
MAX_CONNECTIONS=20

[ "$ENTRIES" -le $((COLUMNS_N * (COLUMNS_N - 1))) ] || bench_die "CR_ENTRIES above $((COLUMNS_N * (COLUMNS_N - 1)))"

BENCH_DIR=""
DATADIR=""
trap bench_finish EXIT
trap 'exit 130' INT TERM HUP

bench_pick_build "$FLAVOR"
if [ "${INSTALL_EXT:-1}" = 1 ]; then
	bench_install_extension || exit 1
fi
ensure_test_user
mkdir -p "$OUT_DIR"
BENCH_DIR=$(mktemp -d "${PGSQ_BENCH_DIR:-/tmp}/pgsq-changed.XXXXXX") || bench_die "cannot create work directory"
chmod 755 "$BENCH_DIR"
[ "$(id -u)" -eq 0 ] && chown "$PGSQ_TEST_USER" "$BENCH_DIR"
DATADIR=$BENCH_DIR/data
SOCKDIR=$BENCH_DIR/sock
PORT=$(free_port "${BENCH_PORT:-55542}")

bench_initdb "" || bench_die "initdb failed"
cat <<EOF | as_test_user "cat > $(q "$BENCH_DIR/pgsq.conf")"
shared_preload_libraries = 'pg_stat_queries'
pg_stat_queries.max = $MAX
pg_stat_queries.query_text_memory = 64MB
EOF
bench_start "$BENCH_DIR/pgsq.conf" || bench_die "server did not start"
as_bench_user "createdb bench" || bench_die "createdb failed"
bench_psql "CREATE EXTENSION pg_stat_queries" || bench_die "CREATE EXTENSION failed"
bench_psql "DO \$\$ BEGIN EXECUTE (SELECT format('CREATE TABLE collector_benchmark_wide (%s)', string_agg(format('c%s int', i), ', ')) FROM generate_series(1, $COLUMNS_N) i); END \$\$" >/dev/null ||
	bench_die "creating the table failed"

# statements k = from, from + step, ... (count of them): the k-th ordered
# pair of distinct columns
statements() {
	local from=$1 count=$2 step=${3:-1}
	python3 - "$from" "$count" "$step" "$COLUMNS_N" <<'PY'
import sys
start, count, step, n = (int(a) for a in sys.argv[1:])
wanted = set(range(start, start + count * step, step))
k = 0
for i in range(1, n + 1):
    for j in range(1, n + 1):
        if i == j:
            continue
        if k in wanted:
            print(f"SELECT c{i}, c{j} FROM collector_benchmark_wide WHERE c{i} IS NOT NULL AND c{j} > 0;")
        k += 1
PY
}

bench_say "creating $ENTRIES statements"
statements 0 "$ENTRIES" | as_test_user "cat > $(q "$BENCH_DIR/all.sql")"
as_bench_user "psql -X -q -o /dev/null -f all.sql" || bench_die "running the statements failed"
entries=$(bench_psql "SELECT count(*) FROM pg_stat_queries WHERE query LIKE '%collector_benchmark_wide WHERE%'")
bench_say "$entries entries; waiting ${AGE}s so that they are older than a minute"
sleep "$AGE"
# the $CHANGED statements spread over the whole set
step=$((ENTRIES / CHANGED))
statements 0 "$CHANGED" "$step" | as_test_user "cat > $(q "$BENCH_DIR/changed.sql")"
as_bench_user "psql -X -q -o /dev/null -f changed.sql" || bench_die "running the changed statements failed"

# One read through COPY, output to a file: prints "ms bytes rows"
read_once() {
	local name=$1 sql=$2
	as_bench_user "psql -X -q -At -c '\\timing on' -c $(q "COPY ($sql) TO STDOUT") -o $(q "$BENCH_DIR/$name.out") > $(q "$BENCH_DIR/$name.timing")" ||
		bench_die "read $name failed"
	local ms bytes rows
	ms=$(grep -o 'Time: [0-9.]*' "$BENCH_DIR/$name.timing" | awk '{print $2}')
	bytes=$(stat -c %s "$BENCH_DIR/$name.out")
	rows=$(wc -l <"$BENCH_DIR/$name.out")
	echo "$ms $bytes $rows"
}

FULL_SQL="SELECT * FROM pg_stat_queries"
CHANGED_SQL="SELECT * FROM pg_stat_queries_changed(now() - interval '1 minute')"
printf 'read\trun\tms\tbytes\trows\n' >"$BENCH_DIR/changed_read.tsv"
for ((r = 1; r <= REPEATS; r++)); do
	for name in full changed; do
		if [ "$name" = full ]; then sql=$FULL_SQL; else sql=$CHANGED_SQL; fi
		read -r ms bytes rows <<<"$(read_once "$name" "$sql")"
		printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$r" "$ms" "$bytes" "$rows" >>"$BENCH_DIR/changed_read.tsv"
	done
done
bench_say "reads done"
cp "$BENCH_DIR/changed_read.tsv" "$OUT_DIR/changed_read.tsv"

python3 - "$OUT_DIR" "$entries" "$CHANGED" "$REPEATS" "$($PGBIN/postgres --version)" <<'PY'
import csv, statistics, sys
out, entries, changed, repeats, version = sys.argv[1:]
runs = {}
with open(f"{out}/changed_read.tsv") as f:
    for row in csv.DictReader(f, delimiter="\t"):
        runs.setdefault(row["read"], []).append(row)
med = {k: {c: statistics.median(float(r[c]) for r in v) for c in ("ms", "bytes", "rows")} for k, v in runs.items()}
f, c = med["full"], med["changed"]
lines = [
    "# Collector reads: everything against what changed",
    "",
    f"{version.strip()}, release build, 2 CPUs. {entries} statements in pg_stat_queries (texts of about "
    f"100 bytes), all run once, then after more than a minute {changed} of them again. Each read is "
    f"`COPY (...) TO STDOUT` through psql, {repeats} times each, alternating; time is psql's `\\timing` "
    f"(server execution and transfer, connection excluded), bytes the size of the COPY output. Medians. "
    f"Generated by bench/changed_read.sh.",
    "",
    "| read | rows | time (ms) | bytes |",
    "|---|---|---|---|",
    f"| `SELECT * FROM pg_stat_queries` | {f['rows']:.0f} | {f['ms']:.1f} | {f['bytes']:.0f} |",
    f"| `SELECT * FROM pg_stat_queries_changed(now() - interval '1 minute')` | {c['rows']:.0f} | {c['ms']:.1f} | {c['bytes']:.0f} |",
    f"| ratio (full / changed) | {f['rows'] / max(c['rows'], 1):.0f}x | {f['ms'] / c['ms']:.1f}x | {f['bytes'] / c['bytes']:.1f}x |",
    "",
    f"Target (issue 21): at least 10x less time and bytes: time {'met' if f['ms'] / c['ms'] >= 10 else 'NOT met'}, "
    f"bytes {'met' if f['bytes'] / c['bytes'] >= 10 else 'NOT met'}.",
    "",
]
open(f"{out}/changed_read.md", "w").write("\n".join(lines))
print("\n".join(lines))
PY
