"""The experiment registry: what each reproduction compares, and with what.

An experiment declares

- where its published figures come from (a seed thread file and the table in it),
- the published figures themselves, as data in ``published/<name>.toml`` (never in
  the Rust core),
- its machines, its configurations and a scenario builder
  ``build(machine, config, quick) -> scenario dict``,
- the metrics it compares (figures of the RunResult, workload first), and which of
  them may be calibrated on the baseline's absolute level (DESIGN.md: one scale factor
  per (machine, benchmark), stated in the output; the before/after ratio never is).

Adding an experiment is one new module in ``schedlab/reproduce/experiments/`` that
calls :func:`register` (or uses the :func:`experiment` decorator), plus, if it has
published figures, one ``published/<name>.toml``.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable, Iterable, Optional, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "Metric",
    "Published",
    "Source",
    "Experiment",
    "register",
    "experiment",
    "get",
    "all_experiments",
    "machine_cpus",
    "machine_spec",
    "load_published",
]

Builder = Callable[[str, str, bool], dict]


@dataclass(frozen=True)
class Metric:
    """A figure an experiment compares.

    ``name`` is looked up in the RunResult: ``workload.X`` / ``summary.X`` explicitly, or
    a bare name in ``workload`` then ``summary``. ``calibrate=True`` allows one scale
    factor per machine, fitted on the baseline's published absolute level.
    """

    name: str
    unit: str
    label: str = ""
    calibrate: bool = False

    @property
    def key(self) -> str:
        return self.name.split(".", 1)[1] if self.name.startswith(("workload.", "summary.")) else self.name


@dataclass(frozen=True)
class Source:
    """Where published figures come from: a seed thread file and a table in it."""

    seed: str
    table: str
    note: str = ""

    def __str__(self) -> str:
        return f"{self.seed}, table \"{self.table}\""


@dataclass(frozen=True)
class Published:
    """One published figure. ``config`` may be a configuration or "A vs B" (a ratio)."""

    machine: str
    config: str
    metric: str
    value: float
    unit: str = ""
    note: str = ""


@dataclass
class Experiment:
    """A reproduction: scenarios per (machine, configuration) and the figures to compare."""

    name: str
    title: str
    source: Source
    machines: tuple[str, ...]
    configs: tuple[str, ...]
    build: Builder
    metrics: tuple[Metric, ...]
    baseline: str
    labels: dict[str, str] = field(default_factory=dict)
    seeds: int = 5
    quick_seeds: int = 2
    description: str = ""
    published: Optional[list[Published]] = None
    compare: Optional[Callable[..., list]] = None

    def __post_init__(self) -> None:
        self.machines = tuple(self.machines)
        self.configs = tuple(self.configs)
        self.metrics = tuple(self.metrics)
        if self.baseline not in self.configs:
            raise ValueError(f"experiment {self.name}: baseline '{self.baseline}' is not one of {self.configs}")
        if self.published is None:
            self.published = load_published(self.name)

    def label(self, config: str) -> str:
        return self.labels.get(config, config)

    def scenario(self, machine: str, config: str, quick: bool = False) -> dict:
        """Returns the scenario dict of one (machine, configuration)."""
        return self.build(machine, config, quick)

    def published_value(self, machine: str, config: str, metric: str) -> Optional[float]:
        for p in self.published or []:
            if p.machine == machine and p.config == config and p.metric == metric:
                return p.value
        return None


_REGISTRY: dict[str, Experiment] = {}
_LOADED = False


def register(exp: Experiment) -> Experiment:
    """Adds an experiment to the registry (names are unique)."""
    if exp.name in _REGISTRY and _REGISTRY[exp.name] is not exp:
        raise ValueError(f"experiment '{exp.name}' is registered twice")
    _REGISTRY[exp.name] = exp
    return exp


def experiment(**kwargs: Any) -> Callable[[Builder], Builder]:
    """Decorator form of :func:`register`: decorates the scenario builder.

    ::

        @experiment(name="x", title="...", source=Source(...), machines=["bergamo"],
                    configs=["before", "after"], baseline="before",
                    metrics=[Metric("throughput", "ops/s")])
        def build(machine: str, config: str, quick: bool) -> dict: ...
    """

    def wrap(fn: Builder) -> Builder:
        register(Experiment(build=fn, **kwargs))
        return fn

    return wrap


def _load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from . import experiments

    for mod in sorted(pkgutil.iter_modules(experiments.__path__), key=lambda m: m.name):
        if not mod.name.startswith("_"):
            importlib.import_module(f"{experiments.__name__}.{mod.name}")


def all_experiments() -> list[Experiment]:
    """Every registered experiment, by name."""
    _load_all()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def get(name: str) -> Experiment:
    """Returns the experiment called ``name``; KeyError names the known ones."""
    _load_all()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise KeyError(f"unknown experiment '{name}': expected one of {known}") from None


def select(names: Iterable[str]) -> list[Experiment]:
    names = list(names)
    return [get(n) for n in names] if names else all_experiments()


def machine_cpus(machine: str) -> int:
    """CPUs of a preset (or "topo(S,L,C,T)"), e.g. for ``make -j$(nproc)``."""
    from .. import _core

    return int(json.loads(_core.machine(machine))["nr_cpus"])


def machine_spec(machine: str) -> dict:
    """The ``[machine]`` table for a preset name or "topo(S,L,C,T)" (as ``--machine`` takes)."""
    text = machine.replace(" ", "")
    if text.startswith("topo(") and text.endswith(")"):
        parts = text[5:-1].split(",")
        if len(parts) == 4 and all(p.isdigit() for p in parts):
            s, l, c, t = (int(p) for p in parts)
            return {"topo": {"sockets": s, "llcs": l, "cores": c, "smt": t}}
    return {"preset": machine}


def load_published(name: str) -> list[Published]:
    """Reads ``published/<name>.toml``; figures without ``value`` are left out."""
    ref = resources.files(__package__).joinpath("published", f"{name}.toml")
    if not ref.is_file():
        return []
    doc = tomllib.loads(ref.read_text(encoding="utf-8"))
    out = []
    for f in doc.get("figures", []):
        if f.get("value") is None:
            continue
        out.append(Published(machine=f["machine"], config=f["config"], metric=f["metric"],
                             value=float(f["value"]), unit=f.get("unit", ""), note=f.get("note", "")))
    return out


def published_source(name: str) -> Optional[Source]:
    """The ``[source]`` table of ``published/<name>.toml``, if any."""
    ref = resources.files(__package__).joinpath("published", f"{name}.toml")
    if not ref.is_file():
        return None
    src = tomllib.loads(ref.read_text(encoding="utf-8")).get("source")
    return Source(**src) if src else None


def seeds_for(exp: Experiment, quick: bool, n: Optional[int]) -> Sequence[int]:
    """Seeds 1..N: ``n`` if given, else the experiment's (quick) default."""
    count = n if n is not None else (exp.quick_seeds if quick else exp.seeds)
    return list(range(1, max(1, count) + 1))
