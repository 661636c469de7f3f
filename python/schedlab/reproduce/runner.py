"""Plans and runs the scenarios of experiments, then compares (see compare.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..parallel import Job, map_runs
from ..scenario import Scenario
from .compare import Row, compare
from .registry import Experiment, seeds_for

__all__ = ["Planned", "plan", "verdict_experiments", "run_experiments", "apply_options", "parse_cost", "Runner",
           "halt_state", "idle_check"]

# (jobs, on_done) -> RunResult JSON texts in job order; tests substitute their own.
Runner = Callable[[Sequence[Job], Callable[[int], None]], list]


@dataclass(frozen=True)
class Planned:
    """One (experiment, machine, configuration) with its validated scenario and seeds."""

    experiment: Experiment
    machine: str
    config: str
    scenario: Scenario
    seeds: tuple[int, ...]


def apply_options(experiments: Sequence[Experiment], options: dict[str, Any] | None = None) -> list[Experiment]:
    """The experiments as run with ``options`` (name -> value, e.g. ``{"delay_ms": 10}``):
    each gets the options it declares (see :meth:`Experiment.with_options`). A name that
    none of them declares is an error."""
    options = dict(options or {})
    if not options:
        return list(experiments)
    declared = {o.name: o for e in experiments for o in e.options}
    unknown = sorted(set(options) - set(declared))
    if unknown:
        flags = ", ".join(sorted(o.flag for o in declared.values())) or "none"
        names = ", ".join(e.name for e in experiments)
        raise InputError(f"unknown option {', '.join('--' + u.replace('_', '-') for u in unknown)} "
                         f"for {names} (options they take: {flags})")
    out = []
    for e in experiments:
        mine = {o.name for o in e.options}
        out.append(e.with_options({k: v for k, v in options.items() if k in mine}))
    return out


def parse_cost(items: Sequence[str]) -> dict[str, float]:
    """``["smt_slowdown=1.6", "cpuidle.C2.wake_us=40"]`` -> ``{"smt_slowdown": 1.6, ...}``:
    cost-table overrides by field name, as ``[machine.cost]`` takes them (docs/scenario.md)."""
    out: dict[str, float] = {}
    for item in items:
        key, sep, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = None
        if not sep or not key.strip() or number is None:
            raise InputError(f"--cost: expected KEY=NUMBER (e.g. smt_slowdown=1.6 or cpuidle.C2.wake_us=40), got '{item}'")
        out[key.strip()] = number
    return out


def verdict_experiments(experiments: Sequence[Experiment]) -> list[Experiment]:
    """The experiments as the verdict runs them (``schedlab reproduce`` without names):
    those with published figures, each with its :class:`Verdict` options."""
    out = []
    for exp in experiments:
        if not exp.published:
            continue
        opts = dict(exp.verdict.options) if exp.verdict else {}
        out.append(exp.with_options(opts) if opts else exp)
    return out


def halt_state(spec: dict) -> int:
    """Index of the shallowest idle state that halts the CPU (C1 or WFI; POLL, a busy
    loop, comes first on x86) on the machine of a scenario's ``[machine]`` table ``spec``
    (a preset or a synthetic topology such as swap-sweep's arm64 family): the deepest
    state --idle-check allows."""
    from .registry import machine_info

    states = machine_info(json.dumps(spec, sort_keys=True))["idle_drivers"][0]["states"]
    return next((i for i, s in enumerate(states) if not s["polling"]), 0)


def plan(experiments: Sequence[Experiment], *, quick: bool = False, seeds: int | None = None,
         machine: str | None = None, options: dict[str, Any] | None = None,
         cost: dict[str, float] | None = None, verdict: bool = False, idle_cap: bool = False) -> list[Planned]:
    """Builds and validates every scenario (fails fast, before anything runs). ``cost``
    overrides the cost table of every run's machine, over what an experiment sets itself.
    ``verdict``: only the configurations the published figures need, with each
    experiment's verdict seeds and ``quick`` (``seeds`` and ``quick`` still override).
    ``idle_cap``: every CPU's idle capped at its halt state (``cpuidle_max_state``)."""
    experiments = apply_options(experiments, options)
    out = []
    for exp in experiments:
        wanted = exp.published_configs() if verdict else None
        v = exp.verdict if verdict else None
        exp_quick = quick or bool(v and v.quick)
        exp_seeds = seeds if seeds is not None else (v.seeds if v and not quick else None)
        for m in ([machine] if machine else exp.machines):
            if wanted is not None and m not in wanted:
                continue
            for config in exp.configs:
                if wanted is not None and config not in wanted[m]:
                    continue
                doc = exp.scenario(m, config, exp_quick)
                if cost:
                    spec = doc["machine"]
                    doc = {**doc, "machine": {**spec, "cost": {**spec.get("cost", {}), **cost}}}
                if idle_cap:
                    kernel = doc.get("kernel", {})
                    tunables = {**kernel.get("tunables", {}), "cpuidle_max_state": halt_state(doc["machine"])}
                    doc = {**doc, "kernel": {**kernel, "tunables": tunables}}
                s = Scenario.from_dict(doc, origin=f"<{exp.name}:{m}:{config}>")
                out.append(Planned(exp, m, config, s, tuple(seeds_for(exp, exp_quick, exp_seeds))))
    return out


def run_experiments(
    experiments: Sequence[Experiment],
    *,
    quick: bool = False,
    seeds: int | None = None,
    machine: str | None = None,
    workers: int | None = None,
    backend: str = "process",
    on_planned: Callable[[int], None] | None = None,
    on_done: Callable[[int], None] | None = None,
    runner: Runner | None = None,
    options: dict[str, Any] | None = None,
    cost: dict[str, float] | None = None,
    verdict: bool = False,
    on_jobs: Callable[[list[str]], None] | None = None,
    idle_check_runs: bool = False,
) -> list[Row]:
    """Runs every experiment's scenarios over its seeds (all runs in one parallel pool) and
    returns the comparison rows, experiment by experiment.

    ``on_planned(n_runs)`` is called once before the runs start, ``on_done(i)`` after each.
    ``options`` are per-experiment options by name (see :func:`apply_options`); ``cost``
    overrides every machine's cost table (see :func:`plan`). The published figures are
    compared either way: one measurement, another hypothesis about its machine.
    ``verdict`` runs only what the published figures need (see :func:`plan`);
    ``on_jobs(names)`` receives the experiment of every run, in job order, before they start.
    ``idle_check_runs`` runs everything a second time with idle capped at the halt state
    and marks each row (see :func:`idle_check`).
    """
    experiments = apply_options(experiments, options)
    planned = plan(experiments, quick=quick, seeds=seeds, machine=machine, cost=cost, verdict=verdict)
    if idle_check_runs:
        capped = plan(experiments, quick=quick, seeds=seeds, machine=machine, cost=cost, verdict=verdict, idle_cap=True)
        planned = planned + capped
    jobs: list[Job] = []
    owner: list[int] = []
    for k, p in enumerate(planned):
        for seed in p.seeds:
            # Comparisons read summary figures only, never the per-task list.
            jobs.append(Job(p.scenario.json, seed, without_tasks=True, eas_check=p.experiment.eas_check))
            owner.append(k)
    if on_jobs:
        on_jobs([planned[k].experiment.name for k in owner])
    if on_planned:
        on_planned(len(jobs))
    done = on_done or (lambda i: None)
    if runner is None:
        texts = map_runs(jobs, workers=workers, backend=backend, on_done=done)
    else:
        texts = runner(jobs, done)
    by_planned: list[list[dict]] = [[] for _ in planned]
    for k, text in zip(owner, texts):
        by_planned[k].append(json.loads(text) if isinstance(text, str) else text)
    half = len(planned) // 2 if idle_check_runs else len(planned)
    rows: list[Row] = []
    for exp in experiments:
        def rows_of(lo: int, hi: int) -> list[Row]:
            runs = {(p.machine, p.config): by_planned[k] for k, p in enumerate(planned[lo:hi], lo) if p.experiment is exp}
            if not runs:
                return []
            mine = compare(exp, runs)
            return [r for r in mine if r.n_seeds > 0] if verdict else mine
        mine = rows_of(0, half)
        if idle_check_runs:
            mine = idle_check(mine, rows_of(half, len(planned)))
        rows.extend(mine)
    return rows


def idle_check(rows: Sequence[Row], capped: Sequence[Row]) -> list[Row]:
    """Marks each change row (``A vs B``) whose effect depends on the idle states: with
    every CPU's idle capped at its halt state the effect (the ratio's logarithm) changes
    sign, or grows or shrinks by more than 2x (a published effect that comes from idle
    states rather than the mechanism). Not flagged: effects under the verdict's 2 % "no
    effect" bar both ways, and differences within two standard errors of the seeds'
    spread (two seeds of a 1 % effect differ by more than 2x by chance). Level rows get
    the capped mean, unjudged."""
    import dataclasses
    import math

    from .verdict import NO_EFFECT

    by_key = {(r.experiment, r.machine, r.config, r.metric): r for r in capped}
    out = []
    for r in rows:
        c = by_key.get((r.experiment, r.machine, r.config, r.metric))
        if c is None or c.simulated_mean is None or r.simulated_mean is None:
            out.append(r)
            continue
        flag = None
        if " vs " in r.config and r.simulated_mean > 0 and c.simulated_mean > 0:
            e, ec = math.log(r.simulated_mean), math.log(c.simulated_mean)
            # Standard errors of the two log ratios over their seeds.
            se = math.hypot((r.simulated_std or 0.0) / (r.simulated_mean * math.sqrt(max(1, r.n_seeds))),
                            (c.simulated_std or 0.0) / (c.simulated_mean * math.sqrt(max(1, c.n_seeds))))
            if max(abs(e), abs(ec)) < math.log1p(NO_EFFECT):
                flag = "no"  # under 2 % either way: no effect to depend on anything
            elif abs(e - ec) <= 2 * se:
                flag = "no"  # the two differ by less than the seeds' noise
            elif e * ec < 0:
                flag = "sign"
            elif max(abs(e), abs(ec)) > 2 * min(abs(e), abs(ec)):
                flag = "x2"
            else:
                flag = "no"
        out.append(dataclasses.replace(r, idle_capped_mean=c.simulated_mean, idle_dependent=flag))
    return out
