#!/usr/bin/env bash
# The Postgres stage of .ci/run (about 7 min here, 4 with its venvs built): a throwaway PostgreSQL 15 cluster, every oracle
# fixture regenerated with real PostgresSaver and compared snapshot by snapshot, the differential
# and hand-off suites on PostgresSaver, the Python bridge's rows-equal suite on PostgresSaver, the
# failure cases, and a small scale run with superstep's
# query plans checked for full scans. Stops the cluster on any exit. Needs Debian's postgresql-15
# (tests/postgres/cluster.sh fails loudly without it).
#
#   bash tests/postgres/ci.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

PGPY=$(bash tests/oracle/setup_venv.sh "$PWD/.venv-oracle-pg" "$PWD/tests/oracle/requirements-postgres.txt" | tail -n 1)
# an older PostgresSaver (langgraph 0.2.76 + langgraph-checkpoint-postgres 2.0.8: migration level 8)
PGPY02=$(bash tests/oracle/setup_venv.sh "$PWD/.venv-oracle-v02-pg" "$PWD/tests/postgres/requirements-v02-pg.txt" | tail -n 1)
PGDIR=$(mktemp -d /tmp/superstep-pg.XXXXXX)
PGFX=$(mktemp -d)
PGDIFF=$(mktemp -d)
PGHAND=$(mktemp -d)
trap 'bash tests/postgres/cluster.sh stop "$PGDIR"; rm -rf "$PGFX" "$PGDIFF" "$PGHAND"' EXIT
cargo build --quiet
BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/superstep"
# a free port of our own (another cluster may hold the default)
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
eval "$(bash tests/postgres/cluster.sh start "$PGDIR" "$PORT")"

stage() { printf -- '-- [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
stage "PostgresSaver (3.2.0 and 2.0.8) and ShallowPostgresSaver oracle fixtures, regenerated live and compared"
SUPERSTEP_ORACLE_PG="$SUPERSTEP_PG_URL" bash tests/oracle/generate_all.sh "$PGFX" "$PGPY"
# ShallowPostgresSaver's own rows (Postgres only, so not among generate_all.sh's gen_*.py)
SUPERSTEP_ORACLE_PG="$SUPERSTEP_PG_URL" PYTHONHASHSEED=0 "$PGPY" tests/postgres/gen_shallow.py --out "$PGFX"
# a database PostgresSaver 2.0.8 made and dumped itself (no task_path; v1 checkpoints)
SUPERSTEP_ORACLE_PG="$SUPERSTEP_PG_URL" PYTHONHASHSEED=0 "$PGPY02" -W ignore tests/postgres/gen_v02_pg.py --out "$PGFX"
SUPERSTEP_PG_FIXTURES="$PGFX" cargo test --test it -- --ignored --nocapture oracle_fixtures::
# diff / diverge on the PostgresSaver-written compare fixture, against its get_state_history computation (~1 s)
SUPERSTEP_PG_FIXTURES="$PGFX" cargo test --test it -- --ignored compare_oracle::pg_

stage "store doctor on PostgresSaver: du's sizes, prune (LangGraph reads and resumes what is kept; refused while a session writes), check against 5 changed graphs (~1 min)"
"$PGPY" tests/doctor/check_oracle.py --db "$(cat "$PGFX/doctor.pgurl")" --expected "$PGFX/doctor.json" --out "$PGFX/doctor_check.json"
SUPERSTEP_TEST_PYTHON="$PGPY" SUPERSTEP_DOCTOR_FIXTURES="$PGFX" cargo test --test it -- --ignored --test-threads 1 doctor_live::

stage "the README's Postgres examples on the fx_multi_interrupt database just written (ids, timestamps and the port normalised; ~1 s)"
SUPERSTEP_README_PG="$SUPERSTEP_PG_URL" cargo test --test it -- --ignored readme_examples::the_postgres_examples

stage "differential on Postgres: every scenario on real PostgresSaver (diff_*) and on the engine (ss_*), rows compared (~2 min)"
SUPERSTEP_DIFF_PG="$SUPERSTEP_PG_URL" bash tests/differential/generate.sh "$PGDIFF" "$PGPY"
SUPERSTEP_PG_DIFFERENTIAL="$PGDIFF" cargo test --test it -- --ignored --nocapture differential::

stage "hand-off on Postgres: threads started by superstep finished by PostgresSaver and back (~3 min)"
SUPERSTEP_HANDOFF_PG="$SUPERSTEP_PG_URL" bash tests/differential/handoff/handoff.sh "$PGHAND" "$PGPY" "$BIN"
SUPERSTEP_HANDOFF="$PGHAND" cargo test --test it -- --ignored --nocapture handoff::

stage "Python bridge on Postgres: 28 scenarios stepped through the bridge on PostgresSaver == straight runs on PostgresSaver (~2 min)"
SUPERSTEP_TEST_PYTHON="$PGPY" SUPERSTEP_TEST_PG="$SUPERSTEP_PG_URL" cargo test --test it -- --ignored --test-threads 2 bridge_rows::pg_
stage "recorded replay on PostgresSaver: calls kept in superstep_call* tables beside PostgresSaver's, a time travel answered from them (~15 s)"
SUPERSTEP_TEST_PYTHON="$PGPY" SUPERSTEP_TEST_PG="$SUPERSTEP_PG_URL" cargo test --test it -- --ignored replay_calls::pg_
stage "the bridge's saves on PostgresSaver: a thread moved on while paused is refused before the step; racing CLI writers never fork a thread (~40 s)"
SUPERSTEP_TEST_PYTHON="$PGPY" SUPERSTEP_TEST_PG="$SUPERSTEP_PG_URL" cargo test --test it -- --ignored --test-threads 2 bridge_saves::pg_

stage "failures: server down, bad credentials, wrong database, no tables, newer migration level; TLS; huge values; a dropped connection; encrypted values"
"$PGPY" -c "import psycopg; psycopg.connect('$SUPERSTEP_PG_URL', autocommit=True).execute('CREATE DATABASE pg_encrypted')"
"$PGPY" tests/postgres/gen_encrypted.py "${SUPERSTEP_PG_URL%/*}/pg_encrypted"
SUPERSTEP_PG_ENCRYPTED="${SUPERSTEP_PG_URL%/*}/pg_encrypted" cargo test --test it -- --ignored --nocapture postgres::

stage "scale (small): 1,000 threads x 25 checkpoints; superstep's plans checked for full scans"
"$PGPY" -c "import psycopg; psycopg.connect('$SUPERSTEP_PG_URL', autocommit=True).execute('CREATE DATABASE scale')"
"$PGPY" tests/postgres/scale.py --superstep "$BIN" --threads 1000 \
  --url "${SUPERSTEP_PG_URL%/*}/scale" \
  --admin-url "postgresql://postgres@/scale?host=$SUPERSTEP_PG_DIR&port=$SUPERSTEP_PG_PORT" \
  --log "$SUPERSTEP_PG_DIR/server.log"
