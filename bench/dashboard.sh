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
bench_file rpc-big.bin 64
WORK="$BENCH_DIR/dashboard"
rm -rf "$WORK" && mkdir -p "$WORK/out"
for i in $(seq 1 "$QUEUED"); do echo "http://127.0.0.1:$BENCH_PORT/rpc-big.bin out=f$i.bin"; done > "$WORK/urls.txt"
"$HAUL" add -x 1 --limit-rate 100K -d "$WORK/out" -i "$WORK/urls.txt" --state-dir "$WORK/state" > /dev/null
"$HAUL" serve -j 1 --port "$PORT" --secret "$SECRET" -d "$WORK/out" --state-dir "$WORK/state" > "$WORK/serve.log" 2>&1 &
DAEMON=$!
trap 'kill $DAEMON 2>/dev/null || true; wait $DAEMON 2>/dev/null || true; bench_teardown; rm -rf "$WORK"' EXIT
for _ in $(seq 1 100); do grep -q jsonrpc "$WORK/serve.log" 2>/dev/null && break; sleep 0.1; done
sleep 2

RESULT="bench/results/dashboard-$(date +%Y-%m-%d-%H%M).txt"
mkdir -p bench/results
{
    echo "# haul serve dashboard, headless Chromium: $QUEUED downloads, $RUNS loads ($(date -u +%FT%TZ))"
    .build/python-venv/bin/python bench/dashboard_render.py "http://127.0.0.1:$PORT/#secret=$SECRET" "$RUNS" "$QUEUED"
} | tee "$RESULT"
