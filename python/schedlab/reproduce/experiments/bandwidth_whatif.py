"""bandwidth-whatif: what a CPU limit does to a bursty service, per kernel behaviour.

For SREs setting Kubernetes CPU limits (cgroup cpu.max): a service of T threads in one
cgroup limited to 2 CPUs (cpu.max = "200000 100000": quota Q = 200 ms per the
Kubernetes default period P = 100 ms) on the 80-CPU machine, threads not pinned. Each
thread alternates a 1 ms CPU burst and an exponentially distributed sleep with mean
(1-d)/d x 1 ms, so its long-run duty cycle is d and the threads do not run in lockstep.
The grid is T in {4, 16, 64} x average demand u in {50%, 80%, 95%} of the limit, i.e.
d = u x (Q/P) / T (from 47.5% for 4 threads at 95% down to 1.6% for 64 threads at 50%):
the same average load, carried by few busy threads or by many mostly idle ones.
Behaviours: per-CPU slices that expire at each period boundary (kernels 4.18-5.3,
profile 5.3, the baseline), no expiry (5.4-5.13, profile 5.4), and no expiry with
cpu.cfs_burst_us = Q (5.14+, profile 5.14). Figures, from the group's cpu.stat:
`usage_of_quota` = CPU time used / (Q x elapsed periods), usage against the limit as a
dashboard shows it (about u when nothing is lost; at most a little over 1), and
`throttled_share` = nr_throttled / nr_periods, the share of periods throttled. A change
row "X vs Tn@u:expiring-5.3" is the ratio of the same grid point under behaviour X (none
when the baseline figure is 0). Nothing here was published (published = null).
Latency: `wakeup_p50_us` and `wakeup_p99_us`, percentiles of the wakeup latency
(wakeup to running, time spent throttled included) over all threads.
examples/bandwidth_whatif.toml is one grid point as a scenario to edit and run;
--machine runs the grid on another machine (C = its CPU count).

Your own service: --threads 8,32 --demand 60,90 --quota-us 150000 --period-us 50000
--burst-us 50000 --work-us 500 --seconds 20 --behaviours no-expiry-5.4,burst-5.14, or
the same keys in a TOML file given with --spec FILE (threads = [8, 32], demand = [60,
90], quota_us = 150000, ...; options on the command line win). Demand is in percent of
the limit, the burst (cpu.cfs_burst_us of the burst behaviour) defaults to the quota.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from ...results import bandwidth_figures
from ..compare import compare_grouped
from ..registry import Experiment, ExpOption, Metric, Source, machine_spec, published_source, register

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

NAME = "bandwidth-whatif"
GROUP = "svc"
# The limit: 2 CPUs worth, Kubernetes' default period (100 ms).
QUOTA_US, PERIOD_US = 200_000, 100_000
WORK_US = 1_000  # each thread's CPU burst
THREADS = (4, 16, 64)
DEMANDS = (0.50, 0.80, 0.95)  # average demand as a share of the limit
# Behaviour -> (kernel profile, cpu.cfs_burst_us).
BEHAVIOURS = {
    "expiring-5.3": ("5.3", 0),
    "no-expiry-5.4": ("5.4", 0),
    "burst-5.14": ("5.14", QUOTA_US),
}
BASELINE = "expiring-5.3"
SECONDS, QUICK_SECONDS = 10.0, 2.0

METRICS = [
    Metric("usage_of_quota", "fraction", "CPU time used / (quota x elapsed periods)"),
    Metric("throttled_share", "fraction", "nr_throttled / nr_periods"),
    Metric("wakeup_p50_us", "us", "median wakeup latency (wakeup to running)"),
    Metric("wakeup_p99_us", "us", "99th percentile wakeup latency"),
]


def point(threads: int, demand: float) -> str:
    return f"T{threads}@{round(demand * 100)}%"


def config_name(threads: int, demand: float, behaviour: str) -> str:
    return f"{point(threads, demand)}:{behaviour}"


def parse_config(config: str) -> tuple[int, float, str]:
    pt, _, behaviour = config.partition(":")
    t, _, u = pt.partition("@")
    return int(t[1:]), int(u.rstrip("%")) / 100, behaviour


def duty_cycle(threads: int, demand: float, quota_us: int = QUOTA_US, period_us: int = PERIOD_US) -> float:
    """Each thread's duty cycle for an average demand of ``demand`` x the limit."""
    return demand * quota_us / period_us / threads


