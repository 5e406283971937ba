#!/usr/bin/env bash
# Hand-off between superstep and real LangGraph on the same checkpoint DB (see handoff.py).
#
#   bash tests/differential/handoff/handoff.sh OUT_DIR [PYTHON] [SUPERSTEP_BIN]
#
# Runs handoff.py over every scenario in tests/differential/scenarios/: each thread (>= 2 ops) is split
# at k = 1 and k = len(ops)-1; superstep plays one side of the split through its CLI and LangGraph (the
# twin + SqliteSaver) the other, in both directions, and every mixed thread must end exactly as the
# same thread played purely by LangGraph. PYTHON defaults to the oracle venv's python
# (tests/oracle/setup_venv.sh); SUPERSTEP_BIN to target/debug/superstep (not built here).
# Writes OUT_DIR/<graph>.{ss_then_py,py_then_ss,pure}.sqlite, *.events.json, manifest.json,
# summary.json. Exit code: 0 consistent, non-zero on a mismatch or a crash.
# With SUPERSTEP_HANDOFF_PG=URL (a Postgres role that may create databases) the DBs are PostgresSaver
# databases ho_<graph>_* on that server instead (the manifest names them by URL).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT_DIR [PYTHON] [SUPERSTEP_BIN]" >&2
  exit 2
fi
OUT="$1"
PY="${2:-}"
BIN="${3:-$REPO/target/debug/superstep}"
if [ -z "$PY" ]; then
  PY="$(bash "$REPO/tests/oracle/setup_venv.sh" | tail -n 1)" || { echo "handoff: setup_venv.sh failed" >&2; exit 1; }
fi
if [ ! -x "$BIN" ]; then
  echo "handoff: $BIN: no superstep binary (cargo build first)" >&2
  exit 1
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
export PYTHONHASHSEED=0

"$PY" "$HERE/handoff.py" --out "$OUT" --superstep "$BIN" --repo "$REPO" \
  ${SUPERSTEP_HANDOFF_PG:+--pg "$SUPERSTEP_HANDOFF_PG"}
rc=$?

if [ ! -f "$OUT/summary.json" ]; then
  echo "handoff: FAILED (handoff.py exited $rc, no summary)" >&2
  exit $(( rc == 0 ? 1 : rc ))
fi
line="$("$PY" - "$OUT/summary.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
n, x, y = s["mixed_threads"], s["ss_then_py"], s["py_then_ss"]
if s["crashed"]:
    print(f"handoff: CRASHED after {n} mixed threads ({x} ss->py, {y} py->ss)")
elif s["mismatches"]:
    bad = ", ".join(f"{t['graph']}/{t['thread']} {t['direction']}" for t in s["mismatch_details"])
    print(f"handoff: {s['mismatches']} of {n} mixed threads ({x} ss->py, {y} py->ss) INCONSISTENT: {bad}")
else:
    print(f"handoff: {n} mixed threads ({x} ss->py, {y} py->ss) consistent"
          f" ({s['skipped']} splits skipped, {s['seconds']}s)")
PYEOF
)"
echo "$line"
if [ "$rc" -eq 0 ] && [[ "$line" != *" consistent"* ]]; then
  rc=1
fi
exit "$rc"
