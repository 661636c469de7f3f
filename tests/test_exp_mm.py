"""The mm_cid, swap and swap-sweep reproductions: registration, scenarios, rows against the
published figures (real engine, --quick), direction checks, per-experiment options."""

from __future__ import annotations

import dataclasses
import json

import jsonschema
import pytest

import schedlab
from schedlab import schemas
from schedlab.reproduce import get
from schedlab.reproduce.experiments import mm_cid as mm_mod
from schedlab.reproduce.experiments import swap as swap_mod
from schedlab.reproduce.runner import apply_options, plan

ROW_SCHEMA = schemas.load("reproduce-rows")
TOPOLOGIES = ("1-L3", "1-core-per-L3", "all-cores", "all-threads")


@pytest.fixture(scope="module")
def mm_rows():
    from typer.testing import CliRunner

    from schedlab.cli import app

    r = CliRunner().invoke(app, ["reproduce", "mm_cid", "--quick", "--json", "-j", "2"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def swap_rows():
    from typer.testing import CliRunner

    from schedlab.cli import app

    r = CliRunner().invoke(app, ["reproduce", "swap", "--quick", "--json", "-j", "2"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def by_key(rows):
    return {(d["config"], d["metric"]): d for d in rows}


# ------------------------------------------------------------------ registration
def test_registered():
    e = get("mm_cid")
    assert e.machines == ("epyc-9654-2s",) and e.baseline == "1-L3:per-cpu"
    assert len(e.configs) == 12 and {c.split(":")[1] for c in e.configs} == {"per-cpu", "mm_cid", "cache-local"}
    assert [o.flag for o in e.options] == ["--delay-ms", "--idle", "--rfo-parallelism", "--llc-flush-ms", "--firmware"]
    assert e.options[0].default == 200 and e.options[1].default == "governor"
    assert e.source.seed == "003_b5ef3339420889a8.txt" and "200ms" in e.source.table
    s = get("swap")
    assert s.machines == ("snapdragon-888",) and s.baseline == "before"
    assert s.configs[:6] == ("before", "after", "before/idle-off", "after/idle-off", "before/erratum", "after/erratum")
    assert set(s.configs[6:]) == {f"{k}@dsb{n}" for k in ("before", "after") for n in swap_mod.DSB_SWEEP_NS}
    assert s.source.seed == "004_7ff82031f40dd91b.txt"
    sw = get("swap-sweep")
    assert sw.machines == ("topo-arm64", "topo-x86_64") and sw.published == []


def test_published_figures_are_the_seeds():
    e = get("mm_cid")
    assert e.published_value("epyc-9654-2s", "1-L3:mm_cid", "ns_per_pass") == 19289
    assert e.published_value("epyc-9654-2s", "all-threads:cache-local", "ns_per_pass") == 1907
    assert e.published_value("epyc-9654-2s", "1-core-per-L3:mm_cid vs 1-core-per-L3:cache-local", "ns_per_pass") == 16.7
    s = get("swap")
    assert s.published_value("snapdragon-888", "before", "elapsed_s") == 14.69
    assert s.published_value("snapdragon-888", "after", "sys_s") == 13.45
    assert s.published_value("snapdragon-888", "before", "ptep_clear_flush_pct") == 5.36


# --------------------------------------------------------------------- scenarios
def test_mm_cid_cpu_sets_follow_the_seed():
    cpus = {t: mm_mod.topology_cpus("epyc-9654-2s", t) for t in TOPOLOGIES}
    assert cpus["1-L3"] == list(range(8))
    assert cpus["1-core-per-L3"] == list(range(0, 192, 8))
    assert cpus["all-cores"] == list(range(192))
    assert cpus["all-threads"] == list(range(384))
    quick = mm_mod.topology_cpus("epyc-9654-2s", "all-threads", quick=True)
    assert len(quick) <= 32 and all(c + 192 in quick for c in quick if c < 192)  # SMT pairs kept
    assert mm_mod.format_cpulist([0, 1, 2, 8, 10, 11]) == "0-2,8,10-11"


@pytest.mark.parametrize("name", ["mm_cid", "swap", "swap-sweep"])
def test_every_scenario_validates(name):
    e = get(name)
    for machine in e.machines:
        for config in e.configs:
            for quick in (False, True):
                s = schedlab.load_scenario(e.scenario(machine, config, quick))
                assert s.name


def test_other_machines():
    e = get("mm_cid")
    assert mm_mod.topology_cpus("topo(2,2,4,2)", "1-core-per-L3") == [0, 4, 8, 12]
    assert mm_mod.topology_cpus("topo(2,2,4,2)", "all-threads") == list(range(32))
    schedlab.load_scenario(e.scenario("topo(2,2,4,2)", "all-cores:mm_cid", False))
    kp = get("swap").scenario("kunpeng-920-2s", "before")
    assert kp["machine"] == {"preset": "kunpeng-920-2s"} and kp["workload"]["params"]["cpu"] == 4
    schedlab.load_scenario(kp)


def test_full_mm_cid_run_is_the_seeds_benchmark():
    doc = get("mm_cid").scenario("epyc-9654-2s", "all-threads:cache-local", quick=False)
    # The governor picks the idle states (a core in CC6 writes its caches back).
    assert doc["kernel"] == {"profile": "6.13", "features": {"MM_CID": True, "MM_CID_CACHE_LOCAL": True}}
    assert doc["machine"] == {"preset": "epyc-9654-2s"}
    wfi = apply_options([get("mm_cid")], {"idle": "wfi", "rfo_parallelism": "4", "llc_flush_ms": "500"})[0]
    w = wfi.scenario("epyc-9654-2s", "1-L3:mm_cid", quick=True)
    assert w["kernel"]["tunables"] == {"cpuidle_max_state": 1}
    assert w["machine"]["cost"] == {"rfo_parallelism": 4.0, "cache.llc_flush_after_idle_us": 500000.0}
    assert wfi.published  # the figures still apply: one measurement, other hypotheses
    assert doc["workload"]["params"] == {"cpus": "0-383", "delay": "200ms", "index": "mm_cid", "area_bytes": 16384,
                                         "warmup": 20000, "loops": 5}
    old = get("mm_cid").scenario("epyc-9654-2s", "1-L3:mm_cid")
    assert old["kernel"]["profile"] == "6.12" and not old["kernel"]["features"]["MM_CID_CACHE_LOCAL"]
    assert get("mm_cid").scenario("epyc-9654-2s", "1-L3:per-cpu")["workload"]["params"]["index"] == "cpu_id"


def test_swap_scenarios():
    e = get("swap")
    before = e.scenario("snapdragon-888", "before")
    # The seed's phone kernel predates the Cortex-A55 #2441007 workaround.
    assert before["kernel"] == {"profile": "6.4", "features": {"TLB_BATCH": False},
                                "tunables": {"cpuidle_max_state": 0, "arm64_repeat_tlbi": False}}
    assert before["workload"]["params"] == {"cpu": 4, "region_kib": 1024, "iterations": 10000}
    off = e.scenario("snapdragon-888", "after/idle-off")
    assert off["kernel"]["profile"] == "6.5" and off["kernel"]["tunables"] == {"arm64_repeat_tlbi": False}
    erratum = e.scenario("snapdragon-888", "after/erratum")
    assert erratum["kernel"]["tunables"] == {"cpuidle_max_state": 0}  # the kernel decides: on for A55
    dsb = e.scenario("snapdragon-888", "before@dsb300")
    assert dsb["machine"] == {"preset": "snapdragon-888", "cost": {"tlb.dsb_sync_override_ns": 300.0}}
    assert e.scenario("topo(1,1,2,1)", "before")["workload"]["params"]["cpu"] == 1  # last CPU of a small machine
    sw = get("swap-sweep")
    pt = sw.scenario("topo-arm64", "50map:batched", quick=False)
    assert pt["machine"]["topo"] == {"sockets": 1, "llcs": 1, "cores": 8, "smt": 1, "arch": "arm64"}
    assert pt["workload"]["params"]["extra_mappers"] == 49 and pt["workload"]["params"]["memory_reclaim"]
    big = sw.scenario("topo-x86_64", "128cpu:sync", quick=False)
    assert big["machine"]["topo"]["sockets"] * big["machine"]["topo"]["llcs"] * big["machine"]["topo"]["cores"] == 128
    assert "tunables" not in apply_options([sw], {"idle": "off"})[0].scenario("topo-arm64", "8cpu:sync", False)["kernel"]
    assert sw.scenario("topo-arm64", "8cpu:sync", False)["kernel"]["tunables"] == {"cpuidle_max_state": 0}
    with pytest.raises(ValueError, match="synthetic"):
        sw.scenario("snapdragon-888", "8cpu:sync", False)


# ------------------------------------------------------------ rows, real engine
def test_mm_cid_quick_rows(mm_rows):
    jsonschema.validate(mm_rows, ROW_SCHEMA)
    rows = by_key(mm_rows)
    assert len(mm_rows) == 4 * (6 + 9)
    scale = {d["scale"] for d in mm_rows if d["metric"] == "ns_per_pass" and d["unit"] == "ns"}
    assert len(scale) == 1  # one factor for the machine, or none
    (s,) = scale
    base = rows[("1-L3:per-cpu", "ns_per_pass")]
    assert base["published"] == 1374
    instr, miss = rows[("1-L3:per-cpu", "pass_instr_ns")], rows[("1-L3:per-cpu", "pass_miss_ns")]
    assert not instr["calibrated"] and miss["simulated_mean"] > 0
    if miss["simulated_mean"] < 1374:
        # The factor scales the instruction part only: s x instr + miss = 1374 on the baseline.
        assert s > 0 and base["calibrated"] and base["simulated_mean"] == pytest.approx(1374)
        assert s * instr["simulated_mean"] + miss["simulated_mean"] == pytest.approx(1374)
    else:
        # The modeled memory part alone exceeds the published level: no factor, as simulated.
        assert s is None and not base["calibrated"]
        assert base["simulated_mean"] == pytest.approx(instr["simulated_mean"] + miss["simulated_mean"])
    for t in TOPOLOGIES:
        for i in ("per-cpu", "mm_cid", "cache-local"):
            r = rows[(f"{t}:{i}", "ns_per_pass")]
            assert r["published"] is not None and r["n_seeds"] == 2 and r["calibrated"] == (s is not None)
            # A pass faults each page of its area at most once: at most 16 KiB / 4 KiB.
            assert rows[(f"{t}:{i}", "cow_faults_per_pass")]["simulated_mean"] <= 16 * 1024 // 4096
        # Each thread is pinned and indexes by its CPU: its area's pages were all written
        # in the warm-up, so no timed pass takes a copy-on-write fault.
        assert rows[(f"{t}:per-cpu", "cow_faults_per_pass")]["simulated_mean"] == 0
        sp = rows[(f"{t}:mm_cid vs {t}:cache-local", "ns_per_pass")]
        assert sp["unit"] == "ratio" and not sp["calibrated"] and sp["scale"] is None and sp["published"] > 5
        # Direction: the cache-local allocator is never slower than 6.4-6.12's.
        assert sp["simulated_mean"] >= 1.0
        cl = rows[(f"{t}:cache-local", "ns_per_pass")]["simulated_mean"]
        assert cl <= rows[(f"{t}:mm_cid", "ns_per_pass")]["simulated_mean"]
        assert rows[(f"{t}:cache-local vs {t}:per-cpu", "ns_per_pass")]["simulated_mean"] == pytest.approx(1.0, abs=0.1)


def test_swap_quick_rows(swap_rows):
    jsonschema.validate(swap_rows, ROW_SCHEMA)
    rows = by_key(swap_rows)
    before, after = rows[("before", "elapsed_s")], rows[("after", "elapsed_s")]
    assert before["published"] == 14.69 and after["published"] == 13.8
    assert before["calibrated"] and before["simulated_mean"] == pytest.approx(14.69)
    assert rows[("before/idle-off", "elapsed_s")]["published"] == 14.69  # both idle hypotheses vs one run
    assert rows[("before", "sys_s")]["scale"] == pytest.approx(before["scale"])  # one factor per pair
    assert rows[("before", "ptep_clear_flush_pct")]["published"] == 5.36
    assert not rows[("before", "ptep_clear_flush_pct")]["calibrated"]
    # The factor scales the instruction part only: calibrated = s x (elapsed - tlb) + tlb.
    tlb = rows[("before", "tlb_s")]["simulated_mean"]
    assert 0 < tlb < before["simulated_mean"] and not rows[("before", "tlb_s")]["calibrated"]
    change = rows[("after vs before", "elapsed_s")]
    assert change["published"] == pytest.approx(13.80 / 14.69) and not change["calibrated"]
    red = rows[("after vs before", "elapsed_reduction_pct")]
    assert red["published"] == pytest.approx(100 * (1 - 13.80 / 14.69))
    # Direction: on arm64 batching is faster, and pays more when idle CPUs must acknowledge.
    assert change["simulated_mean"] < 1.0 and red["simulated_mean"] > 0
    assert rows[("after/idle-off vs before/idle-off", "elapsed_s")]["simulated_mean"] <= 1.0
    # The phones' DSB wait is the measured per-flush figure, whoever answers: waking idle
    # CPUs costs batching nothing more (the DVM model's own terms made it depend on them).
    assert change["simulated_mean"] <= rows[("after/idle-off vs before/idle-off", "elapsed_s")]["simulated_mean"]
    waits = rows[("after", "tlb_completion_waits")]["simulated_mean"]
    assert waits < rows[("before", "tlb_completion_waits")]["simulated_mean"] / 100
    assert rows[("after", "ptep_clear_flush_pct")]["simulated_mean"] == 0
    # With the A55 erratum workaround, 6.5 does not batch and each page waits twice.
    assert rows[("after/erratum vs before/erratum", "elapsed_reduction_pct")]["simulated_mean"] == pytest.approx(0)
    assert rows[("before/erratum", "tlb_completion_waits")]["simulated_mean"] == 2 * rows[("before", "tlb_completion_waits")]["simulated_mean"]
    # The DSB sweep: the dearer the synchronous wait, the larger the share and the saving.
    shares = [rows[(f"before@dsb{n}", "ptep_clear_flush_pct")]["simulated_mean"] for n in swap_mod.DSB_SWEEP_NS]
    savings = [rows[(f"after@dsb{n} vs before@dsb{n}", "elapsed_reduction_pct")]["simulated_mean"]
               for n in swap_mod.DSB_SWEEP_NS]
    assert shares == sorted(shares) and savings == sorted(savings) and shares[0] < shares[-1]


# ----------------------------------------------------------------------- options
def test_delay_option_drops_the_published_figures():
    e = get("mm_cid")
    (e10,) = apply_options([e], {"delay_ms": "10"})
    assert e10.published == [] and "--delay-ms 10" in e10.title and e.published  # the registered one is untouched
    (p,) = [p for p in plan([e10], quick=True) if p.config == "1-L3:mm_cid"]
    assert p.scenario.doc["workload"]["params"]["delay"] == "10ms"
    assert apply_options([e], {"delay_ms": 200})[0].published == e.published
    with pytest.raises(ValueError, match="--delay-ms"):
        apply_options([e], {"delay_ms": "ten"})[0].scenario("epyc-9654-2s", "1-L3:mm_cid")
    with pytest.raises(ValueError, match="unknown option --nope"):
        apply_options([e], {"nope": 1})


def test_cli_experiment_options(cli):
    r = cli("reproduce", "mm_cid", "--list")
    assert r.exit_code == 0 and "--delay-ms" in r.stdout
    r = cli("reproduce", "make-core", "--delay-ms", "10")
    assert r.exit_code == 2
    r = cli("reproduce", "swap-sweep", "--machine", "snapdragon-888", "--quick")
    assert r.exit_code == 2


def test_swap_sweep_direction_arm64():
    """Batched beats synchronous on arm64, more with more CPUs in the domain (quick runs)."""
    from schedlab.reproduce.runner import run_experiments

    sw = get("swap-sweep")
    points = ("2cpu", "64cpu")
    small = dataclasses.replace(
        sw, configs=tuple(f"{p}:{m}" for p in points for m in ("sync", "batched")), baseline="2cpu:sync",
        compare=lambda exp, runs: [r for r in swap_mod._sweep_compare(exp, runs) if r.config.split(":")[0] in points])
    rows = by_key([r.to_dict() for r in run_experiments([small], quick=True, machine="topo-arm64", workers=1)])
    s2 = rows[("2cpu", "elapsed_saving_pct")]["simulated_mean"]
    s64 = rows[("64cpu", "elapsed_saving_pct")]["simulated_mean"]
    assert 0 < s2 < s64


def _fake_mm_runs(instr: float, miss: float) -> dict:
    """One seed per configuration on epyc-9654-2s with the given per-pass parts."""
    runs = {}
    for c in get("mm_cid").configs:
        w = {"ns_per_pass": instr + miss, "pass_instr_ns": instr, "pass_miss_ns": miss, "cow_faults_per_pass": 0.0}
        runs[("epyc-9654-2s", c)] = [{"seed": 1, "workload": w, "summary": {}, "engine": {}}]
    return runs


def test_mm_cid_calibration_scales_the_instruction_part_only():
    e = get("mm_cid")
    rows = {(r.config, r.metric): r for r in mm_mod._compare(e, _fake_mm_runs(instr=500.0, miss=874.0))}
    base = rows[("1-L3:per-cpu", "ns_per_pass")]
    # 1374 published = scale * 500 + 874: scale 1.0, the level met exactly.
    assert base.calibrated and abs(base.scale - 1.0) < 1e-9 and abs(base.simulated_mean - 1374) < 1e-6


def test_mm_cid_refuses_a_calibration_with_no_positive_factor():
    e = get("mm_cid")
    # The memory part alone (2350 ns) exceeds the published 1374: no instruction time fits.
    rows = {(r.config, r.metric): r for r in mm_mod._compare(e, _fake_mm_runs(instr=467.0, miss=2350.0))}
    base = rows[("1-L3:per-cpu", "ns_per_pass")]
    assert not base.calibrated and base.scale is None
    assert abs(base.simulated_mean - 2817.0) < 1e-6


def test_mm_cid_firmware_without_package_c6_keeps_the_l3_the_published_level_needs():
    """Issue 48: with package C6 on (EPYC's firmware default) every L3 is flushed between
    bursts and a pass's memory part alone (its refetch from DRAM) exceeds the published
    per-cpu level, so no calibration fits; with DF C-states off the L3s keep the area and
    the level is within reach, where the calibration then places it."""
    from schedlab.reproduce.runner import run_experiments

    def base_rows(firmware: str) -> dict:
        (e,) = apply_options([get("mm_cid")], {"firmware": firmware})
        return by_key([r.to_dict() for r in run_experiments([e], quick=True, workers=1)])

    default, no_pc6 = base_rows("default"), base_rows("no-package-cstates")
    miss = lambda rows: rows[("1-L3:per-cpu", "pass_miss_ns")]["simulated_mean"]  # noqa: E731
    published = default[("1-L3:per-cpu", "ns_per_pass")]["published"]
    assert miss(default) > published and not default[("1-L3:per-cpu", "ns_per_pass")]["calibrated"]
    assert miss(no_pc6) < published and no_pc6[("1-L3:per-cpu", "ns_per_pass")]["calibrated"]
    with pytest.raises(ValueError, match="--firmware"):
        apply_options([get("mm_cid")], {"firmware": "off"})[0].scenario("epyc-9654-2s", "1-L3:mm_cid")
