#!/usr/bin/env bash
# `-x auto` against fixed connection counts (issue 50), from a private nginx, every output verified:
# - uncapped: one file at full loopback speed, `-x 1` and `-x auto` alternating: auto should keep at most two
#   connections and at least 95% of `-x 1`'s speed (wall time, run by run);
# - capped: the same server capping each connection at 1 MiB/s (`limit_rate 1m`), `-x 4`, `-x 8`, `-x 16` and
#   `-x auto` alternating: auto should reach 90% of the best fixed count's speed within 10 s (the first one-second
#   window at that speed, timed from the `--json` stream by bench/auto_run.py).
# Settings (environment): HAUL (.build-release/release/haul), RUNS (3), UNCAPPED_MIB (1024), CAPPED_MIB (192).
# Writes bench/results/auto-<date>-<HHMM>.csv and bench/results/auto-<date>-<HHMM>.jsonl (each run's samples).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
HAUL=$(realpath "${HAUL:-.build-release/release/haul}")
RUNS=${RUNS:-3}
UNCAPPED_MIB=${UNCAPPED_MIB:-1024}
CAPPED_MIB=${CAPPED_MIB:-192}

bench_setup
bench_file auto-uncapped.bin "$UNCAPPED_MIB"
bench_file auto-capped.bin "$CAPPED_MIB"
CSV=$(bench_csv auto)
RUNS_JSON="${CSV%.csv}.jsonl"
OUT="$BENCH_DIR/auto"
BASE="http://127.0.0.1:$BENCH_PORT"

# one WORKLOAD URL CONNECTIONS RUN: a download into a fresh directory, verified; a CSV row and a JSON line.
one() {
    local workload=$1 url=$2 connections=$3 run=$4 name result verified=yes
    name=$(basename "$url")
    rm -rf "$OUT" && mkdir -p "$OUT"
    result=$(python3 bench/auto_run.py "$HAUL" get --json -x "$connections" --state-dir "$OUT/state" \
        -o "$OUT/$name" "$url")
    cmp -s "$OUT/$name" "$WWW/$name" || verified=NO
    local size wall
    size=$(stat -c %s "$WWW/$name")
    wall=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["wall"])' "$result")
    echo "$(date -u +%FT%TZ),$workload,x$connections,haul,$run,$wall,,,$(awk -v s="$size" -v w="$wall" 'BEGIN { printf "%.2f", s / w / 1048576 }'),MiB/s,$verified" >> "$CSV"
    python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(workload=sys.argv[2], case=sys.argv[3], run=int(sys.argv[4]), size=int(sys.argv[5]), verified=sys.argv[6]); print(json.dumps(r))' \
        "$result" "$workload" "x$connections" "$run" "$size" "$verified" >> "$RUNS_JSON"
}

for run in $(seq 1 "$RUNS"); do
    one uncapped "$BASE/auto-uncapped.bin" 1 "$run"
    one uncapped "$BASE/auto-uncapped.bin" auto "$run"
    for connections in 4 8 16 auto; do
        one capped "$BASE/capped/auto-capped.bin" "$connections" "$run"
    done
done
rm -rf "$OUT"

python3 - "$RUNS_JSON" <<'PY'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
def of(workload, case): return [r for r in runs if r["workload"] == workload and r["case"] == case]
print("## uncapped loopback: -x auto against -x 1 (wall time, run by run)")
for one, auto in zip(of("uncapped", "x1"), of("uncapped", "xauto")):
    print(f"run {one['run']}: -x 1 {one['wall']:.2f} s, auto {auto['wall']:.2f} s, speed ratio {one['wall'] / auto['wall']:.3f}, "
          f"auto's most connections {auto['most_connections']} (chose {auto['choices']})")
ratios = [o["wall"] / a["wall"] for o, a in zip(of("uncapped", "x1"), of("uncapped", "xauto"))]
print(f"median ratio {statistics.median(ratios):.3f} (min {min(ratios):.3f})")
print("## capped at 1 MiB/s per connection")
# A fixed count's speed is its median one-second window: nginx's limit_rate lets each new request burst (one second's
# worth at once), so an average over a run full of split segments overstates what the connections sustain.
for run in sorted({r["run"] for r in runs}):
    fixed = {r["case"]: r for r in runs if r["workload"] == "capped" and r["run"] == run and r["case"] != "xauto"}
    steady = {case: statistics.median(s for _, s in r["windows"]) / 1048576 for case, r in fixed.items()}
    average = {case: r["size"] / r["wall"] / 1048576 for case, r in fixed.items()}
    best_case = max(steady, key=steady.get)
    auto = [r for r in of("capped", "xauto") if r["run"] == run][0]
    target = 0.9 * steady[best_case] * 1048576
    reached = next((t for t, speed in auto["windows"] if speed >= target), None)
    order = sorted(fixed, key=lambda case: int(case[1:]))
    print(f"run {run}: fixed " + ", ".join(f"{c} {steady[c]:.1f} ({average[c]:.1f} average, {fixed[c]['wall']:.1f} s)" for c in order) +
          f" MiB/s; auto: 90% of {best_case}'s {steady[best_case]:.1f} MiB/s reached at "
          f"{'never' if reached is None else f'{reached:.1f} s'}, connections {auto['choices']}, done in {auto['wall']:.1f} s")
PY
grep -q ',NO$' "$CSV" && { echo "corrupt outputs: see $CSV" >&2; exit 1; }
echo "$CSV"
