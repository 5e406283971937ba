#!/usr/bin/env bash
# Creates (or reuses) the Python venv that runs the LangGraph oracle scripts.
#
#   bash tests/oracle/setup_venv.sh [VENV_DIR] [REQUIREMENTS]   (default: <repo>/.venv-oracle, requirements.txt)
#
# REQUIREMENTS may be requirements-postgres.txt (the oracle plus PostgresSaver and psycopg).
# Idempotent: a stamp file inside the venv records the sha256 of requirements.txt, and pip only runs
# when the stamp is missing or differs. The last line printed is the venv's python path, so callers can
# do:  PY=$(bash tests/oracle/setup_venv.sh | tail -n 1)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="${1:-$REPO/.venv-oracle}"
REQ="${2:-$HERE/requirements.txt}"
STAMP="$VENV/.oracle-requirements.sha256"
PY="$VENV/bin/python"

want="$(cat "$REQ" "$HERE/requirements.txt" | sha256sum | cut -d' ' -f1)"

if [ ! -x "$PY" ]; then
  echo "setup_venv: creating $VENV" >&2
  python3 -m venv "$VENV"
fi
# a self-ignoring venv: git never picks it up, wherever it lives
[ -f "$VENV/.gitignore" ] || echo "*" > "$VENV/.gitignore"

if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
  echo "setup_venv: installing $REQ" >&2
  # uv installs the same exact pins ~6x faster than pip (21 s -> 3.4 s for requirements.txt here); uv
  # itself (pinned in .ci/requirements-wheel.txt) is installed once into .ci-tools/uv by pip
  UV="$REPO/.ci-tools/uv/bin/uv"
  if [ ! -x "$UV" ]; then
    pin="$(grep -E '^uv==' "$REPO/.ci/requirements-wheel.txt")"
    python3 -m venv "$REPO/.ci-tools/uv" >&2
    "$REPO/.ci-tools/uv/bin/pip" install --quiet --disable-pip-version-check "$pin" >&2
  fi
  "$UV" pip install --quiet --python "$PY" -r "$REQ" >&2
  echo "$want" > "$STAMP"
fi

echo "$PY"
