"""`schedlab validate-host`: the comparison logic on a recorded report (a 2-CPU 6.18 VM),
the scenarios it simulates, and the no-rights path. The real probes run only with
SCHEDLAB_HOST_TESTS=1 (they need root and a cgroup cpu controller, and take seconds)."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from schedlab.validate_host import compare as cmp
from schedlab.validate_host import configs as vc
from schedlab.validate_host import host as vh

RECORDED = Path(__file__).parent / "data" / "validate_host_recorded.json"


def recorded() -> dict:
    return json.loads(RECORDED.read_text())


def test_recorded_report_recompares_to_its_own_rows():
    from schedlab.validate_host import recompare

    doc = recorded()
    again = recompare(copy.deepcopy(doc))
    for a, b in zip(doc["configs"], again["configs"]):
        assert a["rows"] == b["rows"], a["name"]
    names = [c["name"] for c in doc["configs"]]
    limited = [c for c in vc.configurations(2) if c.limited]
    assert len(limited) >= 8 and sum(c.kind != "threads" for c in vc.configurations(2)) == 2
    assert set(names) == {c.name for c in vc.configurations(2)}


def test_real_figures_follow_cpu_stat_and_thread_times():
    cfg = next(c for c in vc.configurations(2) if c.name == "burst")
    m = {
        "wall_ns": 2_000_000_000,
        "threads": [{"fast": 0, "cpu_ns": 300_000_000, "iterations": 30}, {"fast": 0, "cpu_ns": 100_000_000, "iterations": 10}],
        "cpu_stat": {"nr_periods": 20, "nr_throttled": 5, "throttled_time": 250_000_000, "nr_bursts": 3, "burst_time": 40_000_000},
    }
    f = cmp.real_figures(cfg, m)
    assert f["usage_cpus"] == pytest.approx(0.2)
    assert f["bursts_per_s"] == pytest.approx(20.0)
    assert (f["share_min"], f["share_max"]) == (pytest.approx(0.5), pytest.approx(1.5))
    assert f["throttled_share"] == pytest.approx(0.25)
    assert (f["throttled_time_s"], f["nr_bursts"], f["burst_time_s"]) == (0.25, 3.0, 0.04)
    rows = {r["metric"]: r for r in cmp.compare(f, dict(f, usage_cpus=0.3))}
    assert rows["usage_cpus"]["rel_diff"] == pytest.approx(0.5)
    assert rows["nr_bursts"]["rel_diff"] == 0.0
    assert cmp.rel_diff(0.0, 1.0) is None
    # Unlimited configurations have no cpu.stat rows.
    unl = next(c for c in vc.configurations(2) if c.name == "unlimited")
    assert "nr_periods" not in cmp.real_figures(unl, m)


def test_every_configuration_is_a_valid_scenario_and_runs():
    import schedlab

    for cfg in vc.configurations(2):
        doc = vc.scenario(cfg, "6.18", 250, 0.2, 2)
        doc["machine"] = {"topo": {"cores": 2}}  # the host's shape, without reading its sysfs
        if cfg.kind != "threads":
            cfg.rounds = 50
            doc = vc.scenario(cfg, "6.18", 250, 0.2, 2)
            doc["machine"] = {"topo": {"cores": 2}}
        r = schedlab.run(doc, 1)
        figs = cmp.sim_figures(cfg, r.raw)
        assert figs, cfg.name
        if cfg.kind == "threads":
            assert 0 < figs["usage_cpus"] <= 2.0 + 1e-9, (cfg.name, figs)
            if cfg.limited:
                # 0.2 s: the periods begun, the burst the pool starts with, and a tick
                # (4 ms at HZ 250) of overrun per CPU before the accounting notices.
                periods = -(-200_000 // cfg.period_us)
                allowed_us = cfg.quota_us * periods + min(cfg.burst_us, cfg.quota_us) + 2 * 4000
                assert figs["usage_cpus"] * 0.2e6 <= allowed_us, (cfg.name, figs)
    fib = next(c for c in vc.configurations(2) if c.name == "fibtest")
    tasks = vc.scenario(fib, "6.18", 250, 1, 2)["tasks"]
    assert [t["affinity"] for t in tasks] == ["0", "1"], "the probe's -p: thread i on CPU i"
    assert fib.probe_args(1, 1)[:2] == ["threads", "-t"] and "-p" in fib.probe_args(1, 1)


def test_without_rights_nothing_is_compared_and_it_exits_0(monkeypatch, cli):
    import schedlab.validate_host as v

    info = vh.HostInfo("6.18.0", "6.18", 250, "test", 2, "0 0 0", vh.CgroupAccess(None, None, "not running as root"), "/usr/bin/cc")
    monkeypatch.setattr(v, "host_info", lambda: info)
    doc = v.validate_host(seconds=0.5)
    assert doc["compared"] is False and doc["configs"] == [] and "root" in doc["reason"]
    r = cli("validate-host", "-s", "0.5")
    assert r.exit_code == 0, r.output
    assert "nothing compared" in r.output and "not running as root" in r.output


def test_host_facts_parse():
    assert vh.kernel_profile("6.18.44-fc-v657") == "6.18"
    assert vh.kernel_profile("5.15.0-91-generic") == "5.15"
    acc = vh.cgroup_access()
    assert (acc.version is None) == (acc.base is None) and acc.reason


@pytest.mark.skipif(os.environ.get("SCHEDLAB_HOST_TESTS") != "1", reason="set SCHEDLAB_HOST_TESTS=1 to probe the host")
def test_probe_runs_on_this_host():
    from schedlab.validate_host import validate_host

    doc = validate_host(seconds=1.0, only=["fibtest", "timer-1ms"], seeds=1)
    if not doc["compared"]:
        pytest.skip(doc.get("reason", "no rights"))
    fib = next(c for c in doc["configs"] if c["name"] == "fibtest")
    assert fib["real"]["nr_periods"] >= 5 and fib["real"]["usage_cpus"] < 0.2
