"""The Python loaders fuzzed with hypothesis: whatever text, dict or change a user hands
them, the answer is a scenario or a one-line ``schedlab.ScenarioError`` naming where
it came from, never another exception.

Short in the normal test run; ``scripts/fuzz`` runs it for a time budget
(``SCHEDLAB_FUZZ_SECONDS``), drawing new examples until the budget is spent.
"""

from __future__ import annotations

import json
import os
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hseed
from hypothesis import strategies as st

import schedlab
from conftest import EXAMPLES

BUDGET = float(os.environ.get("SCHEDLAB_FUZZ_SECONDS", "0"))
EXAMPLE_TEXTS = [p.read_text() for p in sorted(EXAMPLES.glob("*.toml"))] + \
    [p.read_text() for p in sorted((EXAMPLES / "bad").glob("*.toml"))]
KEYS = ["machine", "preset", "topo", "cores", "smt", "sockets", "llcs", "kernel", "profile", "features", "tunables",
        "tasks", "name", "count", "program", "run", "sleep", "wait", "signal", "loop", "body", "duration_s", "until",
        "groups", "cpu_max", "parent", "workload", "kind", "params", "seeds", "max_events", "affinity", "nice"]
FIELD_PATHS = ["kernel.profile", "kernel.features.SIS_NODE", "run.duration_s", "run.seeds", "tasks.0.count",
               "tasks.0.nice", "tasks.0.affinity", "machine.preset", "machine.topo.cores", "groups.0.cpu_max",
               "tasks.ping.program", "nosuch.path", "run.max_events"]

SETTINGS = settings(max_examples=25, deadline=None, database=None, derandomize=False,
                    suppress_health_check=list(HealthCheck))


def _assert_clean(e: schedlab.ScenarioError, origin: str) -> None:
    line = str(e)
    assert "\n" not in line, line
    assert line.startswith(origin), (origin, line)
    assert isinstance(e.field, str) and isinstance(e.message, str) and e.message


def _mutate(text: str, cuts: list[tuple[int, int, str]]) -> str:
    for pos, n, ins in cuts:
        if not text:
            return ins
        i = pos % len(text)
        text = text[:i] + ins + text[i + n % 8:]
    return text


edits = st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 16),
                           st.one_of(st.text(max_size=6), st.sampled_from(KEYS + ["=", "[", "]", "{", "}", '"',
                                                                                  "-1", "1e309", "\n"]))),
                 max_size=6)

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
              st.text(max_size=12), st.sampled_from(["1ms", "0ns", "-5ms", "6.6", "2.6", "0-3", "topo(1,1,2,1)"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)),
    max_leaves=25)


@SETTINGS
@given(base=st.sampled_from(EXAMPLE_TEXTS), cuts=edits)
def check_toml_text(base: str, cuts) -> None:
    text = _mutate(base, cuts)
    try:
        schedlab.Scenario.from_toml(text, origin="fuzz.toml")
    except schedlab.ScenarioError as e:
        _assert_clean(e, "fuzz.toml")


@SETTINGS
@given(base=st.sampled_from(EXAMPLE_TEXTS), cuts=edits)
def check_json_text(base: str, cuts) -> None:
    try:
        doc = schedlab.Scenario.from_toml(base, origin="x.toml").doc
        text = _mutate(json.dumps(doc), cuts)
    except schedlab.ScenarioError:
        text = _mutate("{}", cuts)
    try:
        schedlab.Scenario.from_json(text, origin="fuzz.json")
    except schedlab.ScenarioError as e:
        _assert_clean(e, "fuzz.json")


@SETTINGS
@given(doc=st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6))
def check_dict(doc) -> None:
    try:
        schedlab.load_scenario(doc)
    except schedlab.ScenarioError as e:
        _assert_clean(e, "<dict>")


@SETTINGS
@given(changes=st.dictionaries(st.sampled_from(FIELD_PATHS), json_values, min_size=1, max_size=3))
def check_changes(changes) -> None:
    s = schedlab.load_scenario(str(EXAMPLES / "pipe_pingpong.toml"))
    try:
        s.with_changes(changes)
    except schedlab.ScenarioError as e:
        line = str(e)
        assert "\n" not in line and "(a change to " in line, line


CHECKS = [check_toml_text, check_json_text, check_dict, check_changes]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_loaders_answer_with_a_scenario_or_one_line(check):
    if BUDGET <= 0:
        check()
        return
    # scripts/fuzz: new random draws until this check's share of the budget is spent.
    deadline = time.monotonic() + BUDGET / len(CHECKS)
    rounds = 0
    while time.monotonic() < deadline:
        hseed(random.randrange(2**32))(check)()
        rounds += 1
    print(f"{check.__name__}: {rounds} rounds of {SETTINGS.max_examples} examples")
