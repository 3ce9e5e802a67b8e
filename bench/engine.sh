#!/usr/bin/env bash
# The engine's own numbers (issue 2's closing note), against a private nginx on 127.0.0.1:
#   - peak RSS and throughput of one download of 100 MiB and 1 GiB (release build, data synced before rename);
#   - bytes fetched twice after SIGKILL at ~50% of a 1 GiB file at full loopback speed (from nginx's $bytes_sent),
#     with 1 and 8 connections;
#   - the speed-up of 4 and 8 connections over 1 against nginx's `limit_rate 10m` (per connection).
# Usage: bench/engine.sh   (writes bench/results/engine-<date>.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

swift build -c release --product haul >/dev/null
HAUL=$(swift build -c release --show-bin-path)/haul
bench_setup
bench_file 100m.bin 100
bench_file 1g.bin 1024
OUT="$BENCH_DIR/out"
mkdir -p bench/results
RESULTS="bench/results/engine-$(date +%Y-%m-%d).txt"
{
    echo "# Haul engine, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r), Swift $(swift --version 2>&1 | head -1 | sed 's/.*version \([0-9.]*\).*/\1/')"
    echo "# file size_MiB peak_rss_KiB wall_s cpu_s MB_per_s"
    for file in 100m.bin 1g.bin; do
        for run in 1 2 3; do
            rm -rf "$OUT" && mkdir -p "$OUT"
            read -r rss wall cpu < <(bench_measure "$HAUL" get --quiet -x 1 --state-dir "$OUT/state" -o "$OUT/$file" \
                "http://127.0.0.1:$BENCH_PORT/$file")
            cmp -s "$OUT/$file" "$WWW/$file" || { echo "MISMATCH $file" >&2; exit 1; }
            size=$(stat -c %s "$WWW/$file")
            echo "$file $((size / 1048576)) $rss $wall $cpu $(awk -v s="$size" -v w="$wall" 'BEGIN { printf "%.0f", s / w / 1e6 }')"
        done
    done

    echo "# SIGKILL at ~50% of 1g.bin at full speed, then the same command again (\$bytes_sent includes headers)"
    echo "# connections run part_or_journal_at_kill sent_total_B wasted_B"
    size=$(stat -c %s "$WWW/1g.bin")
    for connections in 1 8; do
        for run in 1 2 3; do
            rm -rf "$OUT" && mkdir -p "$OUT"
            bench_clear_log
            args=(get --quiet -x "$connections" --state-dir "$OUT/state" -o "$OUT/1g.bin" "http://127.0.0.1:$BENCH_PORT/1g.bin")
            "$HAUL" "${args[@]}" &
            pid=$!
            while [ "$(bench_bytes_on_disk "$OUT/1g.bin")" -lt $((size / 2)) ]; do sleep 0.005; done
            kill -9 "$pid"
            wait "$pid" 2>/dev/null || true
            "$HAUL" "${args[@]}"
            cmp -s "$OUT/1g.bin" "$WWW/1g.bin" || { echo "MISMATCH after SIGKILL" >&2; exit 1; }
            sleep 0.2
            sent=$(bench_bytes_sent /1g.bin)
            echo "$connections $run - $sent $((sent - size))"
        done
    done

    echo "# 100 MiB through limit_rate 10m per connection"
    echo "# connections wall_s MB_per_s speedup_over_1"
    base=""
    for connections in 1 4 8; do
        rm -rf "$OUT" && mkdir -p "$OUT"
        read -r rss wall cpu < <(bench_measure "$HAUL" get --quiet -x "$connections" --state-dir "$OUT/state" \
            -o "$OUT/100m.bin" "http://127.0.0.1:$BENCH_PORT/slow/100m.bin")
        cmp -s "$OUT/100m.bin" "$WWW/100m.bin" || { echo "MISMATCH slow" >&2; exit 1; }
        base=${base:-$wall}
        echo "$connections $wall $(awk -v w="$wall" 'BEGIN { printf "%.1f", 104857600 / w / 1e6 }') $(awk -v b="$base" -v w="$wall" 'BEGIN { printf "%.2f", b / w }')"
    done
} | tee "$RESULTS"
