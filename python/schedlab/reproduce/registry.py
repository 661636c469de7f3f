"""The experiment registry: what each reproduction compares, and with what.

An experiment declares

- where its published figures come from (a seed thread file and the table in it),
- the published figures themselves, as data in ``published/<name>.toml`` (never in
  the Rust core),
- its machines, its configurations and a scenario builder
  ``build(machine, config, quick) -> scenario dict``,
- the metrics it compares (figures of the RunResult, workload first), and which of
  them may be calibrated on the baseline's absolute level (docs/architecture.md, Calibration: one scale factor
  per (machine, benchmark), stated in the output; the before/after ratio never is).

Adding an experiment is one new module in ``schedlab/reproduce/experiments/`` that
calls :func:`register` (or uses the :func:`experiment` decorator), plus, if it has
published figures, one ``published/<name>.toml``.

An experiment may also declare options (:class:`ExpOption`, e.g. a delay): the CLI takes
them as ``--NAME VALUE`` and the builder receives them as keyword arguments. Published
figures apply only at an option's default value unless the option says otherwise.
"""

from __future__ import annotations

import functools
import importlib
import json
import pkgutil
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

from ..errors import InputError, UnknownNameError, core_input
from ..machine_names import machine_spec  # one reading of a machine name, the core's

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "ExpOption",
    "Metric",
    "Published",
    "Source",
    "Verdict",
    "Experiment",
    "register",
    "experiment",
    "get",
    "all_experiments",
    "machine_cpus",
    "machine_info",
    "parse_cpulist",
    "machine_spec",
    "load_published",
]

Builder = Callable[..., dict]


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
class ExpOption:
    """A per-experiment option: ``--NAME VALUE`` on the command line (underscores in
    ``name`` become dashes), a keyword argument ``name=value`` of the builder.

    ``type`` converts the command-line text (``int``, ``float`` or ``str``). With
    ``published_at_default`` (the usual case), the published figures belong to the
    default value only: any other value runs without them (nothing is compared, nothing
    calibrated).
    """

    name: str
    type: Callable[[str], Any]
    default: Any
    help: str = ""
    published_at_default: bool = True

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def convert(self, text: Any) -> Any:
        if not isinstance(text, str):
            return text
        try:
            return self.type(text)
        except (TypeError, ValueError):
            kind = getattr(self.type, "__name__", "value")
            raise InputError(f"option {self.flag}: '{text}' is not a valid {kind}") from None


@dataclass(frozen=True)
class Source:
    """Where published figures come from: the patch (its subject as posted, the version
    of the series, the mainline commit that merged it, if any, and the release), the
    table in its thread, and the seed thread file it was read from (provenance for the
    project's own checks: output names the patch, never the file)."""

    seed: str
    table: str
    note: str = ""
    subject: str = ""  # the patch's subject line as posted, e.g. "[PATCH v6 1/1] sched/fair: ..."
    posted: str = ""  # author and date of that mail
    commit: str = ""  # mainline commit (12 hex digits) that merged it; "" if never merged
    merged: str = ""  # the release it first appeared in ("v5.4"), or why there is none

    def citation(self) -> str:
        """The patch as users know it: subject, author and date, commit and release."""
        if not self.subject:
            return self.merged or "none"  # no patch: what the experiment simulates instead
        out = f"\"{self.subject}\""
        if self.posted:
            out += f" ({self.posted})"
        if self.commit:
            out += f", merged as {self.commit}" + (f" in {self.merged}" if self.merged else "")
        elif self.merged:
            out += f", {self.merged}"
        return out

    def __str__(self) -> str:
        if not self.subject and self.merged:
            # No patch: what the experiment simulates instead ("mainline's ..."), without the
            # "none: " the listing's patch line starts with and a table that holds no figure.
            return self.merged.removeprefix("none: ")
        return f"{self.citation()}, table \"{self.table}\""


@dataclass(frozen=True)
class Published:
    """One published figure. ``config`` may be a configuration or "A vs B" (a ratio)."""

    machine: str
    config: str
    metric: str
    value: float
    unit: str = ""
    note: str = ""


