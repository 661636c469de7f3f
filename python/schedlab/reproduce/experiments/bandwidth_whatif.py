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
examples/bandwidth_whatif.toml is one grid point as a scenario to edit and run;
--machine runs the grid on another machine (C = its CPU count).
"""

from __future__ import annotations

from ..compare import compare_grouped
from ..registry import Metric, Source, experiment, machine_spec, published_source
from ...results import bandwidth_figures

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
            f = bandwidth_figures(r).get(GROUP, {})
            docs.append({**r, "workload": {**r.get("workload", {}), **{m.key: f[m.key] for m in METRICS if m.key in f}}})
        out[key] = docs
    return out


@experiment(
    name=NAME,
    title="a 2-CPU limit on a bursty service of T threads: usage against the limit and throttled periods, per kernel",
    source=published_source(NAME) or Source("002_ea7a89f00d69f01d.txt", "none (what-if)"),
    machines=["xeon-80"],
    configs=CONFIGS,
    labels={c: c for c in CONFIGS},
    baseline=config_name(*GRID[0], BASELINE),
    metrics=METRICS,
    seeds=5,
    quick_seeds=1,
    description=__doc__.split("\n\n", 1)[1],
    compare=lambda exp, runs: compare_grouped(exp, with_bandwidth_figures(runs), GROUPS),
)
def build(machine: str, config: str, quick: bool) -> dict:
    """T threads at an average demand of u x the limit, under the behaviour of ``config``."""
    threads, demand, behaviour = parse_config(config)
    profile, cfs_burst_us = BEHAVIOURS[behaviour]
    seconds = QUICK_SECONDS if quick else SECONDS
    return service_scenario(f"{NAME}-T{threads}-u{round(demand * 100)}-{behaviour}", machine, profile, threads,
                            duty_cycle(threads, demand), cfs_burst_us, seconds)
