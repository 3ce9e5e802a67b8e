#!/usr/bin/env bash
# Where the small-file gap to curl comes from (issue 17): W2's lists fetched by Haul, by AsyncHTTPClient alone (the
# floor under Haul: bench/floor, the client configured as Haul's transport, bodies streamed into files, nothing
# recorded, nothing synced), the floor with one `syncfs` at the end, curl, and curl with `sync -f` at the end, the
# tools alternating within every run, each measurement on a fresh journaled ext4 (bench_scratch), every output
# verified.
# Usage: bench/floor.sh        RUNS=3  JOBS=16  HAUL= (a haul binary built before; default: a release build of the
#                              work tree)  CASES="w2-64k w2-4k"
# Writes bench/results/floor-<date>-<HHMM>.csv (one row per run; the tool column: haul, floor, floor+sync, curl,
# curl+sync) and prints the summary and each tool's files per second against curl's, run by run.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

RUNS=${RUNS:-3}
JOBS=${JOBS:-16}
CASES=${CASES:-w2-64k w2-4k}
if [ -z "${HAUL:-}" ]; then
    swift build -c release --product haul >/dev/null
    HAUL=$(swift build -c release --show-bin-path)/haul
fi
# The floor is a package of its own (its dependencies build once in bench/floor/.build, about five minutes).
(cd bench/floor && swift build -c release >/dev/null)
FLOOR=$(cd bench/floor && swift build -c release --show-bin-path)/haul-floor

bench_setup
BASE="http://127.0.0.1:$BENCH_PORT"
CSV=$(bench_csv floor)
MISMATCHES=()

# The tools: LIST DIR. Each writes every file of LIST into DIR under its URL's last path component.
fetch_haul()       { "$HAUL" get --quiet -j "$JOBS" -x 1 --state-dir "$2.state" -d "$2" -i "$1"; }
fetch_floor()      { "$FLOOR" "$1" "$2" "$JOBS"; }
fetch_floor_sync() { "$FLOOR" "$1" "$2" "$JOBS" sync; }
fetch_curl()       { awk -v d="$2" '{ n = split($0, p, "/"); print "url = \"" $0 "\"\noutput = \"" d "/" p[n] "\"" }' "$1" \
                         > "$2.cfg"
                     curl -sS --fail --parallel --parallel-max "$JOBS" -K "$2.cfg"; }
fetch_curl_sync()  { fetch_curl "$1" "$2" && sync -f "$2"; }

for dir in $CASES; do
    case $dir in
        w2-64k) count=2000 kib=64 ;;
        w2-4k) count=10000 kib=4 ;;
        *) echo "unknown case $dir (w2-64k, w2-4k)" >&2; exit 64 ;;
    esac
    bench_random_files "$dir" "$count" "$kib"
    expected=$(bench_file_list "$dir" "$count" "$BENCH_DIR/$dir.list")
    for run in $(seq "$RUNS"); do
        for tool in haul floor floor+sync curl curl+sync; do
            # A fresh file system for each measurement: in one kept for a whole run, a tool's time grew with what the
            # tools before it had written and deleted (Haul's 64 KiB lists: 0.62, 0.94, 1.54 s in one; 0.62-0.79 s
            # in fresh ones; bench/RESULTS.md, session 54), so the figures depended on the order of the measurements.
            SCRATCH=$(bench_scratch "$BENCH_DIR/floor-out")
            target="$SCRATCH/$dir-$tool-$run"
            mkdir -p "$target"
            # Nothing left to write back from the tool before (not timed): a flush would write its files too.
            sync
            read -r rss wall cpu < <(bench_measure bash -c \
                "$(declare -f fetch_curl fetch_"${tool//+/_}"); HAUL=$HAUL FLOOR=$FLOOR JOBS=$JOBS fetch_${tool//+/_} $BENCH_DIR/$dir.list $target")
            ok=yes
            [ "$(cd "$target" && cat $(ls | grep -v '\.cfg$' | sort) | sha256sum)" = "$expected" ] || ok=NO
            rate=$(awk -v n="$count" -v w="$wall" 'BEGIN { printf "%.0f", n / w }')
            echo "$(date -u +%FT%TZ),W2,${count}x${kib}KiB,$tool,$run,$wall,$cpu,$rss,$rate,files/s,$ok" >> "$CSV"
            printf '  %-12s %-10s run %d: %6.2f s  %6s files/s  cpu %5.2f s  rss %7d KiB  %s\n' \
                "${count}x${kib}KiB" "$tool" "$run" "$wall" "$rate" "$cpu" "$rss" "$ok"
            [ "$ok" = yes ] || MISMATCHES+=("$dir $tool run $run")
        done
    done
done
bench_scratch_release

echo
python3 bench/summarize.py "$CSV"
echo
echo "Files per second against curl's (and curl+sync's) in the same run:"
python3 - "$CSV" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
rate = {(r["case"], r["run"], r["tool"]): float(r["rate"]) for r in rows}
for case in dict.fromkeys(r["case"] for r in rows):
    for tool in ("haul", "floor", "floor+sync"):
        runs = sorted({r["run"] for r in rows if r["case"] == case and r["tool"] == tool}, key=int)
        plain = " ".join(f"{rate[case, run, tool] / rate[case, run, 'curl']:.2f}x" for run in runs)
        synced = " ".join(f"{rate[case, run, tool] / rate[case, run, 'curl+sync']:.2f}x" for run in runs)
        print(f"  {case:12} {tool:10} ÷ curl: {plain}   ÷ curl+sync: {synced}")
PY
if [ ${#MISMATCHES[@]} -gt 0 ]; then
    printf 'CORRUPT OUTPUT: %s\n' "${MISMATCHES[@]}" >&2
    exit 1
fi
