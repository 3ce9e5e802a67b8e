#!/usr/bin/env bash
# Workers draining one queue (issue 16): 1, 2 and 3 `haul run` processes on a shared PostgreSQL queue, against the
# same workload on the embedded SQLite database (1 and 3 processes on one state directory), in one run.
# Usage: bench/fleet.sh          COUNT=10000 KIB=4 JOBS=16 BUILD=release
#        HAUL=/path/to/haul     a binary built before (another commit), instead of building this checkout
#        FLEET_OUT=/mnt/other   downloads on another file system than PostgreSQL's (as on separate machines: the
#                               workers' syncs then never wait behind the database's, nor the other way round)
# Writes bench/results/fleet-<date>-<HHMM>.csv and prints files/s, database transactions per file and CPU per file.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

COUNT=${COUNT:-10000}
KIB=${KIB:-4}
JOBS=${JOBS:-16}
BUILD=${BUILD:-release}

if [ -z "${HAUL:-}" ]; then
    swift build -c "$BUILD" --product haul >/dev/null
    HAUL=$(swift build -c "$BUILD" --show-bin-path)/haul
fi
bench_setup
bench_random_files small "$COUNT" "$KIB"
LIST="$BENCH_DIR/fleet-list.txt"
bench_file_list small "$COUNT" "$LIST" >/dev/null
# On a fresh journaled file system (bench_scratch): each case deletes the last one's thousands of files, and this
# machine's journal-less root file system then slows every file created for a while (see bench_scratch).
OUT=${FLEET_OUT:-$(bench_scratch "$BENCH_DIR/fleet")/fleet}
CSV=$(bench_csv fleet)

bench_postgres "$BENCH_DIR/postgres" $((BENCH_PORT + 7)) max_connections=200
commits() { psql_q "SELECT xact_commit FROM pg_stat_database WHERE datname = 'queue'"; }

# verify WORKERS: every file of the list exactly once across the workers' directories, byte for byte.
verify() {
    python3 - "$WWW/small" "$OUT" "$1" "$COUNT" <<'PY'
import hashlib, os, sys
source, out, workers, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
names = sorted(os.listdir(source))[:count]
seen = {}
for w in range(1, workers + 1):
    d = os.path.join(out, f"w{w}")
    for name in os.listdir(d) if os.path.isdir(d) else []:
        seen.setdefault(name, []).append(os.path.join(d, name))
ok = all(len(seen.get(n, [])) == 1 and open(seen[n][0], "rb").read() == open(os.path.join(source, n), "rb").read()
         for n in names) and len(seen) == count
sys.exit(0 if ok else 1)
PY
}

# run_case NAME WORKERS STORE: adds the list, starts WORKERS `haul run`s at once, waits for all; one CSV row.
run_case() {
    local name=$1 workers=$2 store=$3
    rm -rf "$OUT" && mkdir -p "$OUT"
    local db=()
    if [ "$store" = postgres ]; then
        psql_q "DROP DATABASE IF EXISTS queue" && psql_q "CREATE DATABASE queue"
        db=(--database "postgres://haul@127.0.0.1:$PGPORT/queue")
    else
        db=(--state-dir "$OUT/state")
    fi
    # SQLite records a destination when a download is added: the first worker's directory, shared by all.
    local into=()
    [ "$store" = sqlite ] && into=(-d "$OUT/w1")
    local t0 t1 t2 before after
    t0=$(date +%s.%N)
    "$HAUL" add "${db[@]}" "${into[@]}" -x 1 -i "$LIST" >/dev/null
    t1=$(date +%s.%N)
    [ "$store" = postgres ] && before=$(commits) || before=0
    local pids=() times=()
    for w in $(seq 1 "$workers"); do
        mkdir -p "$OUT/w$w"
        /usr/bin/time -f "%e %U %S %M" -o "$OUT/time$w" \
            "$HAUL" run -q -j "$JOBS" -d "$OUT/w$w" --worker-name "w$w" "${db[@]}" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
    t2=$(date +%s.%N)
    [ "$store" = postgres ] && after=$(commits) || after=0
    local ok=yes
    verify "$workers" || ok=NO
    # How the files were shared out (SQLite records every destination in w1 when they are added).
    local split=-
    if [ "$store" = postgres ]; then
        split=$(for w in $(seq 1 "$workers"); do find "$OUT/w$w" -maxdepth 1 -type f | wc -l; done | paste -sd/)
    fi
    local cpu rss
    cpu=$(cat "$OUT"/time* | awk '{ s += $2 + $3 } END { printf "%.2f", s }')
    rss=$(cat "$OUT"/time* | awk '{ if ($4 > m) m = $4 } END { print m }')
    local add_s run_s rate tx_per_file cpu_ms
    add_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    run_s=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }')
    rate=$(awk -v n="$COUNT" -v w="$run_s" 'BEGIN { printf "%.0f", n / w }')
    tx_per_file=$(awk -v a="$before" -v b="$after" -v n="$COUNT" 'BEGIN { printf "%.1f", (b - a) / n }')
    cpu_ms=$(awk -v c="$cpu" -v n="$COUNT" 'BEGIN { printf "%.2f", c * 1000 / n }')
    echo "$(date -u +%FT%TZ),fleet,$name,$(basename "$HAUL"),1,$run_s,$cpu,$rss,$rate,files/s,$ok" >> "$CSV"
    printf '  %-22s add %6.2f s  run %7.2f s  %6s files/s  %5s db tx/file  cpu %5s ms/file  rss %7s KiB  %s  %s\n' \
        "$name" "$add_s" "$run_s" "$rate" "$tx_per_file" "$cpu_ms" "$rss" "$ok" "$split"
}

echo "fleet: $COUNT files of $KIB KiB, -j $JOBS per worker, $(nproc) cores, $HAUL, downloads in $OUT"
run_case "sqlite 1 process" 1 sqlite
run_case "sqlite 3 processes" 3 sqlite
run_case "postgres 1 worker" 1 postgres
run_case "postgres 2 workers" 2 postgres
run_case "postgres 3 workers" 3 postgres
echo "wrote $CSV"
