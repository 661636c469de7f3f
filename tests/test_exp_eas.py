"""The eas experiment (issue 34): scenarios and rows from a real --quick run."""

from __future__ import annotations

import json

import jsonschema
import pytest

from schedlab import schemas
from schedlab.reproduce import get

ROW_SCHEMA = schemas.load("reproduce-rows")


def test_scenarios_switch_only_energy_aware_placement():
    e = get("eas")
    off, on = e.scenario("pixel6", "eas-off"), e.scenario("pixel6", "eas-on")
    assert off["kernel"]["governor"] == on["kernel"]["governor"] == "schedutil"
    assert off["kernel"]["features"] == {"ENERGY_AWARE": False} and on["kernel"]["features"] == {"ENERGY_AWARE": True}
    assert off["tasks"] == on["tasks"]


@pytest.fixture(scope="module")
def quick_rows() -> dict:
    """(machine, config, metric) -> simulated mean, from one `reproduce eas --quick` run."""
    from typer.testing import CliRunner

    from schedlab.cli import app

    r = CliRunner().invoke(app, ["reproduce", "eas", "--quick", "--json", "-j", "1"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    jsonschema.validate(rows, ROW_SCHEMA)
    return {(d["machine"], d["config"], d["metric"]): d["simulated_mean"] for d in rows}


def test_eas_moves_the_small_tasks_to_the_littles_and_saves_energy(quick_rows):
    v = lambda config, metric: quick_rows[("pixel6", config, metric)]
    a55 = "busy_cortex-a55_seconds"
    # Without EAS, idle littles still take waiting tasks from the nohz balancer (1.7x
    # here since idle CPUs balance at the idle interval; 3.3x before).
    assert v("eas-on", a55) > 1.5 * v("eas-off", a55)
    assert v("eas-on", "energy_cpu_mj") < v("eas-off", "energy_cpu_mj")
    # The price: the work runs on slower CPUs at lower OPPs.
    assert v("eas-on", "work_stretch") > v("eas-off", "work_stretch")


@pytest.mark.parametrize("machine", ["pixel6", "snapdragon-888"])
def test_without_util_est_the_opps_follow_the_decayed_util(quick_rows, machine):
    # After each sleep schedutil reads util_avg decayed over the sleep instead of the
    # task's estimate: lower OPPs, so less energy and a longer stretch.
    v = lambda config, metric: quick_rows[(machine, config, metric)]
    assert v("eas-on-no-util-est", "energy_cpu_mj") < v("eas-on", "energy_cpu_mj")
    assert v("eas-on-no-util-est", "work_stretch") > v("eas-on", "work_stretch")


def test_the_ui_configurations_differ_only_by_the_boost():
    e = get("eas")
    plain, boost = e.scenario("pixel6", "eas-on-ui"), e.scenario("pixel6", "eas-on-ui-boost")
    ui = [t for t in boost["tasks"] if t["name"] == "ui"]
    assert len(ui) == 1 and ui[0]["sched_attr"] == {"util_min": 205}
    assert [t for t in plain["tasks"] if t["name"] != "ui"] == [t for t in boost["tasks"] if t["name"] != "ui"]
    assert "sched_attr" not in [t for t in plain["tasks"] if t["name"] == "ui"][0]
    assert e.scenario("pixel6", "eas-on-no-util-est")["kernel"]["features"] == {"ENERGY_AWARE": True, "UTIL_EST": False}


def test_the_sd888_runs_with_its_vendor_em_at_the_chosen_band_end():
    e = get("eas")
    sd = e.scenario("snapdragon-888", "eas-on")
    assert sd["machine"]["energy_model"] == {"kernel": "vendor", "voltage": "centre"}
    corner = e.scenario("snapdragon-888", "wake-mig:eas-on", True, em_voltage="little-low")
    assert corner["machine"]["energy_model"]["voltage"] == {"cortex-a55": "low", "cortex-a78": "high", "cortex-x1": "high"}
    # LISA's big CPUs are the one X1: one wake-mig task, on CPU 7; sizes from the SD888's
    # capacities (a 10 % small task is 10 % of 325 of 1024 per 10 ms).
    assert [t["cpu"] for t in corner["tasks"]] == [7]
    assert sd["tasks"][0]["program"][0]["loop"]["body"][0] == {"run": "317us"}
    # The Pixel 6's voltages are declared: the option leaves its scenarios alone.
    assert e.scenario("pixel6", "eas-on", em_voltage="high") == e.scenario("pixel6", "eas-on")
    assert "energy_model" not in e.scenario("pixel6", "eas-on")["machine"]


def test_a_bad_em_voltage_is_a_one_line_error():
    from typer.testing import CliRunner

    from schedlab.cli import app

    r = CliRunner().invoke(app, ["reproduce", "eas", "--quick", "--machine", "snapdragon-888", "--em-voltage", "typical"])
    assert r.exit_code == 2
    assert "--em-voltage: 'typical' is not one of low, centre, high, little-low, little-high" in r.output
    assert "Traceback" not in r.output


def test_a_uniform_band_end_scales_energy_not_placement():
    # Every OPP's power times the same (1 -/+ 7.98 %)^2: feec compares energies, so the
    # tasks run where they ran at the centre; only the energy moves.
    import schedlab

    e = get("eas")
    run = lambda v: schedlab.run(e.scenario("snapdragon-888", "eas-on", True, em_voltage=v), 1).raw
    lo, mid, hi = run("low"), run("centre"), run("high")
    busy = lambda r: [c["busy_ns"] for c in r["cpus"]]
    assert busy(lo) == busy(mid) == busy(hi)
    e_lo, e_mid, e_hi = (r["summary"]["energy_cpu_mj"] for r in (lo, mid, hi))
    assert 0.80 < e_lo / e_mid < 0.90 and 1.10 < e_hi / e_mid < 1.22
