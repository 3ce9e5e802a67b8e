#!/usr/bin/env bash
# Time to first render of `haul serve`'s dashboard with 10,000 downloads queued (one running), in headless Chromium:
# navigation start to the first page of rows on screen, RUNS fresh loads. Needs Debian's chromium and
# chromium-driver and selenium in .build/python-venv (.ci/run installs them). Writes bench/results/dashboard-*.txt.
# Settings (environment): HAUL (.build/release/haul), QUEUED (10000), RUNS (10).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
HAUL=$(realpath "${HAUL:-.build/release/haul}")
QUEUED=${QUEUED:-10000}
RUNS=${RUNS:-10}
PORT=${RPC_PORT:-16901}
SECRET=bench

bench_setup
bench_daemon dashboard "$QUEUED" 100K 1 "$PORT" "$SECRET"
sleep 2

RESULT="bench/results/dashboard-$(date +%Y-%m-%d-%H%M).txt"
mkdir -p bench/results
{
    echo "# haul serve dashboard, headless Chromium: $QUEUED downloads, $RUNS loads ($(date -u +%FT%TZ))"
    .build/python-venv/bin/python bench/dashboard_render.py "http://127.0.0.1:$PORT/#secret=$SECRET" "$RUNS" "$QUEUED"
} | tee "$RESULT"
