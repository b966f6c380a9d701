#!/bin/sh
# First start: a cluster with password authentication, a `toolsmith` role (POSTGRES_PASSWORD) and
# its database. Later starts: the cluster as it is. Then the server in the foreground.
set -eu
bin=/usr/lib/postgresql/15/bin
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD (the toolsmith role's password)}"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  "$bin/initdb" -D "$PGDATA" -U postgres --auth-local=peer --auth-host=scram-sha-256 \
    --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  psql -v ON_ERROR_STOP=1 -q -U postgres -d postgres \
    -v password="$POSTGRES_PASSWORD" <<'SQL'
CREATE ROLE toolsmith LOGIN PASSWORD :'password';
CREATE DATABASE toolsmith OWNER toolsmith;
SQL
  "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' -c max_connections=100
