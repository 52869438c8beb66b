#!/usr/bin/env bash
# A throwaway PostgreSQL on loopback for the test suite.
#   scripts/test-postgres.sh start   # prints the URL to export as BIOAUTH_TEST_POSTGRES_URL
#   scripts/test-postgres.sh stop
# Needs Debian's postgresql package (apt-get install postgresql). Data lives in $PGTEST_DIR (default
# /tmp/bioauth-pgtest) and is deleted by stop; PGTEST_PORT sets the port (54329), PGTEST_FSYNC=on makes commits durable (off by
# default: tests need no durability; `bioauth bench` figures do). Trust authentication, loopback only: for tests, never production.
set -euo pipefail
dir="${PGTEST_DIR:-/tmp/bioauth-pgtest}"
port="${PGTEST_PORT:-54329}"
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
[ -n "$bin" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
# initdb and postgres refuse to run as root; run them as the postgres user when we are root.
as_owner() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
case "${1:-}" in
start)
    # Starting again would delete the data of the instance that is running: refuse instead.
    if [ -f "$dir/data/postmaster.pid" ] && as_owner "'$bin/pg_ctl' -D '$dir/data' status >/dev/null 2>&1"; then
        echo "a test PostgreSQL is already running in $dir; stop it first ($0 stop)" >&2
        exit 1
    fi
    rm -rf "$dir" && mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_owner "'$bin/initdb' -D '$dir/data' --auth=trust --username=postgres --encoding=UTF8 >'$dir/initdb.log'"
    as_owner "'$bin/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -o \"-c listen_addresses=127.0.0.1 -p $port -k '$dir' -c max_connections=300 -c fsync=${PGTEST_FSYNC:-off} -c shared_preload_libraries=pg_stat_statements\" start >/dev/null"
    # Statement counts for `bioauth bench` (PostgresActivity): the extension in the database it is pointed at.
    as_owner "'$bin/psql' -h '$dir' -p $port -U postgres -d postgres -qAt -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' >/dev/null"
    echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
    ;;
stop)
    as_owner "'$bin/pg_ctl' -D '$dir/data' -m fast stop >/dev/null" || true
    rm -rf "$dir"
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
