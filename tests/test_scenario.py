"""Scenario loading and normalization (no engine needed, except for preset machines)."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedlab
from conftest import example_files, rel
from schedlab.scenario import Scenario

TOPO = {"topo": {"cores": 2}}


def minimal(**over) -> dict:
    doc = {"machine": TOPO, "tasks": [{"name": "t", "program": [{"run": "1ms"}]}], "run": {"duration_s": 1.0}}
    doc.update(over)
    return doc


@pytest.mark.parametrize("path", example_files(), ids=lambda p: p.name)
def test_examples_load_and_round_trip(path):
    s = schedlab.load_scenario(rel(path))
    assert s.origin == rel(path)
    again = Scenario.from_json(s.json)
    assert again == s
    assert Scenario.from_dict(s.doc) == s
    assert s.name  # every example is named (or named after its file)


def test_defaults_are_filled_in():
    s = schedlab.load_scenario(minimal())
    d = s.doc
    assert d["kernel"]["profile"] == "6.6"
    assert d["run"]["seeds"] == [1] and s.seeds == [1]
    assert d["tasks"][0]["program"] == [{"run": "1000000ns"}]
    assert d["tasks"][0]["count"] == 1
    assert s.trace is False


def test_name_defaults_to_file_stem(tmp_path):
    p = tmp_path / "my-scenario.toml"
    p.write_text('[machine]\ntopo = { cores = 2 }\n[[tasks]]\nname = "t"\nprogram = [{ run = "1ms" }]\n'
                 '[run]\nduration_s = 1\n')
    assert schedlab.load_scenario(p).name == "my-scenario"
    assert schedlab.load_scenario(minimal()).name == ""


def test_json_file(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(minimal(name="from-json")))
    s = schedlab.load_scenario(p)
    assert s.name == "from-json"
    assert s == schedlab.load_scenario(minimal(name="from-json"))


def test_with_changes_revalidates():
    s = schedlab.load_scenario(minimal())
    t = s.with_changes({"kernel.profile": "6.5", "kernel.features.SIS_NODE": True, "run.seeds": [4, 5]})
    assert t.doc["kernel"]["profile"] == "6.5" and t.doc["kernel"]["features"] == {"SIS_NODE": True}
    assert t.seeds == [4, 5]
    assert s.doc["kernel"]["profile"] == "6.6"  # unchanged
    with pytest.raises(schedlab.ScenarioError) as info:
        s.with_changes({"kernel.features.BOGUS": True})
    assert info.value.field == "kernel.features.BOGUS"


def test_scenario_pickles():
    s = schedlab.load_scenario(minimal())
    assert pickle.loads(pickle.dumps(s)) == s


def test_scenario_error_pickles_with_attributes():
    with pytest.raises(schedlab.ScenarioError) as info:
        schedlab.load_scenario(minimal(run={"duration_s": -3}))
    e = pickle.loads(pickle.dumps(info.value))
    assert type(e) is schedlab.ScenarioError
    assert (e.field, e.origin) == ("run.duration_s", "<dict>")
    assert str(e) == str(info.value)


def test_error_classes():
    for cls in (schedlab.ScenarioError, schedlab.SimulationLimitError, schedlab.InternalError):
        assert issubclass(cls, schedlab.SchedlabError)
        assert cls.__module__ == "schedlab"
    assert issubclass(schedlab.SchedlabError, Exception)


def test_wrong_type_rejected():
    with pytest.raises(TypeError):
        schedlab.load_scenario(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("doc,field", [
    (minimal(machine={"topo": {"cores": 2}, "preset": "x"}), "machine"),
    (minimal(kernel={"profile": "banana"}), "kernel.profile"),
    (minimal(kernel={"tunables": {"hz": 123}}), "kernel.tunables"),
    (minimal(kernel={"tunables": {"sched_bogus_ns": 1}}), "kernel.tunables.sched_bogus_ns"),
    (minimal(machine={"topo": {"cores": 2}, "cost": {"no_such_cost": 1.0}}), "machine.cost"),
    (minimal(groups=[{"name": "g", "cfs_quota_us": 10}]), "groups[0].cfs_quota_us"),
    (minimal(tasks=[{"name": "t", "group": "nope", "program": [{"run": "1ms"}]}]), "tasks[0].group"),
    (minimal(tasks=[{"name": "t", "nice": 40, "program": [{"run": "1ms"}]}]), "tasks[0].nice"),
    (minimal(tasks=[{"name": "t", "affinity": "3-1", "program": [{"run": "1ms"}]}]), "tasks[0].affinity"),
    (minimal(run={"duration_s": 1, "seeds": []}), "run.seeds"),
    (minimal(run={}), "run"),
])
def test_semantic_errors_name_the_field(doc, field):
    with pytest.raises(schedlab.ScenarioError) as info:
        schedlab.load_scenario(doc)
    assert info.value.field == field


def test_toml_position_of_semantic_error(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text('[machine]\ntopo = { cores = 2 }\n\n[[groups]]\nname = "g"\ncfs_quota_us = 10\n\n'
                 '[[tasks]]\nname = "t"\nprogram = [{ run = "1ms" }]\n[run]\nduration_s = 1\n')
    with pytest.raises(schedlab.ScenarioError) as info:
        schedlab.load_scenario(p)
    assert info.value.location == ":6:16"


# -- property: any program the schema accepts survives normalization unchanged ---------
durations = st.builds(lambda n, u: f"{n}{u}", st.integers(0, 10_000), st.sampled_from(["ns", "us", "ms", "s"]))
leaf_ops = st.one_of(
    st.builds(lambda d: {"run": d}, durations),
    st.builds(lambda d: {"sleep_exp": d}, durations),
    st.builds(lambda c: {"wait": c}, st.sampled_from(["a", "b"])),
    st.builds(lambda c: {"signal": c}, st.sampled_from(["a", "b"])),
    st.builds(lambda c: {"lock": c}, st.sampled_from(["m"])),
)
ops = st.recursive(leaf_ops, lambda inner: st.builds(
    lambda n, body: {"loop": {"count": n, "body": body}}, st.integers(1, 50), st.lists(inner, min_size=1, max_size=3)),
    max_leaves=8)


@settings(max_examples=40, deadline=None)
@given(program=st.lists(ops, min_size=1, max_size=5), count=st.integers(1, 4), nice=st.integers(-20, 19))
def test_normalization_is_idempotent(program, count, nice):
    doc = minimal(tasks=[{"name": "t", "count": count, "nice": nice, "program": program}])
    s = schedlab.load_scenario(doc)
    again = Scenario.from_json(s.json)
    assert again.json == s.json
    assert len(s.doc["tasks"][0]["program"]) == len(program)


def test_machine_name_is_one_call_into_the_core(monkeypatch):
    """`--machine NAME` reaches the core as the name, in the call that loads the scenario:
    no [machine] table is fetched from the core and written back by Python."""
    from schedlab import InputError, _core
    from schedlab import scenario as scenario_module

    def fetched(name):
        raise AssertionError(f"machine_spec({name!r}) called on the load path")

    monkeypatch.setattr(scenario_module, "machine_spec", fetched)
    text = '[machine]\npreset = "pixel6"\n[[tasks]]\nname = "t"\nprogram = [{ run = "1ms" }]\n[run]\nduration_s = 1\n'
    s = Scenario.from_toml(text, "m.toml", machine="topo(1, 1, 2, 1)")
    assert s.doc["machine"] == {"preset": None, "topo": {"sockets": 1, "llcs": 1, "cores": 2, "smt": 1, "arch": None},
                                "host": False, "cost": {}}
    normalized, _ = _core.load_scenario(text, "toml", "m.toml", "host")
    assert json.loads(normalized)["machine"]["host"] is True
    # A malformed name is the InputError machine_spec() raised, and a bad preset the
    # scenario error naming the file, as before.
    with pytest.raises(InputError, match=r"expected topo\(SOCKETS,LLCS,CORES,SMT\)"):
        Scenario.from_toml(text, "m.toml", machine="topo(1,2,3)")
    with pytest.raises(schedlab.ScenarioError, match=r"m\.toml.*machine\.preset: unknown preset 'no-such-box'"):
        Scenario.from_toml(text, "m.toml", machine="no-such-box")


def test_machine_names_are_read_once_by_the_core():
    """`--machine` names go through the core's reading (api::machine_spec_named), the
    one the bindings' machine lookups use: spaces allowed, a zero or a missing field
    refused with the expected form."""
    import pytest

    from schedlab import InputError
    from schedlab.reproduce.registry import machine_spec as registry_spec
    from schedlab.scenario import machine_spec

    assert machine_spec("topo(1, 2, 4, 2)") == {"topo": {"sockets": 1, "llcs": 2, "cores": 4, "smt": 2}}
    assert machine_spec(" host ") == {"host": True} and machine_spec("milan-72") == {"preset": "milan-72"}
    assert registry_spec is machine_spec
    for bad in ("topo(0,1,1,1)", "topo(1,2,3)", "topo(a,b,c,d)"):
        with pytest.raises(InputError, match=r"expected topo\(SOCKETS,LLCS,CORES,SMT\)"):
            machine_spec(bad)
    # A machine too large to model is refused by name, before anything is built.
    with pytest.raises(InputError, match="CPUs is more than"):
        machine_spec("topo(100000,100000,100000,1000)")
