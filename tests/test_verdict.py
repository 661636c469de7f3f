"""The default `schedlab reproduce`: the verdict on every published figure (issue 33).

The bar (reproduce/verdict.py, docs/experiments.md) on analytic cases, the plan that
runs only what the published figures need, the tables' headers and citations, and the
swap experiment's erratum pair, which the seed never measured."""

from __future__ import annotations

import math

import pytest

from schedlab.reproduce import registry
from schedlab.reproduce.compare import Row
from schedlab.reproduce.runner import plan, verdict_experiments
from schedlab.reproduce.verdict import judge, verdict_rows


def row(config="a", metric="m", unit="s", published=10.0, mean=10.0, *, calibrated=False, p5=None, p95=None,
        n=5, experiment="x", machine="mach") -> Row:
    return Row(experiment, machine, config, metric, unit, published, mean, 0.0, n, calibrated, None,
               2.0 if calibrated else None, mean, p5, p95)


@pytest.mark.parametrize("mean,p5,p95,verdict", [
    (12.4, None, None, "yes"),     # within 25 %
    (12.6, None, None, "no"),      # 26 % off
    (20.0, 9.0, 25.0, "yes"),      # off, but the published figure is inside p5..p95
    (20.0, 11.0, 25.0, "no"),
])
def test_level_bar(mean, p5, p95, verdict):
    assert judge(row(mean=mean, p5=p5, p95=p95)).verdict == verdict


def test_fitted_level_counts_neither_way():
    assert judge(row(mean=10.0, calibrated=True)).verdict == "fitted"
    assert judge(row(mean=11.0, calibrated=True)).verdict == "yes"  # calibrated, not fitted here


@pytest.mark.parametrize("pub,sim,verdict", [
    (30.0, 15.0, "yes"),             # ln 15 / ln 30 = 0.80
    (30.0, 2.0, "direction only"),   # 0.20
    (30.0, 0.9, "no"),               # the other way
    (0.75, 0.87, "direction only"),  # ln .87 / ln .75 = 0.48
    (0.75, 0.80, "yes"),
    (1.01, 0.99, "yes"),             # published no effect (< 2 %), simulated none either
    (1.01, 0.90, "no"),
    (0.90, 1.005, "no"),             # published -10 %, simulated no change
])
def test_change_bar(pub, sim, verdict):
    assert judge(row(config="b vs a", unit="ratio", published=pub, mean=sim)).verdict == verdict


def test_reduction_in_percent_is_a_change():
    # Published 6.06 % less, simulated 2.4 % less: ln(0.976) / ln(0.9394) = 0.39.
    r = row(config="after vs before", metric="elapsed_reduction_pct", unit="%", published=6.059, mean=2.399)
    j = judge(r)
    assert j.kind == "change" and j.verdict == "direction only"
    assert math.isclose(float(j.why.split("x")[1].split()[0]), math.log(1 - 0.02399) / math.log(1 - 0.06059),
                        rel_tol=0.01)


def test_verdict_keeps_one_row_per_figure_and_leaves_what_ifs_out():
    swap = registry.get("swap")
    rows = [row(config="after vs before", unit="ratio", published=0.94, mean=0.96, experiment="swap",
                machine="snapdragon-888"),
            row(config="after vs before (ratio of means)", unit="ratio", published=0.94, mean=0.95,
                experiment="swap", machine="snapdragon-888"),
            row(config="after@dsb600 vs before@dsb600", unit="ratio", published=0.94, mean=0.87,
                experiment="swap", machine="snapdragon-888")]
    judged = verdict_rows(rows, [swap])
    assert [j.row.config for j in judged] == ["after vs before"]


