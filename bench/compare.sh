#!/usr/bin/env bash
# Haul beside curl, wget, aria2c and axel on the same workloads, against a private nginx on 127.0.0.1 (issue 5).
# Usage: bench/compare.sh [W1] [W2] [W3] [W4] [W5]     (default: all)
#   RUNS=3        runs per tool and case (tools alternate within each run)
#   W1_MIB=2048   W3_MIB=500   W4_MIB=2048   W5_COUNT=100000
# Writes bench/results/compare-<date>-<HHMM>.csv (one row per run) and prints a summary (median, min-max) per case.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

RUNS=${RUNS:-3}
W1_MIB=${W1_MIB:-2048}
W3_MIB=${W3_MIB:-500}
W4_MIB=${W4_MIB:-2048}
W5_COUNT=${W5_COUNT:-100000}
WORKLOADS=${*:-W1 W2 W3 W4 W5}

swift build -c release --product haul >/dev/null
HAUL=$(swift build -c release --show-bin-path)/haul
bench_setup
OUT="$BENCH_DIR/out"
BASE="http://127.0.0.1:$BENCH_PORT"
SNDBUF_BASE="http://127.0.0.1:$BENCH_SNDBUF_PORT"
CSV=$(bench_csv compare)

# --- The tools: one function each. Single file: URL OUTFILE CONNECTIONS. Lists: LISTFILE DIR JOBS. ---------------
get_haul()   { "$HAUL" get --quiet -x "$3" --state-dir "$OUT/state" -o "$2" "$1"; }
get_curl()   { curl -sS --fail -o "$2" "$1"; }
get_wget()   { wget -q -O "$2" "$1"; }
get_aria2c() { aria2c -q -x "$3" -s "$3" -k 1M --file-allocation=falloc --allow-overwrite=true --auto-file-renaming=false \
                   -d "$(dirname "$2")" -o "$(basename "$2")" "$1"; }
get_axel()   { axel -q -n "$3" -o "$2" "$1"; }
get_dd()     { dd if="$WWW/${1##*/}" of="$2" bs=1M conv=fsync status=none; }   # the copy baseline (from page cache)

list_haul()   { "$HAUL" get --quiet -j "$3" -x 1 --state-dir "$OUT/state" -d "$2" -i "$1"; }
list_curl()   { awk -v d="$2" '{ n = split($0, p, "/"); print "url = \"" $0 "\"\noutput = \"" d "/" p[n] "\"" }' "$1" > "$OUT/curl.cfg"
                curl -sS --fail --parallel --parallel-max "$3" -K "$OUT/curl.cfg"; }
list_aria2c() { aria2c -q -j "$3" -x 1 --file-allocation=none --allow-overwrite=true --auto-file-renaming=false -d "$2" -i "$1"; }
list_wget()   { wget -q -P "$2" -i "$1"; }   # one at a time: wget has no parallel mode

# --- Measuring -----------------------------------------------------------------------------------------------------
# record WORKLOAD CASE TOOL RUN BYTES_OR_FILES UNIT VERIFIED -- command...: runs the command under /usr/bin/time -v.
record() {
    local workload=$1 case=$2 tool=$3 run=$4 amount=$5 unit=$6 verify=$7
    shift 8
    local rss wall cpu
    # Every run starts with nothing left to write back (not timed): a tool that syncs (Haul's syncfs) would otherwise
    # also write back the files the tool before it left in the page cache on the same file system.
    sync
    read -r rss wall cpu < <(bench_measure "$@")
    local ok=yes
    eval "$verify" || ok=NO
    local rate
    if [ "$unit" = "MB/s" ]; then rate=$(awk -v b="$amount" -v w="$wall" 'BEGIN { printf "%.1f", b / w / 1e6 }')
    else rate=$(awk -v n="$amount" -v w="$wall" 'BEGIN { printf "%.0f", n / w }'); fi
    echo "$(date -u +%FT%TZ),$workload,$case,$tool,$run,$wall,$cpu,$rss,$rate,$unit,$ok" >> "$CSV"
    printf '  %-3s %-22s %-7s run %d: %7.2f s  %8s %-7s cpu %6.2f s  rss %7d KiB  %s\n' \
        "$workload" "$case" "$tool" "$run" "$wall" "$rate" "$unit" "$cpu" "$rss" "$ok"
    # A corrupt output is recorded (verified=NO) and the run goes on; the exit status reports it at the end.
    [ "$ok" = yes ] || { echo "OUTPUT MISMATCH: $workload $case $tool run $run" >&2; MISMATCHES+=("$workload $case $tool run $run"); }
}
MISMATCHES=()
fresh() { rm -rf "$OUT" && mkdir -p "$OUT/files"; }
same_file() { cmp -s "$1" "$2"; }
same_tree() { [ "$(cd "$1" && cat $(ls | sort) | sha256sum)" = "$(cat "$2")" ]; }

