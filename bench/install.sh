#!/usr/bin/env bash
# The installed haul (tools/build-release: --static-swift-stdlib, stripped) against the `swift run` build (the debug
# binary `swift run haul` runs): file size, start-up of `haul --version` and of `haul list` on an empty state, and the
# peak resident memory of one 2 GiB download from a private nginx (issue 46). Run tools/build-release and
# `swift build` first; nothing else should build meanwhile.
#
#   bench/install.sh     RUNS=5 (start-up: runs after one warm-up; the download: RUNS_BIG=3)
#
# Writes bench/results/install-DATE-HHMM.csv (case,build,run,value) and prints the medians.
cd "$(dirname "$0")"
source lib.sh
root=$(cd .. && pwd)
RUNS=${RUNS:-5}
RUNS_BIG=${RUNS_BIG:-3}
installed=$root/.build-release/stage/bin/haul
debug=$(cd "$root" && swift build --show-bin-path)/haul
[ -x "$installed" ] || { echo "no $installed: run tools/build-release" >&2; exit 1; }
[ -x "$debug" ] || { echo "no $debug: run swift build" >&2; exit 1; }
csv=$root/bench/results/install-$(date +%Y-%m-%d-%H%M).csv
echo "case,build,run,value" >"$csv"

bench_setup
bench_file big2g.bin 2048
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"; bench_teardown' EXIT

# Seconds of one run of a command (wall clock, through Python's monotonic clock).
seconds() { python3 -c 'import subprocess, sys, time; t = time.perf_counter(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(f"{time.perf_counter() - t:.4f}")' "$@"; }
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

for build in installed debug; do
    binary=${!build}
    echo "size,$build,1,$(stat -c %s "$binary")" >>"$csv"
    for case in version list; do
        state=$scratch/state-$build-$case
        if [ "$case" = version ]; then command=("$binary" --version); else command=("$binary" list --state-dir "$state"); fi
        "${command[@]}" >/dev/null 2>&1  # warm-up (and `list` makes its empty database)
        for run in $(seq "$RUNS"); do echo "$case,$build,$run,$(seconds "${command[@]}")" >>"$csv"; done
    done
    for run in $(seq "$RUNS_BIG"); do
        out=$scratch/get-$build
        rm -rf "$out" && mkdir -p "$out"
        kib=$(/usr/bin/time -f %M "$binary" get -q -d "$out" --state-dir "$out/state" \
            "http://127.0.0.1:$BENCH_PORT/big2g.bin" 2>&1 >/dev/null | tail -1)
        cmp -s "$out/big2g.bin" "$WWW/big2g.bin" || { echo "the 2 GiB download differs ($build)" >&2; exit 1; }
        echo "rss2g,$build,$run,$kib" >>"$csv"
        rm -rf "$out"
    done
done

echo "case,build,median  (size: bytes; version, list: seconds; rss2g: peak RSS in KiB)"
for case in size version list rss2g; do
    for build in installed debug; do
        echo "$case,$build,$(grep "^$case,$build," "$csv" | cut -d, -f4 | median)"
    done
done
echo "raw: $csv"
