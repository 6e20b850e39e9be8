#!/usr/bin/env bash
#
# bench/index_stats.sh -- time pgstattuple's pgstatindex() and
# pg_index_stats() on B-tree indexes of several sizes, cold and warm cache,
# in several I/O configurations, and measure in the same run how fast the
# device itself reads sequentially with direct I/O, the physical limit the
# cold figures are judged against.  Not part of CI.
#
# The script builds a throw-away cluster with the release build, installs
# pg_index_stats into that build, creates one index built in key order
# ("seq") and one filled in random key order ("frag") per size, then:
#
#   device: before every configuration and at the end, DEVICE_REPEATS
#         sequential reads of the largest index's first segment file
#         (a file of the cluster, so the same filesystem) with direct I/O,
#         bypassing the page cache: fio (1 MiB reads, queue depth
#         DEVICE_IODEPTH, libaio) and dd (1 MiB reads, one at a time); and
#         one more fio read of that file before every round of cold calls.
#         The device's bandwidth is the median of all fio samples (dd's
#         when fio is missing and cannot be installed).
#   cold: restart the server and drop the kernel page cache before every
#         call; the two functions alternate (ABBA order), REPEATS calls each
#   warm: in one session per index, load the index into shared_buffers
#         (pg_prewarm), call each function WARM_WARMUP times untimed, then
#         WARM_CALLS times each, alternating (ABBA order)
#
# Every call is timed on the server (clock_timestamp() around the call in a
# PL/pgSQL helper), so client round trips are not part of the figures.
# Throughput = index bytes / median time; the cold throughput is also given
# as a fraction of the device's bandwidth.  Targets (issue 22): cold
# pg_index_stats at least 85% of the device's bandwidth for 1 GB at default
# settings, and at least pgstatindex's cold throughput at every size.
#
# Configurations (CONFIGS, applied identically to both functions):
#   sync          io_method=sync, everything else at its default
#   worker        io_method=worker (PostgreSQL's default), everything else
#                 at its default
#   io_uring      io_method=io_uring, everything else at its default (needs
#                 a build --with-liburing: scripts/install-postgres release)
#   worker-tuned  io_method=worker, io_workers=8 (io_min_workers on 19),
#                 effective_io_concurrency=64
#                 (not a default; not in the default list)
#
# Results (in OUT_DIR), written by bench/index_stats_report.py:
# index_stats.md (everything, notes on the method included), index_stats.csv
# (every timed call, with the 1-minute load average when it was taken),
# index_stats_device.csv (every device read), index_stats_env.txt (the
# machine and settings) and, when matplotlib can be imported,
# index_stats.png (cold throughput as a fraction of the device's bandwidth).
# The reading of the figures is kept by hand in discussion.md.
#
# Environment:
#   SIZES           index sizes in MB (default "20 200 1024")
#   REPEATS         cold calls per function and configuration (default 7)
#   WARM_CALLS      timed warm calls per function and configuration (default 31)
#   WARM_WARMUP     untimed warm calls per function first (default 3)
#   CONFIGS         configurations to test (default "sync worker io_uring";
#                   IO_METHODS is accepted as an older name)
#   DEVICE_REPEATS  device reads per tool before every configuration and at
#                   the end (default 3)
#   DEVICE_IODEPTH  fio's queue depth (default 32)
#   PGBIN           PostgreSQL binaries (default /opt/pgsq/18-release/bin)
#   PGSQ_BENCH_DIR  cluster directory (default /tmp/pg_index_stats_bench)
#   BENCH_PORT      port of the throw-away server (default 54329)
#   KEEP_CLUSTER    set to 1 to keep the cluster (and its data) afterwards
#   PAGE_REPORTING  "hold" (default) or "keep": see below
#   OUT_DIR         where the results go (default bench/results)
#
# Dropping the page cache needs root (or sudo); the server itself runs as the
# "postgres" user when the script is started as root.  As root, Debian's fio
# is installed when missing.
#
# Free page reporting.  In a virtual machine whose balloon device reports
# free pages, the guest hands the pages that drop_caches frees back to the
# host, and gets each one back only through a fault in the host when it is
# next used.  A cold call then spends up to twice its time refilling page
# cache memory rather than reading the disk, in whichever calls happen to
# start after the host took the pages back: bimodal times that follow the
# timing of the reports, not the functions.  When the guest kernel lets the
# report of a freed page be delayed (page_reporting's min_free_ms, with
# max_waiting_mib bounding how much may wait), the script sets the longest
# delay it accepts (5 minutes: every cold call follows its drop_caches by
# seconds) and lets all memory wait, and restores both settings at exit, so
# that cold calls read from the disk into memory the guest has.
# PAGE_REPORTING=keep leaves the settings alone.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PGBIN=${PGBIN:-/opt/pgsq/18-release/bin}
SIZES=${SIZES:-"20 200 1024"}
REPEATS=${REPEATS:-7}
WARM_CALLS=${WARM_CALLS:-31}
WARM_WARMUP=${WARM_WARMUP:-3}
CONFIGS=${CONFIGS:-${IO_METHODS:-"sync worker io_uring"}}
DEVICE_REPEATS=${DEVICE_REPEATS:-3}
DEVICE_IODEPTH=${DEVICE_IODEPTH:-32}
BENCH_DIR=${PGSQ_BENCH_DIR:-/tmp/pg_index_stats_bench}
PORT=${BENCH_PORT:-54329}
RESULTS="${OUT_DIR:-$ROOT/bench/results}"
DATA="$BENCH_DIR/data"
SAMPLES="$RESULTS/index_stats.csv"
DEVICE_SAMPLES="$RESULTS/index_stats_device.csv"
ENV_FILE="$RESULTS/index_stats_env.txt"
START=$(date +%s)

