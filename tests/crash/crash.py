"""Crash consistency: SIGKILL `superstep` at random points while it drives a looping graph with
interrupts (graphs/countdown.json), then check the file and finish the thread.

For every run: a fresh DB; the thread is driven to the end by commands (run, then resume/continue as
the state asks), each one started as a process and, with some probability, killed with SIGKILL after
a random delay. After every kill:
  * `PRAGMA integrity_check` is "ok";
  * every checkpoint of the thread decodes (`superstep history --json` succeeds and lists them all);
Then the thread is finished — by superstep on even runs, by Python LangGraph (the twin graph built
from the same spec, SqliteSaver on the same file) on odd runs — and its final values must equal those
of an uninterrupted run. Prints "crash: N/N runs consistent (K kills)" and exits non-zero otherwise.

    python tests/crash/crash.py --runs 100 --superstep target/debug/superstep [--python PY]
"""
import argparse, json, os, random, sqlite3, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GRAPH = os.path.join(REPO, "graphs", "countdown.json")
INPUT = {"n": 0, "limit": 40}
THREAD = "c"


def sh(bin_, db, *args, kill_after=None):
    """Run a superstep command; kill it after `kill_after` seconds if given. Returns (rc, out, killed):
    `out` is stdout alone when the command succeeded (stderr carries notes that are not part of --json),
    stdout + stderr when it failed (for the assertion's message)."""
    p = subprocess.Popen([bin_, *args, "--db", db], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if kill_after is None:
        out, err = p.communicate()
        return p.returncode, out if p.returncode == 0 else out + err, False
    try:
        out, err = p.communicate(timeout=kill_after)
        return p.returncode, out if p.returncode == 0 else out + err, False
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return -9, "", True


def state(bin_, db):
    if not os.path.exists(db):
        return None
    rc, out, _ = sh(bin_, db, "show", "-t", THREAD, "--json")
    if rc != 0:
        return None  # no checkpoint yet
    return json.loads(out)


def check_file(bin_, db):
    if not os.path.exists(db):
        return
    c = sqlite3.connect(db)
    ok = c.execute("PRAGMA integrity_check").fetchone()[0]
    tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    # a kill before the schema was created leaves an empty (valid) file
    n = c.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id=?", (THREAD,)).fetchone()[0] if "checkpoints" in tables else 0
    c.close()
    assert ok == "ok", f"integrity_check: {ok}"
    if n:
        rc, out, _ = sh(bin_, db, "history", "-t", THREAD, "--json")
        assert rc == 0, f"history failed: {out[:300]}"
        assert len(json.loads(out)) == n, "history does not list every checkpoint"


def next_command(s):
    """The command that moves the thread on, from its live state."""
    if s is None:
        return ["run", GRAPH, "-t", THREAD, "--input", json.dumps(INPUT), "--recursion-limit", "200"]
    if s["interrupts"]:
        return ["resume", GRAPH, "-t", THREAD, "--value", "true", "--recursion-limit", "200"]
    if s["next"]:
        return ["continue", GRAPH, "-t", THREAD, "--recursion-limit", "200"]
    return None


def finish_with_superstep(bin_, db):
    for _ in range(200):
        cmd = next_command(state(bin_, db))
        if cmd is None:
            return state(bin_, db)["values"]
        rc, out, _ = sh(bin_, db, *cmd)
        assert rc == 0, f"{cmd}: {out[:300]}"
    raise AssertionError("did not finish")


def finish_with_langgraph(python, db):
    code = f"""
import json, sqlite3, sys
sys.path.insert(0, {os.path.join(REPO, 'tests', 'differential')!r})
from twin import build_graph
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command
conn = sqlite3.connect({db!r}, check_same_thread=False)
saver = SqliteSaver(conn)
g = build_graph({GRAPH!r}, saver, seed=0)
cfg = {{"configurable": {{"thread_id": {THREAD!r}}}, "recursion_limit": 200}}
for _ in range(200):
    s = g.get_state(cfg)
    if not s.config["configurable"].get("checkpoint_id"):
        g.invoke({INPUT!r}, cfg, durability="sync")
    elif s.interrupts:
        g.invoke(Command(resume=True), cfg, durability="sync")
    elif s.next:
        g.invoke(None, cfg, durability="sync")
    else:
        print(json.dumps(s.values))
        break
"""
    out = subprocess.run([python, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--superstep", required=True)
    ap.add_argument("--python", default=None)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="superstep-crash-")
    ref_db = os.path.join(tmp, "ref.sqlite")
    t0 = time.perf_counter()
    want = finish_with_superstep(a.superstep, ref_db)
    full = time.perf_counter() - t0
    ok = kills = 0
    for i in range(a.runs):
        db = os.path.join(tmp, f"run{i}.sqlite")
        # drive with random kills until a few kills happened or the thread finished
        for _ in range(60):
            cmd = next_command(state(a.superstep, db))
            if cmd is None:
                break
            delay = rnd.uniform(0, max(0.02, full / 6)) if rnd.random() < 0.7 else None
            _, _, killed = sh(a.superstep, db, *cmd, kill_after=delay)
            if killed:
                kills += 1
                check_file(a.superstep, db)
                if rnd.random() < 0.5:
                    break  # hand over to the finisher right after a kill
        check_file(a.superstep, db)
        if i % 2 == 1 and a.python:
            got = finish_with_langgraph(a.python, db)
        else:
            got = finish_with_superstep(a.superstep, db)
        if got == want:
            ok += 1
        else:
            print(f"run {i}: final values differ:\n  got  {got}\n  want {want}")
    print(f"crash: {ok}/{a.runs} runs consistent ({kills} kills, finishers: superstep and {'LangGraph' if a.python else 'superstep only'})")
    sys.exit(0 if ok == a.runs else 1)


if __name__ == "__main__":
    main()
