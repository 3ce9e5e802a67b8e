#!/usr/bin/env bash
# RPC latency of `haul serve` under load: 10,000 downloads queued while 8 run (each limited to 200K/s from the
# private nginx), then CALLS rounds of tellActive, tellWaiting, tellStopped and getGlobalStat over one keep-alive
# connection. Prints median and p99 per method and the daemon's RSS before and after; writes
# bench/results/rpc-<date>-<HHMM>.txt. Settings (environment): HAUL (.build/release/haul), QUEUED (10000), CALLS (300).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
HAUL=$(realpath "${HAUL:-.build/release/haul}")
QUEUED=${QUEUED:-10000}
CALLS=${CALLS:-300}
PORT=${RPC_PORT:-16900}
SECRET=bench

bench_setup
bench_file rpc-big.bin 64
WORK="$BENCH_DIR/rpc"
rm -rf "$WORK" && mkdir -p "$WORK/out"
for i in $(seq 1 $((QUEUED + 8))); do
    echo "http://127.0.0.1:$BENCH_PORT/rpc-big.bin out=f$i.bin"
done > "$WORK/urls.txt"
start=$(date +%s.%N)
"$HAUL" add -x 1 --limit-rate 200K -d "$WORK/out" -i "$WORK/urls.txt" --state-dir "$WORK/state" > /dev/null
echo "added $((QUEUED + 8)) downloads in $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }') s"

"$HAUL" serve -j 8 --port "$PORT" --secret "$SECRET" -d "$WORK/out" --state-dir "$WORK/state" > "$WORK/serve.log" 2>&1 &
DAEMON=$!
trap 'kill $DAEMON 2>/dev/null || true; wait $DAEMON 2>/dev/null || true; bench_teardown; rm -rf "$WORK"' EXIT
for _ in $(seq 1 100); do grep -q jsonrpc "$WORK/serve.log" 2>/dev/null && break; sleep 0.1; done
sleep 3  # the first 8 downloads start and report progress

RESULT="bench/results/rpc-$(date +%Y-%m-%d-%H%M).txt"
mkdir -p bench/results
{
    echo "# haul serve RPC latency: $QUEUED queued, 8 running, $CALLS rounds ($(date -u +%FT%TZ))"
    echo "# method median_ms p99_ms calls"
    python3 bench/rpc_latency.py "$PORT" "$SECRET" "$CALLS" "$DAEMON"
} | tee "$RESULT"