GRID = [(t, u) for t in THREADS for u in DEMANDS]
CONFIGS = [config_name(t, d, b) for t, d in GRID for b in BEHAVIOURS]
GROUPS = [([config_name(t, d, b) for b in BEHAVIOURS], config_name(t, d, BASELINE)) for t, d in GRID]


def sleep_us(duty: float, work_us: int = WORK_US) -> int:
    """Mean sleep giving a duty cycle ``duty`` with CPU bursts of ``work_us``."""
    return round(work_us * (1 - duty) / duty)


def service_scenario(name: str, machine: str, profile: str, threads: int, duty: float, cfs_burst_us: int,
                     seconds: float, *, quota_us: int = QUOTA_US, period_us: int = PERIOD_US,
                     work_us: int = WORK_US) -> dict:
    """T threads of a bursty service in one cgroup limited to ``quota_us`` per ``period_us``
    (cpu.cfs_burst_us = ``cfs_burst_us`` if not 0)."""
    group = {"name": GROUP, "cpu_max": f"{quota_us} {period_us}"}
    if cfs_burst_us:
        group["cfs_burst_us"] = cfs_burst_us
    return {
        "name": name,
        "description": f"{threads} threads, {work_us} us bursts at {duty:.2%} duty cycle, cpu.max "
                       f"\"{quota_us} {period_us}\", kernel profile {profile}",
        "machine": machine_spec(machine),
        "kernel": {"profile": profile},
        "groups": [group],
        "tasks": [{
            "name": "worker",
            "count": threads,
            "group": GROUP,
            "process": GROUP,
            "program": [{"loop": {"body": [{"run": f"{work_us}us"}, {"sleep_exp": f"{sleep_us(duty, work_us)}us"}]}}],
        }],
        "run": {"duration_s": seconds},
    }


def with_bandwidth_figures(runs: dict) -> dict:
    """Adds the service group's usage_of_quota and throttled_share to each run's workload
    figures (explicit tasks have no generator to report them)."""
    out = {}
    for key, raws in runs.items():
        docs = []
        for r in raws:
            f = dict(bandwidth_figures(r).get(GROUP, {}))
            h = r.get("histograms", {}).get("wakeup_latency", {})
            if h.get("count"):
                f["wakeup_p50_us"], f["wakeup_p99_us"] = h["p50_ns"] / 1e3, h["p99_ns"] / 1e3
            docs.append({**r, "workload": {**r.get("workload", {}), **{m.key: f[m.key] for m in METRICS if m.key in f}}})
        out[key] = docs
    return out


