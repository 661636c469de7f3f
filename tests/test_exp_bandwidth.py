"""The CFS bandwidth experiments: fibtest (seed 002), fibtest-scaling and bandwidth-whatif.

Registration, scenarios (validated by the core), the JSON rows of a real quick run against
the documented schema, and direction checks that fail if the mechanism's effect goes away
or reverses. Runs are short (a 80-CPU fibtest second costs a few milliseconds of engine time;
the quick fixture runs 2 seeds).
"""

from __future__ import annotations

import json

import jsonschema
import pytest

import schedlab
from conftest import fake_result
from schedlab import schemas
from schedlab.reproduce import ROW_FIELDS, compare, get
from schedlab.reproduce.experiments import fibtest_scaling as scaling
from schedlab.reproduce.report import rows_json
from schedlab.reproduce.runner import run_experiments
from schedlab.results import bandwidth_figures

ROW_SCHEMA = schemas.load("reproduce-rows")
FIB_BASE = ("expiring-4.18-5.3", "no-expiry-5.4", "never-expiring-3.16-4.17")
FIB_CONFIGS = FIB_BASE + tuple(f"{b}{sfx}" for sfx in ("@hz250", "@64cpu", "@64cpu-hz250")
                               for b in ("expiring-4.18-5.3", "no-expiry-5.4"))
# Bandwidth switches each configuration's kernel profile must select.
FIB_MODES = {
    "expiring-4.18-5.3": {"BW_SLICE_EXPIRY": True, "BW_EXPIRY_INVERTED": False, "BW_BURST": False},
    "no-expiry-5.4": {"BW_SLICE_EXPIRY": False, "BW_EXPIRY_INVERTED": False, "BW_BURST": False},
    "never-expiring-3.16-4.17": {"BW_EXPIRY_INVERTED": True, "BW_BURST": False},
}


def _bw_features(doc: dict) -> dict:
    """The bandwidth feature switches a scenario resolves to (a 1 ms run)."""
    short = {**doc, "run": {"duration_s": 0.001}}
    return {k: v for k, v in schedlab.run(short).features.items() if k.startswith("BW_")}


# ------------------------------------------------------------------ registration

def test_experiments_are_registered():
    fib = get("fibtest")
    assert fib.machines == ("xeon-80",) and fib.configs == FIB_CONFIGS and fib.baseline == "expiring-4.18-5.3"
    assert [m.key for m in fib.metrics] == ["iterations_m", "fast_work_ms", "usage_ms", "nr_throttled", "nr_periods"]
    assert not any(m.calibrate for m in fib.metrics)  # the published figures are ratios and another machine's levels
    assert fib.source.seed == "002_ea7a89f00d69f01d.txt" and "80 CPU" in fib.source.table
    assert "almost 30x" in fib.source.note
    assert fib.seeds >= 40  # the tick phase spans the ratio's range: a distribution, not one draw
    ratios = {(p.config, p.value) for p in fib.published if p.unit == "ratio"}
    assert ratios == {("no-expiry-5.4 vs expiring-4.18-5.3", 30.0),
                      ("no-expiry-5.4@hz250 vs expiring-4.18-5.3@hz250", 30.0),
                      ("no-expiry-5.4@64cpu vs expiring-4.18-5.3@64cpu", 8.06),
                      ("no-expiry-5.4@64cpu-hz250 vs expiring-4.18-5.3@64cpu-hz250", 8.06)}
    assert all(p.metric == "iterations_m" for p in fib.published if p.unit == "ratio")
    sc = get("fibtest-scaling")
    assert sc.configs == tuple(f"{b}@{n}cpu{h}" for h in ("", "/hz250") for n in (8, 16, 40, 64, 80)
                               for b in ("expiring-4.18-5.3", "no-expiry-5.4"))
    assert {p.config for p in sc.published} == {f"no-expiry-5.4@{n}cpu{h} vs expiring-4.18-5.3@{n}cpu{h}"
                                                for n in (64, 80) for h in ("", "/hz250")}
    assert sc.compare is not None and sc.seeds >= 40
    wi = get("bandwidth-whatif")
    assert len(wi.configs) == 3 * 3 * 3 and wi.published == [] and wi.compare is not None
    assert [m.key for m in wi.metrics] == ["usage_of_quota", "throttled_share", "wakeup_p50_us", "wakeup_p99_us"]


