"""superstep_shape: the reference imported, the graph's topology and its input form's fields."""

import operator
from typing import Annotated, Literal, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

import superstep_shape as shape
import superstep_wire as wire


class State(TypedDict):
    question: str
    tries: int
    mode: Literal["fast", "slow"]
    log: Annotated[list, operator.add]


def build(async_node=False):
    g = StateGraph(State)
    if async_node:

        async def plan(s):
            return {"log": ["plan"]}

    else:

        def plan(s):
            return {"log": ["plan"]}

    g.add_node("plan", plan)
    g.add_node("act", lambda s: {"tries": s["tries"] + 1})
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", lambda s: "act" if s["tries"] < 1 else END, ["act", END])
    g.add_edge("act", "plan")
    return g.compile(interrupt_before=["act"])


def test_the_topology_names_nodes_channels_edges_and_breakpoints():
    t = shape.topology(build())
    assert [n["name"] for n in t["nodes"]] == ["__start__", "plan", "act"]
    assert t["state_keys"] == ["question", "tries", "mode", "log"] and t["root_value"] is False
    assert t["channels"]["log"]["kind"] == "BinaryOperatorAggregate"
    assert t["channels"]["log"]["reducer"] == "add" and t["channels"]["log"]["default"] == []
    assert t["channels"]["tries"]["reducer"] is None
    edges = {(e["source"], e["target"], e["conditional"]) for e in t["edges"]}
    assert ("__start__", "plan", False) in edges and ("plan", "act", True) in edges
    assert ("plan", "__end__", True) in edges and ("act", "plan", False) in edges
    assert t["interrupt_before"] == ["act"] and t["interrupt_after"] == []
    assert t["subgraphs"] == [] and t["subgraph_topologies"] == {}


def test_a_graph_with_an_async_only_node_needs_an_event_loop():
    assert shape.is_async_graph(build(async_node=True))
    assert not shape.is_async_graph(build())


def test_the_input_form_reads_the_state_types():
    fields = {f["key"]: f for f in shape.input_fields(build())}
    assert fields["question"]["kind"] == "str" and fields["tries"]["kind"] == "int"
    assert fields["mode"]["kind"] == "literal" and fields["mode"]["choices"] == ["fast", "slow"]
    assert fields["log"]["kind"] == "list"


def test_a_reference_names_what_is_wrong(tmp_path):
    with pytest.raises(wire.BridgeError) as e:
        shape.import_target({"file": str(tmp_path / "nowhere.py"), "attr": "graph"})
    assert e.value.kind == "reference" and e.value.message.endswith("nowhere.py: no such file")
    app = tmp_path / "shape_app.py"
    app.write_text("agent = 1\nbuilder = 2\n_private = 3\n")
    with pytest.raises(wire.BridgeError) as e:
        shape.import_target({"file": str(app), "attr": "graph"})
    assert e.value.kind == "attribute"
    assert e.value.message == f"{app} has no attribute 'graph' (it defines: agent, builder)"
    assert shape.import_target({"file": str(app), "attr": "builder"}) == 2
    assert shape.import_target({"module": "operator", "attr": "add"}) is operator.add
