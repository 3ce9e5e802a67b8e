#!/usr/bin/env bash
# Does a run leave the next one dearer? `haul get` of one W2 list, RUNS times in a row, each into a new directory of one
# fresh journaled scratch file system (bench_scratch), every output verified; prints each run's wall, user and system
# seconds. In bench/floor.sh, Haul's first run of 2,000 x 64 KiB has used less CPU than its later runs in five sessions
# out of five; session 48 saw the system time double from run to run here once, and stay flat in later tries
# (RESULTS.md). A tool to look again, not a goal figure.
# Usage: bench/consecutive.sh HAUL   RUNS=5  CASE=w2-64k (or w2-4k)  JOBS=16
#        CLEAN=1 (delete each run's output once verified)  DROP=1 (drop the page cache before each run; needs root)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

HAUL=${1:?usage: bench/consecutive.sh HAUL}
RUNS=${RUNS:-5}
CASE=${CASE:-w2-64k}
JOBS=${JOBS:-16}
case $CASE in
    w2-64k) count=2000 kib=64 ;;
    w2-4k) count=10000 kib=4 ;;
    *) echo "unknown case $CASE (w2-64k, w2-4k)" >&2; exit 64 ;;
esac

bench_setup
SCRATCH=$(bench_scratch "$BENCH_DIR/consecutive-out")
bench_random_files "$CASE" "$count" "$kib"
expected=$(bench_file_list "$CASE" "$count" "$BENCH_DIR/$CASE.list")
times=$(mktemp)
for run in $(seq "$RUNS"); do
    target="$SCRATCH/$CASE-$run"
    mkdir -p "$target"
    sync
    if [ -n "${DROP:-}" ]; then echo 3 > /proc/sys/vm/drop_caches; fi
    /usr/bin/time -f "%e %U %S" -o "$times" \
        "$HAUL" get --quiet -j "$JOBS" -x 1 --state-dir "$target.state" -d "$target" -i "$BENCH_DIR/$CASE.list"
    ok=yes
    [ "$(cd "$target" && cat $(ls | sort) | sha256sum)" = "$expected" ] || ok=NO
    read -r wall user sys < "$times"
    printf '%s run %d: wall %5.2f s  user %5.2f s  system %5.2f s  %s\n' "$CASE" "$run" "$wall" "$user" "$sys" "$ok"
    if [ -n "${CLEAN:-}" ]; then rm -rf "$target" "$target.state"; fi
done
rm -f "$times"
bench_scratch_release
