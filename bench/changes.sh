#!/usr/bin/env bash
# What each change gained: builds `haul` (release) at several commits and runs the same small-file and large-queue
# workloads with each, alternating binaries within every run, against the private nginx of lib.sh.
# Usage: bench/changes.sh COMMIT...          (needs a clean work tree; returns to the current branch)
#   RUNS=3  FILES=3000 (first N lines of the 10,000 x 4 KiB list)  QUEUE=100000
# Writes bench/results/changes-<date>-<HHMM>.csv and prints the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

RUNS=${RUNS:-3}
FILES=${FILES:-3000}
QUEUE=${QUEUE:-100000}
[ $# -gt 0 ] || { echo "usage: bench/changes.sh COMMIT..." >&2; exit 64; }
[ -z "$(git status --porcelain)" ] || { echo "the work tree has changes: commit or stash them first" >&2; exit 1; }

BIN="$BENCH_DIR/changes"
mkdir -p "$BIN"
branch=$(git rev-parse --abbrev-ref HEAD)
trap 'git checkout -q "$branch"' EXIT
labels=()
for commit in "$@"; do
    label=$(git rev-parse --short "$commit")
    if [ ! -x "$BIN/haul-$label" ]; then
        git checkout -q "$commit"
        swift build -c release --product haul >/dev/null
        cp "$(swift build -c release --show-bin-path)/haul" "$BIN/haul-$label"
    fi
    labels+=("$label")
done
git checkout -q "$branch"

bench_setup
BASE="http://127.0.0.1:$BENCH_PORT"
OUT="$BENCH_DIR/changes-out"
CSV=$(bench_csv changes)

# The small files: the first FILES of W2's 10,000 x 4 KiB.
bench_random_files w2-4k 10000 4
expected=$(bench_file_list w2-4k "$FILES" "$BENCH_DIR/changes.list")
seq -f "$BASE/queue/%06g.bin" "$QUEUE" > "$BENCH_DIR/changes-queue.list"

row() {  # WORKLOAD CASE LABEL RUN AMOUNT UNIT OK -- command...
    local workload=$1 case=$2 label=$3 run=$4 amount=$5 unit=$6 ok=$7
    shift 8
    local rss wall cpu
    read -r rss wall cpu < <(bench_measure "$@")
    local rate; rate=$(awk -v n="$amount" -v w="$wall" 'BEGIN { printf "%.0f", n / w }')
    echo "$(date -u +%FT%TZ),$workload,$case,$label,$run,$wall,$cpu,$rss,$rate,$unit,$ok" >> "$CSV"
    printf '  %-4s %-14s %-9s run %d: %7.2f s  %8s %-7s cpu %6.2f s  rss %7d KiB\n' \
        "$workload" "$case" "$label" "$run" "$wall" "$rate" "$unit" "$cpu" "$rss"
}

# W2 on a fresh journaled ext4 (bench_scratch: without a journal, ext4 is slow to create files after a clean-up).
SCRATCH=$(bench_scratch "$OUT/w2")
for run in $(seq "$RUNS"); do
    for label in "${labels[@]}"; do
        haul="$BIN/haul-$label"
        # Fresh directories every time.
        target="$SCRATCH/$label-$run-$RANDOM"
        row W2 "${FILES}x4KiB" "$label" "$run" "$FILES" files/s yes -- \
            "$haul" get --quiet -j 16 -x 1 --state-dir "$target/state" -d "$target/files" -i "$BENCH_DIR/changes.list"
        [ "$(cd "$target/files" && cat $(ls | sort) | sha256sum)" = "$expected" ] || { echo "OUTPUT MISMATCH: $label" >&2; exit 1; }
    done
done
bench_scratch_release
declare -A queue_state
for label in "${labels[@]}"; do
    queue_state[$label]="$OUT/queue-$label-$RANDOM"
    row W5 "add-$QUEUE" "$label" 1 "$QUEUE" files/s yes -- \
        "$BIN/haul-$label" add --state-dir "${queue_state[$label]}" -d "$OUT/queue-files" -i "$BENCH_DIR/changes-queue.list"
done
for run in $(seq "$RUNS"); do
    for label in "${labels[@]}"; do
        haul="$BIN/haul-$label"
        state="${queue_state[$label]}"
        row W5 "list-$QUEUE" "$label" "$run" "$QUEUE" files/s yes -- "$haul" list --state-dir "$state"
        row W5 "startup-$QUEUE" "$label" "$run" 1 files/s yes -- "$haul" info 1 --state-dir "$state"
        row W5 "pause-all-$QUEUE" "$label" "$run" "$QUEUE" files/s yes -- "$haul" pause --all --state-dir "$state"
        row W5 "resume-all-$QUEUE" "$label" "$run" "$QUEUE" files/s yes -- "$haul" resume --all --state-dir "$state"
    done
done
rm -rf "$OUT"
python3 bench/summarize.py "$CSV"
