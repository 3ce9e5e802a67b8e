#!/usr/bin/env bash
# Instructions per file: `haul run -j 16` over SMALL and then LARGE 4 KiB files (a queue added with `haul add`), under
# valgrind's callgrind, for each binary given. Per file = (instructions(LARGE) - instructions(SMALL)) / (LARGE -
# SMALL), so start-up and shut-down cancel out. Counts are stable on a noisy machine (within ~1% run to run) where
# times are not; they count user-space instructions only (no kernel time, no thread switches' cost).
#
# Give it static builds (tools/build-release: .build-release/release/haul): on a dynamically linked one, valgrind
# crashes in libdispatch at start-up. valgrind cannot read the DWARF of a Swift release build here ("Possibly
# corrupted debuginfo file"), so each binary is copied without its debug sections (`strip --strip-debug`): symbols
# stay, per-function attribution works.
#   bench/instructions.sh /tmp/haul-main .build-release/release/haul
# Settings (environment): SMALL (500), LARGE (2500), ROUNDS (1: each binary counted once; more: the binaries in turn,
# round after round, then each one's median: a count moves by 1-3% from run to run with the scheduling of the
# threads, so one round cannot show a change of 2%), KEEP (a directory: keep each callgrind.out there, for
# callgrind_annotate). A binary named haul-floor (bench/floor: AsyncHTTPClient alone, `bench/floor.sh` builds it) is
# run as the floor, to count it beside them. Writes bench/results/instructions-<date>-<HHMM>.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
[ $# -ge 1 ] || { echo "usage: bench/instructions.sh HAUL..." >&2; exit 64; }
command -v valgrind >/dev/null || as_root apt-get install -y -qq valgrind >/dev/null
SMALL=${SMALL:-500}
LARGE=${LARGE:-2500}
ROUNDS=${ROUNDS:-1}
[ "$LARGE" -gt "$SMALL" ] || { echo "LARGE must exceed SMALL" >&2; exit 64; }

bench_counting instructions instructions "$LARGE"

# count BINARY FILES: the instructions of one `haul run` over the first FILES files; one CSV row.
count() {
    local binary=$1 files=$2 name out list
    name=$(basename "$binary")
    list="$WORK/list-$files.txt"
    bench_file_list instructions "$files" "$list" >/dev/null
    out=$(bench_scratch "$WORK/out")
    mkdir -p "$out/files"
    local run
    case $name in
        haul-floor) run=("$WORK/$name" "$list" "$out/files" 16 sync) ;;
        *) "$WORK/$name" add --state-dir "$out/state" -d "$out/files" -x 1 -i "$list" >/dev/null
           run=("$WORK/$name" run -q -j 16 -d "$out/files" --state-dir "$out/state") ;;
    esac
    local log="$WORK/$name-$files.log" dump="${KEEP:-$WORK}/callgrind-$name-$files.out"
    valgrind --tool=callgrind --callgrind-out-file="$dump" "${run[@]}" > "$log" 2>&1
    local verified=yes
    [ "$(find "$out/files" -type f | wc -l)" -eq "$files" ] || verified=NO
    for file in "$out/files"/*; do cmp -s "$file" "$WWW/instructions/$(basename "$file")" || { verified=NO; break; }; done
    local instructions
    instructions=$(sed -n 's/.*I *refs: *//p' "$log" | tr -d ',')
    echo "$name,$files,$instructions,$verified" >> "$CSV"
    bench_scratch_release "$out"
    echo "$instructions"
}

[ -n "${KEEP:-}" ] && mkdir -p "$KEEP"
for binary in "$@"; do strip --strip-debug -o "$WORK/$(basename "$binary")" "$binary"; done
declare -A perFile
for round in $(seq "$ROUNDS"); do
    for binary in "$@"; do
        small=$(count "$binary" "$SMALL")
        large=$(count "$binary" "$LARGE")
        each=$(((large - small) / (LARGE - SMALL)))
        perFile[$binary]+="$each "
        echo "round $round, $(basename "$binary"): $each instructions per file ($SMALL files: $small, $LARGE: $large)"
    done
done
if [ "$ROUNDS" -gt 1 ]; then
    for binary in "$@"; do
        echo "$(basename "$binary"): median $(tr ' ' '\n' <<< "${perFile[$binary]}" | sed '/^$/d' | sort -n \
            | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2)) }') instructions per file over $ROUNDS rounds (${perFile[$binary]% })"
    done
fi
if grep -q ',NO$' "$CSV"; then echo "unverified output: see $CSV" >&2; exit 1; fi