@dataclass(frozen=True)
class Grid:
    """The what-if's grid and service: thread counts x demands (share of the limit) x
    behaviours, for one cpu.max (quota, period), burst and CPU burst length."""

    threads: tuple[int, ...] = THREADS
    demands: tuple[float, ...] = DEMANDS
    behaviours: tuple[str, ...] = tuple(BEHAVIOURS)
    quota_us: int = QUOTA_US
    period_us: int = PERIOD_US
    burst_us: int | None = None  # cpu.cfs_burst_us of burst-5.14; None = the quota
    work_us: int = WORK_US
    seconds: float | None = None  # None: SECONDS, or QUICK_SECONDS with --quick

    @property
    def baseline(self) -> str:
        b = BASELINE if BASELINE in self.behaviours else self.behaviours[0]
        return config_name(self.threads[0], self.demands[0], b)

    @property
    def configs(self) -> list[str]:
        return [config_name(t, d, b) for t in self.threads for d in self.demands for b in self.behaviours]

    @property
    def groups(self) -> list:
        base = self.baseline.partition(":")[2]
        return [([config_name(t, d, b) for b in self.behaviours], config_name(t, d, base))
                for t in self.threads for d in self.demands]

    def build(self, machine: str, config: str, quick: bool) -> dict:
        threads, demand, behaviour = parse_config(config)
        profile, burst = BEHAVIOURS[behaviour]
        if burst:
            burst = self.burst_us if self.burst_us is not None else self.quota_us
        seconds = self.seconds if self.seconds is not None else QUICK_SECONDS if quick else SECONDS
        duty = duty_cycle(threads, demand, self.quota_us, self.period_us)
        if not 0 < duty < 1:
            raise InputError(f"bandwidth-whatif: {threads} threads at {demand:.0%} of a {self.quota_us / self.period_us:g}"
                             f"-CPU limit need a duty cycle of {duty:.0%} each (must be below 100 %): more threads, "
                             f"or a lower --demand")
        return service_scenario(f"{NAME}-T{threads}-u{round(demand * 100)}-{behaviour}", machine, profile, threads,
                                duty, burst, seconds, quota_us=self.quota_us, period_us=self.period_us,
                                work_us=self.work_us)


def _ints(text: Any) -> tuple[int, ...]:
    vals = text if isinstance(text, (list, tuple)) else [t for t in str(text).replace(" ", "").split(",") if t]
    out = tuple(int(v) for v in vals)
    if not out or any(v < 1 for v in out):
        raise InputError("expected positive integers separated by commas, e.g. 4,16,64")
    return out


def _percents(text: Any) -> tuple[float, ...]:
    vals = text if isinstance(text, (list, tuple)) else [t for t in str(text).replace("%", "").split(",") if t.strip()]
    out = tuple(float(v) / 100 for v in vals)
    if not out or any(not 0 < v for v in out):
        raise InputError("expected percentages of the limit separated by commas, e.g. 50,80,95")
    return out


def _behaviours(text: Any) -> tuple[str, ...]:
    vals = text if isinstance(text, (list, tuple)) else [t.strip() for t in str(text).split(",") if t.strip()]
    bad = [v for v in vals if v not in BEHAVIOURS]
    if bad or not vals:
        raise InputError(f"unknown behaviour {', '.join(bad) or '(none)'}: expected some of {', '.join(BEHAVIOURS)}")
    return tuple(dict.fromkeys(vals))


def _opt_int(text: Any) -> int | None:
    return None if text in (None, "", "none") else int(text)


def _opt_float(text: Any) -> float | None:
    return None if text in (None, "", "none") else float(text)


# How ExpOption.convert names them in "'x' is not a valid ...".
_ints.__name__ = "list of positive integers (e.g. 4,16,64)"
_percents.__name__ = "list of percentages (e.g. 50,80,95)"
_behaviours.__name__ = f"list of behaviours ({','.join(BEHAVIOURS)})"
_opt_int.__name__ = "integer"
_opt_float.__name__ = "number"

OPTIONS = [
    ExpOption("threads", _ints, THREADS, "thread counts, e.g. 4,16,64"),
    ExpOption("demand", _percents, DEMANDS, "average demand in percent of the limit, e.g. 50,80,95"),
    ExpOption("quota_us", int, QUOTA_US, "cpu.max quota (µs per period)"),
    ExpOption("period_us", int, PERIOD_US, "cpu.max period (µs)"),
    ExpOption("burst_us", _opt_int, None, "cpu.cfs_burst_us of the burst-5.14 behaviour (default: the quota)"),
    ExpOption("work_us", int, WORK_US, "each thread's CPU burst (µs)"),
    ExpOption("seconds", _opt_float, None, f"simulated seconds per run (default {SECONDS:g}, {QUICK_SECONDS:g} with --quick)"),
    ExpOption("behaviours", _behaviours, tuple(BEHAVIOURS), f"kernel behaviours, some of {','.join(BEHAVIOURS)}"),
    ExpOption("spec", str, "", "a TOML file with any of these keys (threads = [8, 32], quota_us = ...)"),
]
SPEC_KEYS = {o.name for o in OPTIONS} - {"spec"}