# --------------------------------------------------------------------- scenarios

@pytest.mark.parametrize("name", ["fibtest", "fibtest-scaling", "bandwidth-whatif"])
@pytest.mark.parametrize("quick", [True, False])
def test_scenarios_validate_through_the_core(name, quick):
    e = get(name)
    for config in e.configs:
        s = schedlab.load_scenario(e.scenario(e.machines[0], config, quick))
        assert s.name and s.doc["run"]["duration_s"] > 0


def test_fibtest_scenario_is_the_seeds_case():
    e = get("fibtest")
    for config in FIB_BASE:
        doc = e.scenario("xeon-80", config, quick=False)
        assert doc["machine"] == {"preset": "xeon-80"}
        assert doc["workload"] == {"kind": "fibtest", "params": {"threads": 80, "seconds": 5.0, "quota_us": 10000,
                                                                 "period_us": 100000}}
        assert doc["run"] == {"duration_s": 5.0} and "tunables" not in doc["kernel"]  # HZ 1000, the default
        features = _bw_features(doc)
        assert {k: features[k] for k in FIB_MODES[config]} == FIB_MODES[config]
    # The README's machine: 64 threads; the HZ hypothesis.
    doc = e.scenario("xeon-80", "expiring-4.18-5.3@64cpu-hz250", quick=True)
    assert doc["workload"]["params"]["threads"] == 64 and doc["kernel"]["tunables"] == {"hz": 250}
    assert doc["run"] == {"duration_s": 5.0}  # --quick runs fewer seeds, never a shorter test
    # --background: kernel wakeups on CPU 0.
    bg = e.with_options({"background": "500"}).scenario("xeon-80", "no-expiry-5.4", quick=True)
    assert bg["workload"]["params"]["cpu0_background_hz"] == 500.0
    # --machine: one thread per CPU of that machine.
    assert e.scenario("topo(1,2,4,2)", "no-expiry-5.4", quick=True)["workload"]["params"]["threads"] == 16


def test_fibtest_scaling_pins_n_threads_on_the_80_cpu_machine():
    e = get("fibtest-scaling")
    for n in scaling.COUNTS:
        doc = e.scenario("xeon-80", f"no-expiry-5.4@{n}cpu", quick=False)
        assert doc["machine"] == {"preset": "xeon-80"} and doc["workload"]["params"]["threads"] == n
        assert doc["kernel"] == {"profile": "5.4"}
        assert e.scenario("xeon-80", f"no-expiry-5.4@{n}cpu/hz250", quick=False)["kernel"]["tunables"] == {"hz": 250}
    assert e.scenario("xeon-80", "expiring-4.18-5.3@8cpu", quick=True)["kernel"]["profile"] == "5.3"
    with pytest.raises(ValueError, match="needs 40 CPUs"):
        e.scenario("ryzen-7950x", "expiring-4.18-5.3@40cpu", quick=True)


def test_whatif_scenarios_and_example():
    e = get("bandwidth-whatif")
    doc = e.scenario("xeon-80", "T16@80%:burst-5.14", quick=False)
    assert doc["groups"] == [{"name": "svc", "cpu_max": "200000 100000", "cfs_burst_us": 200000}]
    [task] = doc["tasks"]
    assert task["count"] == 16 and task["group"] == "svc"
    # 80 % of 2 CPUs over 16 threads = 10 % duty cycle: 1 ms run, 9 ms mean sleep.
    assert task["program"] == [{"loop": {"body": [{"run": "1000us"}, {"sleep_exp": "9000us"}]}}]
    assert _bw_features(doc)["BW_BURST"] and not _bw_features(e.scenario("xeon-80", "T4@50%:expiring-5.3", True))["BW_BURST"]
    assert "cfs_burst_us" not in e.scenario("xeon-80", "T16@80%:no-expiry-5.4", quick=False)["groups"][0]
    # The documented example is the grid point T64@80% under expiring slices.
    ex = schedlab.load_scenario("examples/bandwidth_whatif.toml").doc
    grid = schedlab.load_scenario(e.scenario("xeon-80", "T64@80%:expiring-5.3", quick=False)).doc
    for key in ("machine", "kernel", "groups", "tasks"):
        assert ex[key] == grid[key], key
    # The example measures after a warm-up long enough to be stationary (issue 29); the
    # grid point keeps its own window.
    assert ex["run"]["warmup_s"] == 40.0 and ex["run"]["duration_s"] == 60.0


