"""The timer pull model reproductions (seed 001): scenarios and rows from real --quick runs."""

from __future__ import annotations

import json

import jsonschema
import pytest

from schedlab import schemas
from schedlab.reproduce import get

ROW_SCHEMA = schemas.load("reproduce-rows")


def rows_of(name: str) -> dict:
    from typer.testing import CliRunner

    from schedlab.cli import app

    r = CliRunner().invoke(app, ["reproduce", name, "--quick", "--json", "-j", "2"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    jsonschema.validate(rows, ROW_SCHEMA)
    return {(d["config"], d["metric"]): d for d in rows}


def test_scenarios_switch_only_the_timer_model():
    e = get("timers")
    push, pull = e.scenario("zen3-2s", "push"), e.scenario("zen3-2s", "pull")
    assert push["kernel"]["features"] == {"TIMER_PULL": False} and pull["kernel"]["features"] == {"TIMER_PULL": True}
    assert push["kernel"]["profile"] == pull["kernel"]["profile"] == "6.6"
    assert push["kernel"]["tunables"]["nohz_full"] == "255"  # the isolated CPU is outside timer housekeeping
    d = get("timers-dbench").scenario("zen3-2s", "teo:NR8:pull")
    assert d["workload"]["params"] == {"pairs": 8} and d["kernel"]["tunables"] == {"cpuidle_governor": "teo"}


def test_enqueue_rows():
    rows = rows_of("timers")
    push, pull = rows[("push", "ns_per_iteration")], rows[("pull", "ns_per_iteration")]
    assert push["published"] == 145 and pull["published"] == 109
    assert push["calibrated"] and push["simulated_mean"] == pytest.approx(145)
    change = rows[("pull vs push", "ns_per_iteration")]
    assert not change["calibrated"] and change["published"] == pytest.approx(109 / 145)
    # The pull model never walks the domains nor locks a remote base: always cheaper.
    assert change["simulated_mean"] < 1.0
    assert rows[("push", "timers_pushed")]["simulated_mean"] > 0 and rows[("pull", "timers_pushed")]["simulated_mean"] == 0


def test_ui_rows_cover_every_cluster_and_state():
    rows = rows_of("timers-ui")
    for cl in ("little", "mid", "big"):
        shares = [rows[("push", f"{cl}_{s}_share")]["simulated_mean"] for s in ("active", "state0", "state1")]
        assert sum(shares) == pytest.approx(1.0, abs=1e-6), (cl, shares)
        assert rows[("push", f"{cl}_state1_share")]["published"] is not None


def test_reproduce_cost_overrides_reach_every_run():
    import schedlab
    from schedlab.reproduce.runner import parse_cost, plan

    cost = parse_cost(["cpuidle.C2.wake_us=40", "smt_slowdown=1.25"])
    assert cost == {"cpuidle.C2.wake_us": 40.0, "smt_slowdown": 1.25}
    planned = plan([get("timers-dbench"), get("mm_cid")], quick=True, cost=cost)
    assert all(p.scenario.doc["machine"]["cost"].items() >= cost.items() for p in planned)
    # An experiment's own cost settings stay unless overridden.
    mm = plan([get("mm_cid")], quick=True, options={"rfo_parallelism": 4}, cost=cost)
    assert mm[0].scenario.doc["machine"]["cost"]["rfo_parallelism"] == 4.0
    # menu sends these pairs' CPUs to C2 between requests: paying the firmware's declared
    # 400 us as the wake instead of the measured 10 us lengthens every operation that
    # waits for one.
    fast = get("timers-dbench").scenario("zen3-2s", "menu:NR2:push", quick=True)
    slow = next(p.scenario for p in plan([get("timers-dbench")], quick=True, cost={"cpuidle.C2.wake_us": 400.0})
                if p.config == "menu:NR2:push")
    ops = [schedlab.run(s, seed=1).workload["ops_per_s"] for s in (slow, fast)]
    assert ops[1] > 1.5 * ops[0], ops
    with pytest.raises(ValueError, match="KEY=NUMBER"):
        parse_cost(["smt_slowdown"])
    with pytest.raises(schedlab.ScenarioError, match="no idle state 'C6'"):
        plan([get("timers-dbench")], quick=True, cost={"cpuidle.C6.wake_us": 1.0})
