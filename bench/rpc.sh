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
bench_daemon rpc $((QUEUED + 8)) 200K 8 "$PORT" "$SECRET"
sleep 3  # the first 8 downloads start and report progress

RESULT="bench/results/rpc-$(date +%Y-%m-%d-%H%M).txt"
mkdir -p bench/results
{
    echo "# haul serve RPC latency: $QUEUED queued, 8 running, $CALLS rounds ($(date -u +%FT%TZ))"
    echo "# method median_ms p99_ms calls"
    python3 bench/rpc_latency.py "$PORT" "$SECRET" "$CALLS" "$DAEMON"
} | tee "$RESULT"