log() { printf '[index_stats %5ds] %s\n' $(( $(date +%s) - START )) "$*" >&2; }
die() { echo "index_stats.sh: $*" >&2; exit 1; }

[ -x "$PGBIN/pg_ctl" ] || die "no PostgreSQL binaries in $PGBIN"
[ -f "$(dirname "$PGBIN")/.complete" ] || die "release build in $(dirname "$PGBIN") is not complete"
for v in REPEATS WARM_CALLS WARM_WARMUP DEVICE_REPEATS DEVICE_IODEPTH; do
	case "${!v}" in '' | *[!0-9]*) die "$v must be a non-negative integer" ;; esac
done
[ "$REPEATS" -ge 1 ] || die "REPEATS must be at least 1"
[ "$WARM_CALLS" -ge 1 ] || die "WARM_CALLS must be at least 1"
[ "$DEVICE_IODEPTH" -ge 1 ] || die "DEVICE_IODEPTH must be at least 1"
for c in $CONFIGS; do
	case "$c" in
		sync | worker | worker-tuned) ;;
		io_uring)
			case "$("$PGBIN/pg_config" --configure)" in *--with-liburing*) ;; *) false ;; esac ||
				die "io_uring needs a PostgreSQL built --with-liburing (scripts/install-postgres release rebuilds it so)" ;;
		*) die "unknown configuration $c" ;;
	esac
done

# fio measures the device with a deep queue; without it, dd alone (one read
# in flight) gives a lower figure.
if ! command -v fio >/dev/null && [ "$(id -u)" -eq 0 ]; then
	log "installing fio"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends fio >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends fio >/dev/null 2>&1; } ||
		log "could not install fio: the device is measured with dd only"
fi

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

PAGE_REPORTING=${PAGE_REPORTING:-hold}
PAGE_REPORTING_DELAY=/sys/module/page_reporting/parameters/min_free_ms
PAGE_REPORTING_WAITING=/sys/module/page_reporting/parameters/max_waiting_mib
PAGE_REPORTING_SAVED=
PAGE_REPORTING_WAITING_SAVED=
case "$PAGE_REPORTING" in hold | keep) ;; *) die "PAGE_REPORTING must be hold or keep" ;; esac

cleanup() {
	if [ -n "$PAGE_REPORTING_SAVED" ]; then
		echo "$PAGE_REPORTING_SAVED" >"$PAGE_REPORTING_DELAY" ||
			log "could not restore $PAGE_REPORTING_DELAY to $PAGE_REPORTING_SAVED"
	fi
	if [ -n "$PAGE_REPORTING_WAITING_SAVED" ]; then
		echo "$PAGE_REPORTING_WAITING_SAVED" >"$PAGE_REPORTING_WAITING" ||
			log "could not restore $PAGE_REPORTING_WAITING to $PAGE_REPORTING_WAITING_SAVED"
	fi
	if [ -f "$DATA/postmaster.pid" ]; then
		pg_ctl_bench stop -m fast || true
	fi
	if [ "${KEEP_CLUSTER:-0}" != 1 ]; then
		rm -rf "$BENCH_DIR"
	fi
}
trap cleanup EXIT

# Delay the report of freed pages (see the header), if the kernel has the
# settings and we may change them.
if [ ! -e "$PAGE_REPORTING_DELAY" ]; then
	page_reporting="no delay setting in this kernel (no $PAGE_REPORTING_DELAY), left alone"
elif [ "$PAGE_REPORTING" = keep ]; then
	page_reporting="left as it was (min_free_ms $(cat "$PAGE_REPORTING_DELAY"), PAGE_REPORTING=keep)"
