#!/usr/bin/env python3
"""Side-by-side benchmark: superstep's inspector CLI vs LangGraph's own Python API on one checkpoint DB.

    python3 benches/inspect_bench.py --db /tmp/bench1000.sqlite \\
        --superstep target/release/superstep --python "$PY" [--repeat 5] [--json-out FILE]

Every measured command runs as its own process, --repeat times (after --warmup unmeasured rounds), the
commands interleaved round-robin so that drift in machine load hits both tools alike. Per command:
median / min wall ms and the max peak RSS (MiB) over the repeats. For LangGraph it also reports the
in-process time of just the API call (`api_ms`, printed by lg_inspect.py), separately from the process
wall time, which includes Python start-up and `import langgraph`.

Peak RSS: a child's ru_maxrss from wait4() on Linux is never below the RSS of the process it was forked
from (exec folds the old address space's high-water mark into the child's maxrss), so a command spawned
straight from this ~14 MiB Python harness would report >= 14 MiB. Each command is therefore started
through the tiny launcher benches/rss_exec.c (compiled here with `cc`), which forks, execs and wait4()s
the command and reports the command's own ru_maxrss and wall time. Without a C compiler (or with
--no-launcher) the harness falls back to Popen + os.wait4 directly and flags the RSS figures as upper
bounds (the floor, measured with /bin/true, is printed).

Outputs are checked (exit code 0 on every run; JSON parses; thread list, history length / checkpoint
ids / values and the live state agree with LangGraph's). Any mismatch aborts with exit code 1.
Standard library only; run with any Python >= 3.9 (the LangGraph side runs with --python).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LG_SCRIPT = os.path.join(HERE, "lg_inspect.py")
LAUNCHER_SRC = os.path.join(HERE, "rss_exec.c")


class BenchError(Exception):
    pass


def fail(msg: str) -> None:
    raise BenchError(msg)


# ----------------------------------------------------------------------------------------------------
# Running one command
# ----------------------------------------------------------------------------------------------------

def build_launcher(tmp: str) -> str | None:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc or not os.path.exists(LAUNCHER_SRC):
        return None
    exe = os.path.join(tmp, "rss_exec")
    r = subprocess.run([cc, "-O2", "-o", exe, LAUNCHER_SRC], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"warning: could not compile {LAUNCHER_SRC}:\n{r.stderr}", file=sys.stderr)
        return None
    return exe


class Runner:
    def __init__(self, tmp: str, launcher: str | None):
        self.tmp = tmp
        self.launcher = launcher

    def run(self, argv: list[str], out_path: str, err_path: str) -> dict:
        """Run argv once (stdout -> out_path, stderr -> err_path). Returns wall/RSS/exit figures."""
        report = os.path.join(self.tmp, "rss_report.txt")
        full = [self.launcher, report, *argv] if self.launcher else argv
        if self.launcher and os.path.exists(report):
            os.remove(report)
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            t0 = time.perf_counter()
            p = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
            _, status, ru = os.wait4(p.pid, 0)
            outer_ms = (time.perf_counter() - t0) * 1000.0
        code = os.waitstatus_to_exitcode(status)
        p.returncode = code  # reaped by wait4; keep Popen from waiting again
        res = {"exit": code, "outer_wall_ms": outer_ms}
        if self.launcher:
            try:
                with open(report) as f:
                    fields = dict(kv.split("=", 1) for kv in f.read().split())
            except OSError:
                fields = None
            if not fields:
                res.update(wall_ms=outer_ms, maxrss_kib=None)
            else:
                res.update(wall_ms=int(fields["wall_ns"]) / 1e6, maxrss_kib=int(fields["maxrss_kib"]),
                           utime_ms=int(fields["utime_us"]) / 1000.0, stime_ms=int(fields["stime_us"]) / 1000.0)
        else:
            res.update(wall_ms=outer_ms, maxrss_kib=ru.ru_maxrss,
                       utime_ms=ru.ru_utime * 1000.0, stime_ms=ru.ru_stime * 1000.0)
        return res


def run_checked(runner: Runner, argv: list[str], tmp: str, what: str) -> tuple[dict, bytes, str]:
    out_p, err_p = os.path.join(tmp, "once.out"), os.path.join(tmp, "once.err")
    res = runner.run(argv, out_p, err_p)
    with open(out_p, "rb") as f:
        out = f.read()
    with open(err_p, "rb") as f:
        err = f.read().decode("utf-8", "replace")
    if res["exit"] != 0:
        fail(f"{what}: exit code {res['exit']}\n  command: {shlex.join(argv)}\n  stderr: {err.strip()}")
    return res, out, err


def parse_lg_stderr(err: str) -> dict:
    """lg_inspect.py's last stderr line: `import_ms=.. compile_ms=.. api_ms=.. dump_ms=.. items=N`."""
    for line in reversed(err.strip().splitlines()):
        if line.startswith("import_ms="):
            return {k: float(v) for k, v in (kv.split("=", 1) for kv in line.split())}
    fail(f"lg_inspect.py printed no timing line on stderr:\n{err}")