# --- W1: one big file, one connection, timed until the data is on disk -----------------------------------------
w1() {
    bench_file w1.bin "$W1_MIB"
    local size; size=$(stat -c %s "$WWW/w1.bin")
    for run in $(seq "$RUNS"); do
        for tool in haul curl wget aria2c axel dd; do
            fresh
            record W1 "${W1_MIB}MiB+sync" "$tool" "$run" "$size" MB/s "same_file $OUT/files/w1.bin $WWW/w1.bin" -- \
                bash -c "$(declare -f get_$tool); HAUL=$HAUL WWW=$WWW OUT=$OUT get_$tool $BASE/w1.bin $OUT/files/w1.bin 1 && sync $OUT/files/w1.bin"
        done
        for tool in curl wget aria2c axel; do
            fresh
            record W1 "${W1_MIB}MiB-noflush" "$tool" "$run" "$size" MB/s "same_file $OUT/files/w1.bin $WWW/w1.bin" -- \
                bash -c "$(declare -f get_$tool); get_$tool $BASE/w1.bin $OUT/files/w1.bin 1"
        done
    done
    for mib in 100; do
        bench_file "w1-$mib.bin" "$mib"
        for run in $(seq "$RUNS"); do
            fresh
            record W1 "${mib}MiB+sync" haul "$run" $((mib * 1048576)) MB/s "same_file $OUT/files/f $WWW/w1-$mib.bin" -- \
                "$HAUL" get --quiet -x 1 --state-dir "$OUT/state" -o "$OUT/files/f" "$BASE/w1-$mib.bin"
        done
    done
}

# --- W2: many small files, 16 at a time --------------------------------------------------------------------------
w2_files() {
    local dir=$1 count=$2 kib=$3
    bench_random_files "$dir" "$count" "$kib"
    bench_file_list "$dir" "$count" "$BENCH_DIR/$dir.list" > "$BENCH_DIR/$dir.sha256"
}
w2() {
    # On a fresh journaled ext4 (bench_scratch), a new directory for every run and nothing deleted until W2 is over:
    # no tool pays for another's clean-up.
    fresh
    local root
    root=$(bench_scratch "$OUT/w2")
    for spec in "w2-64k 2000 64" "w2-4k 10000 4"; do
        read -r dir count kib <<< "$spec"
        w2_files "$dir" "$count" "$kib"
        for run in $(seq "$RUNS"); do
            for tool in haul curl aria2c wget; do
                local target="$root/$dir-$tool-$run"
                mkdir -p "$target/files"
                record W2 "${count}x${kib}KiB" "$tool" "$run" "$count" files/s "same_tree $target/files $BENCH_DIR/$dir.sha256" -- \
                    bash -c "$(declare -f list_$tool); HAUL=$HAUL OUT=$target list_$tool $BENCH_DIR/$dir.list $target/files 16"
            done
            # curl with the files made durable at the end, as Haul's are when it exits.
            local target="$root/$dir-curl-sync-$run"
            mkdir -p "$target/files"
            record W2 "${count}x${kib}KiB+sync" curl "$run" "$count" files/s "same_tree $target/files $BENCH_DIR/$dir.sha256" -- \
                bash -c "$(declare -f list_curl); OUT=$target list_curl $BENCH_DIR/$dir.list $target/files 16 && sync -f $target/files"
        done
    done
    bench_scratch_release
    fresh
}

# --- W3: one file behind limit_rate 10m per connection, 1/4/8/16 connections --------------------------------------
w3() {
    bench_file w3.bin "$W3_MIB"
    local size; size=$(stat -c %s "$WWW/w3.bin")
    for run in $(seq "$RUNS"); do
        for connections in 1 4 8 16; do
            for tool in haul aria2c axel; do
                fresh
                record W3 "limit10m-x$connections" "$tool" "$run" "$size" MB/s "same_file $OUT/files/w3.bin $WWW/w3.bin" -- \
                    bash -c "$(declare -f get_$tool); HAUL=$HAUL OUT=$OUT get_$tool $BASE/slow/w3.bin $OUT/files/w3.bin $connections"
            done
        done
    done
}

