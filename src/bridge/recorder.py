"""superstep's call recorder: records each call a node makes to a LangChain chat model / LLM or
tool, per task attempt, and answers the calls of a replayed branch from the recording.

Shipped inside the superstep binary beside the bridge (imported by it as `superstep_recorder`).

Why a wrapper and not a callback or `set_llm_cache`: a callback sees a call but cannot answer it,
and LangChain's cache is keyed by (prompt, model settings) alone — it would answer an identical
request anywhere (another thread, a later step, a live run) and it knows nothing of tools. So the
recorder wraps the one place LangChain's own cache sits, `BaseChatModel._generate_with_cache`
(`_agenerate_with_cache`; `BaseLLM._generate_helper` for text LLMs), and `BaseTool.run` / `arun`:
callbacks still fire for a model call served from the recording, and the request is what the
cache would key on (messages without ids, the model's llm string).

Where a call sits (its position): the root checkpoint its root task was prepared from, the task's
path at every namespace level with task ids left out (`agent`, `work#1` for the second `Send`,
`inner/ask@1` inside a subgraph), the attempt, and the call's number within the attempt. LangGraph's
task ids depend on the checkpoint id, so they differ on a fork; paths do not. Which recording a
run replays is found by lineage: a checkpoint re-run (a resume, a retry) replays its own earlier
calls; a fork or update checkpoint replays what ran from its parent; a checkpoint a fully replayed
step wrote replays the one the recorded step wrote (an alias kept here). A step with a live or
diverged call writes no alias, so everything after it is live.

Recordings live beside LangGraph's rows, never in its tables: a sibling SQLite file for a SQLite
store, `superstep_call*` tables for a Postgres one (PostgresSaver reads only its own tables).
"""

import contextvars
import json
import sys
import threading
import time

from superstep_calldata import (
    apply_ids,
    canonical,
    digest,
    error_record,
    first_diff,
    forget_messages,
    ids_of,
    late_ids,
    model_name,
    model_request,
    one_line,
    path_key,
    rebuild_error,
    response_line,
    summary,
    tokens,
    tool_request,
)
from superstep_recordings import Store

LIVE = object()  # serve(): nothing usable recorded, make the call


def exc_text(e):
    return f"{type(e).__name__}: {e}"


def warn(text):
    """A line on the bridge's stderr (superstep shows it with the run's output)."""
    try:
        print(f"superstep recorder: {text}", file=sys.stderr)
    except Exception:
        pass


class ReplayMismatch(RuntimeError):
    """`--replay strict`: a call's request differs from the recording (not retried by LangGraph's
    default retry policy: a RuntimeError)."""


# ------------------------------------------------------------------------------------------------
# The recorder
# ------------------------------------------------------------------------------------------------

_INSIDE = contextvars.ContextVar("superstep_inside_call", default=False)


class Step:
    """What the recorder knows about one root superstep."""

    def __init__(self, checkpoint=None, roots=None):
        self.checkpoint = checkpoint  # the root checkpoint its tasks were prepared from
        self.roots = roots or {}  # root task id -> path key
        self.pending = []  # its calls, written when it ends
        self.seq = {}  # (task id, attempt) -> next call number
        self.ref = {}  # (position, attempt) -> [reference rows], best first
        self.consumed = set()
        self.diverged_tasks = set()
        self.chain = []  # the checkpoints whose recordings it replays, best first
        self.replaying = False
        self.source = None  # the checkpoint's metadata source, and its parent
        self.parent = None

    def unconsumed(self):
        """Recorded calls of a task that ran this superstep that the replay never made."""
        ran = set(self.roots.values())
        for (pos, att), rows in self.ref.items():
            if pos.split("/", 1)[0] not in ran:
                continue
            best = (rows[0]["checkpoint_id"], rows[0]["run"])
            for r in rows:
                if (r["checkpoint_id"], r["run"]) == best and r["id"] not in self.consumed:
                    return True
        return False


REF_COLUMNS = ("id", "checkpoint_id", "run", "position", "attempt", "seq", "kind", "name", "request", "request_hash", "response_type", "response", "error", "late_ids", "status")