# ----------------------------------------------------------------------------------------------------
# Environment / DB facts
# ----------------------------------------------------------------------------------------------------

def machine_info() -> dict:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_kib = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_kib = int(line.split()[1])
    except OSError:
        pass
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = None
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip() if shutil.which("nproc") else None
    return {
        "nproc": int(nproc) if nproc and nproc.isdigit() else affinity,
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu,
        "mem_total_mib": round(mem_kib / 1024) if mem_kib else None,
        "kernel": platform.release(),
        "loadavg_start": os.getloadavg(),
    }


def db_info(db: str) -> dict:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        n_threads, n_ckpts = conn.execute(
            "SELECT COUNT(DISTINCT thread_id), COUNT(*) FROM checkpoints").fetchone()
        n_writes = conn.execute("SELECT COUNT(*) FROM writes").fetchone()[0]
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        conn.close()
    return {"path": db, "size_bytes": os.path.getsize(db), "threads": n_threads, "checkpoints": n_ckpts,
            "writes": n_writes, "journal_mode": journal}


# ----------------------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------------------

def load_json(raw: bytes, what: str):
    try:
        return json.loads(raw)
    except ValueError as e:
        fail(f"{what}: output is not JSON ({e}); first bytes: {raw[:200]!r}")


def ckpt_id(snap: dict) -> str:
    return snap["config"]["configurable"]["checkpoint_id"]


def values_match(ss: dict, lg: dict) -> str | None:
    """"exact", "defaults" or None (mismatch).

    "defaults": equal except for keys LangGraph shows with an empty list / dict that superstep omits.
    Without --topology superstep cannot know a reducer channel's initial value (e.g. `log: []` from
    operator.add on a list, before anything was written to it), so it leaves such keys out; LangGraph
    shows the channel's default. Only empty containers are tolerated this way.
    """
    if ss == lg:
        return "exact"
    if set(ss) - set(lg) or any(ss[k] != lg[k] for k in ss):
        return None
    if all(lg[k] in ([], {}) for k in set(lg) - set(ss)):
        return "defaults"
    return None


