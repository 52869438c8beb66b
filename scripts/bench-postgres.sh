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
                --output "$out" | grep -E '^(biometric_sign_in|payment|sign_in_challenge|baseline) |^CPU|^PostgreSQL'
        done
    done
done
for mix in "${mixes[@]}"; do
    for binary in "${binaries[@]}"; do
        echo "== sqlite $mix: $binary"
        "$binary" bench --server-process --mix "$mix" "${args[@]}" --quiet --output "$out" | grep -E '^(biometric_sign_in|payment|sign_in_challenge|baseline) |^CPU|^database thread'
    done
done
rm -rf "$out"
