#!/usr/bin/env bash
# Loads sessions and tokens shaped as a bank's database holds them under the default 30 days' token retention, for the
# retention purge's figures in docs/PERFORMANCE.md ("Every batch through an index"): most rows are kept, a day's worth
# has aged out, and the two are mixed on disk as years of inserts and purges mix them.
#
#   scripts/load-retention-shape.sh DATABASE [SESSIONS] [ONE_IN]
#
# SESSIONS (default 2 000 000) sessions of 100 000 accounts, each with an access token and a refresh token, in random
# order. One in ONE_IN (default 30: a day of 30 kept days) ended 31 days ago: its access token expired 40 days ago, its
# refresh token 10 days ago, so the refresh token is purged only because its session ended. The others ended 5 days ago
# (kept), their refresh tokens valid for 20 more days. DATABASE is a postgres:// URL (needs psql) or a SQLite file path
# (needs the sqlite3 shell); run it on an empty database. The schema is brought up to date first by the bioauth binary
# in BIOAUTH (default .build/release/bioauth).
set -euo pipefail
cd "$(dirname "$0")/.."
database="$1"
sessions="${2:-2000000}"
one_in="${3:-30}"
bioauth="${BIOAUTH:-.build/release/bioauth}"
"$bioauth" admin purge --dry-run --database "$database" > /dev/null
now=$(($(date +%s) * 1000))
day=86400000
# $1: how many rows. A query of the numbers 1…$1 as column i.
series() {
    case "$database" in
        postgres://* | postgresql://*) echo "SELECT generate_series(1::BIGINT, $1) AS i" ;;
        *) echo "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1) SELECT i FROM n" ;;
    esac
}
sql=$(
    cat << SQL
BEGIN;
INSERT INTO accounts (id, username, password_hash, failed_password_attempts, created_at, password_changed_at)
SELECT 'shape-account-' || i, 'shape-' || i, '!', 0, 0, 0 FROM ($(series 100000)) AS accounts;
CREATE TEMP TABLE shape AS SELECT i, i % $one_in = 0 AS aged, random() AS place FROM ($(series "$sessions")) AS numbers;
INSERT INTO sessions (id, account_id, installation_id, method, created_at, ended_at, end_reason)
SELECT 'shape-session-' || i, 'shape-account-' || (i % 100000 + 1), 'shape-installation-' || i, 'password',
    CASE WHEN aged THEN $((now - 40 * day)) ELSE $((now - 10 * day)) END,
    CASE WHEN aged THEN $((now - 31 * day)) ELSE $((now - 5 * day)) END, 'replaced'
FROM shape ORDER BY place;
INSERT INTO access_tokens (token_hash, session_id, expires_at, issued_at)
SELECT 'shape-access-' || i, 'shape-session-' || i, CASE WHEN aged THEN $((now - 40 * day)) ELSE $((now - 5 * day)) END, 0
FROM shape ORDER BY place;
INSERT INTO refresh_tokens (token_hash, session_id, expires_at, rotated_at)
SELECT 'shape-refresh-' || i, 'shape-session-' || i, CASE WHEN aged THEN $((now - 10 * day)) ELSE $((now + 20 * day)) END, NULL
FROM shape ORDER BY place;
COMMIT;
SQL
)
case "$database" in
    postgres://* | postgresql://*) psql "$database" -v ON_ERROR_STOP=1 -q -c "$sql" -c "VACUUM ANALYZE" ;;
    *) sqlite3 "$database" "PRAGMA journal_mode = WAL; $sql ANALYZE;" > /dev/null ;;
esac
echo "loaded $sessions sessions with their two tokens each, one in $one_in aged out, into $database"
