#!/usr/bin/env bash
# A list for a host that is down: how long `haul get -j 16 -i` takes to fail it, and how hard it tries, for each
# `haul` binary given (alternating).
#   - by default nothing listens on the port (every connection is refused); `connect(2)` calls are counted with perf
#     when the tracepoint is there;
#   - with STATUS=503 (or any status), a small local server answers every request with it (a CDN in front of a dead
#     origin); the requests it saw are counted.
# Usage: bench/deadhost.sh HAUL...      RUNS=1 COUNT=400 (URLs) LIMIT=5 (--retry-max-time, seconds) PORT=1 STATUS=
# Writes bench/results/deadhost-<date>-<HHMM>.csv (wall s, connects or requests, failures by kind) and prints it.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-1}
COUNT=${COUNT:-400}
LIMIT=${LIMIT:-5}
PORT=${PORT:-1}
STATUS=${STATUS:-}
[ $# -gt 0 ] || { echo "usage: bench/deadhost.sh HAUL..." >&2; exit 64; }
work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
if [ -n "$STATUS" ]; then
    PORT=18099
    python3 - "$PORT" "$STATUS" "$work/requests" <<'PY' &
import http.server, sys
port, status, log = int(sys.argv[1]), int(sys.argv[2]), open(sys.argv[3], "a", buffering=1)
class Down(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        log.write(self.path + "\n")
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args): pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Down).serve_forever()
PY
    server=$!
    sleep 1
fi
for i in $(seq 1 "$COUNT"); do echo "http://127.0.0.1:$PORT/f$i.bin"; done > "$work/list"
# connect(2) calls counted by perf when the tracepoint is there (root, tracefs), else not at all.
count_connects=0
[ -z "$STATUS" ] && perf stat -e syscalls:sys_enter_connect -x, -o /dev/null true 2>/dev/null && count_connects=1
mkdir -p bench/results
csv=bench/results/deadhost-$(date -u +%Y-%m-%d-%H%M).csv
echo "binary,run,urls,limit_s,status,wall_s,connects_or_requests,host_down,gave_up,exit" > "$csv"
for run in $(seq 1 "$RUNS"); do
    for haul in "$@"; do
        d="$work/run"; rm -rf "$d"; mkdir -p "$d"
        : > "$work/requests"
        command=("$haul" get --quiet -j 16 --retry-max-time "$LIMIT" --state-dir "$d/state" -d "$d/files" -i "$work/list")
        start=$(date +%s.%N)
        set +e
        if [ $count_connects = 1 ]; then
            perf stat -e syscalls:sys_enter_connect -x, -o "$d/perf" "${command[@]}" 2> "$d/err"
        else
            "${command[@]}" 2> "$d/err"
        fi
        status=$?
        set -e
        wall=$(echo "$(date +%s.%N) - $start" | bc)
        if [ $count_connects = 1 ]; then
            tries=$(grep sys_enter_connect "$d/perf" | cut -d, -f1)
        elif [ -n "$STATUS" ]; then
            tries=$(wc -l < "$work/requests")
        else
            tries=-
        fi
        down=$(grep -cE "every request to .* failed for [0-9]+ s \(" "$d/err" || true)
        gaveup=$(grep -c "gave up" "$d/err" || true)
        printf '%s,%s,%s,%s,%s,%.1f,%s,%s,%s,%s\n' "$(basename "$haul")" "$run" "$COUNT" "$LIMIT" "${STATUS:-refused}" \
            "$wall" "$tries" "$down" "$gaveup" "$status" | tee -a "$csv"
    done
done
echo "wrote $csv"
