#!/usr/bin/env bash
# DBs written by LangGraph 0.2.x (issue 15 item 2), with that version's own get_state dumps.
#
#   bash tests/oracle/v02/generate.sh OUT_DIR [VENV_PREFIX]
#
# Builds (or reuses) one pinned venv per version with tests/oracle/setup_venv.sh —
# requirements-0.2.20.txt (langgraph 0.2.20 + langgraph-checkpoint-sqlite 1.0.3) and
# requirements-0.2.76.txt (0.2.76 + 2.0.6) — at VENV_PREFIX-<version> (default
# <repo>/.venv-oracle-v02), and runs gen_v02.py in each: OUT_DIR gets v0_2_20{,_async} and
# v0_2_76{,_async} .sqlite/.json (SqliteSaver and AsyncSqliteSaver). ~1 min with fresh venvs.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
OUT="${1:?usage: generate.sh OUT_DIR [VENV_PREFIX]}"
PREFIX="${2:-$REPO/.venv-oracle-v02}"
mkdir -p "$OUT"
export PYTHONHASHSEED=0
for v in 0.2.20 0.2.76; do
  PY="$(bash "$HERE/../setup_venv.sh" "$PREFIX-$v" "$HERE/requirements-$v.txt" | tail -n 1)"
  "$PY" -W ignore "$HERE/gen_v02.py" --out "$OUT"
done
