#!/usr/bin/env bash
# What one worker of the shared queue sends PostgreSQL (issue 17, session 27): a private PostgreSQL with
# pg_stat_statements, COUNT small files queued with `haul add`, drained by one `haul run -j JOBS`, then the run's
# time and the statements it sent, grouped (calls, server time in ms). Alternates the binaries given.
# Usage: bench/fleet_statements.sh HAUL...     COUNT=10000 KIB=4 JOBS=16 RUNS=1
#        FLEET_OUT=/mnt/other   downloads on another file system than PostgreSQL's (as on separate machines)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

[ $# -ge 1 ] || { echo "usage: bench/fleet_statements.sh HAUL..." >&2; exit 2; }
COUNT=${COUNT:-10000}
KIB=${KIB:-4}
JOBS=${JOBS:-16}
RUNS=${RUNS:-1}
bench_setup
bench_random_files small "$COUNT" "$KIB"
LIST="$BENCH_DIR/statements-list.txt"
bench_file_list small "$COUNT" "$LIST" >/dev/null
OUT=${FLEET_OUT:-$BENCH_DIR/statements}

bench_postgres "$BENCH_DIR/postgres-statements" $((BENCH_PORT + 8)) shared_preload_libraries=pg_stat_statements
DB="postgres://haul@127.0.0.1:$PGPORT/queue"

for run in $(seq "$RUNS"); do
    for haul in "$@"; do
        psql_q "DROP DATABASE IF EXISTS queue" 2>/dev/null && psql_q "CREATE DATABASE queue"
        psql_q "CREATE EXTENSION pg_stat_statements" queue
        rm -rf "$OUT" && mkdir -p "$OUT"
        t0=$(date +%s.%N)
        "$haul" add --database "$DB" -x 1 -i "$LIST" >/dev/null
        t1=$(date +%s.%N)
        psql_q "SELECT pg_stat_statements_reset()" queue >/dev/null
        /usr/bin/time -f "%e %U %S" -o "$OUT.time" "$haul" run -q -j "$JOBS" -d "$OUT" --worker-name w1 --database "$DB"
        read -r wall user sys < "$OUT.time"
        files=$(ls "$OUT" | wc -l)
        printf '%s run %s: add %.2f s, run %s s, cpu %.2f s, %s of %s files\n' "$(basename "$haul")" "$run" \
            "$(echo "$t1 - $t0" | bc)" "$wall" "$(echo "$user + $sys" | bc)" "$files" "$COUNT"
        psql_q "SELECT '  ' || sum(calls) || ' calls, ' || round(sum(total_exec_time)::numeric) || ' ms: ' || q
                FROM (SELECT calls, total_exec_time, left(regexp_replace(query, '\s+', ' ', 'g'), 70) AS q
                      FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%') s
                GROUP BY q ORDER BY sum(calls) DESC LIMIT 6" queue
        rm -rf "$OUT" "$OUT.time"
    done
done
