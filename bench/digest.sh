#!/usr/bin/env bash
# The cost of verifying a server's digest by default (issue 48): W1 (one file, one connection, full loopback speed,
# timed until synced) from a private nginx that sends, per location, no digest, `Repr-Digest: sha-256=:…:` (the
# SHA-256 every download computes anyway for its fingerprint), or `Repr-Digest: sha-512=:…:` (a second hash), and
# the SHA-256 case again with --no-verify-server-digest. The cases alternate within each run; each output is
# byte-compared with the served file.
# Usage: bench/digest.sh [HAUL]   (default .build/release/haul). Settings: RUNS (5), W1_MIB (2048), DIGEST_PORT (18090).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
HAUL=$(realpath "${1:-.build/release/haul}")
RUNS=${RUNS:-5}
W1_MIB=${W1_MIB:-2048}
DIGEST_PORT=${DIGEST_PORT:-18090}
PREFIX="$BENCH_DIR/nginx-digest"

bench_install
bench_file digest-w1.bin "$W1_MIB"
SHA256=$(openssl dgst -sha256 -binary "$WWW/digest-w1.bin" | base64 -w0)
SHA512=$(openssl dgst -sha512 -binary "$WWW/digest-w1.bin" | base64 -w0)
mkdir -p "$PREFIX/tmp"
cat > "$PREFIX/nginx.conf" <<CONF
worker_processes 1;
pid $PREFIX/nginx.pid;
error_log $PREFIX/error.log warn;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $PREFIX/tmp;
    proxy_temp_path $PREFIX/tmp;
    fastcgi_temp_path $PREFIX/tmp;
    uwsgi_temp_path $PREFIX/tmp;
    scgi_temp_path $PREFIX/tmp;
    sendfile on;
    tcp_nopush on;
    types { application/octet-stream bin; }
    server {
        listen 127.0.0.1:$DIGEST_PORT;
        location /none/ { alias $WWW/; }
        location /sha256/ { alias $WWW/; add_header Repr-Digest "sha-256=:$SHA256:" always; }
        location /sha512/ { alias $WWW/; add_header Repr-Digest "sha-512=:$SHA512:" always; }
    }
}
CONF
stop_nginx() { [ -f "$PREFIX/nginx.pid" ] && kill "$(cat "$PREFIX/nginx.pid")" 2>/dev/null || true; }
stop_nginx
sleep 0.2
/usr/sbin/nginx -p "$PREFIX" -c "$PREFIX/nginx.conf"
trap stop_nginx EXIT

CSV=$(bench_csv digest)
OUT="$BENCH_DIR/digest"
BASE="http://127.0.0.1:$DIGEST_PORT"
one() {
    local label=$1 path=$2 run=$3
    shift 3
    rm -rf "$OUT" && mkdir -p "$OUT"
    sync
    read -r rss wall cpu < <(bench_measure "$HAUL" get --quiet -x 1 --state-dir "$OUT/state" -o "$OUT/w1.bin" \
        "$BASE/$path/digest-w1.bin" "$@")
    local verified=yes
    cmp -s "$OUT/w1.bin" "$WWW/digest-w1.bin" || verified=NO
    echo "$(date -u +%FT%TZ),W1,x1,$label,$run,$wall,$cpu,$rss,$(awk -v s=$((W1_MIB * 1048576)) -v w="$wall" 'BEGIN { printf "%.1f", s / w / 1e6 }'),MB/s,$verified" >> "$CSV"
}
for run in $(seq 1 "$RUNS"); do
    one none none "$run"
    one repr-sha256 sha256 "$run"
    one repr-sha512 sha512 "$run"
    one repr-sha256-off sha256 "$run" --no-verify-server-digest
done
rm -rf "$OUT"
python3 bench/summarize.py "$CSV"
grep -q ',NO$' "$CSV" && { echo "corrupt outputs: see $CSV" >&2; exit 1; }
echo "$CSV"