def validate(outs: dict, thread: str, db: dict) -> dict:
    """Cross-check superstep's outputs against LangGraph's. Returns a small summary."""
    ss_threads = load_json(outs["ss_threads"], "superstep threads --json")
    lg_threads = load_json(outs["lg_threads"], "lg_inspect.py threads")
    if not isinstance(ss_threads, list) or not ss_threads:
        fail("superstep threads --json: expected a non-empty list")
    ss_map = {t["thread_id"]: t for t in ss_threads}
    lg_map = {t["thread_id"]: t for t in lg_threads}
    if set(ss_map) != set(lg_map):
        fail(f"thread lists differ: only superstep {sorted(set(ss_map) - set(lg_map))[:5]}, "
             f"only LangGraph {sorted(set(lg_map) - set(ss_map))[:5]}")
    if len(ss_map) != db["threads"]:
        fail(f"superstep threads: {len(ss_map)} threads, the DB has {db['threads']}")
    for tid, lt in lg_map.items():
        st = ss_map[tid]
        if st["checkpoints"] != lt["checkpoints"] or st["latest_checkpoint_id"] != lt["latest_checkpoint_id"]:
            fail(f"thread {tid}: superstep {st['checkpoints']} checkpoints / latest {st['latest_checkpoint_id']}, "
                 f"LangGraph {lt['checkpoints']} / {lt['latest_checkpoint_id']}")

    ss_hist = load_json(outs["ss_history_json"], "superstep history --json")
    lg_hist = load_json(outs["lg_history"], "lg_inspect.py history")
    if not isinstance(ss_hist, list) or not isinstance(lg_hist, list):
        fail("history: expected JSON lists")
    if len(ss_hist) != len(lg_hist):
        fail(f"history length: superstep {len(ss_hist)}, LangGraph {len(lg_hist)}")
    if len(ss_hist) != ss_map[thread]["checkpoints"] or not ss_hist:
        fail(f"history length {len(ss_hist)} != the thread's checkpoint count {ss_map[thread]['checkpoints']}")
    default_only = []
    for i, (s, l) in enumerate(zip(ss_hist, lg_hist)):
        if ckpt_id(s) != ckpt_id(l):
            fail(f"history[{i}]: checkpoint id superstep {ckpt_id(s)} vs LangGraph {ckpt_id(l)}")
        m = values_match(s["values"], l["values"])
        if m is None:
            fail(f"history[{i}] ({ckpt_id(s)}): values differ\n  superstep {s['values']}\n  LangGraph {l['values']}")
        if m == "defaults":
            default_only.append(f"step {s['metadata'].get('step')}: LangGraph "
                                + ", ".join(f"{k}={l['values'][k]!r}" for k in l["values"] if k not in s["values"]))
        if list(s["next"]) != list(l["next"]):
            fail(f"history[{i}] ({ckpt_id(s)}): next superstep {s['next']} vs LangGraph {l['next']}")

    ss_show = load_json(outs["ss_show_json"], "superstep show --json")
    lg_show = load_json(outs["lg_show"], "lg_inspect.py show")
    if ckpt_id(ss_show) != ckpt_id(lg_show) or ckpt_id(ss_show) != ss_map[thread]["latest_checkpoint_id"]:
        fail(f"show: checkpoint superstep {ckpt_id(ss_show)}, LangGraph {ckpt_id(lg_show)}, "
             f"latest {ss_map[thread]['latest_checkpoint_id']}")
    show_match = values_match(ss_show["values"], lg_show["values"])
    if show_match is None or list(ss_show["next"]) != list(lg_show["next"]):
        fail(f"show: state differs\n  superstep {ss_show['values']} next {ss_show['next']}\n"
             f"  LangGraph {lg_show['values']} next {lg_show['next']}")

    for key, what in (("ss_history_human", "superstep history"), ("ss_show_human", "superstep show")):
        text = outs[key].decode("utf-8", "replace")
        if thread not in text:
            fail(f"{what} (human): output does not mention thread {thread}:\n{text[:500]}")
    hist_lines = outs["ss_history_human"].decode("utf-8", "replace").count(ss_map[thread]["latest_checkpoint_id"])
    if hist_lines < 1:
        fail("superstep history (human): latest checkpoint id missing from the output")
    return {"history_len": len(ss_hist), "threads": len(ss_map), "show_checkpoint": ckpt_id(ss_show),
            "history_values_default_only": default_only, "show_values": show_match}


# ----------------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------------