elif [ -w "$PAGE_REPORTING_DELAY" ]; then
	was=$(cat "$PAGE_REPORTING_DELAY")
	if (echo 300000 >"$PAGE_REPORTING_DELAY") 2>/dev/null; then
		PAGE_REPORTING_SAVED=$was
		if [ -w "$PAGE_REPORTING_WAITING" ]; then
			was=$(cat "$PAGE_REPORTING_WAITING")
			if (echo 65536 >"$PAGE_REPORTING_WAITING") 2>/dev/null; then
				PAGE_REPORTING_WAITING_SAVED=$was
			fi
		fi
		page_reporting="held off during the run: a freed page is reported after 5 minutes (min_free_ms 300000, was $PAGE_REPORTING_SAVED${PAGE_REPORTING_WAITING_SAVED:+; max_waiting_mib 65536, was $PAGE_REPORTING_WAITING_SAVED}; restored at exit)"
		log "free page reporting held off during the run (min_free_ms was $PAGE_REPORTING_SAVED)"
	else
		page_reporting="left as it was: the kernel refused min_free_ms 300000 (min_free_ms $was)"
		log "could not hold off free page reporting: cold calls may wait on the host"
	fi
else
	page_reporting="left as it was, not writable (min_free_ms $(cat "$PAGE_REPORTING_DELAY"))"
fi

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
		io_uring) io=io_uring ;;
		worker-tuned) workers=8 eic=64 ;;
	esac
	# PostgreSQL 19 sizes its worker pool between io_min_workers and
	# io_max_workers; 18 has io_workers
	local workers_setting=io_workers
	[ "$(psql_bench -At -c "SELECT count(*) FROM pg_settings WHERE name = 'io_min_workers'")" = 1 ] &&
		workers_setting=io_min_workers
	psql_bench -c "ALTER SYSTEM SET io_method = '$io'" \
		-c "ALTER SYSTEM SET $workers_setting = $workers" \
		-c "ALTER SYSTEM SET effective_io_concurrency = $eic"
	pg_ctl_bench restart -m fast
	[ "$(psql_bench -At -c "SHOW io_method")" = "$io" ] || die "io_method is not $io after the restart"
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

# The device: the first segment file of the largest index built in key
# order, read sequentially with direct I/O.
DEVICE_FILE="$DATA/$(psql_bench -At -c "SELECT pg_relation_filepath('seq_${max_size}_k')")"
DEVICE_BYTES=$(stat -c %s "$DEVICE_FILE")

# One fio read of the device file, appended to DEVICE_SAMPLES as phase $1,
# repeat $2 (nothing without fio).
device_fio() {
	local kib ms
	command -v fio >/dev/null || return 0
	# terse format 3: field 6 = KiB read, field 9 = runtime in ms
	read -r kib ms < <(fio --name=seqread --readonly --filename="$DEVICE_FILE" --direct=1 \
		--rw=read --bs=1M --iodepth="$DEVICE_IODEPTH" --ioengine=libaio \
		--size="$DEVICE_BYTES" --output-format=terse --terse-version=3 |
		awk -F';' '{ print $6, $9 }')
	echo "$1,fio,$2,$(( kib * 1024 )),$ms,$(load1)" >>"$DEVICE_SAMPLES"
	log "device $1 fio #$2: $(awk -v k="$kib" -v m="$ms" 'BEGIN { printf "%.0f", k / 1024 / (m / 1000) }') MiB/s"
}