# -------------------------------------------------------------- figures and rows

def test_bandwidth_figures():
    raw = fake_result(1)
    raw["engine"]["sim_ns"] = 2 * 10**9
    raw["groups"].append({"name": "svc", "usage_ns": 300 * 10**6, "quota_ns": 50 * 10**6, "period_ns": 100 * 10**6,
                          "nr_periods": 19, "nr_throttled": 5, "throttled_time": 3 * 10**9, "nr_bursts": 0,
                          "burst_time": 0})
    f = bandwidth_figures(raw)
    assert list(f) == ["svc"]  # the unlimited root is left out
    assert f["svc"]["usage_of_quota"] == pytest.approx(300 / (50 * 20))
    assert f["svc"]["throttled_share"] == pytest.approx(5 / 19)
    assert f["svc"]["usage_ms"] == pytest.approx(300) and f["svc"]["throttled_time_s"] == pytest.approx(3)


def test_compare_grouped_keeps_change_rows_within_a_group():
    e = get("fibtest-scaling")
    runs = {("xeon-80", c): [fake_result(s, workload={"iterations_m": (10.0 if c.startswith("exp") else 40.0) * s,
                                                      "fast_work_ms": 1.0, "usage_ms": 1.0, "nr_throttled": 1.0,
                                                      "nr_periods": 1.0})
                             for s in (1, 2)] for c in e.configs}
    rows = compare(e, runs)
    changes = [r for r in rows if r.unit == "ratio" and r.metric == "iterations_m"]
    names = [f"no-expiry-5.4@{n}cpu{h} vs expiring-4.18-5.3@{n}cpu{h}" for h in ("", "/hz250") for n in scaling.COUNTS]
    assert [r.config for r in changes] == [x for n in names for x in (n, n + " (ratio of means)")]
    assert all(r.simulated_mean == pytest.approx(4.0) for r in changes)
    assert all(r.simulated_median == pytest.approx(4.0) for r in changes if "means" not in r.config)
    jsonschema.validate(rows_json(rows), ROW_SCHEMA)


