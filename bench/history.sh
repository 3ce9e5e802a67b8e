#!/usr/bin/env bash
# Does the history of finished downloads make every command heavier? Each binary gets two state directories: one
# empty, one with COUNT completed downloads (added with `haul add -i`, then marked completed in SQL, as weeks of use
# would leave them), each with one queued download besides. In each run, alternating binaries and states, it measures
# peak RSS, wall and CPU seconds of `haul info ID`, `haul pause ID` and `haul get` of one GET_MIB file from the
# private nginx (verified byte-exact).
#
# Usage: bench/history.sh HAUL...        (release builds; each binary's states are made by itself)
#   RUNS=3  COUNT=100000  GET_MIB=2048
# One row per measurement in results/history-<date>-<HHMM>.csv; a summary (median, min-max) at the end.
set -euo pipefail
cd "$(dirname "$0")"
source ./lib.sh

RUNS=${RUNS:-3}
COUNT=${COUNT:-100000}
GET_MIB=${GET_MIB:-2048}
[ $# -ge 1 ] || { echo "usage: $0 HAUL..." >&2; exit 64; }
command -v sqlite3 >/dev/null || { as_root apt-get install -y -qq sqlite3 >/dev/null; }

bench_install
bench_setup
bench_file history.bin "$GET_MIB"
OUT="$BENCH_DIR/history"
rm -rf "$OUT" && mkdir -p "$OUT"
CSV="results/history-$(date +%Y-%m-%d-%H%M).csv"
mkdir -p results
echo "binary,state,command,run,rss_kib,wall_s,cpu_s" > "$CSV"
BASE="http://127.0.0.1:$BENCH_PORT"
seq -f "$BASE/none/%06g.bin" "$COUNT" > "$OUT/history.list"

# make_state BINARY DIR COUNT: COUNT completed downloads (none when 0), then one queued download; prints its id.
make_state() {
    local haul=$1 dir=$2 count=$3
    mkdir -p "$dir"
    if [ "$count" -gt 0 ]; then
        "$haul" add --state-dir "$dir/state" -d "$dir/files" -i "$OUT/history.list" >/dev/null
        sqlite3 "$dir/state/haul.sqlite" "UPDATE download SET state = 'completed', completedAt = createdAt,
            startedAt = createdAt, totalBytes = 4096, durableBytes = 4096, hasPartData = 1,
            destinationPath = '$dir/files/' || id || '.bin'"
    fi
    "$haul" add --state-dir "$dir/state" -d "$dir/files" "$BASE/history.bin" >/dev/null
    sqlite3 "$dir/state/haul.sqlite" "SELECT max(id) FROM download"
}

index=0
declare -A QUEUED
for haul in "$@"; do
    for count in 0 "$COUNT"; do
        QUEUED[$index-$count]=$(make_state "$haul" "$OUT/$index-$count" "$count")
    done
    index=$((index + 1))
done

expected=$(sha256sum "$WWW/history.bin" | cut -d' ' -f1)
for run in $(seq 1 "$RUNS"); do
    index=0
    for haul in "$@"; do
        for count in 0 "$COUNT"; do
            dir="$OUT/$index-$count"
            id=${QUEUED[$index-$count]}
            row() { echo "$haul,$count,$1,$run,$(bench_measure "${@:2}" | tr ' ' ',')" >> "$CSV"; }
            row info "$haul" info "$id" --state-dir "$dir/state"
            row pause "$haul" pause "$id" --state-dir "$dir/state"
            sync
            rm -f "$dir/get/history.bin"
            # A URL of its own each run (nginx ignores the query): a new download in the state with the history.
            row get "$haul" get -q --state-dir "$dir/state" -d "$dir/get" "$BASE/history.bin?run=$run"
            [ "$(sha256sum "$dir/get/history.bin" | cut -d' ' -f1)" = "$expected" ] || echo "CORRUPT: $dir" >&2
        done
        index=$((index + 1))
    done
done

python3 - "$CSV" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
groups = {}
for r in rows:
    groups.setdefault((r["binary"], r["command"], r["state"]), []).append(r)
print("| binary | command | finished downloads | peak RSS MiB | wall s | CPU s |")
print("| --- | --- | --- | --- | --- | --- |")
for (binary, command, state), rs in sorted(groups.items()):
    def fmt(key, scale=1.0):
        values = [float(r[key]) / scale for r in rs]
        return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"
    print(f"| {binary} | {command} | {state} | {fmt('rss_kib', 1024)} | {fmt('wall_s')} | {fmt('cpu_s')} |")
PY
echo "rows: $CSV"