# --- W4: SIGKILL at 50%, then the same command: bytes the server sent beyond the file's size ----------------------
w4() {
    bench_file w4.bin "$W4_MIB"
    local size; size=$(stat -c %s "$WWW/w4.bin")
    for run in $(seq "$RUNS"); do
        # The same kill against nginx's default send buffer (loopback autotunes it to several MB per connection) and
        # against a 256 KiB one: data already in the server's buffer counts as sent but never reaches the client.
        for spec in "haul 1 $BASE" "haul 8 $BASE" "curl 1 $BASE" "aria2c 8 $BASE" \
                    "haul 1 $SNDBUF_BASE" "haul 8 $SNDBUF_BASE" "curl 1 $SNDBUF_BASE" "aria2c 8 $SNDBUF_BASE"; do
            read -r tool connections base <<< "$spec"
            local label="sigkill50-x$connections"
            [ "$base" = "$BASE" ] || label+="-sndbuf256k"
            fresh
            bench_clear_log
            local out="$OUT/files/w4.bin"
            local cmd
            case $tool in
                haul) cmd=("$HAUL" get --quiet -x "$connections" --state-dir "$OUT/state" -o "$out" "$base/w4.bin") ;;
                curl) cmd=(curl -sS --fail -C - -o "$out" "$base/w4.bin") ;;
                aria2c) cmd=(aria2c -q -c -x "$connections" -s "$connections" -k 1M --file-allocation=falloc
                             -d "$OUT/files" -o w4.bin "$base/w4.bin") ;;
            esac
            "${cmd[@]}" &
            local pid=$!
            # Written bytes: the part file (haul), the output file (curl), or aria2's progress is unknown: use time.
            local start; start=$(date +%s.%N)
            while kill -0 "$pid" 2>/dev/null; do
                local have=0
                case $tool in
                    haul) have=$(bench_bytes_on_disk "$out") ;;
                    curl) have=$(stat -c %s "$out" 2>/dev/null || echo 0) ;;
                    aria2c) have=$(du -B1 "$out" 2>/dev/null | cut -f1 || echo 0) ;;
                esac
                [ "$have" -ge $((size / 2)) ] && break
                sleep 0.005
            done
            kill -9 "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
            "${cmd[@]}" || true
            # A corrupt result is recorded (verified=NO) and reported, not fatal: it is what W4 exists to catch.
            local ok=yes
            cmp -s "$out" "$WWW/w4.bin" || { ok=NO; echo "OUTPUT MISMATCH: W4 $label $tool run $run" >&2; MISMATCHES+=("W4 $label $tool run $run"); }
            sleep 0.3
            local sent; sent=$(bench_bytes_sent /w4.bin)
            echo "$(date -u +%FT%TZ),W4,$label,$tool,$run,,,,$((sent - size)),wasted_bytes,$ok" >> "$CSV"
            printf '  W4  %-22s %-7s run %d: server sent %d B beyond the file (%.2f MiB)  %s\n' \
                "$label" "$tool" "$run" "$((sent - size))" "$(awk -v b=$((sent - size)) 'BEGIN { print b / 1048576 }')" "$ok"
        done
    done
}

# --- W5: a queue of many downloads in the database ----------------------------------------------------------------
w5() {
    local state="$OUT/state"
    fresh
    seq -f "$BASE/queue/%06g.bin" "$W5_COUNT" > "$OUT/queue.list"
    record W5 "add-$W5_COUNT" haul 1 "$W5_COUNT" files/s true -- "$HAUL" add --state-dir "$state" -d "$OUT/files" -i "$OUT/queue.list"
    for run in $(seq "$RUNS"); do
        record W5 "list-$W5_COUNT" haul "$run" "$W5_COUNT" files/s \
            "[ \$($HAUL list --state-dir $state | wc -l) -eq $((W5_COUNT + 1)) ]" -- "$HAUL" list --state-dir "$state"
        # Start-up: open the manager on the whole queue and act on one download.
        record W5 "startup-$W5_COUNT" haul "$run" 1 files/s true -- "$HAUL" info 1 --state-dir "$state"
        record W5 "pause-all-$W5_COUNT" haul "$run" "$W5_COUNT" files/s true -- "$HAUL" pause --all --state-dir "$state"
        record W5 "resume-all-$W5_COUNT" haul "$run" "$W5_COUNT" files/s true -- "$HAUL" resume --all --state-dir "$state"
    done
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, $(uname -r); nginx $(/usr/sbin/nginx -v 2>&1 | sed 's|.*/||'); $(curl --version | head -1 | cut -d' ' -f1-2); $(wget --version | head -1 | cut -d' ' -f1-3); $(aria2c --version | head -1); $(axel --version | head -1)"
for workload in $WORKLOADS; do
    echo "## $workload"
    "$(echo "$workload" | tr 'A-Z' 'a-z')"
done
python3 bench/summarize.py "$CSV"
if [ ${#MISMATCHES[@]} -gt 0 ]; then
    printf 'corrupt output (verified=NO in %s):\n' "$CSV" >&2
    printf '  %s\n' "${MISMATCHES[@]}" >&2
    exit 1
fi