@pytest.fixture(scope="module")
def fibtest_quick_rows():
    """`schedlab reproduce fibtest --quick --seeds 2 --json`, for real (18 runs of 5 s, 64 or 80 CPUs)."""
    from typer.testing import CliRunner

    from schedlab.cli import app

    r = CliRunner().invoke(app, ["reproduce", "fibtest", "--quick", "--seeds", "2", "--json", "--workers", "1"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_fibtest_quick_json_rows(fibtest_quick_rows):
    doc = fibtest_quick_rows
    jsonschema.validate(doc, ROW_SCHEMA)
    assert [tuple(d) for d in doc] == [ROW_FIELDS] * len(doc)
    by = {(d["config"], d["metric"]): d for d in doc}
    change = by[("no-expiry-5.4 vs expiring-4.18-5.3", "iterations_m")]
    assert change["published"] == 30.0 and change["unit"] == "ratio" and change["n_seeds"] == 2
    assert change["simulated_mean"] > 0 and change["ratio"] == pytest.approx(change["simulated_mean"] / 30.0)
    assert change["simulated_p5"] <= change["simulated_median"] <= change["simulated_p95"]
    means = by[("no-expiry-5.4 vs expiring-4.18-5.3 (ratio of means)", "iterations_m")]
    exp, noexp = by[("expiring-4.18-5.3", "iterations_m")], by[("no-expiry-5.4", "iterations_m")]
    assert means["simulated_mean"] == pytest.approx(noexp["simulated_mean"] / exp["simulated_mean"])
    assert means["simulated_median"] is None and means["published"] == 30.0
    assert by[("no-expiry-5.4@64cpu vs expiring-4.18-5.3@64cpu", "iterations_m")]["published"] == 8.06
    assert not any(d["calibrated"] for d in doc)
    for config in FIB_CONFIGS:
        row = by[(config, "fast_work_ms")]
        assert row["published"] is None and row["simulated_mean"] > 0 and row["n_seeds"] == 2
    assert by[("never-expiring-3.16-4.17 vs expiring-4.18-5.3", "iterations_m")]["published"] is None


def test_fibtest_direction_and_quota(fibtest_quick_rows):
    """The seed's effect: without expiry the fast thread gets more done; and the quota
    still holds ("while still maintaining correct cpu quota restrictions"): usage stays
    within quota x periods plus the accounting lateness (at most a tick per CPU)."""
    by = {(d["config"], d["metric"]): d["simulated_mean"] for d in fibtest_quick_rows}
    assert by[("no-expiry-5.4", "iterations_m")] > 1.2 * by[("expiring-4.18-5.3", "iterations_m")]
    assert by[("no-expiry-5.4 vs expiring-4.18-5.3", "iterations_m")] > 1.2
    assert by[("never-expiring-3.16-4.17", "fast_work_ms")] > 1.2 * by[("expiring-4.18-5.3", "fast_work_ms")]
    quota_ms = 10.0 * 5.0 / 0.1  # 10 ms per 100 ms over the 5 s run
    for config in FIB_CONFIGS:
        assert by[(config, "usage_ms")] <= quota_ms + 80 * 1.0
        # A CPU-bound fast thread exhausts the quota in every period.
        assert by[(config, "nr_throttled")] == by[(config, "nr_periods")] > 0
    assert by[("expiring-4.18-5.3", "usage_ms")] < 0.8 * quota_ms  # expiry wastes quota


def test_fibtest_scaling_quick_rows():
    rows = run_experiments([get("fibtest-scaling")], quick=True, seeds=1, workers=1)
    doc = rows_json(rows)
    jsonschema.validate(doc, ROW_SCHEMA)
    by = {(d["config"], d["metric"]): d for d in doc}
    for n in scaling.COUNTS:
        change = by[(f"no-expiry-5.4@{n}cpu vs expiring-4.18-5.3@{n}cpu", "iterations_m")]
        assert change["published"] == {64: 8.06, 80: 30.0}.get(n) and change["simulated_mean"] > 1.0


def test_fibtest_scaling_needs_enough_cpus(cli):
    r = cli("reproduce", "fibtest-scaling", "--quick", "--machine", "ryzen-7950x")
    assert r.exit_code == 2 and "needs 40 CPUs" in r.stderr


def test_whatif_direction():
    """Many mostly idle threads at 80 % of their limit: with expiring slices most periods
    are throttled; without expiry few are, for the same usage."""
    e = get("bandwidth-whatif")
    figs = {}
    for b in ("expiring-5.3", "no-expiry-5.4"):
        raw = schedlab.run(e.scenario("xeon-80", f"T64@80%:{b}", quick=True), seed=1).raw
        figs[b] = bandwidth_figures(raw)["svc"]
    # (The quick run is 2 s: the start, when 64 runqueues each ask for a 5 ms slice from a
    # 200 ms pool, throttles a period or two in every behaviour.)
    assert figs["expiring-5.3"]["throttled_share"] > 0.3
    assert figs["no-expiry-5.4"]["throttled_share"] < figs["expiring-5.3"]["throttled_share"] / 3
    assert figs["no-expiry-5.4"]["usage_of_quota"] == pytest.approx(0.8, abs=0.06)


def test_whatif_rows_from_fake_runs():
    e = get("bandwidth-whatif")

    def raw(seed, nr_throttled):
        r = fake_result(seed)
        r["engine"]["sim_ns"] = 10**9
        r["groups"].append({"name": "svc", "usage_ns": 10**9, "quota_ns": 2 * 10**8, "period_ns": 10**8,
                            "nr_periods": 10, "nr_throttled": nr_throttled, "throttled_time": 0, "nr_bursts": 0,
                            "burst_time": 0})
        return r

    runs = {("xeon-80", c): [raw(s, 8 if c.endswith("expiring-5.3") else 2) for s in (1, 2)] for c in e.configs}
    rows = rows_json(compare(e, runs))
    jsonschema.validate(rows, ROW_SCHEMA)
    by = {(d["config"], d["metric"]): d for d in rows}
    assert by[("T64@80%:expiring-5.3", "usage_of_quota")]["simulated_mean"] == pytest.approx(0.5)
    assert by[("T64@80%:expiring-5.3", "throttled_share")]["simulated_mean"] == pytest.approx(0.8)
    assert by[("T64@80%:no-expiry-5.4 vs T64@80%:expiring-5.3", "throttled_share")]["simulated_mean"] == pytest.approx(0.25)
    assert all(d["published"] is None for d in rows)


def test_run_prints_group_cpu_stat(cli):
    r = cli("run", "examples/bandwidth_whatif.toml")
    assert r.exit_code == 0, r.output
    for k in ("usage_of_quota", "throttled_share", "nr_throttled", "nr_periods"):
        assert f"group.svc.{k}" in r.stdout


def test_whatif_takes_the_users_service(tmp_path):
    """Options (or a --spec file) replace the grid: threads, demand, cpu.max, burst."""
    from schedlab.reproduce.runner import apply_options

    [e] = apply_options([get("bandwidth-whatif")], {"threads": "8,32", "demand": "60", "quota_us": "150000",
                                                    "period_us": "50000", "burst_us": "50000",
                                                    "behaviours": "no-expiry-5.4,burst-5.14"})
    assert e.configs == ("T8@60%:no-expiry-5.4", "T8@60%:burst-5.14", "T32@60%:no-expiry-5.4", "T32@60%:burst-5.14")
    assert e.baseline == "T8@60%:no-expiry-5.4"
    doc = e.scenario("xeon-80", "T32@60%:burst-5.14", quick=True)
    assert doc["groups"] == [{"name": "svc", "cpu_max": "150000 50000", "cfs_burst_us": 50000}]
    # 60 % of 3 CPUs over 32 threads: duty 5.625 %, sleep 1 ms x (1 - d) / d = 16778 µs.
    assert doc["tasks"][0]["count"] == 32
    assert doc["tasks"][0]["program"][0]["loop"]["body"][1] == {"sleep_exp": "16778us"}
    spec = tmp_path / "svc.toml"
    spec.write_text("threads = [16]\ndemand = [80]\nquota_us = 100000\n")
    [s] = apply_options([get("bandwidth-whatif")], {"spec": str(spec), "demand": "50"})  # the command line wins
    assert s.configs == ("T16@50%:expiring-5.3", "T16@50%:no-expiry-5.4", "T16@50%:burst-5.14")
    assert s.scenario("xeon-80", s.configs[2], True)["groups"][0]["cfs_burst_us"] == 100000  # burst = quota
    with pytest.raises(ValueError, match="duty cycle of 600%"):
        [bad] = apply_options([get("bandwidth-whatif")], {"threads": "1", "demand": "300"})
        bad.scenario("xeon-80", bad.configs[0], True)


def test_whatif_reports_latency(cli):
    r = cli("reproduce", "bandwidth-whatif", "--threads", "64", "--demand", "80", "--seconds", "5",
            "--behaviours", "expiring-5.3,no-expiry-5.4", "--json")
    assert r.exit_code == 0, r.output
    rows = {(d["config"], d["metric"]): d for d in json.loads(r.stdout)}
    p99 = {b: rows[(f"T64@80%:{b}", "wakeup_p99_us")]["simulated_mean"] for b in ("expiring-5.3", "no-expiry-5.4")}
    # Throttled wakeups wait for the next period: expiring slices throttle far more often
    # (5 s: the first second throttles in every behaviour, see test_whatif_direction).
    # The factor depends on every wakeup path cost; the direction and a clear margin do not.
    assert p99["expiring-5.3"] > 3 * p99["no-expiry-5.4"]