def test_default_plan_runs_only_what_the_published_figures_need():
    exps = verdict_experiments(registry.all_experiments())
    names = {e.name for e in exps}
    assert "bandwidth-whatif" not in names and "swap-sweep" not in names and "make-core" not in names
    assert {"fibtest", "mm_cid", "swap", "swqueue", "timers-dbench", "timers-ui"} <= names
    planned = plan([e for e in exps if e.name in ("swap", "timers-dbench", "shared-runq")], verdict=True)
    configs = {(p.experiment.name, p.machine, p.config) for p in planned}
    assert {c for e, _, c in configs if e == "swap"} == {"before", "after"}
    assert {c for e, _, c in configs if e == "timers-dbench"} == {f"menu:NR{n}:{m}" for n in
                                                                 (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
                                                                 for m in ("push", "pull")}
    assert {(m, c) for e, m, c in configs if e == "shared-runq"} == {
        (m, c) for m in ("ryzen-7950x", "milan-72") for c in ("make:none", "make:v1")}
    # Every published figure keeps a configuration to be compared with.
    for e in exps:
        need = e.published_configs()
        for p in e.published:
            for c in p.config.split(" vs "):
                assert c.strip() in need[p.machine], (e.name, p.config)


def test_swap_erratum_pair_has_no_published_figures():
    swap = registry.get("swap")
    raw = {"engine": {}, "workload": {}}

    def runs_of(elapsed, tlb):
        return [{**raw, "seed": 1, "workload": {"elapsed_s": elapsed, "user_s": 0.05, "sys_s": elapsed - 0.05,
                                                 "tlb_s": tlb, "ptep_clear_flush_s": tlb / 2,
                                                 "ptep_clear_flush_pct": 1.0, "tlb_completion_waits": 5}}]

    runs = {("snapdragon-888", "before"): runs_of(10.0, 1.0), ("snapdragon-888", "after"): runs_of(9.5, 0.5),
            ("snapdragon-888", "before/erratum"): runs_of(11.0, 2.0),
            ("snapdragon-888", "after/erratum"): runs_of(11.0, 2.0)}
    rows = swap.compare(swap, runs)
    erratum = [r for r in rows if "erratum" in r.config]
    assert erratum and all(r.published is None for r in erratum)
    red = next(r for r in erratum if r.metric == "elapsed_reduction_pct")
    assert red.simulated_mean == 0.0
    seed_pair = next(r for r in rows if r.config == "before" and r.metric == "elapsed_s")
    cal = next(r for r in erratum if r.config == "before/erratum" and r.metric == "elapsed_s")
    assert cal.scale == seed_pair.scale and cal.calibrated  # the seed pair's factor


def test_list_cites_patches_by_subject_and_commit(cli):
    r = cli("reproduce", "--list")
    assert r.exit_code == 0
    assert '"[PATCH v6 1/1] sched/fair: Fix low cpu usage with high throttling' in r.stdout
    assert "merged as de53fd7aedb1 in v5.4" in r.stdout and "merged as 43b3dfdd0455" in r.stdout
    assert "never merged" in r.stdout  # the swqueue RFC


def test_tables_escape_the_spread_header_and_mark_the_factor_in_the_row(cli):
    r = cli("reproduce", "timers", "--seeds", "10")
    assert r.exit_code == 0, r.output
    assert "median [p5, p95]" in r.stdout and "median  over seeds" not in r.stdout
    push = next(line for line in r.stdout.splitlines() if line.startswith("│ push") and "ns_per_iteration" in line)
    assert "†x" in push
    assert not [line for line in r.stdout.splitlines() if line != line.rstrip()]  # no padding when piped
    assert "Verdict:" in r.stdout and "reproduced" in r.stdout


def test_published_rank_places_one_published_run_among_the_seeds():
    from schedlab.reproduce.compare import published_rank, value_row
    from schedlab.reproduce.report import published_place

    assert published_rank([1.0, 2.0, 3.0, 4.0], 2.5) == 50.0
    assert published_rank([1.0, 2.0, 3.0, 4.0], 2.0) == pytest.approx(37.5)  # a tie counts half
    assert published_rank([1.0, 2.0], 0.5) == 0.0 and published_rank([1.0, 2.0], 9.0) == 100.0
    assert published_rank([3.0, 3.0, 3.0], 2.0) is None  # the model says it does not vary
    assert published_rank([1.0, 2.0], None) is None
    exp = registry.get("timers")
    r = value_row(exp, "m", "c", "x", "s", {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0}, 3.5)
    assert r.published_rank == 75.0 and published_place(r) == "p75"
    scaled = value_row(exp, "m", "c", "x", "s", {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0}, 3.5, scale=10.0)
    assert published_place(scaled) == "< all 4"  # ranked among the calibrated values


def test_verdict_table_says_where_the_published_figure_falls(cli):
    import re

    r = cli("reproduce", "timers", "--seeds", "10")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    header = next(line for line in lines if line.startswith("┃") and "pub. among seeds" in line)
    col = [c.strip() for c in header.split("┃")].index("pub. among seeds")
    change = next(line for line in lines if "zen3-2s pull vs push: ns_per_iteration" in line)
    assert re.fullmatch(r"p\d+|[<>] all 10", [c.strip() for c in change.split("│")][col])
    steady = next(line for line in lines if "zen3-2s pull: ns_per_iteration" in line)
    assert [c.strip() for c in steady.split("│")][col] == "—"  # every seed gives the same figure
