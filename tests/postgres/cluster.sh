#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for the Postgres checks (never used by `cargo test`).
#
#   bash tests/postgres/cluster.sh start DIR [PORT]   # initdb + start; prints the env to source
#   bash tests/postgres/cluster.sh stop DIR           # stop and delete DIR
#
# The cluster lives in DIR (data + unix socket), runs as the `postgres` OS user (initdb refuses
# root; CI runs as root), listens on DIR's unix socket and 127.0.0.1:PORT only (default 55432).
# Roles: `postgres` (superuser, trust over the socket) and `superstep` (password `superstep-pw`,
# scram over TCP, may create databases, owns database `superstep`). `start` prints `export` lines
# for `eval`: SUPERSTEP_PG_DIR (the socket directory), SUPERSTEP_PG_PORT and SUPERSTEP_PG_URL (the
# TCP URL of role `superstep`, with its password).
set -euo pipefail

cmd="${1:?start|stop}"
DIR="${2:?cluster directory}"
PORT="${3:-55432}"

BIN=""
for c in /usr/lib/postgresql/15/bin "$(pg_config --bindir 2>/dev/null || true)"; do
  if [ -x "$c/initdb" ] && [ -x "$c/pg_ctl" ]; then BIN="$c"; break; fi
done
if [ -z "$BIN" ]; then
  echo "cluster.sh: PostgreSQL 15 (initdb, pg_ctl) not found — install Debian's postgresql-15" >&2
  exit 1
fi

as_pg() {
  if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi
}

case "$cmd" in
  start)
    mkdir -p "$DIR"
    DIR="$(cd "$DIR" && pwd)"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$DIR"; chmod 700 "$DIR"; fi
    if [ ! -f "$DIR/data/PG_VERSION" ]; then
      as_pg "$BIN/initdb" -D "$DIR/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 \
        || { cat "$DIR/initdb.log" >&2; exit 1; }
    fi
    as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$DIR -c fsync=off -c max_connections=50" \
      start >/dev/null || { cat "$DIR/server.log" >&2; exit 1; }
    as_pg "$BIN/psql" -h "$DIR" -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -q >/dev/null <<'SQL'
SELECT 'CREATE ROLE superstep LOGIN CREATEDB PASSWORD ''superstep-pw'''
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'superstep') \gexec
SELECT 'CREATE DATABASE superstep OWNER superstep'
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'superstep') \gexec
SQL
    echo "export SUPERSTEP_PG_DIR=$DIR SUPERSTEP_PG_PORT=$PORT"
    echo "export SUPERSTEP_PG_URL=postgresql://superstep:superstep-pw@127.0.0.1:$PORT/superstep"
    ;;
  stop)
    if [ -f "$DIR/data/postmaster.pid" ]; then
      as_pg "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null || true
    fi
    rm -rf "$DIR"
    ;;
  *)
    echo "cluster.sh: unknown command $cmd (start|stop)" >&2
    exit 2
    ;;
esac
