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
#
# TLS is on (ssl=on): DIR/tls holds a throwaway CA (ca.crt), the server's certificate signed by it
# for the name `localhost` only (so verify-full to 127.0.0.1 fails on the name), a second CA that
# signed nothing (other-ca.crt) and a client certificate for role `superstep_cert` (client.crt/.key).
# Role `superstep_tls` (password `tls-pw`) may connect over TLS only (plain text is rejected), role
# `superstep_cert` with its client certificate only; each owns a database of its name.
# SUPERSTEP_PG_TLS_DIR names DIR/tls. Certificates are made with the openssl command-line tool.
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
      # TLS-only and certificate-only roles, matched before initdb's catch-all host lines
      hba="$DIR/data/pg_hba.conf"
      { printf '%s\n' \
          "hostnossl all superstep_tls  all reject" \
          "hostssl   all superstep_tls  127.0.0.1/32 scram-sha-256" \
          "hostnossl all superstep_cert all reject" \
          "hostssl   all superstep_cert 127.0.0.1/32 cert"
        cat "$hba"; } >"$hba.new" && mv "$hba.new" "$hba" && chown postgres: "$hba" 2>/dev/null || true
    fi
    if [ ! -f "$DIR/tls/server.crt" ]; then
      command -v openssl >/dev/null || { echo "cluster.sh: the openssl command is needed to make test certificates" >&2; exit 1; }
      mkdir -p "$DIR/tls"
      (
        cd "$DIR/tls"
        ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
        ca_ext=(-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign")
        openssl req -x509 $ec -days 3 -subj "/CN=superstep test CA" -keyout ca.key -out ca.crt "${ca_ext[@]}"
        openssl req -x509 $ec -days 3 -subj "/CN=superstep other CA" -keyout other-ca.key -out other-ca.crt "${ca_ext[@]}"
        openssl req $ec -subj "/CN=localhost" -keyout server.key -out server.csr
        printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' >server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3 -extfile server.ext -out server.crt
        openssl req $ec -subj "/CN=superstep_cert" -keyout client.key -out client.csr
        printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' >client.ext
        openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3 -extfile client.ext -out client.crt
      ) >"$DIR/openssl.log" 2>&1 || { cat "$DIR/openssl.log" >&2; exit 1; }
      if [ "$(id -u)" = 0 ]; then chown postgres: "$DIR/tls/server.key"; fi
      chmod 600 "$DIR/tls/server.key" "$DIR/tls/client.key"
    fi
    as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$DIR -c fsync=off -c max_connections=50 -c ssl=on -c ssl_cert_file=$DIR/tls/server.crt -c ssl_key_file=$DIR/tls/server.key -c ssl_ca_file=$DIR/tls/ca.crt" \
      start >/dev/null || { cat "$DIR/server.log" >&2; exit 1; }
    as_pg "$BIN/psql" -h "$DIR" -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -q >/dev/null <<'SQL'
SELECT 'CREATE ROLE superstep LOGIN CREATEDB PASSWORD ''superstep-pw'''
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'superstep') \gexec
SELECT 'CREATE DATABASE superstep OWNER superstep'
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'superstep') \gexec
SELECT 'CREATE ROLE superstep_tls LOGIN PASSWORD ''tls-pw'''
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'superstep_tls') \gexec
SELECT 'CREATE DATABASE superstep_tls OWNER superstep_tls'
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'superstep_tls') \gexec
SELECT 'CREATE ROLE superstep_cert LOGIN'
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'superstep_cert') \gexec
SELECT 'CREATE DATABASE superstep_cert OWNER superstep_cert'
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'superstep_cert') \gexec
SQL
    echo "export SUPERSTEP_PG_DIR=$DIR SUPERSTEP_PG_PORT=$PORT SUPERSTEP_PG_TLS_DIR=$DIR/tls"
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
