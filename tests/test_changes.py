"""Scenario.with_changes: dotted paths into lists (by index and by name), and errors that
blame the change (its path and value), not the file."""

from __future__ import annotations

import pytest

import schedlab
from schedlab.changes import ChangePathError, apply_changes, blame, split_path

BW = "examples/bandwidth_whatif.toml"


@pytest.fixture(scope="module")
def bw():
    return schedlab.load_scenario(BW)


def test_split_path_quotes():
    assert split_path("a.b.c") == ["a", "b", "c"]
    assert split_path('machine.cost."cacheline.same_llc_ns"') == ["machine", "cost", "cacheline.same_llc_ns"]
    for bad in ("a..b", ".a", "a.", 'a."b'):
        with pytest.raises(ChangePathError):
            split_path(bad)


@pytest.mark.parametrize("path", ["groups.svc.cpu_max", "groups.0.cpu_max", "groups.-1.cpu_max"])
def test_list_element_by_name_or_index(bw, path):
    s = bw.with_changes({path: "50000 100000"})
    assert s.doc["groups"][0]["cpu_max"] == "50000 100000"
    assert bw.doc["groups"][0]["cpu_max"] == "200000 100000"  # the original is untouched


def test_deep_program_path_and_canonical_form(bw):
    doc, canon = apply_changes(bw.doc, {"tasks.worker.program.0.loop.body.1.sleep_exp": "3ms",
                                        "groups.svc.cfs_burst_us": 1000})
    assert doc["tasks"][0]["program"][0]["loop"]["body"][1] == {"sleep_exp": "3ms"}
    assert canon == {"tasks.worker.program.0.loop.body.1.sleep_exp": "tasks[0].program[0].loop.body[1].sleep_exp",
                     "groups.svc.cfs_burst_us": "groups[0].cfs_burst_us"}
    s = bw.with_changes({"tasks.worker.program.0.loop.body.1.sleep_exp": "3ms"})
    assert s.doc["tasks"][0]["program"][0]["loop"]["body"][1] == {"sleep_exp": "3000000ns"}


def test_machine_preset_topo_and_shorthand(bw):
    assert bw.with_changes({"machine": "topo(1,2,4,2)"}).doc["machine"]["topo"]["cores"] == 4
    assert bw.with_changes({"machine": "ryzen-7950x"}).doc["machine"]["preset"] == "ryzen-7950x"
    topo = bw.with_changes({"machine.topo.cores": 4}).doc["machine"]
    assert topo["preset"] is None and topo["topo"]["cores"] == 4
    back = bw.with_changes({"machine.topo.cores": 4}).with_changes({"machine.preset": "xeon-80"}).doc["machine"]
    assert back["preset"] == "xeon-80" and back["topo"] is None


def test_blame_matches_prefixes():
    canon = {"groups.svc": "groups[0]", "kernel.profile": "kernel.profile"}
    assert blame("groups[0].cpu_max", canon) == ["groups.svc"]
    assert blame("kernel.profile", canon) == ["kernel.profile"]
    assert blame("tasks[0].count", canon) == []


@pytest.mark.parametrize("changes,field,words", [
    ({"groups.pod.cpu_max": "1 2"}, "groups.pod.cpu_max", "no element named 'pod' (names: svc"),
    ({"groups.3.cpu_max": "1 2"}, "groups.3.cpu_max", "index 3 is out of range"),
    ({"groups.svc.cpu_max": "abc"}, "groups.svc.cpu_max", "expected \"QUOTA PERIOD\""),
    ({"tasks.worker.count": -3}, "tasks.worker.count", "expected a whole number ≥ 0"),
    ({"kernel.profile.x": 1}, "kernel.profile.x", "not a table or a list"),
    # The core finds the error on another field (cfs_quota_us): still blamed on the change.
    ({"groups.svc.cpu_max": "100 100000"}, "groups.svc.cpu_max", "groups[0].cfs_quota_us"),
])
def test_errors_blame_the_change(bw, changes, field, words):
    with pytest.raises(schedlab.ScenarioError) as info:
        bw.with_changes(changes)
    e = info.value
    assert e.field == field
    line = str(e)
    assert line.startswith(f"{field} = "), line
    assert words in line and f"(a change to {BW})" in line and "\n" not in line


def test_unrelated_error_names_every_change(bw):
    # Lowering the quota below an existing burst: the core blames cfs_burst_us, which no
    # change names, so the line lists the changes made.
    s = bw.with_changes({"groups.svc.cfs_burst_us": 200000})
    with pytest.raises(schedlab.ScenarioError) as info:
        s.with_changes({"groups.svc.cpu_max": "100000 100000", "kernel.profile": "5.14"})
    line = str(info.value)
    assert line.startswith('groups.svc.cpu_max = "100000 100000", kernel.profile = "5.14": groups[0].cfs_burst_us')
