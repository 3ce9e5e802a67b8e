#!/usr/bin/env bash
# Heap allocations per file: `haul run -j 16` over SMALL and then LARGE 4 KiB files (a queue added with `haul add`),
# counting every call of glibc's `malloc` (Swift's objects, NIO's buffers and SQLite's all come through it) with a
# uprobe, for each binary given. Per file = (mallocs(LARGE) - mallocs(SMALL)) / (LARGE - SMALL), so start-up and
# shut-down cancel out. They move by a few percent from run to run (group and batch sizes follow timing), far less
# than times on this noisy machine, and a run takes seconds, not callgrind's minutes. A binary named haul-floor
# (bench/floor: AsyncHTTPClient alone) is run as the floor, to count it beside them. With WHERE=1, each binary's
# LARGE run is recorded with call graphs and every allocation is charged to the first frame of Haul's own code above
# it (the rest to the transport, GRDB and SQLite, or the runtime): the sites, per file of the LARGE run (its start-up
# included), most first.
#   bench/allocations.sh /tmp/haul-main .build-release/release/haul
# Needs root (uprobes) and perf; give binaries with symbols (.build-release/release/haul, not the stripped stage one).
# Settings (environment): SMALL (500), LARGE (2500), WHERE (0), TOP (25).
# Writes bench/results/allocations-<date>-<HHMM>.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
[ $# -ge 1 ] || { echo "usage: bench/allocations.sh HAUL..." >&2; exit 64; }
command -v perf >/dev/null || { echo "bench/allocations.sh needs perf (linux-perf)" >&2; exit 69; }
SMALL=${SMALL:-500}
LARGE=${LARGE:-2500}
WHERE=${WHERE:-0}
TOP=${TOP:-25}
[ "$LARGE" -gt "$SMALL" ] || { echo "LARGE must exceed SMALL" >&2; exit 64; }

LIBC=$(ldd "$1" | awk '/libc\.so/ { print $3 }')
[ -n "$LIBC" ] || { echo "cannot find the libc $1 uses" >&2; exit 69; }
EVENT=probe_libc:haul_malloc
perf probe -l 2>/dev/null | grep -q "$EVENT" || perf probe -q -x "$LIBC" --add 'haul_malloc=malloc' >/dev/null

BENCH_CLEANUP="perf probe -q -d $EVENT"
bench_counting allocations mallocs "$LARGE"
bench_file_list allocations "$SMALL" "$WORK/list-$SMALL.txt" >/dev/null
expected=$(bench_file_list allocations "$LARGE" "$WORK/list-$LARGE.txt")

# count BINARY FILES [RECORD]: the mallocs of one run over the first FILES files (a CSV row); with RECORD, the run is
# also recorded with call graphs into RECORD.
count() {
    local binary=$1 files=$2 record=${3:-} out run mallocs ok=yes
    out=$(bench_scratch "$WORK/out")
    rm -rf "${out:?}/files" "$out/state"
    mkdir -p "$out/files"
    case $(basename "$binary") in
        haul-floor) run=("$binary" "$WORK/list-$files.txt" "$out/files" 16 sync) ;;
        *) "$binary" add --state-dir "$out/state" -d "$out/files" -x 1 -i "$WORK/list-$files.txt" >/dev/null
           run=("$binary" run -q -j 16 --state-dir "$out/state" -d "$out/files") ;;
    esac
    if [ -n "$record" ]; then
        perf record -q -e "$EVENT" -g -o "$record" "${run[@]}" >/dev/null 2>&1
        mallocs=$(perf script -i "$record" -F event 2>/dev/null | grep -c .)
    else
        mallocs=$(perf stat -x, -e "$EVENT" "${run[@]}" 2>&1 >/dev/null | awk -F, -v e="$EVENT" '$3 == e { print $1 }')
    fi
    if [ "$files" = "$LARGE" ]; then
        [ "$(cd "$out/files" && cat $(ls | sort) | sha256sum)" = "$expected" ] || ok=NO
    fi
    echo "$(basename "$binary"),$files,$mallocs,$ok" >> "$CSV"
    echo "$mallocs"
}

# where RECORD: the allocations of a recorded run, per file, by the first frame of Haul's code above them.
where() {
    perf script -i "$1" -F ip,sym 2>/dev/null | python3 -c '
import collections, sys
files, top = int(sys.argv[1]), int(sys.argv[2])
sites, stack = collections.Counter(), []
def charge():
    if not stack: return
    haul = next((f for f in stack if f.startswith(("$s7HaulKit", "$s4haul", "$s9HaulFleet"))), None)
    if haul is None:
        if any(f.startswith(("$s8NIOPosix", "$s7NIOCore", "$s15AsyncHTTPClient", "$s7NIOHTTP1")) for f in stack):
            haul = "(transport: NIO, AsyncHTTPClient)"
        elif any(f.startswith("$s4GRDB") or f.startswith("sqlite3") for f in stack):
            haul = "(GRDB, SQLite)"
        elif len(stack) <= 2:
            haul = "(no call chain: C code without frame pointers)"
        else:
            haul = "(other: the runtime, start-up)"
    sites[haul] += 1
for line in sys.stdin:
    line = line.strip()
    if line: stack.append(line.split(None, 1)[-1])
    else: charge(); stack = []
charge()
total = sum(sites.values())
print(f"  {total / files:8.1f}  all (of the run, start-up included)")
for site, count in sites.most_common(top): print(f"  {count / files:8.1f}  {site}")
' "$LARGE" "$TOP" | swift demangle --simplified | cut -c1-160
}

for binary in "$@"; do
    name=$(basename "$binary")
    cp "$binary" "$WORK/$name"
    small=$(count "$WORK/$name" "$SMALL")
    if [ "$WHERE" = 1 ]; then
        large=$(count "$WORK/$name" "$LARGE" "$WORK/$name.perf")
    else
        large=$(count "$WORK/$name" "$LARGE")
    fi
    printf '%-24s %8.1f mallocs per file (%d for %d files, %d for %d)\n' "$name" \
        "$(awk -v a="$small" -v b="$large" -v s="$SMALL" -v l="$LARGE" 'BEGIN { print (b - a) / (l - s) }')" \
        "$small" "$SMALL" "$large" "$LARGE"
    if [ "$WHERE" = 1 ]; then where "$WORK/$name.perf"; fi
done
echo "wrote $CSV"