# Read the device file DEVICE_REPEATS times with each tool; $1 names the
# moment (before which configuration, or "end").  Appends to DEVICE_SAMPLES.
measure_device() {
	local phase=$1 r secs
	for r in $(seq 1 "$DEVICE_REPEATS"); do
		device_fio "$phase" "$r"
		secs=$(LC_ALL=C dd if="$DEVICE_FILE" of=/dev/null bs=1M iflag=direct 2>&1 |
			awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s," || $i == "s") { print $(i - 1); exit } }')
		echo "$phase,dd,$r,$DEVICE_BYTES,$(awk -v s="$secs" 'BEGIN { printf "%.3f", s * 1000 }'),$(load1)" >>"$DEVICE_SAMPLES"
		log "device $phase dd #$r: $(awk -v b="$DEVICE_BYTES" -v s="$secs" 'BEGIN { printf "%.0f", b / 1048576 / s }') MiB/s"
	done
}

echo "config,cache,size_mb,layout,index_mb,index_bytes,function,repeat,ms,load1" >"$SAMPLES"
echo "phase,tool,repeat,bytes,ms,load1" >"$DEVICE_SAMPLES"
FUNCS="pgstatindex pg_index_stats"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

for cfg in $CONFIGS; do
	log "configuration $cfg"
	drop_caches
	measure_device "before-$cfg"
	apply_config "$cfg"
	for s in $SIZES; do
		for layout in seq frag; do
			index="${layout}_${s}_k"
			index_bytes=$(psql_bench -At -c "SELECT pg_relation_size('$index')")
			index_mb=$(awk -v b="$index_bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
			p="$cfg,cold,$s,$layout,$index_mb,$index_bytes"
			# cold: ABBA order over the repeats
			for r in $(seq 1 "$REPEATS"); do
				# the device, read again next to every round of calls: the
				# disk's speed drifts over minutes
				device_fio "cold-$cfg-$s-$layout" "$r"
				if [ $(( r % 2 )) -eq 1 ]; then order=$FUNCS; else order="pg_index_stats pgstatindex"; fi
				for f in $order; do
					pg_ctl_bench restart -m fast
					drop_caches
					ms=$(cold_call "$f" "$index")
					echo "$p,$f,$r,$ms,$(load1)" >>"$SAMPLES"
					log "$cfg cold $index $f #$r: $ms ms"
				done
			done
			# warm: one session, prewarm, untimed warm-up calls, then
			# WARM_CALLS alternating timed calls per function
			l=$(load1)
			psql_bench -At -F, <<EOF | awk -F, -v p="$cfg,warm,$s,$layout,$index_mb,$index_bytes" -v l="$l" '{ print p "," $2 "," $1 "," $3 "," l }' >>"$SAMPLES"
SELECT pg_prewarm('$index') \g /dev/null
SELECT count(*) FROM time_calls(ARRAY['pgstatindex', 'pg_index_stats'], '$index', $WARM_WARMUP) \g /dev/null
SELECT round, func, round(ms::numeric, 3) FROM time_calls(ARRAY['pgstatindex', 'pg_index_stats'], '$index', $WARM_CALLS);
EOF
			log "$cfg warm $index: $WARM_CALLS calls each"
		done
	done
done
drop_caches
measure_device end
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# The machine and the settings, for the report.
disk=$(basename "$(df --output=source "$BENCH_DIR" | tail -n 1)")
[ -e "/sys/block/$disk" ] || disk=$(lsblk -no pkname "/dev/$disk" 2>/dev/null | head -n 1)
# (no grep -q in a pipeline: under pipefail its early exit can fail pg_config)
configured=$("$PGBIN/pg_config" --configure)
case "$configured" in
	*--enable-cassert*) build_kind="assert-enabled build" ;;
	*) build_kind="release build, CFLAGS $("$PGBIN/pg_config" --cflags | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^-O/) o = $i } END { print o }')" ;;
esac
case "$configured" in *--with-liburing*) uring=yes ;; *) uring=no ;; esac
dirty=$(git -C "$ROOT" status --porcelain -- pg_index_stats bench/index_stats.sh bench/index_stats_report.py 2>/dev/null |
	awk '$1 != "??" { printf "%s ", $2 }' || true)
{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)${dirty:+ plus uncommitted changes to ${dirty% }}"
	echo "postgres=$("$PGBIN/postgres" --version)"
	echo "build=$build_kind"
	echo "liburing=$uring"
	echo "cpus=$(nproc)"
	echo "cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "memory_gb=$(awk '/^MemTotal/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo)"
	echo "kernel=$(uname -r)"
	echo "disk=$disk"
	echo "read_ahead_kb=$(cat "/sys/block/$disk/queue/read_ahead_kb" 2>/dev/null || echo "?")"
	echo "scheduler=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "/sys/block/$disk/queue/scheduler" 2>/dev/null || echo "?")"
	echo "filesystem=$(df --output=fstype "$BENCH_DIR" | tail -n 1)"
	echo "page_reporting=$page_reporting"
	echo "shared_buffers=${sb_mb}MB"
	echo "sizes=$SIZES"
	echo "configs=$CONFIGS"
	echo "repeats=$REPEATS"
	echo "warm_calls=$WARM_CALLS"
	echo "warm_warmup=$WARM_WARMUP"
	echo "device_file=the first segment file of seq_${max_size}_k, $DEVICE_BYTES bytes"
	echo "device_repeats=$DEVICE_REPEATS"
	echo "fio=$(fio --version 2>/dev/null || echo none)"
	echo "fio_iodepth=$DEVICE_IODEPTH"
	echo "load_start=$LOAD_START"
	echo "load_end=$LOAD_END"
} >"$ENV_FILE"

# the chart needs matplotlib: bench/run passes its BENCH_PYTHON, else the
# first of python3 and Debian's that can import it
if [ -z "${BENCH_PYTHON:-}" ]; then
	BENCH_PYTHON=python3
	for py in python3 /usr/bin/python3; do
		if command -v "$py" >/dev/null && "$py" -c "import matplotlib" 2>/dev/null; then
			BENCH_PYTHON=$py
			break
		fi
	done
fi
"$BENCH_PYTHON" "$ROOT/bench/index_stats_report.py" "$RESULTS" || die "the report failed"
log "results in $RESULTS/index_stats.md"
cat "$RESULTS/index_stats.md"
