#!/usr/bin/env bash
# CI wheel stage (issue 16): superstep as LangGraph users install it.
#
#   bash .ci/wheel.sh ORACLE_PYTHON DEBUG_SUPERSTEP
#
# Builds the sdist and, from the unpacked sdist alone, the wheel (maturin pinned in
# .ci/requirements-wheel.txt, from PyPI, in a venv of its own); installs the wheel with pip into a
# fresh venv, with pipx and with uv tool; runs the installed binaries (--version against the oracle
# venv's installed LangGraph, `threads`/`show` against the debug build's output on a fixture that must
# stay byte-identical); generates the completion scripts and checks each with its shell (bash, zsh,
# fish — installed from Debian here when missing, never skipped); renders every man page with groff,
# warnings fatal. Runtime: one release build from scratch (~4–6 min on 2 cores; the build time is
# printed) plus ~1 min.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
ORACLE_PY=${1:?usage: wheel.sh ORACLE_PYTHON DEBUG_SUPERSTEP}
DEBUG_BIN=${2:?usage: wheel.sh ORACLE_PYTHON DEBUG_SUPERSTEP}

fail() { echo "wheel: FAIL: $*" >&2; exit 1; }

# --- the shells and groff the checks need (Debian packages; the same install on any CI machine)
need=()
command -v zsh >/dev/null || need+=(zsh)
command -v fish >/dev/null || need+=(fish)
command -v groff >/dev/null || need+=(groff-base)
if [ ${#need[@]} -gt 0 ]; then
  echo "wheel: installing ${need[*]} from Debian"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# --- tools: maturin, pipx, uv, exact pins
python3 -m venv "$W/tools"
"$W/tools/bin/pip" install --quiet --disable-pip-version-check -r .ci/requirements-wheel.txt
T="$W/tools/bin"
echo "wheel: $("$T/maturin" --version), pipx $("$T/pipx" --version), $("$T/uv" --version)"

# --- sdist: only what building reads
"$T/maturin" sdist --out "$W/dist" 2>&1 | tail -n 1
SDIST=$(ls "$W"/dist/*.tar.gz)
stray=$(tar tzf "$SDIST" | grep -E '/(fuzz|benches|snapshots|target|tests/fixtures|tests/differential)/' || true)
[ -z "$stray" ] || fail "the sdist holds files building does not need: $(echo "$stray" | head -5)"
echo "wheel: sdist $(basename "$SDIST"): $(stat -c %s "$SDIST") bytes, $(tar tzf "$SDIST" | grep -vc '/$') files"

# --- the wheel, built from the unpacked sdist alone (proves the sdist is complete)
mkdir "$W/src" && tar xzf "$SDIST" -C "$W/src"
start=$(date +%s)
(cd "$W"/src/*/ && CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}" "$T/maturin" build --release --out "$W/dist")
build_s=$(( $(date +%s) - start ))
WHEEL=$(ls "$W"/dist/*.whl)
echo "wheel: built $(basename "$WHEEL") in ${build_s} s (release, $(nproc) cores): $(stat -c %s "$WHEEL") bytes"
"$W/tools/bin/python" - "$WHEEL" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
scripts = [n for n in names if ".data/scripts/" in n]
other = [n for n in names if ".dist-info/" not in n and n not in scripts]
assert [s.rsplit("/", 1)[1] for s in scripts] == ["superstep"], scripts
assert not other, f"files outside the binary and dist-info: {other}"
info = zipfile.ZipFile(sys.argv[1]).getinfo(scripts[0])
print(f"wheel: holds {scripts[0]} ({info.file_size} bytes) and its dist-info, nothing else")
EOF

# --- what `superstep --version` must say: the oracle venv's installed LangGraph
expected="superstep $(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
proved against $("$ORACLE_PY" -c '
import importlib.metadata as m
print(", ".join(f"{p} {m.version(p)}" for p in ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite")))')"

FIX=tests/fixtures/interrupt.sqlite
fix_hash=$(sha256sum "$FIX" | cut -d' ' -f1)
want_threads=$(NO_COLOR=1 "$DEBUG_BIN" threads --db "$FIX")
want_show=$(NO_COLOR=1 "$DEBUG_BIN" show --db "$FIX" -t double --json)

check_installed() { # NAME PATH-OF-INSTALLED-superstep
  local name=$1 bin=$2
  [ -x "$bin" ] || fail "$name: no superstep at $bin"
  [ "$("$bin" --version)" = "$expected" ] || fail "$name: --version says '$("$bin" --version)', expected '$expected'"
  [ "$(NO_COLOR=1 "$bin" threads --db "$FIX")" = "$want_threads" ] || fail "$name: threads differs from the debug build"
  [ "$(NO_COLOR=1 "$bin" show --db "$FIX" -t double --json)" = "$want_show" ] || fail "$name: show --json differs"
  [ "$(sha256sum "$FIX" | cut -d' ' -f1)" = "$fix_hash" ] || fail "$name: $FIX changed"
  echo "wheel: $name: $bin — --version, threads, show --json as expected; fixture unchanged"
}

# --- pip into a fresh venv: the binary lands in the venv's bin/
python3 -m venv "$W/app"
"$W/app/bin/pip" install --quiet --disable-pip-version-check --no-index "$WHEEL"
check_installed "pip (venv)" "$W/app/bin/superstep"
"$W/app/bin/superstep" --version

# --- the bridge from the installed binary: no --python, no $VIRTUAL_ENV, no ./.venv — superstep must
# pick the venv it is installed in (issue 11's rule), whose LangGraph is the oracle's pins. The node
# records sys.executable in the state, so the rows LangGraph wrote say which Python ran it.
"$W/app/bin/pip" install --quiet --disable-pip-version-check -r tests/oracle/requirements.txt
mkdir "$W/proj"
cat > "$W/proj/app.py" <<'PY'
import operator, sys
from typing import Annotated, TypedDict
from langgraph.graph import StateGraph, START, END

class State(TypedDict):
    ran_by: Annotated[list, operator.add]

def a(state):
    return {"ran_by": [sys.executable]}

builder = StateGraph(State)
builder.add_node("a", a)
builder.add_edge(START, "a")
builder.add_edge("a", END)
graph = builder.compile()
PY
(cd "$W/proj" && env -u VIRTUAL_ENV "$W/app/bin/superstep" run app.py:graph -t t1 --db "$W/proj/app.sqlite" \
  --input '{"ran_by": []}' --steps 2 > "$W/bridge.out") || { cat "$W/bridge.out"; fail "bridge: run from the installed binary"; }
ran_by=$(NO_COLOR=1 "$W/app/bin/superstep" show --db "$W/proj/app.sqlite" -t t1 --json \
  | "$W/tools/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["values"]["ran_by"])')
[ "$ran_by" = "['$W/app/bin/python']" ] || fail "bridge: node ran by $ran_by, expected ['$W/app/bin/python']"
echo "wheel: bridge: a step of app.py:graph from $W/app/bin/superstep ran in that venv's Python ($W/app/bin/python)"

# --- pipx (its classic pip backend) and uv tool, from the wheel file, into throwaway homes
PIPX_HOME="$W/pipx" PIPX_BIN_DIR="$W/pipx-bin" PIPX_MAN_DIR="$W/pipx-man" \
  "$T/pipx" install --backend pip "$WHEEL" 2>&1 | grep -v -e 'not on your PATH' -e 'will not be globally' -e 'updated. Run' -e "shell's config" || true
check_installed "pipx" "$W/pipx-bin/superstep"
[ -f "$W/pipx/venvs/superstep-debugger/pipx_metadata.json" ] || fail "pipx: no venv at $W/pipx/venvs/superstep-debugger"
UV_TOOL_DIR="$W/uv-tools" UV_TOOL_BIN_DIR="$W/uv-bin" UV_CACHE_DIR="$W/uv-cache" UV_PYTHON_DOWNLOADS=never \
  "$T/uv" tool install --offline "$WHEEL" 2>&1 | grep -v 'not on your PATH' || true
check_installed "uv tool" "$W/uv-bin/superstep"
[ -f "$W/uv-tools/superstep-debugger/uv-receipt.toml" ] || fail "uv: no tool venv at $W/uv-tools/superstep-debugger"

# --- completion scripts, from the installed binary, checked by each shell
S="$W/app/bin/superstep"
"$S" completions bash > "$W/superstep.bash"
bash -n "$W/superstep.bash"
got=$(bash -c 'source "$1"
  COMP_WORDS=(superstep thr); COMP_CWORD=1; _superstep superstep thr superstep; echo "${COMPREPLY[*]}"
  COMP_WORDS=(superstep completions ""); COMP_CWORD=2; _superstep superstep "" completions; echo "${COMPREPLY[*]}"
  COMP_WORDS=(superstep history --li); COMP_CWORD=2; _superstep superstep --li history; echo "${COMPREPLY[*]}"' _ "$W/superstep.bash")
[ "$(sed -n 1p <<<"$got")" = "threads" ] || fail "bash: 'superstep thr<Tab>' gave '$(sed -n 1p <<<"$got")'"
grep -qw fish <<<"$(sed -n 2p <<<"$got")" || fail "bash: 'superstep completions <Tab>' gave '$(sed -n 2p <<<"$got")'"
[ "$(sed -n 3p <<<"$got")" = "--limit" ] || fail "bash: 'superstep history --li<Tab>' gave '$(sed -n 3p <<<"$got")'"
echo "wheel: bash: syntax ok; thr → threads, completions → $(sed -n 2p <<<"$got" | grep -o 'bash zsh fish'), history --li → --limit"

"$S" completions zsh > "$W/_superstep"
zsh -n "$W/_superstep"
got=$(zsh -c 'autoload -U compinit; compinit -u -d "$2/zcompdump"; source "$1"; print -r -- $_comps[superstep]' _ "$W/_superstep" "$W")
[ "$got" = "_superstep" ] || fail "zsh: sourcing the script did not register _superstep (got '$got')"
echo "wheel: zsh: syntax ok; compdef registers _superstep for superstep"

"$S" completions fish > "$W/superstep.fish"
fish -n "$W/superstep.fish"
got=$(fish -c 'source $argv[1]; complete -C "superstep thr"; complete -C "superstep history --li"' "$W/superstep.fish" | cut -f1)
[ "$got" = $'threads\n--limit' ] || fail "fish: completions gave '$got'"
echo "wheel: fish: syntax ok; thr → threads, history --li → --limit"

# --- man pages, rendered by groff with warnings fatal
mkdir "$W/man1"
"$S" man --dir "$W/man1" >/dev/null
for page in "$W"/man1/*.1; do
  warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warn" ] || fail "groff warns on $(basename "$page"): $warn"
done
"$S" man | cmp -s - "$W/man1/superstep.1" || fail "man: stdout page differs from --dir's superstep.1"
echo "wheel: man: $(ls "$W/man1" | wc -l) pages render without groff warnings"

echo "wheel: ok"
