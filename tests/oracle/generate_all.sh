#!/usr/bin/env bash
# Regenerates every LangGraph oracle fixture.
#
#   bash tests/oracle/generate_all.sh [OUT_DIR] [PYTHON]
#
# OUT_DIR defaults to <repo>/tests/fixtures. PYTHON defaults to the venv python printed by setup_venv.sh
# (which creates / updates <repo>/.venv-oracle as needed). Runs every gen_*.py, prints one line per script,
# and exits non-zero if any script fails (after trying all of them).
#
# PYTHONHASHSEED is fixed so that Python set iteration orders (the order of a node's plain-edge writes,
# set payloads) are the same from one regeneration to the next. Ids, timestamps and version suffixes are
# still random / time based, so regenerated files differ byte-wise; their structure does not.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
OUT="${1:-$REPO/tests/fixtures}"
PY="${2:-}"
if [ -z "$PY" ]; then
  PY="$(bash "$HERE/setup_venv.sh" | tail -n 1)" || { echo "generate_all: setup_venv.sh failed" >&2; exit 1; }
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
export PYTHONHASHSEED=0

fail=0
for script in "$HERE"/gen_*.py; do
  name="$(basename "$script")"
  log="$(mktemp)"
  if "$PY" "$script" --out "$OUT" >"$log" 2>&1; then
    echo "ok    $name: $(tail -n 1 "$log")"
  else
    echo "FAIL  $name"
    sed 's/^/      /' "$log"
    fail=1
  fi
  rm -f "$log"
done
exit "$fail"