class Recorder:
    def __init__(self, where):
        self.where = where
        self.store = None
        self.lock = threading.RLock()
        self.serde = None
        self.mode = "diverge"
        self.record = True
        self.thread = None
        self.run = 0
        self.nested = {}  # nested task id -> (path key, step)
        # the superstep whose tasks run now, and the one before it while it is being finished (the
        # bridge learns the next boundary before it closes the step that led there)
        self.cur = Step()
        self.prev = None

    # -- lifecycle (called by the bridge) ---------------------------------------------------------

    def open(self):
        if self.store is None and self.where is not None:
            try:
                self.store = Store(self.where)
            except Exception as e:
                # runs go on unrecorded (and unreplayed): the user's graph comes first
                warn(f"call recordings cannot be opened ({exc_text(e)}): calls are neither recorded nor replayed")
                self.where = None
                return None
            from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

            self.serde = JsonPlusSerializer()
        return self.store

    def close(self):
        """The session ends: the recordings file is closed (its -wal and -shm files go)."""
        with self.lock:
            if self.store is not None:
                self.store.close()
                self.store = None

    def begin_run(self, thread, mode, record):
        """A new LangGraph run on `thread` (a `stream` call). `--no-record`: the recordings are
        not opened (nothing is created beside the store)."""
        if record is not False:
            self.open()
        with self.lock:
            self.thread = thread
            self.mode = mode or "diverge"
            self.record = record is not False and self.store is not None
            self.run = self.store.next_run() if self.store is not None else 0
            self.cur, self.prev = Step(), None
            self.nested = {}
            forget_messages()

    def boundary(self, loop, tasks):
        """The run is paused before a root superstep: `tasks` {task id: (name, path)} are about to
        run from the checkpoint `loop` holds. Loads the recording this superstep replays."""
        if not self.record:
            return
        with self.lock:
            step = Step(loop.checkpoint["id"], {tid: path_key(name, path) for tid, (name, path) in tasks.items()})
            meta = getattr(loop, "checkpoint_metadata", None) or {}
            step.source = meta.get("source")
            step.parent = ((getattr(loop, "prev_checkpoint_config", None) or {}).get("configurable") or {}).get("checkpoint_id")
            if self.cur.pending or self.cur.checkpoint is not None:
                # the step that led here is not closed yet: its alias decides this one's recording
                self.prev = self.cur
                self.cur = step
                return
            self.cur = step
            self.load_reference(step)

    def load_reference(self, step):
        """The recorded calls `step` replays (none when it has no recording or replay is off)."""
        with self.lock:
            if self.store is None or self.mode == "off":
                return
            step.chain = self.reference_chain(step)
            if not step.chain:
                return
            step.replaying = True
            marks = ", ".join("?" for _ in step.chain)
            rows = self.store.query(
                f"SELECT {', '.join(REF_COLUMNS)} FROM superstep_calls WHERE thread_id = ? AND checkpoint_id IN ({marks})",
                [self.thread, *step.chain],
            )
            order = {cp: i for i, cp in enumerate(step.chain)}
            rows.sort(key=lambda r: (order[r[1]], -r[2], r[5]))
            for r in rows:
                row = dict(zip(REF_COLUMNS, r))
                # an error recorded at this very checkpoint is what a retry runs again: not served
                if row["error"] and row["checkpoint_id"] == step.checkpoint:
                    continue
                # a call strict replay refused never ran, an answer that could not be stored:
                # nothing to answer with
                if row["error"] and "ReplayMismatch" in row["error"]:
                    continue
                if row["response_type"] is None and not row["error"]:
                    continue
                step.ref.setdefault((row["position"], row["attempt"]), []).append(row)

    def reference_chain(self, step):
        """The checkpoints whose recorded calls a superstep from `cp` replays, best first: `cp`
        itself (a resume or retry runs its tasks again), then what it stands for — the checkpoint
        a replayed step's original wrote (an alias), a fork's or an update's parent."""
        cp = step.checkpoint
        chain = []
        if self.store.query("SELECT 1 FROM superstep_calls WHERE thread_id = ? AND checkpoint_id = ? LIMIT 1", (self.thread, cp)):
            chain.append(cp)
        seen = {cp}
        cur = cp
        for _ in range(64):
            a = self.store.query("SELECT ref_checkpoint_id FROM superstep_call_aliases WHERE thread_id = ? AND checkpoint_id = ?", (self.thread, cur))
            if a:
                cur = a[0][0]
            elif cur == cp and step.source in ("fork", "update") and step.parent:
                cur = step.parent
            else:
                break
            if cur in seen:
                break
            seen.add(cur)
            chain.append(cur)
        return chain

    def step_end(self, written):
        """The superstep ended (`written`: the checkpoint it wrote, or None). Writes its calls, the
        step and, when every call was answered from the recording, the alias of `written`.
        Returns {root task id: [call summaries]} for the step report."""
        if not self.record:
            return {}
        with self.lock:
            following = self.prev is not None
            if following:
                st, self.prev = self.prev, None
            else:
                st, self.cur = self.cur, Step()
            rows = st.pending
            replayed = st.replaying and all(r["status"] == "recorded" for r in rows) and not st.unconsumed()
            alias = None
            if written and replayed:
                for cp in st.chain:
                    w = self.store.query("SELECT written_id FROM superstep_call_steps WHERE thread_id = ? AND checkpoint_id = ? ORDER BY run DESC LIMIT 1", (self.thread, cp))
                    if w:
                        alias = (self.thread, written, w[0][0])
                        break
            now = time.strftime("%Y-%m-%dT%H:%M:%S")
            for r in rows:
                self.finish_row(r)
                r["created_at"] = now
            record = (self.thread, st.checkpoint, written, self.run) if written and st.checkpoint else None
            if self.store is not None and (rows or record):
                try:
                    ids = self.store.write(rows, record, alias)
                except Exception as e:
                    # the run goes on; what it called is not recorded
                    warn(f"the calls of this superstep could not be recorded ({exc_text(e)})")
                    ids = []
                for r, i in zip(rows, ids):
                    r["id"] = i
            if following:
                self.load_reference(self.cur)
            out = {}
            for r in rows:
                out.setdefault(r["root_task_id"], []).append(summary(r))
            return out

    def finish_row(self, r):
        obj = r.pop("_object", None)
        if obj is not None and r.get("late_ids") is None:
            ids = late_ids(obj, r.pop("_ids_before", None))
            if ids:
                r["late_ids"] = json.dumps(ids)
        r.pop("_ids_before", None)

    # -- one call -----------------------------------------------------------------------------------

    def where_am_i(self):
        """(root task id, task id, task ns, position, node, step, attempt) of the node running in
        this context, or None outside a task of the run the recorder follows."""
        try:
            from langgraph.config import get_config

            cfg = get_config()
        except Exception:
            return None
        conf = cfg.get("configurable") or {}
        task_id = conf.get("__pregel_task_id")
        ns = conf.get("checkpoint_ns") or ""
        if not task_id or not ns:
            return None
        parts = ns.split("|")
        root = parts[0].rsplit(":", 1)[-1]
        st = self.cur
        if root not in st.roots:
            return None
        md = cfg.get("metadata") or {}
        step = md.get("langgraph_step")
        node = md.get("langgraph_node") or parts[-1].split(":", 1)[0]
        keys = [st.roots[root]]
        for seg in parts[1:-1]:
            tid = seg.rsplit(":", 1)[-1]
            k = self.nested.get(tid)
            keys.append(f"{k[0]}@{k[1]}" if k else seg.split(":", 1)[0])
        if len(parts) > 1:
            own = f"{path_key(node, md.get('langgraph_path'))}@{step}"
            self.nested[task_id] = (path_key(node, md.get("langgraph_path")), step)
            keys.append(own)
        attempt = 1
        info = getattr(conf.get("__pregel_runtime"), "execution_info", None)
        if info is not None:
            attempt = getattr(info, "node_attempt", 1) or 1
        return (st, root, task_id, ns, "/".join(keys), node, step, attempt)

    def start(self, kind, name, make_request):
        """Decide a call: returns (row, served_answer_or_None). `row` None: not recorded (a run
        with recording off, a call outside the run's tasks, or inside another recorded call)."""
        if not self.record or _INSIDE.get():
            return None, None
        here = self.where_am_i()
        if here is None:
            return None, None
        st, root, task_id, ns, position, node, step, attempt = here
        req_text, req_line = make_request()
        h = digest(req_text)
        with self.lock:
            key = (task_id, attempt)
            seq = st.seq.get(key, 0)
            st.seq[key] = seq + 1
            row = {
                "thread_id": self.thread, "checkpoint_id": st.checkpoint, "run": self.run, "task_id": task_id,
                "root_task_id": root, "task_ns": ns, "position": position, "node": node, "step": step,
                "attempt": attempt, "seq": seq, "kind": kind, "name": name, "request": req_text, "request_hash": h,
                "status": "live", "ref_id": None, "created_at": None,
            }
            row["request_summary"] = req_line
            st.pending.append(row)
            if not st.replaying or task_id in st.diverged_tasks:
                return row, None
            cands = [r for r in st.ref.get((position, attempt), []) if r["id"] not in st.consumed]
            hit = next((r for r in cands if r["seq"] == seq and r["request_hash"] == h), None)
            hit = hit or next((r for r in cands if r["request_hash"] == h), None)
            if hit is not None:
                st.consumed.add(hit["id"])
                row["status"] = "recorded"
                row["ref_id"] = hit["id"]
                return row, hit
            at = next((r for r in cands if r["seq"] == seq), None) or (cands[0] if cands else None)
            if at is None:
                if self.mode == "strict" and st.ref.get((position, attempt)):
                    row["status"] = "diverged"
                    raise self.mismatch_error(row, None)
                return row, None
            row["status"] = "diverged"
            row["ref_id"] = at["id"]
            st.diverged_tasks.add(task_id)
            if self.mode == "strict":
                raise self.mismatch_error(row, at)
            return row, None

    def mismatch_error(self, row, at):
        where = f"call {row['seq'] + 1} of task {row['node']} (step {row['step']}, attempt {row['attempt']}): {row['kind']} {row['name']}"
        if at is None:
            msg = f"replay strict: {where}: the recording has no call here"
        else:
            d = first_diff(json.loads(at["request"]), json.loads(row["request"]))
            detail = f" at {d[0]}: {one_line(canonical(d[1]), 60)} → {one_line(canonical(d[2]), 60)}" if d else ""
            msg = f"replay strict: {where}: the request differs from the recording{detail}"
        e = ReplayMismatch(msg)
        row["error"] = json.dumps(error_record(e))
        row["response_summary"] = one_line(msg)
        return e

    def serve(self, row, hit):
        """The recorded answer (or raise the recorded error)."""
        row["response_type"] = hit["response_type"]
        row["response"] = hit["response"]
        row["error"] = hit["error"]
        row["late_ids"] = hit["late_ids"]
        row["latency_ms"] = 0.0
        if hit["error"]:
            rec = json.loads(hit["error"])
            row["response_summary"] = one_line(f"error: {rec.get('type', '').rsplit('.', 1)[-1]}: {rec.get('message', '')}")
            raise rebuild_error(rec)
        try:
            value = self.serde.loads_typed((hit["response_type"], bytes(hit["response"])))
        except Exception as e:
            # an answer this interpreter cannot read back (a class gone from the app): call live
            row["status"], row["ref_id"] = "live", None
            for k in ("response_type", "response", "error", "late_ids"):
                row[k] = None
            warn(f"a recorded {row['kind']} answer could not be read back ({exc_text(e)}): called live")
            return LIVE
        if hit["late_ids"]:
            apply_ids(value, json.loads(hit["late_ids"]))
        return value

    def done(self, row, value, kind, t0):
        row["latency_ms"] = (time.perf_counter() - t0) * 1000.0
        try:
            t, b = self.serde.dumps_typed(value)
            row["response_type"], row["response"] = t, b
        except Exception as e:
            # recorded without its answer: a replay calls it live
            warn(f"the answer of {row['kind']} {row['name']} cannot be stored ({exc_text(e)}): it will be called again on replay")
        row["_object"] = value
        row["_ids_before"] = ids_of(value)
        return value

    def failed(self, row, e, t0):
        row["latency_ms"] = (time.perf_counter() - t0) * 1000.0
        row["error"] = json.dumps(error_record(e))
        row["response_summary"] = one_line(f"error: {type(e).__name__}: {e}")