@dataclass(frozen=True)
class Verdict:
    """How the default ``schedlab reproduce`` (the verdict on every published figure) runs
    an experiment: only the configurations its published figures need, with these seeds,
    ``quick`` runs and options. The verdict table says which were used."""

    seeds: int
    quick: bool = False
    options: tuple[tuple[str, Any], ...] = ()
    why: str = ""  # said in the table when it differs from the experiment's own defaults


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
    published: list[Published] | None = None
    compare: Callable[..., list] | None = None
    options: tuple[ExpOption, ...] = ()
    verdict: Verdict | None = None
    # Run with the LISA-style check of EAS decisions (summary.eas_check_*; api.run's eas_check).
    eas_check: bool = False

    def __post_init__(self) -> None:
        self.machines = tuple(self.machines)
        self.configs = tuple(self.configs)
        self.metrics = tuple(self.metrics)
        self.options = tuple(self.options)
        if self.baseline not in self.configs:
            raise ValueError(f"experiment {self.name}: baseline '{self.baseline}' is not one of {self.configs}")
        if self.published is None:
            self.published = load_published(self.name)

    def label(self, config: str) -> str:
        return self.labels.get(config, config)

    def scenario(self, machine: str, config: str, quick: bool = False, **options: Any) -> dict:
        """Returns the scenario dict of one (machine, configuration); ``options`` override
        the experiment's option defaults (unknown names are an error)."""
        opts = self.resolve_options(options)
        return self.build(machine, config, quick, **opts) if self.options else self.build(machine, config, quick)

    def resolve_options(self, given: dict[str, Any] | None = None) -> dict[str, Any]:
        """Every declared option's value: ``given`` (converted) or the default."""
        given = dict(given or {})
        known = {o.name: o for o in self.options}
        unknown = sorted(set(given) - set(known))
        if unknown:
            flags = ", ".join(o.flag for o in self.options) or "none"
            raise InputError(f"experiment {self.name}: unknown option "
                             f"{', '.join('--' + u.replace('_', '-') for u in unknown)} (its options: {flags})")
        return {n: o.convert(given[n]) if n in given else o.default for n, o in known.items()}

    def with_options(self, given: dict[str, Any] | None = None) -> Experiment:
        """This experiment as run with ``given`` options: the builder gets them, and the
        published figures are dropped if an option that holds them to its default
        differs from it."""
        opts = self.resolve_options(given)
        if not given:
            return self
        changed = [o for o in self.options if opts[o.name] != o.default]
        if not changed:
            return self
        off_default = any(o.published_at_default for o in changed)
        build = self.build
        title = f"{self.title} ({', '.join(f'{o.flag} {opts[o.name]}' for o in changed)})"
        return replace(self, title=title, build=lambda m, c, q, **kw: build(m, c, q, **{**opts, **kw}),
                       options=tuple(replace(o, default=opts[o.name]) for o in self.options),
                       published=[] if off_default else list(self.published or []))

    def published_configs(self) -> dict[str, list[str]]:
        """``{machine: configurations}`` that the published figures need, in the
        experiment's order: each figure's configuration (both sides of an "A vs B"), and
        the baseline of a machine that has any (calibration and change rows use it)."""
        need: dict[str, set[str]] = {}
        for p in self.published or []:
            mine = need.setdefault(p.machine, {self.baseline})
            mine.update(c.strip() for c in p.config.split(" vs "))
        return {m: [c for c in self.configs if c in need[m]] for m in self.machines if m in need}

    def published_value(self, machine: str, config: str, metric: str) -> float | None:
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
        raise UnknownNameError(f"unknown experiment '{name}': expected one of {known}") from None


def select(names: Iterable[str]) -> list[Experiment]:
    names = list(names)
    return [get(n) for n in names] if names else all_experiments()


def machine_cpus(machine: str) -> int:
    """CPUs of a preset (or "topo(S,L,C,T)"), e.g. for ``make -j$(nproc)``."""
    return int(machine_info(machine)["nr_cpus"])


@functools.lru_cache(maxsize=64)
def _machine_json(machine: str) -> str:
    from .. import _core

    with core_input():
        return _core.machine(machine)


def machine_info(machine: str) -> dict:
    """What ``schedlab machines NAME --json`` prints: topology spans (``nodes``, ``llcs``,
    ``cores`` as cpulists), ``cpus``, ``arch``, cost table."""
    return json.loads(_machine_json(machine))


def parse_cpulist(text: str) -> list[int]:
    """``"0-3,8,10-11"`` -> ``[0, 1, 2, 3, 8, 10, 11]`` (the kernel's cpulist format)."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


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


def published_source(name: str) -> Source | None:
    """The ``[source]`` table of ``published/<name>.toml``, if any."""
    ref = resources.files(__package__).joinpath("published", f"{name}.toml")
    if not ref.is_file():
        return None
    src = tomllib.loads(ref.read_text(encoding="utf-8")).get("source")
    return Source(**src) if src else None


def seeds_for(exp: Experiment, quick: bool, n: int | None) -> Sequence[int]:
    """Seeds 1..N: ``n`` if given, else the experiment's (quick) default."""
    count = n if n is not None else (exp.quick_seeds if quick else exp.seeds)
    return list(range(1, max(1, count) + 1))
