#!/usr/bin/env bash
# Plays every differential scenario on real LangGraph (see README.md).
#
#   bash tests/differential/generate.sh OUT_DIR [PYTHON]
#
# For each tests/differential/scenarios/<graph>.json runs run_twin.py, which writes
# OUT_DIR/<graph>.sqlite and OUT_DIR/<graph>.events.json. PYTHON defaults to the oracle venv's python
# (tests/oracle/setup_venv.sh). Prints one line per scenario and exits non-zero if any run crashed
# (an op that raises is an outcome recorded in the events file, not a crash).
# With SUPERSTEP_DIFF_PG=URL (a Postgres role that may create databases) each scenario is played on a
# real PostgresSaver instead, in a fresh database diff_<graph>; OUT_DIR/<graph>.pgurl names it.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT_DIR [PYTHON]" >&2
  exit 2
fi
OUT="$1"
PY="${2:-}"
if [ -z "$PY" ]; then
  PY="$(bash "$REPO/tests/oracle/setup_venv.sh" | tail -n 1)" || { echo "generate: setup_venv.sh failed" >&2; exit 1; }
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
export PYTHONHASHSEED=0

fail=0
found=0
for scen in "$HERE"/scenarios/*.json; do
  [ -e "$scen" ] || continue
  found=1
  name="$(basename "$scen" .json)"
  log="$(mktemp)"
  if "$PY" "$HERE/run_twin.py" "$name" --out "$OUT" --python-repo "$REPO" \
      ${SUPERSTEP_DIFF_PG:+--pg "$SUPERSTEP_DIFF_PG"} >"$log" 2>&1; then
    echo "ok    $name: $(tail -n 1 "$log")"
  else
    echo "FAIL  $name"
    sed 's/^/      /' "$log"
    fail=1
  fi
  rm -f "$log"
done
if [ "$found" = 0 ]; then
  echo "generate: no scenarios in $HERE/scenarios" >&2
  exit 1
fi
exit "$fail"
