#!/usr/bin/env bash
# Sign-ins' latency while a day's retention purge runs, against the same load with no purge, for docs/PERFORMANCE.md
# ("A rest of 2, now the default"). Each run gets a fresh copy of a loaded PostgreSQL database (the template, filled by
# scripts/load-retention-shape.sh and then VACUUM ANALYZE), vacuumed first so that autovacuum's first pass over the copy
# does not fall inside the bench; then, for a purge run, `bioauth admin purge` starts 3 s before an open-loop bench of
# sign-ins and is stopped when the bench ends. Runs alternate: no purge, then each rest, RUNS times.
#
#   scripts/bench-purge-latency.sh SERVER_URL TEMPLATE RUNS [REST ...]
#
# SERVER_URL is a postgres:// URL of the database server (any database on it, e.g. …/postgres?sslmode=disable); the
# copies are made on it as database `purgerun` (dropped first; the server must have pg_stat_statements preloaded).
# TEMPLATE is the loaded database's name. RESTs are --retention-batch-rest values (default: 1 2). Other settings come
# from the environment: BIOAUTH (default .build/release/bioauth), RATE (sign-ins per second, default 130), SIZE
# (--retention-batch-size, default 50, the server's own), DURATION (seconds, default 24), KEEP (a directory: each run's
# bench-result.json, its 2-second windows included, is kept there as <n>-<label>.json, with the purge's output beside
# it: empty unless the purge failed or finished within the run, since it reports at the end and is stopped when the
# bench ends). Prints one line per run: p50 and p99 of the run and its errors (- for none), the median and worst of its
# 2-second windows' p99, PostgreSQL's CPU, the purge's sessions batches (how many, mean ms) and the tables autovacuum
# vacuumed during the run. Needs psql and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
server="$1"
template="$2"
runs="$3"
shift 3
if [ $# -gt 0 ]; then rests=("$@"); else rests=(1 2); fi
bioauth="${BIOAUTH:-.build/release/bioauth}"
rate="${RATE:-130}"
size="${SIZE:-50}"
duration="${DURATION:-24}"
# The same URL with the copy's database name.
copy=$(echo "$server" | sed -E 's#^(postgres(ql)?://[^/]*/)[^?]*#\1purgerun#')
export PGOPTIONS="-c client_min_messages=warning"
out="$(mktemp -d)"
purge=""
trap 'if [ -n "$purge" ]; then kill -KILL "$purge" 2>/dev/null || true; fi; rm -rf "$out"' EXIT

# $1: a label; $2: the rest, or "none" for no purge.
run() {
    psql "$server" -qAt -c "DROP DATABASE IF EXISTS purgerun" -c "CREATE DATABASE purgerun TEMPLATE $template STRATEGY FILE_COPY" > /dev/null
    psql "$copy" -qAt -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" -c "VACUUM (ANALYZE)" -c CHECKPOINT \
        -c "SELECT pg_stat_statements_reset()" > /dev/null
    sync
    local started
    started=$(psql "$copy" -qAt -c "SELECT now()")
    purge=""
    if [ "$2" != none ]; then
        "$bioauth" admin purge --database "$copy" --retention-batch-rest "$2" --retention-batch-size "$size" > "$out/purge.log" 2>&1 &
        purge=$!
        sleep 3
    fi
    "$bioauth" bench --server-process --database "$copy" --mix signin --rate "$rate" --duration "$duration" --warmup 2 \
        --bcrypt-cost 4 --series 2 --quiet --output "$out" > "$out/bench.log" 2>&1 ||
        { echo "$1: the bench failed:" >&2; tail -20 "$out/bench.log" >&2; exit 1; }
    if [ -n "$purge" ]; then
        kill -KILL "$purge" 2>/dev/null || true
        wait "$purge" 2>/dev/null || true
        purge=""
    fi
    local summary batches vacuumed
    # From the bench-result.json the bench writes, not its printed table, whose columns may change.
    summary=$(python3 - "$out/bench-result.json" <<'PY'
import json, statistics, sys
result = json.load(open(sys.argv[1]))
row = next(r for r in result["operations"] if r["operation"] == "biometric_sign_in")
errors = " ".join(f"{code} {n}" for code, n in sorted(row["errors"].items())) or "-"
windows = sorted(w["p99Ms"] for w in result["series"]["biometric_sign_in"] if w["ok"] > 0)
cores = result["postgresCPUSeconds"] / result["durationSeconds"]
print(f"p50 {row['p50Ms']:.1f} ms, p99 {row['p99Ms']:.1f} ms, errors {errors}; "
      f"windows p99 median {statistics.median_low(windows):.1f} ms, worst {windows[-1]:.1f} ms; postgres {cores:.2f} cores")
PY
)
    batches=$(psql "$copy" -qAt -c "SELECT COALESCE(SUM(calls), 0) || ' sessions batches, mean ' || COALESCE(ROUND(AVG(mean_exec_time)::numeric, 1), 0) || ' ms'
        FROM pg_stat_statements WHERE query LIKE '%DELETE FROM sessions%' AND dbid = (SELECT oid FROM pg_database WHERE datname = 'purgerun')")
    vacuumed=$(psql "$copy" -qAt -c "SELECT COALESCE(string_agg(relname, ' '), 'none') FROM pg_stat_user_tables WHERE last_autovacuum > '$started'")
    echo "$1: $summary; $batches; autovacuum: $vacuumed"
    if [ -n "${KEEP:-}" ]; then
        kept=$((kept + 1))
        local name="$kept-${1//[^a-z0-9]/-}"
        cp "$out/bench-result.json" "$KEEP/$name.json"
        if [ -f "$out/purge.log" ]; then mv "$out/purge.log" "$KEEP/$name.purge.log"; fi
    fi
}
kept=0
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; kept=$(find "$KEEP" -name '*.json' | wc -l); fi

for r in $(seq 1 "$runs"); do
    run "no purge, run $r" none
    for rest in "${rests[@]}"; do
        run "rest $rest, run $r" "$rest"
    done
done
