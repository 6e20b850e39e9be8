#!/usr/bin/env bash
#
# bench/text_cost.sh -- instructions pg_stat_queries spends making the text
# of a new statement, for this tree and for an earlier revision.
#
# Usage: bench/text_cost.sh [REV]      (REV: the revision to compare with,
#                                       default 2f6efe8, before every literal
#                                       of a stored text was replaced)
#
# For each library (REV's and this tree's, built against the release build
# of PG_MAJOR, not installed: shared_preload_libraries names the file) a
# throw-away cluster gets 40 empty tables, then a single-user backend runs
# under valgrind --tool=callgrind each workload, one statement per line, every
# statement new:
#   noconst   2,000 three-way joins without constants (bench/callgrind.sh's
#             unique workload)
#   const     1,560 two-way joins with a number and a string
#   orderby   the same with ORDER BY 1 (a number the parser keeps no Const for)
#   utility   2,000 COMMENT ON TABLE ... IS '...' (a string the parser does
#             not locate)
# and the inclusive instructions of pgsq_statement_text (which makes and
# stores a text) and of the whole backend are divided by the statements.
# A single-user backend has no other process and no client: the figures do
# not move between runs of the same code.
#
# Output: a table on stdout and OUT_DIR/text_cost.tsv (library, workload,
# statements, Ir per statement, Ir of pgsq_statement_text per statement).
# Environment: PG_MAJOR (18), OUT_DIR (bench/results), PGSQ_BENCH_DIR (/tmp).

set -uo pipefail

source "$(dirname "$0")/../scripts/lib.sh"
source "$(dirname "$0")/lib/common.sh"

BENCH_START=$(date +%s)
REV=${1:-2f6efe8}
OUT_DIR=${OUT_DIR:-$REPO_ROOT/bench/results}

bench_install_tools
command -v valgrind >/dev/null || bench_die "valgrind is not installed"
bench_pick_build release
ensure_test_user
WORK=$(mktemp -d "${PGSQ_BENCH_DIR:-/tmp}/pgsq-text-cost.XXXXXX") || bench_die "cannot create work directory"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT_DIR"

# Build the library of a source tree ($2) in WORK/$1; prints the .so
build_library() {
	local name=$1 src=$2
	mkdir -p "$WORK/$name"
	cp -r "$src/pg_stat_queries" "$src/mk" "$WORK/$name/"
	make -s -C "$WORK/$name/pg_stat_queries" PG_CONFIG="$PG_CONFIG" clean >/dev/null 2>&1
	make -s -j2 -C "$WORK/$name/pg_stat_queries" PG_CONFIG="$PG_CONFIG" >"$WORK/$name.log" 2>&1 ||
		{ cat "$WORK/$name.log"; bench_die "building $name failed"; }
	echo "$WORK/$name/pg_stat_queries/pg_stat_queries.so"
}

mkdir -p "$WORK/rev-src"
git -C "$REPO_ROOT" archive "$REV" pg_stat_queries mk | tar -x -C "$WORK/rev-src" ||
	bench_die "cannot extract $REV from the repository's history"
declare -A LIB=([$REV]=$(build_library rev "$WORK/rev-src") [tree]=$(build_library tree "$REPO_ROOT"))

# The workloads, one statement per line
"${BENCH_PYTHON:-python3}" - "$WORK" <<'EOF'
import sys
w = sys.argv[1]
pairs = [(a, b) for a in range(1, 41) for b in range(1, 41) if a != b]
triples = [(a, b, c) for a in range(1, 41) for b in range(1, 41)
           for c in range(1, 41) if len({a, b, c}) == 3][:2000]
with open(w + '/setup.sql', 'w') as f:
    f.writelines(f"CREATE TABLE u{i} (id int, v text);\n" for i in range(1, 41))
with open(w + '/noconst.sql', 'w') as f:
    f.writelines(f"SELECT count(*) FROM u{a}, u{b}, u{c} WHERE u{a}.id = u{b}.id "
                 f"AND u{b}.id = u{c}.id;\n" for a, b, c in triples)
with open(w + '/const.sql', 'w') as f:
    f.writelines(f"SELECT count(*) FROM u{a}, u{b} WHERE u{a}.id = u{b}.id "
                 f"AND u{a}.id > {a * 7} AND u{b}.v <> 'value {b}';\n" for a, b in pairs)
with open(w + '/orderby.sql', 'w') as f:
    f.writelines(f"SELECT count(*) FROM u{a}, u{b} WHERE u{a}.id = u{b}.id "
                 f"AND u{a}.id > {a * 7} AND u{b}.v <> 'value {b}' ORDER BY 1;\n" for a, b in pairs)
with open(w + '/utility.sql', 'w') as f:
    f.writelines(f"COMMENT ON TABLE u{i % 40 + 1} IS 'comment number {i}';\n" for i in range(2000))
EOF
[ "$(id -u)" -eq 0 ] && chown -R "$PGSQ_TEST_USER" "$WORK"

# Inclusive Ir of a function (or PROGRAM TOTALS) in a callgrind file
ir_of() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk -v f="$2" '$1 ~ /^[0-9,]+$/ && (index($0, ":" f " ") || (f == "TOTALS" && /PROGRAM TOTALS/)) {
			gsub(",", "", $1); print $1; exit }'
}

printf 'library\tworkload\tstatements\tir_per_statement\ttext_ir_per_statement\n' >"$WORK/text_cost.tsv"
for lib in "$REV" tree; do
	data=$WORK/data-$lib
	as_test_user "$(q "$PGBIN/initdb") -D $(q "$data") -A trust >/dev/null" || bench_die "initdb failed"
	cat >>"$data/postgresql.conf" <<EOF
shared_preload_libraries = '${LIB[$lib]}'
pg_stat_queries.max = 20000
pg_stat_queries.save = off
EOF
	as_test_user "$(q "$PGBIN/postgres") --single -D $(q "$data") postgres <$(q "$WORK/setup.sql") >/dev/null 2>&1" ||
		bench_die "creating the tables failed"
	for wl in noconst const orderby utility; do
		n=$(wc -l <"$WORK/$wl.sql")
		out=$WORK/cg.$lib.$wl
		as_test_user "cd $(q "$WORK") && valgrind --tool=callgrind --callgrind-out-file=$(q "$out") \
			$(q "$PGBIN/postgres") --single -D $(q "$data") postgres <$(q "$WORK/$wl.sql") >/dev/null 2>&1" ||
			bench_die "$lib: $wl failed"
		total=$(ir_of "$out" TOTALS)
		text=$(ir_of "$out" pgsq_statement_text)
		printf '%s\t%s\t%s\t%s\t%s\n' "$lib" "$wl" "$n" $((total / n)) $((${text:-0} / n)) >>"$WORK/text_cost.tsv"
	done
done
cp "$WORK/text_cost.tsv" "$OUT_DIR/text_cost.tsv"
column -t -s $'\t' "$OUT_DIR/text_cost.tsv"
