# Shared set-up for the benchmarks: a private nginx on 127.0.0.1 serving generated files.
# Source it; call bench_setup, then bench_teardown (also run on exit).
set -euo pipefail

BENCH_DIR=${BENCH_DIR:-/tmp/haul-bench}
BENCH_PORT=${BENCH_PORT:-18080}
BENCH_SNDBUF_PORT=$((BENCH_PORT + 1))
WWW="$BENCH_DIR/www"
NGINX_PREFIX="$BENCH_DIR/nginx"
ACCESS_LOG="$NGINX_PREFIX/access.log"

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

bench_install() {
    local missing=()
    command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
    [ -x /usr/bin/time ] || missing+=(time)
    command -v aria2c >/dev/null 2>&1 || missing+=(aria2)
    command -v axel >/dev/null 2>&1 || missing+=(axel)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
    command -v wget >/dev/null 2>&1 || missing+=(wget)
    if [ ${#missing[@]} -gt 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        as_root apt-get update -qq
        as_root apt-get install -y -qq "${missing[@]}"
    fi
}

# bench_postgres DIR PORT [OPTION...]: a private PostgreSQL cluster (as the tests start one), initdb into DIR, on
# 127.0.0.1:PORT, user haul without a password, durable commits (fsync stays on: the numbers must mean what a real
# queue costs); each OPTION is a server setting (`max_connections=200`). Stops it on exit with bench_teardown.
# psql_q SQL [DATABASE] runs a statement there and prints its rows.
bench_postgres() {
    PGDIR=$1 PGPORT=$2
    shift 2
    PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    bench_postgres_stop
    rm -rf "$PGDIR" && mkdir -p "$PGDIR"
    [ "$(id -u)" -eq 0 ] && chown postgres "$PGDIR"
    as_pg "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U haul -E UTF8 >/dev/null
    local options="-p $PGPORT -k $PGDIR -c listen_addresses=127.0.0.1" setting
    for setting in "$@"; do options+=" -c $setting"; done
    as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w -o "$options" start >/dev/null
    trap 'bench_postgres_stop; bench_teardown' EXIT
}
bench_postgres_stop() { as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -m fast -w stop >/dev/null 2>&1 || true; }
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
psql_q() { psql -h 127.0.0.1 -p "$PGPORT" -U haul -d "${2:-postgres}" -At -q -c "$1"; }

# bench_file NAME SIZE_MIB: a file of random bytes (made once, reused).
bench_file() {
    local name=$1 mib=$2
    mkdir -p "$WWW"
    if [ ! -f "$WWW/$name" ] || [ "$(stat -c %s "$WWW/$name")" -ne $((mib * 1024 * 1024)) ]; then
        head -c $((mib * 1024 * 1024)) /dev/urandom > "$WWW/$name"
    fi
}

# bench_random_files DIR COUNT KIB: COUNT files of KIB KiB of random bytes in $WWW/DIR, 00000.bin on (made once).
bench_random_files() {
    local dir=$1 count=$2 kib=$3
    mkdir -p "$WWW/$dir"
    [ "$(ls "$WWW/$dir" | wc -l)" -eq "$count" ] && return
    rm -rf "${WWW:?}/$dir" && mkdir -p "$WWW/$dir"
    python3 - "$WWW/$dir" "$count" "$kib" <<'PY'
import os, sys
d, n, kib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    with open(os.path.join(d, f"{i:05d}.bin"), "wb") as f: f.write(os.urandom(kib * 1024))
PY
}

# bench_file_list DIR COUNT LIST: the URLs of the first COUNT files of $WWW/DIR (name order) into LIST; prints the
# SHA-256 of those files concatenated in that order (what a correct download of the list hashes to).
bench_file_list() {
    local dir=$1 count=$2 list=$3
    ls "$WWW/$dir" | sort | sed -n "1,${count}p" | sed "s|^|http://127.0.0.1:$BENCH_PORT/$dir/|" > "$list"
    (cd "$WWW/$dir" && cat $(ls | sort | sed -n "1,${count}p") | sha256sum)
}

# bench_csv KIND: the CSV for this run, bench/results/KIND-<date>-<HHMM>.csv, with the header every script writes.
bench_csv() {
    mkdir -p bench/results
    local csv="bench/results/$1-$(date +%Y-%m-%d-%H%M).csv"
    [ -f "$csv" ] || echo "date,workload,case,tool,run,wall_s,cpu_s,peak_rss_kib,rate,rate_unit,verified" > "$csv"
    echo "$csv"
}

# bench_counting KIND UNIT LARGE: the set-up of a count per file (instructions.sh, allocations.sh): nginx, LARGE files
# of 4 KiB in $WWW/KIND, CSV (bench/results/KIND-<date>-<HHMM>.csv: binary,files,UNIT,verified) and WORK (a temporary
# directory). At exit WORK goes, BENCH_CLEANUP (a command, if set) runs, and nginx stops.
bench_counting() {
    bench_setup
    bench_random_files "$1" "$3" 4
    CSV="bench/results/$1-$(date +%Y-%m-%d-%H%M).csv"
    mkdir -p bench/results
    echo "binary,files,$2,verified" > "$CSV"
    WORK=$(mktemp -d "/tmp/haul-$1.XXXXXX")
    trap 'rm -rf "$WORK"; ${BENCH_CLEANUP:-true} >/dev/null 2>&1 || true; bench_teardown' EXIT
}

bench_setup() {
    bench_install
    mkdir -p "$WWW" "$NGINX_PREFIX/tmp"
    cat > "$NGINX_PREFIX/nginx.conf" <<CONF
worker_processes 1;
pid $NGINX_PREFIX/nginx.pid;
error_log $NGINX_PREFIX/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    log_format sent '\$request_uri \$status \$bytes_sent \$http_range';
    client_body_temp_path $NGINX_PREFIX/tmp;
    proxy_temp_path $NGINX_PREFIX/tmp;
    fastcgi_temp_path $NGINX_PREFIX/tmp;
    uwsgi_temp_path $NGINX_PREFIX/tmp;
    scgi_temp_path $NGINX_PREFIX/tmp;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    types { application/octet-stream bin; }
    server {
        listen 127.0.0.1:$BENCH_PORT;
        # The same files with a small socket send buffer (W4: how much of the re-sent data sat in nginx's buffer).
        listen 127.0.0.1:$BENCH_SNDBUF_PORT sndbuf=256k;
        root $WWW;
        access_log $ACCESS_LOG sent;
        location /slow/ { alias $WWW/; limit_rate 10m; }
        # A server that caps each connection at 1 MiB/s (-x auto's case for many connections: bench/auto.sh).
        location /capped/ { alias $WWW/; limit_rate 1m; }
    }
}
CONF
    bench_teardown
    /usr/sbin/nginx -p "$NGINX_PREFIX" -c "$NGINX_PREFIX/nginx.conf"
    trap bench_teardown EXIT
}

# bench_scratch FALLBACK: a fresh ext4 file system with a journal for many-file workloads, mounted from a sparse image
# under BENCH_DIR (needs root, mkfs.ext4 and a loop device); prints where to write: the mount, else FALLBACK (with a
# warning). Why: without a journal (this machine's root file system), ext4 skips every inode freed in the last 30 s
# or so when it creates a file, scanning them each time; after a clean-up of thousands of files, a tool that lands in
# such a group slows down for minutes (curl's 10,000 files: ~2,300 files/s instead of ~20,000). With a journal ext4
# does not, as on most machines. Released by bench_scratch_release (and at exit).
bench_scratch() {
    local fallback=$1 image="$BENCH_DIR/scratch.img" mount="$BENCH_DIR/scratch"
    bench_scratch_release
    if [ "$(id -u)" -eq 0 ] && command -v mkfs.ext4 >/dev/null; then
        mkdir -p "$mount"
        rm -f "$image"
        truncate -s 16G "$image"
        if mkfs.ext4 -q -F -O has_journal "$image" && mount -o loop "$image" "$mount" 2>/dev/null; then
            echo "$mount"
            return
        fi
        rm -f "$image"
    fi
    echo "bench: no journaled scratch file system (needs root, mkfs.ext4 and a loop device): writing to $fallback" >&2
    mkdir -p "$fallback"
    echo "$fallback"
}

bench_scratch_release() {
    if mountpoint -q "$BENCH_DIR/scratch" 2>/dev/null; then umount "$BENCH_DIR/scratch"; fi
    rm -f "$BENCH_DIR/scratch.img"
}

bench_teardown() {
    bench_scratch_release
    if [ -f "$NGINX_PREFIX/nginx.pid" ]; then
        kill "$(cat "$NGINX_PREFIX/nginx.pid")" 2>/dev/null || true
        rm -f "$NGINX_PREFIX/nginx.pid"
        sleep 0.2
    fi
}

# Body bytes nginx sent for PATH since the log was last cleared (headers included: $bytes_sent).
bench_bytes_sent() {
    awk -v path="$1" '$1 == path { total += $3 } END { printf "%.0f\n", total }' "$ACCESS_LOG"
}

# Bytes of FILE a running haul has on disk (the part file, or the journal's sum with several connections): the kill
# point for SIGKILL measurements. nginx logs $bytes_sent only when a response ends, so the log cannot say it live.
bench_bytes_on_disk() {
    local part="$1.part"
    if [ -f "$part.segments" ]; then
        python3 - "$part.segments" <<'PY'
import struct, sys
try:
    data = open(sys.argv[1], "rb").read()
    magic, generation, count, _ = struct.unpack_from("<4q", data, 0)
    print(sum(struct.unpack_from("<4q", data, 32 + 32 * i)[3] for i in range(count)) if magic == 0x4841554C53454731 else 0)
except (OSError, struct.error):
    print(0)  # The download just finished (or has not begun): the journal is gone.
PY
    else
        stat -c %s "$part" 2>/dev/null || echo 0
    fi
}

bench_clear_log() { : > "$ACCESS_LOG"; kill -USR1 "$(cat "$NGINX_PREFIX/nginx.pid")"; sleep 0.1; }

# Peak RSS in KiB, wall seconds and CPU seconds of a command, from /usr/bin/time -v: prints "rss wall cpu".
bench_measure() {
    local report
    report=$(mktemp)
    /usr/bin/time -v -o "$report" "$@" >/dev/null 2>&1 || { cat "$report" >&2; rm -f "$report"; return 1; }
    awk -F': ' '
        /Maximum resident set size/ { rss = $2 }
        /Elapsed \(wall clock\)/ { n = split($2, p, ":"); wall = (n == 3) ? p[1] * 3600 + p[2] * 60 + p[3] : p[1] * 60 + p[2] }
        /User time/ { user = $2 } /System time/ { sys = $2 }
        END { printf "%d %.2f %.2f\n", rss, wall, user + sys }' "$report"
    rm -f "$report"
}

# bench_daemon NAME COUNT LIMIT JOBS PORT SECRET: COUNT downloads of rpc-big.bin (LIMIT each, one connection) queued
# with `haul add` in $BENCH_DIR/NAME, then `haul serve -j JOBS` on them until the script exits. Sets WORK and DAEMON.
bench_daemon() {
    local name=$1 count=$2 limit=$3 jobs=$4 port=$5 secret=$6 start
    bench_file rpc-big.bin 64
    WORK="$BENCH_DIR/$name"
    rm -rf "$WORK" && mkdir -p "$WORK/out"
    for i in $(seq 1 "$count"); do echo "http://127.0.0.1:$BENCH_PORT/rpc-big.bin out=f$i.bin"; done > "$WORK/urls.txt"
    start=$(date +%s.%N)
    "$HAUL" add -x 1 --limit-rate "$limit" -d "$WORK/out" -i "$WORK/urls.txt" --state-dir "$WORK/state" > /dev/null
    echo "added $count downloads in $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }') s"
    "$HAUL" serve -j "$jobs" --port "$port" --secret "$secret" -d "$WORK/out" --state-dir "$WORK/state" \
        > "$WORK/serve.log" 2>&1 &
    DAEMON=$!
    trap 'kill $DAEMON 2>/dev/null || true; wait $DAEMON 2>/dev/null || true; bench_teardown; rm -rf "$WORK"' EXIT
    for _ in $(seq 1 100); do grep -q jsonrpc "$WORK/serve.log" 2>/dev/null && break; sleep 0.1; done
}
