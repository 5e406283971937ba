"""The bridge's Python as superstep ships it: src/bridge/process.rs hands bridge.py and its modules
to the interpreter under the module names its MODULES table gives (superstep_wire, ...); this
writes them under those names into a temp directory and puts it first on sys.path, so the tests import exactly
what the binary runs."""

import os
import re
import shutil
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BRIDGE = os.path.join(REPO, "src", "bridge")


def shipped():
    """(shipped file name, source file) of every module process.rs ships with the program."""
    text = open(os.path.join(BRIDGE, "process.rs"), encoding="utf-8").read()
    table = re.search(r"pub const MODULES: &\[\(&str, &str\)\] = &\[(.*?)\];", text, re.S)
    assert table, "src/bridge/process.rs: no MODULES table"
    pairs = [(m + ".py", f) for m, f in re.findall(r'\("(superstep_\w+)",\s*include_str!\("(\w+\.py)"\)\)', table.group(1))]
    assert pairs, "src/bridge/process.rs: MODULES is empty"
    return pairs + [("superstep_bridge.py", "bridge.py")]


PROGRAM_DIR = tempfile.mkdtemp(prefix="superstep-pytest-")
for name, source in shipped():
    shutil.copyfile(os.path.join(BRIDGE, source), os.path.join(PROGRAM_DIR, name))
sys.path.insert(0, PROGRAM_DIR)


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(PROGRAM_DIR, ignore_errors=True)
