"""superstep_stepping: the breakpoint rules a paused run follows, and the program's modules."""

import os

import superstep_stepping as stepping
import superstep_wire as wire


def test_breakpoints_union_and_match_with_star_winning():
    assert stepping.breaks_json(None) is None and stepping.breaks_json("*") == "*"
    assert stepping.breaks_json(("a", "b")) == ["a", "b"]
    assert stepping.union_breaks(["a"], ["b", "a"]) == ["a", "b"]
    assert stepping.union_breaks(None, None) == []
    assert stepping.union_breaks(["a"], "*") == "*" and stepping.union_breaks("*", ["a"]) == "*"
    assert stepping.matches("*", "x") and stepping.matches(["x"], "x")
    assert not stepping.matches(["y"], "x") and not stepping.matches(None, "x") and not stepping.matches([], "x")


def test_a_task_path_is_langgraphs_task_path_string():
    from langgraph.pregel._algo import task_path_str

    assert stepping.task_path_of(None) == ""
    assert stepping.task_path_of(("__pregel_pull", "plan")) == task_path_str(("__pregel_pull", "plan"))


def test_the_program_imports_every_name_it_uses_from_its_modules():
    import superstep_bridge as program

    assert program.PROTOCOL >= 5
    for name in ("Session", "main", "hello", "Run", "import_target", "topology", "send", "BridgeError"):
        assert callable(getattr(program, name)), name
    own = {os.path.basename(p) for p in wire.OWN_FILES}
    assert {"superstep_bridge.py", "superstep_wire.py", "superstep_shape.py", "superstep_stepping.py"} <= own
