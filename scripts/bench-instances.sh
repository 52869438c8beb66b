#!/usr/bin/env bash
# Two instances on one PostgreSQL against one, for docs/PERFORMANCE.md: `bioauth bench --server-process` with each
# server process running only SHARE of the time (--server-cpu-share), so that on a machine with few cores the
# instances, not PostgreSQL or the load generator, limit throughput, as if each instance had a machine of its own and the database
# cores to spare. Runs alternate between one instance and two, each on a fresh database (PostgreSQL as in
# scripts/bench-postgres.sh: fsync on, pg_stat_statements).
#
#   scripts/bench-instances.sh RUNS BIOAUTH [SHARE]     e.g. 3 .build/release/bioauth 0.3
#
# Extra bench options come from BENCH_ARGS (default: 64 devices, 64 at once, 10 s after 2 s, bcrypt cost 4). The
# PostgreSQL it starts, and removes at the end, is PGTEST_DIR on PGTEST_PORT (default /tmp/bioauth-pgbench on 54331,
# bench-postgres.sh's): set them to run beside a database you keep there.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="$1"
binary="$2"
share="${3:-0.3}"
args=(${BENCH_ARGS:---devices 64 --concurrency 64 --duration 10 --warmup 2 --bcrypt-cost 4})
export PGTEST_DIR="${PGTEST_DIR:-/tmp/bioauth-pgbench}" PGTEST_PORT="${PGTEST_PORT:-54331}" PGTEST_FSYNC=on
url="$(scripts/test-postgres.sh start)"
trap 'scripts/test-postgres.sh stop' EXIT
out="$(mktemp -d)"
for mix in signin payment; do
    for run in $(seq 1 "$runs"); do
        for instances in 1 2; do
            psql "$url" -qAt -c "DROP DATABASE IF EXISTS bench" -c "CREATE DATABASE bench"
            psql "${url/\/postgres\?/\/bench?}" -qAt -c "CREATE EXTENSION pg_stat_statements"
            echo "== $mix run $run: $instances instance(s), each running $share of the time"
            "$binary" bench --server-process --instances "$instances" --server-cpu-share "$share" \
                --database "${url/\/postgres\?/\/bench?}" --mix "$mix" "${args[@]}" --quiet --output "$out" |
                grep -E '^(biometric_sign_in|payment) |^CPU|^PostgreSQL'
        done
    done
done
rm -rf "$out"