# ------------------------------------------------------------------------------------------------
# The wrappers
# ------------------------------------------------------------------------------------------------

REC = None


def _model_call(self, messages, stop, run_manager, kwargs, call):
    rec = REC
    if rec is None:
        return call()
    row, hit = rec.start("model", model_name(self), lambda: model_request(self, messages, stop, kwargs))
    if row is None:
        return call()
    if hit is not None:
        value = rec.serve(row, hit)
        if value is LIVE:
            return row
        from langchain_core.outputs import ChatGeneration, ChatResult

        row["response_summary"] = response_line("model", value)
        row["input_tokens"], row["output_tokens"] = tokens(value)
        return ChatResult(
            generations=[ChatGeneration(message=g["message"], generation_info=g.get("generation_info")) for g in value["generations"]],
            llm_output=value.get("llm_output"),
        )
    return row


def _model_done(rec, row, result, t0):
    value = {"generations": [{"message": g.message, "generation_info": g.generation_info} for g in result.generations], "llm_output": result.llm_output}
    rec.done(row, value, "model", t0)
    row["_object"] = None
    row["response_summary"] = response_line("model", value)
    row["input_tokens"], row["output_tokens"] = tokens(value)
    return result


def _llm_result(value):
    from langchain_core.outputs import Generation, LLMResult

    gens = [[Generation(text=g["text"], generation_info=g.get("generation_info")) for g in row] for row in value["generations"]]
    return LLMResult(generations=gens, llm_output=value.get("llm_output"))


