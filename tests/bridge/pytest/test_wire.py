"""superstep_wire: the socket's words, errors as superstep shows them, values in LangGraph's serializer."""

import math
import os

import superstep_wire as wire
import superstep_shape as shape
import superstep_stepping as stepping


def test_a_postgres_url_is_shown_without_its_password():
    assert wire.redact_url("postgresql://me:s3cret@db:5432/app?sslmode=require&password=x") == (
        "postgresql://me@db:5432/app?sslmode=require"
    )
    assert wire.redact_url("postgres://db/app?password=x") == "postgres://db/app"
    assert wire.is_postgres_url("postgresql://db/app") and wire.is_postgres_url("postgres://db")
    assert not wire.is_postgres_url("checkpoints.sqlite") and not wire.is_postgres_url(None)


def test_an_exception_is_one_line_as_python_prints_it():
    assert wire.exc_line(ValueError("bad input")) == "ValueError: bad input"
    assert wire.exc_line(KeyError()) == "KeyError"


def test_values_are_plain_json_or_none_and_typed_in_langgraphs_serializer():
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    assert wire.plain_json({"a": [1, "x", None]}) == {"a": [1, "x", None]}
    assert wire.plain_json(math.nan) is None and wire.plain_json(object()) is None
    t = wire.typed({"n": 1, "s": "é"})
    assert JsonPlusSerializer().loads_typed((t["type"], bytes.fromhex(t["hex"]))) == {"n": 1, "s": "é"}
    # what msgpack cannot encode is shown by its repr, never raised
    shown = wire.typed(lambda: 1)
    assert "which msgpack cannot encode" in JsonPlusSerializer().loads_typed((shown["type"], bytes.fromhex(shown["hex"])))


def test_a_task_path_is_json_with_tuples_as_lists():
    assert wire.path_json(("__pregel_pull", "a", ("x", 2, True))) == ["__pregel_pull", "a", ["x", 2, True]]
    assert wire.path_json(("p", 1.5)) == ["p", "float"]


def test_the_bridges_own_files_are_not_the_apps(tmp_path):
    import json

    import langgraph

    for own in (wire.__file__, shape.__file__, stepping.__file__):
        assert os.path.realpath(own) in {os.path.realpath(p) for p in wire.OWN_FILES}
        assert not wire.is_user_file(own)
    assert not wire.is_user_file(json.__file__)
    assert not wire.is_user_file(langgraph.__file__)
    assert not wire.is_user_file("<frozen importlib._bootstrap>")
    app = tmp_path / "app.py"
    app.write_text("x = 1\n")
    assert wire.is_user_file(str(app))


def test_an_error_in_the_apps_import_is_shown_at_the_apps_line_without_the_bridges_frames(tmp_path):
    app = tmp_path / "broken_app.py"
    app.write_text("import os\n\nraise RuntimeError('no API key')\n")
    try:
        shape.import_target({"file": str(app), "attr": "graph"})
    except wire.BridgeError as e:
        assert e.kind == "import"
        assert e.message == f"importing {app} failed: RuntimeError: no API key"
        assert e.frame == f"{app}:3 in <module>"
        report = wire.error_report(e.__context__)
    else:
        raise AssertionError("import_target imported a module that raises")
    assert report["at"] == f"{app}:3 in <module>"
    assert "superstep_shape" not in report["traceback"] and "superstep_wire" not in report["traceback"]
    assert report["traceback"].endswith("RuntimeError: no API key")
