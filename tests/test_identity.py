"""Results are byte-identical to the committed digests (tests/identity/cases.py).

Guards the engine's speed work: a faster data structure must pop the same events in the
same order and so give the same result for every example, every experiment scenario
(quick form) and the speed cases, on every seed. A deliberate model change regenerates
the digests (`python tests/identity/cases.py --update`) in the same commit.
"""

from __future__ import annotations

import importlib.util
import json

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("identity_cases", ROOT / "tests" / "identity" / "cases.py")
identity = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(identity)


def test_every_case_has_a_fixture_and_matches_it():
    want = json.loads(identity.FIXTURES.read_text())
    got = {k: identity.fixture_entry(text) for k, (_, text) in identity.run_all().items()}
    diff = identity.differences(got, want)
    assert not diff, (f"{len(diff)} of {len(got)} results differ from tests/identity/fixtures.json "
                      "(a speed change must not move results; a model change runs "
                      "`python tests/identity/cases.py --update`):\n" + "\n".join(diff[:40]))


def test_digest_ignores_only_the_engines_own_figures_and_the_configurations_echo():
    doc = {"engine": {"events": 10, "wall_ns": 5, "sim_ns": 7}, "summary": {"x": 1.0}}
    other = json.loads(json.dumps(doc))
    other["engine"].update(events=11, wall_ns=99)
    assert identity.digest(json.dumps(doc)) == identity.digest(json.dumps(other))
    other["engine"]["sim_ns"] = 8
    assert identity.digest(json.dumps(doc)) != identity.digest(json.dumps(other))
    other = json.loads(json.dumps(doc))
    other["summary"]["x"] = 1.0000001
    assert identity.digest(json.dumps(doc)) != identity.digest(json.dumps(other))
    # A new feature line, a tunable or the machine's name echoed: the results are the same.
    other = json.loads(json.dumps(doc))
    other.update(features={"NEW_FEATURE": False}, kernel={"tunables": {"x": 1}}, machine="m")
    assert identity.digest(json.dumps(doc)) == identity.digest(json.dumps(other))


def test_a_changed_case_names_the_key_figures_that_moved():
    doc = {"engine": {"sim_ns": 7}, "summary": {"migrations": 3.0, "context_switches": 10.0}}
    moved = json.loads(json.dumps(doc))
    moved["summary"]["migrations"] = 4.0
    want = {"case#1": identity.fixture_entry(json.dumps(doc))}
    got = {"case#1": identity.fixture_entry(json.dumps(moved))}
    assert identity.differences(got, want) == ["changed: case#1 (summary.migrations 3.0 -> 4.0)"]
    assert identity.differences(want, want) == []
