#!/usr/bin/env bash
# Fuzz smoke (CI): build every cargo-fuzz target (no sanitizer, dev profile: quick to build) and run
# each for SECONDS (default 20) from corpora seeded by fuzz/seed.py. Fails on any crash, timeout or
# build error. Installs cargo-fuzz into ./.ci-tools when it is not on PATH.
#
#   bash fuzz/smoke.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS="${1:-20}"
if ! command -v cargo-fuzz >/dev/null; then
  TOOLS="$PWD/.ci-tools"
  [ -x "$TOOLS/bin/cargo-fuzz" ] || cargo install --quiet --locked --root "$TOOLS" cargo-fuzz --version 0.13.2
  export PATH="$TOOLS/bin:$PATH"
fi
# cargo-fuzz wants nightly for sanitizers; with -s none the stable toolchain builds the targets too
TC=""
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then TC="+nightly"; fi
FZ=$(mktemp -d)
trap 'rm -rf "$FZ"' EXIT
python3 fuzz/seed.py "$FZ/corpus"
cargo $TC fuzz build --dev -s none
for t in value_decode spec_load json_input keys tui_keys text; do
  mkdir -p "$FZ/art/$t"
  if ! cargo $TC fuzz run --dev -s none "$t" "$FZ/corpus/$t" -- -max_total_time="$SECS" -max_len=8192 \
      -timeout=10 -artifact_prefix="$FZ/art/$t/" > "$FZ/$t.log" 2>&1; then
    tail -40 "$FZ/$t.log"
    echo "fuzz smoke: $t FAILED (artifacts: $(ls "$FZ/art/$t"))"
    exit 1
  fi
  echo "fuzz smoke: $t $(grep -E '^Done' "$FZ/$t.log")"
done
