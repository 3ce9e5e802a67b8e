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
BASE="http://127.0.0.1:$BENCH_PORT"
OUT="$BENCH_DIR/durability-out"
mkdir -p bench/results
CSV="bench/results/durability-$(date +%Y-%m-%d-%H%M).csv"
echo "date,workload,case,tool,run,wall_s,cpu_s,peak_rss_kib,rate,rate_unit,verified" > "$CSV"

dir=w2-4k
[ -d "$WWW/$dir" ] || { echo "run bench/compare.sh W2 once first: it generates $WWW/$dir" >&2; exit 1; }
ls "$WWW/$dir" | sort | sed -n "1,${FILES}p" | sed "s|^|$BASE/$dir/|" > "$BENCH_DIR/durability.list"
expected=$(cd "$WWW/$dir" && cat $(ls | sort | sed -n "1,${FILES}p") | sha256sum)

haul_plain()    { "$HAUL" get --quiet -j 16 -x 1 --state-dir "$1/state" -d "$1/files" -i "$BENCH_DIR/durability.list"; }
haul_nosync()   { eatmydata "$HAUL" get --quiet -j 16 -x 1 --state-dir "$1/state" -d "$1/files" -i "$BENCH_DIR/durability.list"; }
curl_plain()    { awk -v d="$1/files" '{ n = split($0, p, "/"); print "url = \"" $0 "\"\noutput = \"" d "/" p[n] "\"" }' \
                      "$BENCH_DIR/durability.list" > "$1/curl.cfg"
                  curl -sS --fail --parallel --parallel-max 16 -K "$1/curl.cfg"; }
curl_thensync() { curl_plain "$1" && sync -f "$1/files"; }

for run in $(seq "$RUNS"); do
    for tool in haul_plain haul_nosync curl_plain curl_thensync; do
        # A fresh directory each time, none deleted during the runs: ext4 is slow to create files just after
        # deleting many.
        target="$OUT/$tool-$run-$RANDOM"
        mkdir -p "$target/files"
        read -r rss wall cpu < <(bench_measure bash -c "$(declare -f "$tool" curl_plain); HAUL=$HAUL BENCH_DIR=$BENCH_DIR $tool $target")
        ok=yes
        [ "$(cd "$target/files" && cat $(ls | sort) | sha256sum)" = "$expected" ] || ok=NO
        rate=$(awk -v n="$FILES" -v w="$wall" 'BEGIN { printf "%.0f", n / w }')
        echo "$(date -u +%FT%TZ),W2,${FILES}x4KiB,$tool,$run,$wall,$cpu,$rss,$rate,files/s,$ok" >> "$CSV"
        printf '  %-14s run %d: %6.2f s  %6s files/s  cpu %5.2f s  %s\n' "$tool" "$run" "$wall" "$rate" "$cpu" "$ok"
    done
done
rm -rf "$OUT"
python3 bench/summarize.py "$CSV"
