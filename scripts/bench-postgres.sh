#!/usr/bin/env bash
# PostgreSQL figures for docs/PERFORMANCE.md: `bioauth bench --server-process` on a throwaway PostgreSQL with fsync on
# (scripts/test-postgres.sh, PGTEST_FSYNC=on, pg_stat_statements preloaded), a fresh database per run, runs alternating
# between the binaries given so that the machine's drift falls on all of them alike; then the same on SQLite.
#
#   scripts/bench-postgres.sh RUNS BIOAUTH [BIOAUTH ...]     e.g. 3 /tmp/bioauth-before .build/release/bioauth
#
# Extra bench options come from BENCH_ARGS (default: 64 devices, 64 at once, 10 s after 2 s, bcrypt cost 4), the mixes
# from MIXES (default: signin payment; e.g. MIXES="signin challenge baseline"): all of one mix's runs, then the next mix's.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="$1"; shift
binaries=("$@")
args=(${BENCH_ARGS:---devices 64 --concurrency 64 --duration 10 --warmup 2 --bcrypt-cost 4})
mixes=(${MIXES:-signin payment})
# The report's lines to keep: each operation's row (its name, then its rate), then the CPU and database lines.
rows='^[a-z_]+ +[0-9]|^CPU'
export PGTEST_DIR=/tmp/bioauth-pgbench PGTEST_PORT=54331 PGTEST_FSYNC=on
url="$(scripts/test-postgres.sh start)"
trap 'scripts/test-postgres.sh stop' EXIT
out="$(mktemp -d)"
for mix in "${mixes[@]}"; do
    for run in $(seq 1 "$runs"); do
        for binary in "${binaries[@]}"; do
            psql "$url" -qAt -c "DROP DATABASE IF EXISTS bench" -c "CREATE DATABASE bench"
            psql "${url/\/postgres\?/\/bench?}" -qAt -c "CREATE EXTENSION pg_stat_statements"
            echo "== postgres $mix run $run: $binary"
            "$binary" bench --server-process --database "${url/\/postgres\?/\/bench?}" --mix "$mix" "${args[@]}" --quiet \
                --output "$out" | grep -E "$rows|^PostgreSQL"
        done
    done
done
for mix in "${mixes[@]}"; do
    for binary in "${binaries[@]}"; do
        echo "== sqlite $mix: $binary"
        "$binary" bench --server-process --mix "$mix" "${args[@]}" --quiet --output "$out" | grep -E "$rows|^database thread"
    done
done
rm -rf "$out"
