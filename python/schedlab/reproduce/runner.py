"""Plans and runs the scenarios of experiments, then compares (see compare.py)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..parallel import Job, map_runs
from ..scenario import Scenario
from .compare import Row, compare
from .registry import Experiment, seeds_for

__all__ = ["Planned", "plan", "verdict_experiments", "run_experiments", "apply_options", "parse_cost", "Runner",
           "halt_state", "idle_check", "RunStore"]

# (jobs, on_done) -> RunResult JSON texts in job order; tests substitute their own.
Runner = Callable[[Sequence[Job], Callable[[int], None]], list]


class RunStore:
    """``DIR/runs/``: the RunResult of every finished (scenario, seed) of a reproduction,
    one file each, so an interrupted ``schedlab reproduce --out DIR`` resumes: run again
    with the same DIR, it reruns only what is missing.

    A file is named by the hash of everything its result depends on: the scenario as run
    (cost overrides and idle caps included), the seed, what the run records, and the
    simulator build. Each is written to a temporary name and renamed into place, so a
    killed run leaves whole files or none. A sweep's store (``schedlab.sweep.store``)
    keeps each run's flattened figures as Parquet rows; a reproduction's comparison reads
    whole RunResults (histograms, groups), hence files of their own."""

    def __init__(self, root: os.PathLike | str):
        self.dir = Path(root) / "runs"
        self.reused = 0  # results found here by :meth:`lookup`
        self.saved = 0  # results written by this process

    @staticmethod
    def _build() -> str:
        from .. import __version__, _core

        try:  # a rebuilt extension under the same version number: its results are not reused
            st = os.stat(_core.__file__)
            return f"{__version__}:{st.st_size}:{st.st_mtime_ns}"
        except (OSError, AttributeError, TypeError):
            return __version__

    def path(self, job: Job) -> Path:
        doc = {"scenario": job.scenario_json, "seed": job.seed, "without_tasks": job.without_tasks,
               "eas_check": job.eas_check, "limits": job.limits, "build": self._build()}
        key = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:24]
        return self.dir / f"{key}-s{job.seed}.json"

    def lookup(self, job: Job) -> str | None:
        p = self.path(job)
        try:
            text = p.read_text(encoding="utf-8")
            json.loads(text)  # a file cut short by a full disk is rerun, not trusted
        except (OSError, ValueError):
            return None
        self.reused += 1
        return text

    def save(self, job: Job, text: str) -> None:
        """Keeps a whole result; a run stopped short (Ctrl-C, a limit) is not kept."""
        if json.loads(text).get("engine", {}).get("partial"):
            return
        p = self.path(job)
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = p.parent / f".{p.name}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
        self.saved += 1


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
         cost: dict[str, float] | None = None, verdict: bool = False, idle_cap: bool = False,
         background: str | None = None) -> list[Planned]:
    """Builds and validates every scenario (fails fast, before anything runs). ``cost``
    overrides the cost table of every run's machine, over what an experiment sets itself;
    ``background`` sets every run's ``[kernel] background`` (what else runs on the machine).
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
                if background is not None:
                    doc = {**doc, "kernel": {**doc.get("kernel", {}), "background": background}}
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
    store: RunStore | None = None,
    on_reused: Callable[[int, int], None] | None = None,
    background: str | None = None,
) -> list[Row]:
    """Runs every experiment's scenarios over its seeds (all runs in one parallel pool) and
    returns the comparison rows, experiment by experiment.

    ``on_planned(n_runs)`` is called once before the runs start, ``on_done(i)`` after each.
    ``options`` are per-experiment options by name (see :func:`apply_options`); ``cost``
    overrides every machine's cost table and ``background`` what else runs on it (see
    :func:`plan`). The published figures are compared either way: one measurement, another
    hypothesis about its machine.
    ``verdict`` runs only what the published figures need (see :func:`plan`);
    ``on_jobs(names)`` receives the experiment of every run, in job order, before they start.
    ``idle_check_runs`` runs everything a second time with idle capped at the halt state
    and marks each row (see :func:`idle_check`). With ``store`` (a :class:`RunStore`),
    runs found there are not run again and each finished run is kept there as it ends;
    ``on_reused(n_reused, n_runs)`` is called once before the runs start. ``on_planned``,
    ``on_jobs`` and ``on_done`` then count the runs still to do.
    """
    experiments = apply_options(experiments, options)
    planned = plan(experiments, quick=quick, seeds=seeds, machine=machine, cost=cost, verdict=verdict,
                   background=background)
    if idle_check_runs:
        capped = plan(experiments, quick=quick, seeds=seeds, machine=machine, cost=cost, verdict=verdict,
                      idle_cap=True, background=background)
        planned = planned + capped
    jobs: list[Job] = []
    owner: list[int] = []
    for k, p in enumerate(planned):
        for seed in p.seeds:
            # Comparisons read summary figures only, never the per-task list.
            jobs.append(Job(p.scenario.json, seed, without_tasks=True, eas_check=p.experiment.eas_check))
            owner.append(k)
    texts: list[Any] = [None] * len(jobs)
    todo = list(range(len(jobs)))
    if store is not None:
        for i, job in enumerate(jobs):
            texts[i] = store.lookup(job)
        todo = [i for i, t in enumerate(texts) if t is None]
        if on_reused:
            on_reused(len(jobs) - len(todo), len(jobs))
    if on_jobs and (todo or store is None):  # every run reused: no progress to show
        on_jobs([planned[owner[i]].experiment.name for i in todo])
    if on_planned:
        on_planned(len(todo))
    done = on_done or (lambda i: None)
    todo_jobs = [jobs[i] for i in todo]
    keep = (lambda j, text: store.save(todo_jobs[j], text)) if store is not None else None
    try:
        if runner is None:
            fresh = map_runs(todo_jobs, workers=workers, backend=backend, on_done=done,
                             **({"on_result": keep} if keep else {}))
        else:
            fresh = runner(todo_jobs, done)
            if keep:  # a substitute runner hands its results over at the end
                for j, text in enumerate(fresh):
                    keep(j, text if isinstance(text, str) else json.dumps(text))
    except KeyboardInterrupt as e:
        # Ctrl-C: what a pool had finished but not yet handed over is kept too.
        if keep and getattr(e, "texts", None):
            for j, text in enumerate(e.texts):
                if text is not None and not store.path(todo_jobs[j]).exists():
                    keep(j, text)
        raise
    for i, text in zip(todo, fresh):
        texts[i] = text
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
