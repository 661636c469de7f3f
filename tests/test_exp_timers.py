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


# ---------------------------------------------------------------- timers-ui-android
PIXEL6_CLUSTER = {0: "little", 1: "little", 2: "little", 3: "little", 4: "mid", 5: "mid", 6: "big", 7: "big"}


def android_run(config: str, seed: int = 1, seconds: float = 1.0, trace=None, **features):
    import schedlab

    doc = get("timers-ui-android").scenario("pixel6", config, quick=True)
    doc["run"]["duration_s"] = seconds
    doc["kernel"]["features"].update(features)
    return schedlab.run(doc, seed=seed, **({"trace": str(trace), "trace_format": "ftrace"} if trace else {}))


def stretches(path) -> list[tuple[str, int, float, float, list[tuple[float, int]]]]:
    """(task, cpu, start, end, [(time, kHz) of the CPU from start on]) per run of a task, from
    an ftrace text trace's sched_switch and cpu_frequency lines."""
    import re

    line_re = re.compile(r"\[(\d+)\].*?\s([\d.]+): (sched_switch|cpu_frequency): (.*)")
    freq: dict[int, list[tuple[float, int]]] = {}
    running: dict[int, tuple[str, float]] = {}
    out = []
    for line in open(path, encoding="utf-8"):
        m = line_re.search(line)
        if not m:
            continue
        cpu, t, ev, rest = int(m[1]), float(m[2]), m[3], m[4]
        if ev == "cpu_frequency":
            c = int(re.search(r"cpu_id=(\d+)", rest)[1])
            freq.setdefault(c, []).append((t, int(re.search(r"state=(\d+)", rest)[1])))
            continue
        if cpu in running:
            task, start = running.pop(cpu)
            out.append((task, cpu, start, t, freq[cpu]))
        nxt = re.search(r"next_comm=(\S+)", rest)[1]
        if not nxt.startswith("swapper"):
            running[cpu] = (nxt, t)
    return out


def khz_at(changes: list[tuple[float, int]], t: float) -> int:
    return [k for at, k in changes if at <= t][-1]


def required_khz(uclamp_min: int) -> dict[int, int]:
    """Per CPU: the OPP schedutil must ask for a CPU running a task clamped to at least
    ``uclamp_min`` (1.25 x min(clamp, capacity) / capacity x max frequency, then the lowest
    OPP at or above), from the preset's capacities and Energy Model."""
    from schedlab.reproduce.registry import machine_info

    info = machine_info(json.dumps({"preset": "pixel6"}, sort_keys=True))
    pds = {pd["name"]: [s["frequency_khz"] for s in pd["states"]] for pd in info["perf_domains"]}
    out = {}
    for c in info["cpus"]:
        table, cap = pds[c["core_type"]], c["capacity"]
        util = min(uclamp_min, cap)
        raw = table[-1] * (util + (util >> 2)) // cap
        out[c["id"]] = next((f for f in table if f >= raw), table[-1])
    return out


def test_android_scenarios_open_the_cpusets_and_clamp_the_groups():
    e = get("timers-ui-android")
    pinned, android = e.scenario("pixel6", "pinned:pull"), e.scenario("pixel6", "android:pull")
    assert pinned["workload"] == get("timers-ui").scenario("pixel6", "pull")["workload"]
    assert pinned["kernel"]["governor"] == "performance"  # the top OPP, named (the phone's default is schedutil)
    p = android["workload"]["params"]
    assert (p["top_app_cpus"], p["background_cpus"], p["cgroups"]) == ("0-7", "0-3", True)
    assert (p["top_app_uclamp_min"], p["background_uclamp_max"]) == (0.1, 50.0)
    assert e.scenario("pixel6", "android-touch:pull")["workload"]["params"]["top_app_uclamp_min"] == 20.0
    assert "top_app_uclamp_min" not in e.scenario("pixel6", "eas:pull")["workload"]["params"]
    k = android["kernel"]
    assert (k["governor"], k["features"]["ENERGY_AWARE"], k["features"]["TIMER_PULL"]) == ("schedutil", True, True)
    assert k["schedutil"] == {"up_rate_limit_us": 500, "down_rate_limit_us": [5000, 20000, 20000]}
    # The seed's table is held against the android configurations.
    assert e.published_value("pixel6", "android:push", "little_active_share") == 0.6677
    assert e.published_value("pixel6", "android:pull vs android:push", "cpu_power_mw") == 0.9964


def test_top_app_uclamp_min_sets_the_ui_threads_opp(tmp_path):
    """With the touch boost's cpu.uclamp.min (20 % = 205), wherever the UI thread runs its
    cluster is at or above the OPP 205 implies there, once the 500 us up rate limit since
    the switch-in has passed; without the clamp (``eas``) it runs below it."""
    need = required_khz(205)
    assert need[7] == 851_000 and need[4] == 1_197_000 and need[0] == 1_803_000

    def below(config: str) -> tuple[int, int]:
        trace = tmp_path / f"{config.replace(':', '_')}.txt"
        android_run(config, trace=trace)
        checked = low = 0
        for task, cpu, start, end, changes in stretches(trace):
            if task != "ui-thread" or end - start <= 0.0006:
                continue
            checked += 1
            t0 = start + 0.0005
            low += any(k < need[cpu] for at, k in [(t0, khz_at(changes, t0))] + [c for c in changes if t0 < c[0] < end])
        return checked, low

    checked, low = below("android-touch:push")
    assert checked > 20 and low == 0
    checked, low = below("eas:push")
    assert checked > 20 and low > checked // 4, "without the clamp the UI thread runs below that OPP"


def test_cpusets_bound_the_threads_and_nothing_else_does(tmp_path):
    trace = tmp_path / "t.txt"
    r = android_run("android:pull", trace=trace)
    where: dict[str, set] = {}
    for task, cpu, *_ in stretches(trace):
        where.setdefault(task, set()).add(PIXEL6_CLUSTER[cpu])
    assert all(where[f"bg-{i}"] == {"little"} for i in range(4))  # background cpuset 0-3
    top = where["ui-thread"] | where["render-thread"] | where["composer"]
    assert len(top) >= 2, top  # top-app cpuset 0-7: no pinning to one cluster
    assert {t["name"]: t["group"] for t in r.raw["tasks"]} == {
        "ui-thread": "top-app", "render-thread": "top-app", "composer": "system",
        "bg-0": "background", "bg-1": "background", "bg-2": "background", "bg-3": "background"}


def test_eas_spends_less_than_capacity_placement_on_the_android_setup():
    """The same Android setup with ENERGY_AWARE off (schedutil still on): wakeups placed by
    capacity alone cost more CPU power than find_energy_efficient_cpu()'s, on each seed."""
    for seed in (1, 2):
        on = android_run("android:push", seed=seed, seconds=3.0).raw["workload"]
        off = android_run("android:push", seed=seed, seconds=3.0, ENERGY_AWARE=False).raw["workload"]
        assert on["cpu_power_mw"] < 0.95 * off["cpu_power_mw"], (seed, on["cpu_power_mw"], off["cpu_power_mw"])


def test_android_runs_are_deterministic():
    a, b = android_run("android-touch:pull", seed=3), android_run("android-touch:pull", seed=3)
    assert a.raw["workload"] == b.raw["workload"] and a.raw["cpus"] == b.raw["cpus"]
    assert android_run("android-touch:pull", seed=4).raw["workload"] != a.raw["workload"]