def _llm_line(value):
    g = value["generations"]
    return one_line(g[0][0]["text"] if g and g[0] else "")


def _llm_end(result, run_managers):
    """What BaseLLM._generate_helper does after `_generate`: callbacks end, run ids noted."""
    from langchain_core.outputs import RunInfo

    for manager, flat in zip(run_managers, result.flatten()):
        manager.on_llm_end(flat)
    if run_managers:
        result.run = [RunInfo(run_id=m.run_id) for m in run_managers]
    return result


def install_llm():
    """Text-completion LLMs (`BaseLLM`): `_generate_helper` / `_agenerate_helper`, where a batch of
    prompts meets the model after LangChain's cache (one recorded call per batch)."""
    from langchain_core.language_models.llms import BaseLLM

    gen, agen = BaseLLM._generate_helper, BaseLLM._agenerate_helper

    def start(self, prompts, stop, kwargs):
        def request():
            from superstep_calldata import llm_string

            text = canonical({"llm": llm_string(self, stop, kwargs), "prompts": list(prompts)})
            return text, one_line(f"{len(prompts)} prompts, last: {prompts[-1] if prompts else ''}")

        return REC.start("model", model_name(self), request)

    def record(row, result, t0):
        value = {
            "generations": [[{"text": g.text, "generation_info": g.generation_info} for g in r] for r in result.generations],
            "llm_output": result.llm_output,
        }
        REC.done(row, value, "model", t0)
        row["_object"] = None
        row["response_summary"] = _llm_line(value)
        return result

    def _generate_helper(self, prompts, stop, run_managers, *, new_arg_supported, **kwargs):
        row, hit = start(self, prompts, stop, kwargs)
        if row is not None and hit is not None:
            value = REC.serve(row, hit)
            if value is not LIVE:
                row["response_summary"] = _llm_line(value)
                return _llm_end(_llm_result(value), run_managers)
        if row is None:
            return gen(self, prompts, stop, run_managers, new_arg_supported=new_arg_supported, **kwargs)
        t0, token = time.perf_counter(), _INSIDE.set(True)
        try:
            result = gen(self, prompts, stop, run_managers, new_arg_supported=new_arg_supported, **kwargs)
        except BaseException as e:
            REC.failed(row, e, t0)
            raise
        finally:
            _INSIDE.reset(token)
        return record(row, result, t0)

    async def _agenerate_helper(self, prompts, stop, run_managers, *, new_arg_supported, **kwargs):
        row, hit = start(self, prompts, stop, kwargs)
        if row is not None and hit is not None:
            value = REC.serve(row, hit)
            if value is not LIVE:
                row["response_summary"] = _llm_line(value)
                result = _llm_result(value)
                for manager, flat in zip(run_managers, result.flatten()):
                    await manager.on_llm_end(flat)
                from langchain_core.outputs import RunInfo

                if run_managers:
                    result.run = [RunInfo(run_id=m.run_id) for m in run_managers]
                return result
        if row is None:
            return await agen(self, prompts, stop, run_managers, new_arg_supported=new_arg_supported, **kwargs)
        t0, token = time.perf_counter(), _INSIDE.set(True)
        try:
            result = await agen(self, prompts, stop, run_managers, new_arg_supported=new_arg_supported, **kwargs)
        except BaseException as e:
            REC.failed(row, e, t0)
            raise
        finally:
            _INSIDE.reset(token)
        return record(row, result, t0)

    BaseLLM._generate_helper = _generate_helper
    BaseLLM._agenerate_helper = _agenerate_helper


