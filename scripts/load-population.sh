#!/usr/bin/env bash
# Loads a bank-sized population into a BioAuth database, for the flat-cost figures of docs/PERFORMANCE.md: the bench
# enrols its devices through the API, far too slowly for a million customers, so this writes the rows in SQL.
#
#   scripts/load-population.sh DATABASE [CUSTOMERS]
#
# DATABASE is a postgres:// URL (needs psql) or a SQLite file path (needs the sqlite3 shell: apt-get install sqlite3).
# CUSTOMERS (default 1 000 000) accounts, each with a device, five audit events and one payment (authorized; one in a
# thousand pending with a day to go). The schema is brought up to date first by the bioauth binary in BIOAUTH (default
# .build/release/bioauth). The loaded accounts cannot sign in (their password hash is no hash), and their devices'
# keys are one public key, whose private key nobody has: they are there to be in the way, as a bank's customers are
# when the bench's own sign in and pay. Run it on an empty database: ids start at 1 each time.
#
# EXPIRED=N adds what N sign-ins of a day leave for the retention purge once it has aged out: N expired challenges and
# N sessions that ended 31 days ago, each with its access and refresh token (past the default 30 days' token retention).
# With POPULATION=no only those are added, to a database this script loaded before (its customers must be there).
set -euo pipefail
cd "$(dirname "$0")/.."
database="$1"
customers="${2:-1000000}"
expired="${EXPIRED:-0}"
bioauth="${BIOAUTH:-.build/release/bioauth}"
"$bioauth" admin purge --dry-run --database "$database" > /dev/null
now=$(($(date +%s) * 1000))
day=86400000
# A real P-256 public key (base64url, X9.63), as devices store theirs.
key="BDBKbvQmsIYl53oJlbpW3qJUTZfZa6HsSD_Mox5FTrzea7ViZKMeiGa4lRu0kwtg-uM2GOtWz37N8Lsct4R0Zl0"

# $1: how many rows. Prints what goes before SELECT … FROM series: the numbers 1…$1 as column i.
series() {
    case "$database" in
        postgres://* | postgresql://*) echo "WITH series AS (SELECT generate_series(1::BIGINT, $1) AS i)" ;;
        *) echo "WITH RECURSIVE series(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM series WHERE i < $1)" ;;
    esac
}

sql=""
[ "${POPULATION:-yes}" = no ] || sql=$(
    cat << SQL
BEGIN;
INSERT INTO accounts (id, username, password_hash, failed_password_attempts, created_at, password_changed_at)
$(series "$customers")
SELECT 'loaded-account-' || i, 'loaded-' || i, '!', 0, $now - (i % 700) * $day, $now - (i % 700) * $day FROM series;
INSERT INTO devices (id, account_id, key_id, public_key, biometry_kind, name, installation_id, counter, attestation, created_at, last_used_at)
$(series "$customers")
SELECT 'loaded-device-' || i, 'loaded-account-' || i, 'loaded-key-' || i, '$key', 'faceID', 'iPhone', 'loaded-installation-' || i,
    i % 1000 + 1, 'none', $now - (i % 700) * $day, $now - (i % 30) * $day FROM series;
INSERT INTO payments (id, account_id, amount_minor, currency, payee_id, payee_name, memo, status, failed_attempts, created_at,
    expires_at, authorized_at, authorization_method, device_id)
$(series "$customers")
SELECT 'loaded-payment-' || i, 'loaded-account-' || i, 100 + i % 100000, 'CNY', 'loaded-payee', 'Loaded Payee', NULL,
    CASE WHEN i % 1000 = 0 THEN 'pending' ELSE 'authorized' END, 0, $now - (i % 700) * $day,
    CASE WHEN i % 1000 = 0 THEN $now + $day ELSE $now - (i % 700) * $day + 300000 END,
    CASE WHEN i % 1000 = 0 THEN NULL ELSE $now - (i % 700) * $day + 20000 END,
    CASE WHEN i % 1000 = 0 THEN NULL ELSE 'biometric' END,
    CASE WHEN i % 1000 = 0 THEN NULL ELSE 'loaded-device-' || i END FROM series;
INSERT INTO audit_events (id, occurred_at, sequence, kind, outcome, account_id, device_id)
$(series $((customers * 5)))
SELECT 'loaded-event-' || i, $now - ((i - 1) / 5 % 700) * $day - i % 5 * 60000, i,
    CASE i % 5 WHEN 0 THEN 'account_created' WHEN 1 THEN 'device_registered' WHEN 2 THEN 'biometric_sign_in'
        WHEN 3 THEN 'payment_created' ELSE 'payment_authorized' END,
    'success', 'loaded-account-' || ((i - 1) / 5 + 1), 'loaded-device-' || ((i - 1) / 5 + 1) FROM series;
COMMIT;
SQL
)
if [ "$expired" -gt 0 ]; then
    aged=$((now - 31 * day))
    sql+=$(
        cat << SQL

BEGIN;
INSERT INTO challenges (id, purpose, challenge, account_id, session_id, device_id, payment_id, created_at, expires_at, consumed_at)
$(series "$expired")
SELECT 'expired-challenge-' || i, 'login', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'loaded-account-' || (i % $customers + 1), NULL,
    'loaded-device-' || (i % $customers + 1), NULL, $aged, $aged + 120000, $aged + 1000 FROM series;
INSERT INTO sessions (id, account_id, installation_id, device_id, method, created_at, ended_at, end_reason)
$(series "$expired")
SELECT 'expired-session-' || i, 'loaded-account-' || (i % $customers + 1), 'loaded-installation-' || (i % $customers + 1),
    'loaded-device-' || (i % $customers + 1), 'biometric', $aged - $day, $aged, 'replaced' FROM series;
INSERT INTO access_tokens (token_hash, session_id, expires_at, issued_at)
$(series "$expired")
SELECT 'expired-access-' || i, 'expired-session-' || i, $aged - $day + 900000, $aged - $day FROM series;
INSERT INTO refresh_tokens (token_hash, session_id, expires_at, rotated_at)
$(series "$expired")
SELECT 'expired-refresh-' || i, 'expired-session-' || i, $aged, NULL FROM series;
COMMIT;
SQL
    )
fi

case "$database" in
    postgres://* | postgresql://*)
        psql "$database" -v ON_ERROR_STOP=1 -q -c "$sql"
        # Audit events take their number from a sequence on PostgreSQL; the planner needs the new sizes.
        psql "$database" -v ON_ERROR_STOP=1 -qAt > /dev/null \
            -c "SELECT setval('audit_events_sequence', (SELECT MAX(sequence) FROM audit_events) + 1, false)" -c "ANALYZE"
        ;;
    *)
        sqlite3 "$database" "PRAGMA journal_mode = WAL; $sql ANALYZE;" > /dev/null
        ;;
esac
[ "${POPULATION:-yes}" = no ] ||
    echo "loaded $customers customers, $customers devices, $customers payments and $((customers * 5)) audit events into $database"
[ "$expired" -eq 0 ] || echo "and $expired expired challenges and $expired ended sessions with their two tokens each"
