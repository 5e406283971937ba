#!/usr/bin/env python3
"""A tqdm-style progress bar under superstep vs plain Python, side by side (issue 21 item 5).

The node `hostile.py:progress` writes `--updates` carriage-return updates to stderr and one
newline, and records how long the updates took. It runs twice per round, interleaved:

* plain: the node called by plain Python, its stderr a pipe this script drains (what a terminal
  or `| less` costs; also reported: stderr to /dev/null);
* superstep: `superstep run hostile.py:progress_bar` through the bridge, output captured.

The ratio compared is the node's own time (superstep / plain pipe), best of `--rounds`; whole-command
wall times are printed too. Exit 1 when the ratio is above `--max-ratio` (2) or the captured output
is not the single line a terminal ends up showing.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPHS = os.path.join(HERE, "..", "bridge", "graphs")


def plain(py, n, mark, sink):
    code = f"import hostile; hostile.progress({{'n': 0, 'updates': {n}, 'mark': {mark!r}}})"
    t = time.perf_counter()
    subprocess.run([py, "-c", code], cwd=GRAPHS, stderr=sink, check=True)
    return time.perf_counter() - t, float(open(mark).read())


def under_superstep(superstep, py, n, mark, db):
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    inp = json.dumps({"n": 0, "updates": n, "mark": mark})
    t = time.perf_counter()
    o = subprocess.run(
        [superstep, "--python", py, "--db", db, "run", os.path.join(GRAPHS, "hostile.py") + ":progress_bar", "-t", "t", "--input", inp, "--json"],
        capture_output=True,
        check=True,
    )
    wall = time.perf_counter() - t
    out = [o for o in json.loads(o.stdout).get("output", []) if o["node"] == "progress"]
    want = f"{n}/{n} |{'#' * 20}|\n"
    if [o["text"] for o in out] != [want]:
        sys.exit(f"captured output is not the one line a terminal shows: {len(out)} chunks, {sum(len(o['text']) for o in out)} chars")
    return wall, float(open(mark).read())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--superstep", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--updates", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-ratio", type=float, default=2.0)
    a = ap.parse_args()
    d = tempfile.mkdtemp()
    mark, db = os.path.join(d, "mark"), os.path.join(d, "p.sqlite")
    rows = {"plain, stderr a pipe": [], "plain, stderr /dev/null": [], "superstep": []}
    for _ in range(a.rounds):
        rows["plain, stderr a pipe"].append(plain(a.python, a.updates, mark, subprocess.PIPE))
        rows["plain, stderr /dev/null"].append(plain(a.python, a.updates, mark, subprocess.DEVNULL))
        rows["superstep"].append(under_superstep(a.superstep, a.python, a.updates, mark, db))
    best = {k: min(v, key=lambda x: x[1]) for k, v in rows.items()}
    for k, (wall, node) in best.items():
        print(f"{a.updates:>9} updates  {k:<24} node {node:7.3f} s  ({node / a.updates * 1e6:5.2f} us/update)  whole command {wall:6.2f} s")
    ratio = best["superstep"][1] / best["plain, stderr a pipe"][1]
    ratio_null = best["superstep"][1] / best["plain, stderr /dev/null"][1]
    print(f"ratio superstep / plain: {ratio:.2f} (pipe), {ratio_null:.2f} (/dev/null); limit {a.max_ratio}")
    if ratio > a.max_ratio:
        sys.exit(1)


if __name__ == "__main__":
    main()