def read_spec(path: str) -> dict[str, Any]:
    """The options a ``--spec`` TOML file gives (keys as the options' names)."""
    try:
        doc = tomllib.loads(open(path, encoding="utf-8").read())
    except FileNotFoundError:
        raise InputError(f"{path}: no such file (bandwidth-whatif --spec)") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML: {e}") from None
    unknown = sorted(set(doc) - SPEC_KEYS)
    if unknown:
        raise InputError(f"{path}: {unknown[0]}: unknown key, expected one of {', '.join(sorted(SPEC_KEYS))}")
    return doc


class WhatIf(Experiment):
    """bandwidth-whatif: its options change the grid itself (configurations, baseline and
    comparison groups), not only the scenarios."""

    def with_options(self, given: dict[str, Any] | None = None) -> Experiment:
        given = dict(given or {})
        from_spec = read_spec(given["spec"]) if given.get("spec") else {}
        types = {o.name: o.type for o in OPTIONS}
        try:  # TOML values arrive typed (lists, numbers): convert them as the command line's text is
            from_spec = {k: types[k](v) for k, v in from_spec.items()}
        except (TypeError, ValueError) as e:
            raise InputError(f"{given['spec']}: {e}") from None
        merged = {**from_spec, **{k: v for k, v in given.items() if k != "spec"}}
        o = self.resolve_options(merged)
        try:
            grid = Grid(threads=o["threads"], demands=o["demand"], behaviours=o["behaviours"], quota_us=o["quota_us"],
                        period_us=o["period_us"], burst_us=o["burst_us"], work_us=o["work_us"], seconds=o["seconds"])
        except (TypeError, ValueError) as e:
            raise InputError(f"bandwidth-whatif: {e}") from None
        if grid == Grid():
            return self
        title = (f"{', '.join(map(str, grid.threads))} threads at {', '.join(f'{d:.0%}' for d in grid.demands)} of cpu.max "
                 f"\"{grid.quota_us} {grid.period_us}\"" + (f", burst {grid.burst_us} µs" if grid.burst_us else "")
                 + f", {grid.work_us} µs bursts: usage, throttling and wakeup latency per kernel behaviour")
        return dataclasses.replace(
            self, title=title, configs=tuple(grid.configs), labels={c: c for c in grid.configs}, baseline=grid.baseline,
            build=lambda m, c, q, **_: grid.build(m, c, q), published=[],
            compare=lambda exp, runs: compare_grouped(exp, with_bandwidth_figures(runs), grid.groups))


def build(machine: str, config: str, quick: bool, **_options: Any) -> dict:
    """T threads at an average demand of u x the limit, under the behaviour of ``config``
    (the default grid; options go through :meth:`WhatIf.with_options`)."""
    return Grid().build(machine, config, quick)


register(WhatIf(
    name=NAME,
    title="a 2-CPU limit on a bursty service of T threads: usage against the limit, throttled periods and "
          "wakeup latency, per kernel",
    source=published_source(NAME) or Source("002_ea7a89f00d69f01d.txt", "none (what-if)"),
    machines=("xeon-80",),
    configs=CONFIGS,
    labels={c: c for c in CONFIGS},
    baseline=config_name(*GRID[0], BASELINE),
    metrics=METRICS,
    seeds=5,
    quick_seeds=1,
    description=__doc__.split("\n\n", 1)[1],
    compare=lambda exp, runs: compare_grouped(exp, with_bandwidth_figures(runs), GROUPS),
    options=OPTIONS,
    build=build,
))
