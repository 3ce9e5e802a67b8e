#!/usr/bin/env bash
# A list for a host that refuses every connection: how long `haul get -j 16 -i` takes to fail it, and how many
# connections it tries, for each `haul` binary given (alternating). Nothing listens on the port, so no server is set up.
# Usage: bench/deadhost.sh HAUL...      RUNS=1 COUNT=400 (URLs) LIMIT=5 (--retry-max-time, seconds) PORT=1
# Writes bench/results/deadhost-<date>-<HHMM>.csv (wall s, connect calls, failures by kind) and prints it.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-1}
COUNT=${COUNT:-400}
LIMIT=${LIMIT:-5}
PORT=${PORT:-1}
[ $# -gt 0 ] || { echo "usage: bench/deadhost.sh HAUL..." >&2; exit 64; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq 1 "$COUNT"); do echo "http://127.0.0.1:$PORT/f$i.bin"; done > "$work/list"
# connect(2) calls counted by perf when the tracepoint is there (root, tracefs), else not at all.
count_connects=0
perf stat -e syscalls:sys_enter_connect -x, -o /dev/null true 2>/dev/null && count_connects=1
mkdir -p bench/results
csv=bench/results/deadhost-$(date -u +%Y-%m-%d-%H%M).csv
echo "binary,run,urls,limit_s,wall_s,connects,host_down,gave_up,exit" > "$csv"
for run in $(seq 1 "$RUNS"); do
    for haul in "$@"; do
        d="$work/run"; rm -rf "$d"; mkdir -p "$d"
        start=$(date +%s.%N)
        if [ $count_connects = 1 ]; then
            set +e
            perf stat -e syscalls:sys_enter_connect -x, -o "$d/perf" "$haul" get --quiet -j 16 --retry-max-time "$LIMIT" \
                --state-dir "$d/state" -d "$d/files" -i "$work/list" 2> "$d/err"
            status=$?
            set -e
            connects=$(grep sys_enter_connect "$d/perf" | cut -d, -f1)
        else
            set +e
            "$haul" get --quiet -j 16 --retry-max-time "$LIMIT" --state-dir "$d/state" -d "$d/files" -i "$work/list" \
                2> "$d/err"
            status=$?
            set -e
            connects=-
        fi
        wall=$(echo "$(date +%s.%N) - $start" | bc)
        down=$(grep -cE "every request to .* failed for [0-9]+ s \(" "$d/err" || true)
        gaveup=$(grep -c "gave up" "$d/err" || true)
        printf '%s,%s,%s,%s,%.1f,%s,%s,%s,%s\n' "$(basename "$haul")" "$run" "$COUNT" "$LIMIT" "$wall" "$connects" \
            "$down" "$gaveup" "$status" | tee -a "$csv"
    done
done
echo "wrote $csv"
