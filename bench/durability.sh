#!/usr/bin/env bash
# What durability costs on many small files: Haul as it is, Haul with every flush made a no-op (eatmydata), curl,
# and curl followed by one `sync`, alternating, on the first FILES of W2's 10,000 x 4 KiB list (16 at a time).
# Haul makes each file durable before it reports it complete (one syncfs per finishing group); curl flushes nothing.
# Usage: bench/durability.sh          RUNS=3  FILES=3000
# Writes bench/results/durability-<date>-<HHMM>.csv and prints the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

RUNS=${RUNS:-3}
FILES=${FILES:-3000}
command -v eatmydata >/dev/null 2>&1 || { export DEBIAN_FRONTEND=noninteractive; as_root apt-get install -y -qq eatmydata; }
swift build -c release --product haul >/dev/null
HAUL=$(swift build -c release --show-bin-path)/haul
bench_setup
OUT="$BENCH_DIR/durability-out"
CSV=$(bench_csv durability)

# The small files: the first FILES of W2's 10,000 x 4 KiB.
bench_random_files w2-4k 10000 4
expected=$(bench_file_list w2-4k "$FILES" "$BENCH_DIR/durability.list")

haul_plain()    { "$HAUL" get --quiet -j 16 -x 1 --state-dir "$1/state" -d "$1/files" -i "$BENCH_DIR/durability.list"; }
haul_nosync()   { eatmydata "$HAUL" get --quiet -j 16 -x 1 --state-dir "$1/state" -d "$1/files" -i "$BENCH_DIR/durability.list"; }
curl_plain()    { awk -v d="$1/files" '{ n = split($0, p, "/"); print "url = \"" $0 "\"\noutput = \"" d "/" p[n] "\"" }' \
                      "$BENCH_DIR/durability.list" > "$1/curl.cfg"
                  curl -sS --fail --parallel --parallel-max 16 -K "$1/curl.cfg"; }
curl_thensync() { curl_plain "$1" && sync -f "$1/files"; }

# A fresh journaled ext4 (bench_scratch), a fresh directory each time, none deleted during the runs.
SCRATCH=$(bench_scratch "$OUT/w2")
for run in $(seq "$RUNS"); do
    for tool in haul_plain haul_nosync curl_plain curl_thensync; do
        target="$SCRATCH/$tool-$run-$RANDOM"
        mkdir -p "$target/files"
        read -r rss wall cpu < <(bench_measure bash -c "$(declare -f "$tool" curl_plain); HAUL=$HAUL BENCH_DIR=$BENCH_DIR $tool $target")
        ok=yes
        [ "$(cd "$target/files" && cat $(ls | sort) | sha256sum)" = "$expected" ] || ok=NO
        rate=$(awk -v n="$FILES" -v w="$wall" 'BEGIN { printf "%.0f", n / w }')
        echo "$(date -u +%FT%TZ),W2,${FILES}x4KiB,$tool,$run,$wall,$cpu,$rss,$rate,files/s,$ok" >> "$CSV"
        printf '  %-14s run %d: %6.2f s  %6s files/s  cpu %5.2f s  %s\n' "$tool" "$run" "$wall" "$rate" "$cpu" "$ok"
    done
done
bench_scratch_release
rm -rf "$OUT"
python3 bench/summarize.py "$CSV"
