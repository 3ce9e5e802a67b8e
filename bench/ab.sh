#!/usr/bin/env bash
# Two haul binaries side by side on W1 (one connection, full loopback speed, timed until synced) and W3 (4
# connections behind nginx's limit_rate 10m per connection), alternating run by run so the machine's drift spreads
# over both. For "this change did not slow the engine down": build the old commit in a worktree, e.g.
#   git worktree add /tmp/haul-base BASE && (cd /tmp/haul-base && swift build -c release --product haul)
#   swift build -c release --product haul
#   bench/ab.sh /tmp/haul-base/.build/release/haul .build/release/haul
# With W2=1, also W2's small files (2,000 x 64 KiB and W2_4K_COUNT x 4 KiB, -j 16 -x 1, on a fresh journaled file
# system as compare.sh does), files/s.
# Settings (environment): RUNS (5), W1_MIB (1024), W3_MIB (200), W2 (off), W2_4K_COUNT (10000). Writes
# bench/results/ab-<date>-<HHMM>.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
[ $# -eq 2 ] || { echo "usage: bench/ab.sh OLD_HAUL NEW_HAUL" >&2; exit 64; }
OLD=$(realpath "$1")
NEW=$(realpath "$2")
RUNS=${RUNS:-5}
W1_MIB=${W1_MIB:-1024}
W3_MIB=${W3_MIB:-200}
W2=${W2:-}
W2_4K_COUNT=${W2_4K_COUNT:-10000}

bench_setup
bench_file ab-w1.bin "$W1_MIB"
bench_file ab-w3.bin "$W3_MIB"
CSV=$(bench_csv ab)
OUT="$BENCH_DIR/ab"
BASE="http://127.0.0.1:$BENCH_PORT"

# one LABEL BINARY WORKLOAD URL CONNECTIONS RUN: a download into a fresh directory, verified, one CSV row.
one() {
    local label=$1 binary=$2 workload=$3 url=$4 connections=$5 run=$6 name
    name=$(basename "$url")
    rm -rf "$OUT" && mkdir -p "$OUT"
    read -r rss wall cpu < <(bench_measure "$binary" get --quiet -x "$connections" --state-dir "$OUT/state" \
        -o "$OUT/$name" "$url")
    local verified=yes
    cmp -s "$OUT/$name" "$WWW/$name" || verified=NO
    local size
    size=$(stat -c %s "$WWW/$name")
    echo "$(date -u +%FT%TZ),$workload,x$connections,$label,$run,$wall,$cpu,$rss,$(awk -v s="$size" -v w="$wall" 'BEGIN { printf "%.1f", s / w / 1e6 }'),MB/s,$verified" >> "$CSV"
}

# list LABEL BINARY DIR COUNT KIB RUN: W2's list of DIR into a fresh directory of the scratch file system, verified.
list() {
    local label=$1 binary=$2 dir=$3 count=$4 kib=$5 run=$6
    local target="$SCRATCH/$dir-$label-$run"
    rm -rf "$OUT" && mkdir -p "$OUT" "$target"
    sync
    read -r rss wall cpu < <(bench_measure "$binary" get --quiet -j 16 -x 1 --state-dir "$OUT/state" -d "$target" \
        -i "$BENCH_DIR/$dir.list")
    local verified=yes
    [ "$(cd "$target" && cat $(ls | sort) | sha256sum)" = "$(cat "$BENCH_DIR/$dir.sha256")" ] || verified=NO
    echo "$(date -u +%FT%TZ),W2,${count}x${kib}KiB,$label,$run,$wall,$cpu,$rss,$(awk -v n="$count" -v w="$wall" 'BEGIN { printf "%.0f", n / w }'),files/s,$verified" >> "$CSV"
}

if [ -n "$W2" ]; then
    SCRATCH=$(bench_scratch "$BENCH_DIR/ab-w2")
    for spec in "w2-64k 2000 64" "w2-4k $W2_4K_COUNT 4"; do
        read -r dir count kib <<< "$spec"
        bench_random_files "$dir" "$count" "$kib"
        bench_file_list "$dir" "$count" "$BENCH_DIR/$dir.list" > "$BENCH_DIR/$dir.sha256"
    done
fi

for run in $(seq 1 "$RUNS"); do
    for pair in "old $OLD" "new $NEW"; do
        set -- $pair
        one "$1" "$2" W1 "$BASE/ab-w1.bin" 1 "$run"
        one "$1" "$2" W3 "$BASE/slow/ab-w3.bin" 4 "$run"
        if [ -n "$W2" ]; then
            list "$1" "$2" w2-64k 2000 64 "$run"
            list "$1" "$2" w2-4k "$W2_4K_COUNT" 4 "$run"
        fi
    done
done
[ -n "$W2" ] && bench_scratch_release
rm -rf "$OUT"
python3 bench/summarize.py "$CSV"
grep -q ',NO$' "$CSV" && { echo "corrupt outputs: see $CSV" >&2; exit 1; }
echo "$CSV"
