"""A sensitivity study of experiments with published figures.

Per (experiment, machine), on the configurations the published figures need (as the
verdict of ``schedlab reproduce`` runs them):

1. **nominal**: every seed at the preset's constants: the seed spread (p5..p95), and the
   reference figure of the first seed;
2. **screening**: the first seed with each candidate constant of non-zero band at its low
   and at its high edge, the others nominal; a constant that changes no published figure
   is screened out. The candidates are the constants the runs read
   (``engine.constants_read``: a constant a run did not read cannot move it), or every
   constant of the machine for results that do not say;
3. **Morris**: ``trajectories`` x (k + 1) points over the k constants kept (SALib), first
   seed: the elementary effects (mu*, the three that move a figure most) and, with the
   screening's edge points, the constant band: min..max of the figure over the design.

Every run goes through a :mod:`schedlab.sweep.executors` executor and is kept in a
:class:`~.store.RunStore`, so an interrupted study resumes. Runs at the first seed only
across the design (common random numbers): a design point differs from the nominal one by
its constants alone.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..reproduce.compare import Row, compare
from ..reproduce.registry import Experiment
from ..reproduce.runner import Planned, plan
from ..reproduce.verdict import Verdict, judge
from .bands import Constant, machine_constants
from .morris import morris_analyze, morris_sample
from .store import RunStore, run_key
from .verdict import consistency, needed_value

__all__ = ["SensRow", "Design", "run_study", "run_raw", "rows_of", "band_of"]

RowKey = tuple[str, str, str]  # (machine, config, metric)


def run_raw(scenario_json: str, seed: int) -> dict:
    """One run, in whatever process or node the executor picks: its RunResult without the
    per-task list. Picklable by reference."""
    from .. import _core

    raw = json.loads(_core.run(scenario_json, int(seed), None, "perfetto", None))
    raw.pop("tasks", None)
    return raw


@dataclass
class Design:
    """One (experiment, machine): its constants and, as the study proceeds, its points."""

    exp: Experiment
    machine: str
    seeds: tuple[int, ...]
    constants: list[Constant]
    not_varied: dict[str, str]  # key -> why (zero-width band, set by the experiment, ...)
    kept: list[Constant] = field(default_factory=list)
    screened_out: int = 0
    read_by_engine: bool = False  # candidates from engine.constants_read, not every constant
    candidates: list[Constant] = field(default_factory=list)  # screened at their band's edges

    @property
    def ref_seed(self) -> int:
        return self.seeds[0]


@dataclass
class SensRow:
    experiment: str
    machine: str
    config: str
    metric: str
    unit: str
    published: float | None
    simulated: float | None  # mean over seeds, nominal constants
    seed_p5: float | None
    seed_p95: float | None
    n_seeds: int
    reference: float | None  # first seed, nominal constants
    # The constant band around ``simulated``: the mean over seeds moved by as far as the
    # design moved the reference seed's figure below and above ``reference`` (the design
    # runs the first seed only, and a calibrated row is calibrated on it alone, so the
    # design's own min..max is a band around ``reference``, not around the mean).
    constant_min: float | None
    constant_max: float | None
    n_design: int
    varied: int
    screened_out: int
    top: list[dict] = field(default_factory=list)  # [{key, mu_star, mu, sigma, low, high, nominal, kind}]
    # The verdict's judgement of this row (schedlab.reproduce.verdict.judge, the same
    # function and the same nominal rows as `schedlab reproduce`): consistent = reproduced;
    # None for a fitted row or one without a result.
    consistent: bool | None = None
    interval: list[float] | None = None  # seed spread widened by the constant band
    needed: str | None = None
    needed_outside_band: bool | None = None
    # The largest effect is under twice the seeds' standard deviation: a constant moved at
    # one seed changes the run's trajectory as another seed would (mean |difference| of two
    # draws ~1.13 std), so the band and the ranking are then bounded by seed noise.
    within_seed_noise: bool | None = None
    verdict: str | None = None  # reproduced, direction only, not reproduced, fitted, no result
    why: str | None = None
    in_interval: bool | None = None  # the published figure inside ``interval``

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def band_width(self) -> float:
        if self.constant_min is None or self.constant_max is None:
            return 0.0
        return self.constant_max - self.constant_min


def _planned(d: Design, cost: dict[str, float] | None, quick: bool, seeds: int | None) -> list[Planned]:
    return plan([d.exp], quick=quick, seeds=seeds, machine=d.machine, cost=cost, verdict=True)


def rows_of(d: Design, planned: Sequence[Planned], results: dict[tuple[str, int], dict],
            seeds: Sequence[int]) -> dict[RowKey, Row]:
    """The comparison rows of one design point over ``seeds``."""
    runs = {}
    for p in planned:
        runs[(p.machine, p.config)] = [results[(run_key(p.scenario.json, s), s)] for s in seeds
                                       if (run_key(p.scenario.json, s), s) in results]
    return {(r.machine, r.config, r.metric): r for r in compare(d.exp, runs) if r.n_seeds > 0}


class _Executor:
    """Runs (scenario, seed) jobs on an executor, skipping those the store has."""

    def __init__(self, executor: cf.Executor, store: RunStore, progress: Callable[[str, int, int], None]):
        self.executor, self.store, self.progress = executor, store, progress
        self.results: dict[tuple[str, int], dict] = {}

    def run(self, phase: str, jobs: Sequence[tuple[str, int]]) -> None:
        todo: dict[tuple[str, int], str] = {}
        for text, seed in jobs:
            key = run_key(text, seed)
            if (key, seed) in self.results or (key, seed) in todo:
                continue
            have = self.store.get(key)
            if have is not None:
                self.results[(key, seed)] = have
            else:
                todo[(key, seed)] = text
        total = len(todo)
        self.progress(phase, 0, total)
        futures = {self.executor.submit(run_raw, text, seed): (key, seed) for (key, seed), text in todo.items()}
        done = 0
        for fut in cf.as_completed(futures):
            key, seed = futures[fut]
            raw = fut.result()
            self.store.put(key, seed, raw)
            self.results[(key, seed)] = raw
            done += 1
            self.progress(phase, done, total)


# A row's verdict as the study's "consistent" flag: a fitted row is neither.
CONSISTENT = {Verdict.REPRODUCED: True, Verdict.DIRECTION_ONLY: False, Verdict.NOT_REPRODUCED: False,
              Verdict.FITTED: None, Verdict.NO_RESULT: None}


def _cost_value(c: Constant, x: float) -> float:
    return float(round(x)) if c.integer else float(x)


def band_of(values: Sequence[float | None]) -> tuple[float | None, float | None]:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    return (min(vals), max(vals)) if vals else (None, None)


def _designs(exps: Sequence[Experiment], quick: bool, only: Sequence[str] | None) -> list[Design]:
    out = []
    for exp in exps:
        for machine, configs in exp.published_configs().items():
            set_by_exp: set[str] = set()
            for config in configs:
                set_by_exp |= set(exp.scenario(machine, config, quick)["machine"].get("cost", {}))
            consts, why = machine_constants(machine)
            kept = []
            for c in consts:
                if c.key in set_by_exp:
                    why[c.key] = "set by the experiment"
                elif only is not None and c.key not in only:
                    why[c.key] = "not asked for (--constant)"
                else:
                    kept.append(c)
            out.append(Design(exp, machine, (), kept, why))
    return out


def run_study(exps: Sequence[Experiment], *, executor: cf.Executor, store: RunStore, quick: bool = False,
              seeds: int | None = None, trajectories: int = 4, levels: int = 4, only: Sequence[str] | None = None,
              progress: Callable[[str, int, int], None] | None = None) -> tuple[list[SensRow], list[Design]]:
    """The study of ``exps`` (each with its verdict options applied by the caller): every
    published row with its seed spread, constant band, top constants and consistency."""
    prog = progress or (lambda phase, done, total: None)
    ex = _Executor(executor, store, prog)
    designs = _designs(exps, quick, only)
    nominal: dict[int, list[Planned]] = {}
    for i, d in enumerate(designs):
        nominal[i] = _planned(d, None, quick, seeds)
        d.seeds = nominal[i][0].seeds if nominal[i] else (1,)
    ex.run("nominal", [(p.scenario.json, s) for ps in nominal.values() for p in ps for s in p.seeds])

    # What the runs read, when the engine says (then nothing is screened).
    for i, d in enumerate(designs):
        read: set[str] | None = None
        for p in nominal[i]:
            raw = ex.results[(run_key(p.scenario.json, d.ref_seed), d.ref_seed)]
            keys = raw.get("engine", {}).get("constants_read")
            if keys is not None:
                read = (read or set()) | set(keys)
        if read is not None:
            d.read_by_engine = True
            d.kept = [c for c in d.constants if c.key in read]
            d.screened_out = len(d.constants) - len(d.kept)

    # Each candidate at its band's edges, one at a time: the screening (a constant that
    # moves no published figure is dropped) and the tornado. The candidates are the
    # constants the runs read when the engine says, else all of them.
    screen: dict[tuple[int, str, str], list[Planned]] = {}
    for i, d in enumerate(designs):
        d.candidates = list(d.kept) if d.read_by_engine else list(d.constants)
        for c in d.candidates:
            for edge, x in (("low", c.low), ("high", c.high)):
                screen[(i, c.key, edge)] = _planned(d, {c.key: _cost_value(c, x)}, quick, 1)
    ex.run("screening", [(p.scenario.json, designs[i].ref_seed) for (i, _, _), ps in screen.items() for p in ps])

    ref_rows = {i: rows_of(d, nominal[i], ex.results, [d.ref_seed]) for i, d in enumerate(designs)}
    screen_rows = {k: rows_of(designs[k[0]], ps, ex.results, [designs[k[0]].ref_seed]) for k, ps in screen.items()}
    for i, d in enumerate(designs):
        published = [k for k, r in ref_rows[i].items() if r.published is not None] or list(ref_rows[i])

        def moves(c: Constant) -> bool:
            for edge in ("low", "high"):
                rows = screen_rows[(i, c.key, edge)]
                for k in published:
                    a, b = ref_rows[i][k].simulated_mean, rows.get(k) and rows[k].simulated_mean
                    if a is None or b is None or abs(a - b) > 1e-12 * max(1.0, abs(a)):
                        return True
            return False

        d.kept = [c for c in d.candidates if moves(c)]
        d.screened_out = len(d.constants) - len(d.kept)

    morris: dict[int, tuple[np.ndarray, list[list[Planned]]]] = {}
    for i, d in enumerate(designs):
        if not d.kept:
            continue
        x = morris_sample(d.kept, trajectories, levels)
        pts = [_planned(d, {c.key: _cost_value(c, v) for c, v in zip(d.kept, xs)}, quick, 1) for xs in x]
        morris[i] = (x, pts)
    ex.run("morris", [(p.scenario.json, designs[i].ref_seed) for i, (_, pts) in morris.items() for ps in pts for p in ps])

    out: list[SensRow] = []
    for i, d in enumerate(designs):
        nom_rows = rows_of(d, nominal[i], ex.results, d.seeds)
        x, pts = morris.get(i, (np.zeros((0, 0)), []))
        pt_rows = [rows_of(d, ps, ex.results, [d.ref_seed]) for ps in pts]
        for key, r in nom_rows.items():
            if r.published is None:
                continue
            ref = ref_rows[i].get(key)
            y0 = ref.simulated_mean if ref else None
            ys = [pr[key].simulated_mean if key in pr else None for pr in pt_rows]
            edges = {(c.key, e): screen_rows[(i, c.key, e)].get(key) for c in d.kept for e in ("low", "high")
                     if (i, c.key, e) in screen_rows}
            lo, hi = band_of([y0] + ys + [v.simulated_mean for v in edges.values() if v is not None])
            effects = morris_analyze(d.kept, x, ys, levels) if d.kept else []
            by_key = {c.key: c for c in d.kept}
            def at(k: str, e: str) -> float | None:
                v = edges.get((k, e))
                return v.simulated_mean if v is not None else None

            # With each constant's figure at its band's edges (one at a time): the tornado.
            top = [{"key": e.key, "mu_star": e.mu_star, "mu": e.mu, "sigma": e.sigma, "low": by_key[e.key].low,
                    "high": by_key[e.key].high, "nominal": by_key[e.key].nominal, "kind": by_key[e.key].kind,
                    "source": by_key[e.key].source, "at_low": at(e.key, "low"), "at_high": at(e.key, "high")}
                   for e in effects[:3] if e.mu_star > 1e-9 * max(abs(y0 or 0.0), 1e-300)]
            p5 = r.simulated_p5 if r.simulated_p5 is not None else r.simulated_mean
            p95 = r.simulated_p95 if r.simulated_p95 is not None else r.simulated_mean
            if r.n_seeds >= 2 and r.simulated_std is not None and top:
                sr_noise: bool | None = top[0]["mu_star"] < 2.0 * r.simulated_std
            else:
                sr_noise = None
            widened = consistency(r.published, p5, p95, y0, lo, hi)
            judged = judge(r)
            sim = r.simulated_mean
            if None in (sim, y0, lo, hi):
                band_lo = band_hi = None
            else:
                band_lo, band_hi = sim - (y0 - lo), sim + (hi - y0)
            sr = SensRow(d.exp.name, d.machine, r.config, r.metric, r.unit, r.published, sim, p5, p95,
                         r.n_seeds, y0, band_lo, band_hi, len(pts) + 2 * len(d.candidates), len(d.kept),
                         d.screened_out, top, CONSISTENT[judged.verdict],
                         [widened.low, widened.high] if widened.low is not None else None,
                         within_seed_noise=sr_noise, verdict=judged.verdict.value, why=judged.why,
                         in_interval=widened.consistent)
            # Not reproduced (or in direction only): what the constants' uncertainty says.
            settled = judged.verdict in (Verdict.REPRODUCED, Verdict.FITTED, Verdict.NO_RESULT)
            if not settled and widened.consistent:
                sr.needed = "the published figure is inside the seed spread widened by the constant band"
            elif not settled and widened.consistent is False and p5 is not None and p95 is not None:
                cands = []
                for e in effects:
                    c = by_key[e.key]
                    a, b = edges.get((c.key, "low")), edges.get((c.key, "high"))
                    if a is not None and b is not None and a.simulated_mean is not None and b.simulated_mean is not None:
                        slope = (b.simulated_mean - a.simulated_mean) / (c.high - c.low)
                    else:
                        slope = e.mu / (c.high - c.low)
                    cands.append((c.key, slope, c.low, c.high, c.nominal))
                need = needed_value(r.published, p5, p95, cands)
                if need is not None:
                    sr.needed = need.text()
                    sr.needed_outside_band = need.outside_band
                elif any(v is None for v in ys) or y0 is None:
                    sr.needed = "the figure is missing at the reference seed: no elementary effects"
                else:
                    sr.needed = "no constant varied moves this figure: the gap is the model's, not a constant's"
            out.append(sr)
    return out, designs