def summarize(runs: list[dict]) -> dict:
    walls = [r["wall_ms"] for r in runs]
    rss = [r["maxrss_kib"] for r in runs if r.get("maxrss_kib") is not None]
    s = {"median_ms": statistics.median(walls), "min_ms": min(walls), "max_ms": max(walls),
         "peak_rss_mib": max(rss) / 1024.0 if rss else None}
    lg = [r["lg"] for r in runs if "lg" in r]
    if lg:
        for k in ("import_ms", "compile_ms", "api_ms", "dump_ms"):
            s[f"lg_{k}_median"] = statistics.median(x[k] for x in lg)
    return s


def fmt_ms(s: dict | None) -> str:
    if s is None:
        return "—"
    return f"{s['median_ms']:.1f} ({s['min_ms']:.1f})"


def fmt_rss(s: dict | None) -> str:
    if s is None or s["peak_rss_mib"] is None:
        return "—"
    return f"{s['peak_rss_mib']:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="checkpoint DB (e.g. made by benches/gen_bench_db.py)")
    ap.add_argument("--superstep", required=True, help="superstep binary (use a release build for real figures)")
    ap.add_argument("--python", required=True, help="python of the LangGraph venv (tests/oracle/setup_venv.sh)")
    ap.add_argument("--repeat", type=int, default=5, help="measured runs per command (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="unmeasured rounds first (default 1; page cache, .pyc)")
    ap.add_argument("--thread", help="thread for history/show (default: the middle of `superstep threads`)")
    ap.add_argument("--json-out", help="write the raw numbers (every run) to this JSON file")
    ap.add_argument("--no-launcher", action="store_true",
                    help="spawn commands straight from Python (RSS figures then include the harness floor)")
    args = ap.parse_args()
    if args.repeat < 1 or args.warmup < 0:
        ap.error("--repeat must be >= 1, --warmup >= 0")

    db = os.path.abspath(args.db)
    ss = os.path.abspath(args.superstep) if os.sep in args.superstep else (shutil.which(args.superstep) or args.superstep)
    py = args.python if os.sep not in args.python else os.path.abspath(args.python)
    for path, what in ((db, "--db"), (ss, "--superstep"), (LG_SCRIPT, "lg_inspect.py")):
        if not os.path.isfile(path):
            fail(f"{what}: no such file {path}")

    tmp = tempfile.mkdtemp(prefix="superstep-bench-")
    try:
        launcher = None if args.no_launcher else build_launcher(tmp)
        runner = Runner(tmp, launcher)
        machine = machine_info()
        dbi = db_info(db)

        # Versions (also checks that both sides start at all).
        _, out, _ = run_checked(runner, [ss, "--version"], tmp, "superstep --version")
        ss_version = out.decode().strip()
        _, out, _ = run_checked(runner, [py, "-c", (
            "import sys, importlib.metadata as m; print(sys.version.split()[0], "
            "*(m.version(p) for p in ('langgraph', 'langgraph-checkpoint', 'langgraph-checkpoint-sqlite')))")],
            tmp, "--python version probe")
        py_ver, lg_ver, lgc_ver, lgs_ver = out.decode().split()
        floor = None
        if not launcher:
            res, _, _ = run_checked(runner, ["/bin/true"], tmp, "/bin/true")
            floor = res["maxrss_kib"] / 1024.0

        # Thread for history/show.
        _, out, _ = run_checked(runner, [ss, "threads", "--db", db, "--json"], tmp, "superstep threads --json")
        ids = [t["thread_id"] for t in load_json(out, "superstep threads --json")]
        if not ids:
            fail("the DB has no threads")
        thread = args.thread or sorted(ids)[len(ids) // 2]
        if thread not in ids:
            fail(f"--thread {thread}: not in the DB")

        lg = [py, LG_SCRIPT]
        jobs = {  # key -> argv
            "ss_noop": [ss, "--version"],
            "lg_noop": [*lg, "noop", db],
            "ss_threads": [ss, "threads", "--db", db, "--json"],
            "lg_threads": [*lg, "threads", db],
            "ss_history_json": [ss, "history", "--db", db, "--thread", thread, "--json"],
            "ss_history_human": [ss, "history", "--db", db, "--thread", thread],
            "lg_history": [*lg, "history", db, thread],
            "ss_show_json": [ss, "show", "--db", db, "--thread", thread, "--json"],
            "ss_show_human": [ss, "show", "--db", db, "--thread", thread],
            "lg_show": [*lg, "show", db, thread],
        }
        rows = [  # label, superstep job, LangGraph job, LangGraph is shared with the --json row
            ("start-up only (`superstep --version` / `lg_inspect.py noop`)", "ss_noop", "lg_noop", False),
            ("threads --json", "ss_threads", "lg_threads", False),
            ("history --json", "ss_history_json", "lg_history", False),
            ("history (human view)", "ss_history_human", "lg_history", True),
            ("show --json", "ss_show_json", "lg_show", False),
            ("show (human view)", "ss_show_human", "lg_show", True),
        ]

        runs: dict[str, list[dict]] = {k: [] for k in jobs}
        out_paths = {k: os.path.join(tmp, f"{k}.out") for k in jobs}
        err_paths = {k: os.path.join(tmp, f"{k}.err") for k in jobs}
        total = args.warmup + args.repeat
        t_start = time.perf_counter()
        for rnd in range(total):
            measured = rnd >= args.warmup
            for key, argv in jobs.items():
                res = runner.run(argv, out_paths[key], err_paths[key])
                if res["exit"] != 0:
                    with open(err_paths[key], errors="replace") as f:
                        err = f.read().strip()
                    fail(f"{key}: exit code {res['exit']} (round {rnd})\n  command: {shlex.join(argv)}\n"
                         f"  stderr: {err[-2000:]}")
                if key.startswith("lg_"):
                    with open(err_paths[key], errors="replace") as f:
                        res["lg"] = parse_lg_stderr(f.read())
                if measured:
                    runs[key].append(res)
            if rnd == 0 or rnd == total - 1:  # validate the first round (fail fast) and the last
                outs = {}
                for key in jobs:
                    with open(out_paths[key], "rb") as f:
                        outs[key] = f.read()
                checks = validate(outs, thread, dbi)
            print(f"  round {rnd + 1}/{total}{'' if measured else ' (warm-up)'} done, "
                  f"{time.perf_counter() - t_start:.1f} s", file=sys.stderr, flush=True)
        lg_items = runs["lg_history"][-1]["lg"]["items"]
        if lg_items != checks["history_len"]:
            fail(f"lg_inspect.py reported items={lg_items}, history has {checks['history_len']}")
        machine["loadavg_end"] = os.getloadavg()

        stats = {k: summarize(v) for k, v in runs.items()}

        # ------------------------------------------------------------------------------------------
        lines = []
        p = lines.append
        p(f"## superstep vs LangGraph: inspecting `{os.path.basename(db)}`")
        p("")
        p(f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}")
        p(f"- machine: {machine['nproc']} CPUs (nproc), {machine['cpu_model']}, "
          f"{machine['mem_total_mib']} MiB RAM, Linux {machine['kernel']}; load avg "
          f"{machine['loadavg_start'][0]:.2f} at start, {machine['loadavg_end'][0]:.2f} at end")
        p(f"- DB: {dbi['size_bytes'] / 2**20:.1f} MiB ({dbi['size_bytes']} bytes), {dbi['threads']} threads, "
          f"{dbi['checkpoints']} checkpoints, {dbi['writes']} writes; thread measured: `{thread}` "
          f"({checks['history_len']} checkpoints)")
        p(f"- superstep: `{ss}` ({ss_version})"
          + ("  **debug build: not representative**" if f"{os.sep}debug{os.sep}" in ss else ""))
        p(f"- LangGraph: Python {py_ver}, langgraph {lg_ver}, langgraph-checkpoint {lgc_ver}, "
          f"langgraph-checkpoint-sqlite {lgs_ver}")
        p(f"- runs: {args.repeat} measured per command after {args.warmup} warm-up round(s), commands "
          f"interleaved round-robin; every command is a separate process")
        p("")
        p("| command | superstep median ms (min) | LangGraph median ms (min), process | LangGraph API ms "
          "| ratio | superstep peak RSS MiB | LangGraph peak RSS MiB |")
        p("|---|---:|---:|---:|---:|---:|---:|")
        for label, sk, lk, shared in rows:
            s, l = stats[sk], stats[lk]
            mark = " †" if shared else ""
            api = "—" if lk == "lg_noop" else f"{l['lg_api_ms_median']:.1f}"
            ratio = l["median_ms"] / s["median_ms"]
            p(f"| {label} | {fmt_ms(s)} | {fmt_ms(l)}{mark} | {api}{mark} | {ratio:.1f}× "
              f"| {fmt_rss(s)} | {fmt_rss(l)}{mark} |")
        p("")
        p("- ratio = LangGraph process median / superstep median (both are whole processes, "
          "start-up included).")
        p("- LangGraph API ms = in-process time of just the API call (median), measured inside "
          "lg_inspect.py; the process time adds Python start-up, imports "
          f"(median {stats['lg_history']['lg_import_ms_median']:.0f} ms here), opening the DB / compiling the graph "
          "and JSON output.")
        p("- LangGraph has no list-threads API: `threads` there is `SqliteSaver.list(None)` (every checkpoint "
          "of every thread, deserialized) grouped by thread id.")
        p("- † LangGraph has no human view; these rows repeat the LangGraph `--json` measurement of the same "
          "call.")
        if launcher:
            p("- peak RSS = the command's own ru_maxrss (wait4), max over the runs; commands are started "
              "through benches/rss_exec.c so the harness's RSS does not leak into the figure.")
        else:
            p(f"- **peak RSS figures are upper bounds**: spawned straight from the Python harness, every "
              f"child reports at least the harness's own RSS (floor measured with /bin/true: {floor:.1f} MiB).")
        exact = checks["history_len"] - len(checks["history_values_default_only"])
        p(f"- checks passed: exit code 0 on every run; same {checks['threads']} threads (counts, latest ids); "
          f"history: same {checks['history_len']} checkpoint ids in order and same `next`, values identical in "
          f"{exact}/{checks['history_len']} snapshots"
          + (f" (the rest differ only by reducer defaults superstep cannot know without --topology: "
             f"{'; '.join(checks['history_values_default_only'])})" if checks["history_values_default_only"] else "")
          + f"; show: same checkpoint, `next`, values ({checks['show_values']}).")
        p("")
        p("Figures come from one run on one machine: read the ratios, not the absolute numbers.")
        table = "\n".join(lines)
        print(table)

        if args.json_out:
            raw = {
                "machine": machine, "db": dbi, "thread": thread, "checks": checks,
                "superstep": {"path": ss, "version": ss_version},
                "langgraph": {"python": py, "python_version": py_ver, "langgraph": lg_ver,
                              "langgraph_checkpoint": lgc_ver, "langgraph_checkpoint_sqlite": lgs_ver},
                "repeat": args.repeat, "warmup": args.warmup,
                "rss_method": "rss_exec launcher (fork+exec+wait4)" if launcher else "Popen + os.wait4 (includes harness floor)",
                "rss_floor_mib": floor,
                "commands": {k: {"argv": jobs[k], "runs": runs[k], "stats": stats[k]} for k in jobs},
                "rows": [{"label": label, "superstep": sk, "langgraph": lk, "langgraph_shared": shared}
                         for label, sk, lk, shared in rows],
                "markdown": table,
            }
            with open(args.json_out, "w") as f:
                json.dump(raw, f, indent=2)
                f.write("\n")
            print(f"\nraw numbers: {args.json_out}", file=sys.stderr)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        print(f"\ninspect_bench: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
