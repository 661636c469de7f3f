"""schedlab sensitivity (issue 31): the Morris wrapper ranks a known dominant constant
first, the consistency verdict on hand-made rows, and a study on a tiny experiment: a
figure that reads no uncertain constant gets a band of zero width, one that does gets a
band and its constant on top; an interrupted study resumes from its store."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT
from schedlab.reproduce.registry import Experiment, Metric, Published, Source
from schedlab.sensitivity import Constant, consistency, morris_analyze, morris_sample
from schedlab.sensitivity.store import RunStore
from schedlab.sensitivity.study import run_study
from schedlab.sensitivity.verdict import needed_value
from schedlab.sweep.executors import SerialExecutor


def _toy_constants():
    return [Constant("a", 1.0, 0.0, 2.0, "estimate", "toy"), Constant("b", 1.0, 0.0, 2.0, "estimate", "toy"),
            Constant("c", 5.0, 4.0, 6.0, "estimate", "toy")]


def test_morris_ranks_the_dominant_constant_first_and_a_dead_one_at_zero():
    cs = _toy_constants()
    x = morris_sample(cs, trajectories=6, levels=4)
    assert x.shape == (6 * 4, 3)
    # b dominates, a is small, c is never read.
    y = [0.1 * a + 10.0 * b * b for a, b, _ in x]
    effects = morris_analyze(cs, x, y)
    assert [e.key for e in effects] == ["b", "a", "c"]
    assert effects[2].mu_star == 0.0
    assert effects[1].mu_star == pytest.approx(0.1 * 2.0)  # per full band of a (0..2)


def test_morris_without_finite_figures_gives_no_ranking():
    cs = _toy_constants()
    x = morris_sample(cs, trajectories=2)
    assert morris_analyze(cs, x, [float("nan")] * len(x)) == []


def test_consistency_on_hand_made_rows():
    # Inside the seed spread.
    assert consistency(10.0, 9.0, 11.0, 10.0, 10.0, 10.0).consistent is True
    # Outside the seed spread, inside once widened by the constant band (design 8..13).
    c = consistency(12.5, 9.0, 11.0, 10.0, 8.0, 13.0)
    assert c.consistent is True and (c.low, c.high) == (7.0, 14.0)
    # Outside both: zero-width band leaves the seed spread as it is.
    c = consistency(12.5, 9.0, 11.0, 10.0, 10.0, 10.0)
    assert c.consistent is False and (c.low, c.high) == (9.0, 11.0)
    # Nothing published: no verdict.
    assert consistency(None, 9.0, 11.0, 10.0, 10.0, 10.0).consistent is None


def test_needed_value_extrapolates_the_top_constant_with_a_slope():
    # Figure rises 2 per unit of k; the spread's top edge 11 must reach 14: k + 1.5.
    n = needed_value(14.0, 9.0, 11.0, [("dead", 0.0, 0.0, 1.0, 0.5), ("k", 2.0, 4.0, 6.0, 5.0)])
    assert n.key == "k" and n.value == pytest.approx(6.5) and n.outside_band
    # Below the spread, negative slope: the constant must rise.
    n = needed_value(8.0, 9.0, 11.0, [("k", -1.0, 4.0, 6.0, 5.0)])
    assert n.value == pytest.approx(6.0) and not n.outside_band
    assert needed_value(8.0, 9.0, 11.0, [("dead", 0.0, 0.0, 1.0, 0.5)]) is None


PRESET = "ryzen-7950x"


def _pingpong(machine: str, config: str, quick: bool) -> dict:
    rounds = 100 if config == "short" else 200
    body = lambda me, other: [{"run": "5us"}, {"signal": me}, {"wait": other}]  # noqa: E731
    return {"name": "toy-pingpong", "machine": {"preset": machine}, "kernel": {"profile": "6.6"},
            "tasks": [{"name": "ping", "program": [{"loop": {"count": rounds, "body": body("ping", "pong")}}]},
                      {"name": "pong", "program": [{"loop": {"count": rounds, "body": [{"wait": "ping"}, {"run": "5us"},
                                                                                         {"signal": "pong"}]}}]}],
            "run": {"until": "workload_done"}}


def _toy_experiment() -> Experiment:
    return Experiment(
        name="toy-pingpong", title="toy", source=Source(seed="none", table="none"), machines=(PRESET,),
        configs=("short", "long"), build=_pingpong, baseline="short", seeds=2, quick_seeds=2,
        metrics=(Metric("summary.context_switches", "switches"), Metric("summary.sim_seconds", "s")),
        published=[Published(PRESET, "long", "context_switches", 804.0), Published(PRESET, "long", "sim_seconds", 1.0)])


# Two constants: one every switch reads, one only page reclaim reads (never here).
ONLY = ["context_switch_ns", "tlb.pte_xchg_cycles"]


def _study(store_path=None, executor=None):
    store = RunStore(store_path)
    try:
        return run_study([_toy_experiment()], executor=executor or SerialExecutor(), store=store, trajectories=2,
                         only=ONLY)
    finally:
        store.close()


@pytest.fixture(scope="module")
def toy_study():
    return _study()


def test_a_figure_that_reads_no_uncertain_constant_has_a_zero_width_band(toy_study):
    rows, designs = toy_study
    (d,) = designs
    assert [c.key for c in d.kept] == ["context_switch_ns"] and d.screened_out == 1
    by_metric = {r.metric: r for r in rows if r.config == "long"}
    switches = by_metric["context_switches"]
    assert switches.constant_min == switches.constant_max == switches.reference
    assert switches.band_width == 0.0 and switches.top == []
    assert switches.consistent is True  # 2 x 200 rounds + the tasks' exits: 804 in every run


def test_a_figure_that_reads_a_constant_has_its_band_and_names_it(toy_study):
    rows, _ = toy_study
    elapsed = next(r for r in rows if r.config == "long" and r.metric == "sim_seconds")
    assert elapsed.band_width > 0 and elapsed.top[0]["key"] == "context_switch_ns"
    assert elapsed.constant_min < elapsed.simulated < elapsed.constant_max
    # 1 s published against a few ms simulated: not consistent, and the constant that
    # would have to move is named, far outside its band.
    assert elapsed.consistent is False and elapsed.needed_outside_band is True
    assert elapsed.needed.startswith("context_switch_ns would have to be")
    # Its effect is far above the spread of the seeds: a real effect, not trajectory noise.
    assert elapsed.within_seed_noise is False


def _calibrated_experiment() -> Experiment:
    """The toy with its elapsed time calibrated on a published short run: the short row is
    the one the factor is fitted on, and the long one is scaled by the mean over seeds
    where the study's design scales each point by the reference seed's own factor."""
    import dataclasses

    return dataclasses.replace(_toy_experiment(), name="toy-calibrated",
                               metrics=(Metric("summary.sim_seconds", "s", calibrate=True),),
                               published=[Published(PRESET, "short", "sim_seconds", 0.5),
                                          Published(PRESET, "long", "sim_seconds", 1.0)], seeds=3, quick_seeds=3)


@pytest.fixture(scope="module")
def calibrated_study():
    store = RunStore(None)
    try:
        return run_study([_calibrated_experiment()], executor=SerialExecutor(), store=store, trajectories=2,
                         only=ONLY)
    finally:
        store.close()


def test_the_study_judges_every_row_as_the_verdict_does_and_a_fitted_row_is_fitted(calibrated_study):
    from schedlab.reproduce.runner import run_experiments
    from schedlab.reproduce.verdict import verdict_rows

    rows, _ = calibrated_study
    exp = _calibrated_experiment()
    judged = {(j.row.machine, j.row.config, j.row.metric): (str(j.verdict), j.why)
              for j in verdict_rows(run_experiments([exp], verdict=True, backend="serial"), [exp])}
    mine = {(r.machine, r.config, r.metric): (r.verdict, r.why) for r in rows if " (ratio of means)" not in r.config}
    assert mine == judged and len(mine) == 3
    short = next(r for r in rows if r.config == "short")
    assert short.verdict == "fitted" and short.consistent is None  # never "consistent"
    long = next(r for r in rows if r.config == "long")
    assert long.consistent is (long.verdict == "reproduced")


def test_the_constant_band_holds_the_nominal_figure(toy_study, calibrated_study):
    # The design runs the reference seed alone; a calibrated row there is scaled by that
    # seed's own factor, so the band is carried to the mean over seeds, which it holds.
    rows = toy_study[0] + calibrated_study[0]
    for r in rows:
        assert r.constant_min <= r.simulated <= r.constant_max, (r.config, r.metric)
        assert r.constant_max - r.constant_min == pytest.approx(r.band_width)
    long = next(r for r in calibrated_study[0] if r.config == "long")
    assert long.reference != pytest.approx(long.simulated)  # the case that put 126.7 outside 129..142.6


def test_a_study_resumes_from_its_store_and_gives_the_same_rows(tmp_path, toy_study):
    class Counting(SerialExecutor):
        n = 0

        def submit(self, fn, /, *args, **kwargs):
            Counting.n += 1
            return super().submit(fn, *args, **kwargs)

    first, _ = _study(tmp_path / "s", Counting())
    ran = Counting.n
    assert ran > 0
    Counting.n = 0
    again, _ = _study(tmp_path / "s", Counting())
    assert Counting.n == 0  # every run came from the store
    assert [r.to_dict() for r in again] == [r.to_dict() for r in first] == [r.to_dict() for r in toy_study[0]]


def test_cli_rejects_an_experiment_without_published_figures():
    res = subprocess.run([sys.executable, "-m", "schedlab", "sensitivity", "no-such-exp"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "unknown experiment" in res.stderr and "Traceback" not in res.stderr


def test_report_draws_bands_as_error_bars_and_a_tornado_only_where_a_constant_moves_the_row(toy_study, tmp_path):
    from schedlab.report.reproduction import _errors
    from schedlab.reproduce.compare import Row
    from schedlab.sensitivity.report import bands_of, markdown, sensitivity_report

    rows, designs = toy_study
    doc = {"designs": [{"experiment": d.exp.name, "machine": d.machine, "seeds": list(d.seeds),
                        "varied": [c.key for c in d.kept], "screened_out": d.screened_out,
                        "constants_read_by_engine": d.read_by_engine, "not_varied": d.not_varied} for d in designs],
           "rows": [r.to_dict() for r in rows]}
    sensitivity_report(tmp_path, doc)
    pngs = sorted(p.name for p in (tmp_path / "png").glob("tornado-*.png"))
    # Published rows only; the switch count moves with no constant: no tornado.
    assert pngs == ["tornado-toy-pingpong-ryzen-7950x-long-sim_seconds.png"]
    assert "context_switch_ns" in markdown(doc) and "1 screened out" in markdown(doc)
    bands = bands_of(doc)
    el = next(r for r in rows if r.config == "long" and r.metric == "sim_seconds")
    row = Row(el.experiment, el.machine, el.config, el.metric, "s", 1.0, el.simulated, 123.0, 2, False, None, None)
    lo, hi = _errors([row], bands)
    assert lo[0] == pytest.approx(el.simulated - el.interval[0]) and hi[0] == pytest.approx(el.interval[1] - el.simulated)
    assert _errors([row], None) == [[123.0], [123.0]]  # without a study: ± std


@pytest.mark.parametrize("text", ["not json", '{"rows": [{"experiment": "x"}]}', '[1, 2]'])
def test_reproduce_rejects_a_bands_file_that_is_not_a_study_before_running_anything(tmp_path, text):
    bad = tmp_path / "bands.json"
    bad.write_text(text)
    res = subprocess.run([sys.executable, "-m", "schedlab", "reproduce", "swap", "--out", str(tmp_path / "r"),
                          "--bands", str(bad)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith(f"error: {bad}: expected the sensitivity.json") and "Traceback" not in res.stderr
    assert not (tmp_path / "r").exists()


def test_constants_read_by_the_engine_replace_screening(monkeypatch):
    """When results carry engine.constants_read, only those are screened and varied (the
    core records it; here a stand-in run sets it, to hold the study to the list)."""
    import schedlab.sensitivity.study as study

    real = study.run_raw

    def reading(scenario_json, seed):
        raw = real(scenario_json, seed)
        raw.setdefault("engine", {})["constants_read"] = ["context_switch_ns", "cache.l1d_kib"]
        return raw

    monkeypatch.setattr(study, "run_raw", reading)
    phases = []
    store = RunStore(None)
    rows, (d,) = run_study([_toy_experiment()], executor=SerialExecutor(), store=store, trajectories=2,
                           progress=lambda phase, done, total: phases.append((phase, total)) if done == 0 else None)
    assert d.read_by_engine and [c.key for c in d.kept] == ["context_switch_ns"]  # l1d_kib: zero-width band
    assert d.screened_out == len(d.constants) - 1
    # Screening runs of the one constant read with a band (2 edges x 2 configs), not of the
    # machine's 40-odd others; the Morris points (2 trajectories x 2 points x 2 configs,
    # fewer where SALib's grid repeats a point: a repeated run is run once).
    p = dict(phases)
    assert p["nominal"] == 4 and p["screening"] == 4 and 0 < p["morris"] <= 8
    elapsed = next(r for r in rows if r.metric == "sim_seconds")
    assert elapsed.top[0]["key"] == "context_switch_ns" and elapsed.band_width > 0
