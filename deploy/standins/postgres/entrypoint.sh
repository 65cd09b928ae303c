#!/bin/bash
# What the official postgres image's entrypoint does, for what docker-compose.yml uses: on an empty data
# directory, initdb with POSTGRES_USER as the superuser and POSTGRES_PASSWORD as its password, create
# POSTGRES_DB, then run the server as `postgres`, listening on every address with password
# authentication (scram-sha-256) from the network and trust on the local socket.
set -euo pipefail

if [ "${1:-}" != postgres ]; then
    exec "$@"
fi

POSTGRES_USER=${POSTGRES_USER:-postgres}
POSTGRES_DB=${POSTGRES_DB:-$POSTGRES_USER}
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "postgres stand-in: POSTGRES_PASSWORD is not set; refusing to start without one" >&2
    exit 1
fi

as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

mkdir -p "$PGDATA" /var/run/postgresql
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 0700 "$PGDATA"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    chown postgres "$pwfile"
    as_postgres initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust \
        --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 -D "$PGDATA" >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    # Create the database on a server reachable only through the socket, as the official image does.
    as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    if [ "$POSTGRES_DB" != postgres ]; then
        # From stdin: psql interpolates :"db" (quoted as an identifier) there, not in -c.
        echo 'create database :"db";' | as_postgres psql -v ON_ERROR_STOP=1 --username="$POSTGRES_USER" \
            --dbname=postgres --set=db="$POSTGRES_DB" >/dev/null
    fi
    as_postgres pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "postgres stand-in: initialised $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)"
fi

exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" -c listen_addresses='*'
