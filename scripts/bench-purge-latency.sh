#!/usr/bin/env bash
# Sign-ins' latency while a day's retention purge runs, against the same load with no purge, for docs/PERFORMANCE.md
# ("A rest of 2, now the default", "SQLite on a file shaped as a bank's"). Each run gets a fresh copy of a loaded
# database (filled by scripts/load-retention-shape.sh); runs alternate: no purge, then each rest's purge, RUNS times.
#
#   scripts/bench-purge-latency.sh SERVER_URL TEMPLATE RUNS [REST ...]     PostgreSQL
#   scripts/bench-purge-latency.sh FILE RUNS [REST ...]                     SQLite
#
# PostgreSQL: SERVER_URL is a postgres:// URL of the database server (any database on it, e.g.
# …/postgres?sslmode=disable); the copies are made on it as database `purgerun` (dropped first; the server must have
# pg_stat_statements preloaded) and vacuumed first, so that autovacuum's first pass over the copy does not fall inside
# the bench. TEMPLATE is the loaded database's name (VACUUM ANALYZE it after loading). For a purge run, `bioauth admin
# purge` starts 3 s before an open-loop bench of sign-ins and is stopped when the bench ends.
# SQLite: FILE is the loaded file; each copy is made beside the script's other temporary files. The purge is the
# server's own, as a SQLite deployment purges (OPERATIONS.md): the bench's server purges every second
# (--retention-interval 1), its first purge starting 1 s after it starts, before the bench's enrolment.
# RESTs are the purge's --retention-batch-rest values (default: 1 2).
#
# Other settings come from the environment: BIOAUTH (default .build/release/bioauth), RATE (sign-ins per second, default
# 130 on PostgreSQL, 1000 on SQLite), SIZE (the purge's --retention-batch-size; default the server's own for the engine,
# 50 on PostgreSQL and 10 on SQLite), DURATION (seconds, default 24), KEEP (a directory: each run's bench-result.json,
# its 2-second windows included, is kept there as <n>-<label>.json, with PostgreSQL's purge's output beside it: empty
# unless the purge failed or finished within the run, since it reports at the end and is stopped when the bench ends).
# Prints one line per run: p50 and p99 of the run and its errors (- for none), the median and worst of its 2-second
# windows' p99, PostgreSQL's CPU (SQLite: the server's database thread's), how many of the loaded rows that had aged out
# were gone at the end of the run, and on PostgreSQL the purge's sessions batches (how many, mean ms) and the tables
# autovacuum vacuumed during the run. Needs python3, and psql or the sqlite3 shell.
set -euo pipefail
cd "$(dirname "$0")/.."
case "$1" in
    postgres://* | postgresql://*)
        engine=postgres
        server="$1"
        template="$2"
        runs="$3"
        shift 3
        if [ $# -gt 0 ]; then purges=("$@"); else purges=(1 2); fi
        # The same URL with the copy's database name.
        copy=$(echo "$server" | sed -E 's#^(postgres(ql)?://[^/]*/)[^?]*#\1purgerun#')
        ;;
    *)
        engine=sqlite
        template="$1"
        runs="$2"
        shift 2
        if [ $# -gt 0 ]; then purges=("$@"); else purges=(1 2); fi
        ;;
esac
bioauth="${BIOAUTH:-.build/release/bioauth}"
if [ "$engine" = postgres ]; then rate="${RATE:-130}"; else rate="${RATE:-1000}"; fi
# The purge's batch size, when SIZE sets one (else the server's default for the engine).
sizing=()
if [ -n "${SIZE:-}" ]; then sizing=(--retention-batch-size "$SIZE"); fi
duration="${DURATION:-24}"
export PGOPTIONS="-c client_min_messages=warning"
out="$(mktemp -d)"
purge=""
trap 'if [ -n "$purge" ]; then kill -KILL "$purge" 2>/dev/null || true; fi; rm -rf "$out"' EXIT

# SQL on the run's copy, one value per line.
query() {
    if [ "$engine" = postgres ]; then psql "$copy" -qAt -c "$1"; else sqlite3 "$copy" "$1"; fi
}

# The loaded rows that had aged out and are still there: loaded sessions ended, and their tokens expired, more than 7
# days ago (the kept ones 5 days before the load, or not yet), where the bench's own rows are new. So the count holds for
# a database loaded within the last two days; after that the kept sessions count too.
aged_left() {
    local week_ago=$((($(date +%s) - 7 * 86400) * 1000))
    query "SELECT (SELECT COUNT(*) FROM sessions WHERE ended_at < $week_ago)
        + (SELECT COUNT(*) FROM access_tokens WHERE expires_at < $week_ago)
        + (SELECT COUNT(*) FROM refresh_tokens WHERE expires_at < $week_ago)"
}

# $1: a label; $2: the rest, or "none" for no purge.
run() {
    local started purging=()
    if [ "$engine" = postgres ]; then
        psql "$server" -qAt -c "DROP DATABASE IF EXISTS purgerun" -c "CREATE DATABASE purgerun TEMPLATE $template STRATEGY FILE_COPY" > /dev/null
        psql "$copy" -qAt -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" -c "VACUUM (ANALYZE)" -c CHECKPOINT \
            -c "SELECT pg_stat_statements_reset()" > /dev/null
        started=$(psql "$copy" -qAt -c "SELECT now()")
    else
        copy="$out/run.sqlite"
        rm -f "$copy" "$copy-wal" "$copy-shm"
        cp "$template" "$copy"
    fi
    sync
    local aged
    aged=$(aged_left)
    purge=""
    if [ "$2" != none ] && [ "$engine" = sqlite ]; then
        purging=(--retention-interval 1 --retention-batch-rest "$2" "${sizing[@]}")
    elif [ "$2" != none ]; then
        "$bioauth" admin purge --database "$copy" --retention-batch-rest "$2" "${sizing[@]}" > "$out/purge.log" 2>&1 &
        purge=$!
        sleep 3
    fi
    "$bioauth" bench --server-process --database "$copy" "${purging[@]}" --mix signin --rate "$rate" --duration "$duration" \
        --warmup 2 --bcrypt-cost 4 --series 2 --quiet --output "$out" > "$out/bench.log" 2>&1 ||
        { echo "$1: the bench failed:" >&2; tail -20 "$out/bench.log" >&2; exit 1; }
    if [ -n "$purge" ]; then
        kill -KILL "$purge" 2>/dev/null || true
        wait "$purge" 2>/dev/null || true
        purge=""
    fi
    local summary purged details=""
    # From the bench-result.json the bench writes, not its printed table, whose columns may change.
    summary=$(python3 - "$out/bench-result.json" <<'PY'
import json, statistics, sys
result = json.load(open(sys.argv[1]))
row = next(r for r in result["operations"] if r["operation"] == "biometric_sign_in")
errors = " ".join(f"{code} {n}" for code, n in sorted(row["errors"].items())) or "-"
windows = sorted(w["p99Ms"] for w in result["series"]["biometric_sign_in"] if w["ok"] > 0)
if result.get("postgresCPUSeconds") is not None:
    cpu = f"postgres {result['postgresCPUSeconds'] / result['durationSeconds']:.2f} cores"
else:
    cpu = f"database thread {result['databaseThreadCPUSeconds'] / result['durationSeconds']:.2f} cores"
print(f"p50 {row['p50Ms']:.1f} ms, p99 {row['p99Ms']:.1f} ms, errors {errors}; "
      f"windows p99 median {statistics.median_low(windows):.1f} ms, worst {windows[-1]:.1f} ms; {cpu}")
PY
)
    purged="aged rows gone $((aged - $(aged_left))) of $aged"
    if [ "$engine" = postgres ]; then
        local batches vacuumed
        batches=$(query "SELECT COALESCE(SUM(calls), 0) || ' sessions batches, mean ' || COALESCE(ROUND(AVG(mean_exec_time)::numeric, 1), 0) || ' ms'
            FROM pg_stat_statements WHERE query LIKE '%DELETE FROM sessions%' AND dbid = (SELECT oid FROM pg_database WHERE datname = 'purgerun')")
        vacuumed=$(query "SELECT COALESCE(string_agg(relname, ' '), 'none') FROM pg_stat_user_tables WHERE last_autovacuum > '$started'")
        details="; $batches; autovacuum: $vacuumed"
    fi
    echo "$1: $summary; $purged$details"
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
    for rest in "${purges[@]}"; do
        run "rest $rest, run $r" "$rest"
    done
done