def install(where):
    """Wrap LangChain's model and tool entry points for this process (once)."""
    global REC
    REC = Recorder(where)
    if not where:
        return REC  # no checkpoint file beside which to record: nothing is wrapped
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.tools import BaseTool

    if getattr(BaseChatModel, "_superstep_wrapped", False):
        return REC
    gen, agen = BaseChatModel._generate_with_cache, BaseChatModel._agenerate_with_cache

    def _generate_with_cache(self, messages, stop=None, run_manager=None, **kwargs):
        got = _model_call(self, messages, stop, run_manager, kwargs, lambda: gen(self, messages, stop, run_manager, **kwargs))
        if not isinstance(got, dict):
            return got
        row, t0, token = got, time.perf_counter(), _INSIDE.set(True)
        try:
            result = gen(self, messages, stop, run_manager, **kwargs)
        except BaseException as e:
            REC.failed(row, e, t0)
            raise
        finally:
            _INSIDE.reset(token)
        return _model_done(REC, row, result, t0)

    async def _agenerate_with_cache(self, messages, stop=None, run_manager=None, **kwargs):
        marker = object()
        got = _model_call(self, messages, stop, run_manager, kwargs, lambda: marker)
        if got is marker:
            return await agen(self, messages, stop, run_manager, **kwargs)
        if not isinstance(got, dict):
            return got
        row, t0, token = got, time.perf_counter(), _INSIDE.set(True)
        try:
            result = await agen(self, messages, stop, run_manager, **kwargs)
        except BaseException as e:
            REC.failed(row, e, t0)
            raise
        finally:
            _INSIDE.reset(token)
        return _model_done(REC, row, result, t0)

    install_llm()
    run, arun = BaseTool.run, BaseTool.arun

    def _tool_start(self, tool_input, kwargs):
        rec = REC
        if rec is None:
            return None, None
        return rec.start("tool", self.name, lambda: tool_request(self, tool_input, kwargs.get("tool_call_id")))

    def _tool_served(row, hit):
        value = REC.serve(row, hit)
        if value is not LIVE:
            row["response_summary"] = response_line("tool", value)
        return value

    def tool_run(self, tool_input, *args, **kwargs):
        row, hit = _tool_start(self, tool_input, kwargs)
        if row is None:
            return run(self, tool_input, *args, **kwargs)
        if hit is not None:
            value = _tool_served(row, hit)
            if value is not LIVE:
                return value
        t0, token = time.perf_counter(), _INSIDE.set(True)
        try:
            out = run(self, tool_input, *args, **kwargs)
        except BaseException as e:
            REC.failed(row, e, t0)
            raise
        finally:
            _INSIDE.reset(token)
        row["response_summary"] = response_line("tool", out)
        return REC.done(row, out, "tool", t0)

    async def tool_arun(self, tool_input, *args, **kwargs):
        row, hit = _tool_start(self, tool_input, kwargs)
        if row is None:
            return await arun(self, tool_input, *args, **kwargs)
        if hit is not None:
            value = _tool_served(row, hit)
            if value is not LIVE:
                return value
        t0, token = time.perf_counter(), _INSIDE.set(True)
        try:
            out = await arun(self, tool_input, *args, **kwargs)
        except BaseException as e:
            REC.failed(row, e, t0)
            raise
        finally:
            _INSIDE.reset(token)
        row["response_summary"] = response_line("tool", out)
        return REC.done(row, out, "tool", t0)

    BaseChatModel._generate_with_cache = _generate_with_cache
    BaseChatModel._agenerate_with_cache = _agenerate_with_cache
    BaseTool.run = tool_run
    BaseTool.arun = tool_arun
    BaseChatModel._superstep_wrapped = True
    return REC
