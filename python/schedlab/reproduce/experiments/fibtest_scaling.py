"""fibtest-scaling: the fibtest before/after ratio at 8, 16, 40 and 80 CPUs.

The seed says the fix "greatly improves performance of high-thread-count, non-cpu bound
applications with low cfs_quota_us allocation on high-core-count machines", i.e. the
effect grows with the number of CPUs the group runs on. This sweep runs the fibtest
experiment's case (10 ms quota per 100 ms, 5 s) with N = 8, 16, 40 and 80 threads on
the seed's 80-CPU machine: fibtest pins thread i to CPU i, so `fibtest -t N` uses CPUs
0..N-1 and the group's bandwidth is spread over exactly N per-CPU runqueues, while the
machine, its costs and the kernel stay those of the 80-CPU case (the other CPUs idle).
On xeon-80, CPUs 0-39 are the first SMT thread of the 40 cores (0-19 on socket 0), so
N <= 40 uses no SMT sibling. For each N, the change row "no-expiry-5.4@N vs
expiring-4.18-5.3@N" is the ratio the fibtest experiment reports at 80. Nothing was
published per CPU count (published = null); nothing is calibrated. --machine runs the
sweep on another machine, which needs at least 80 CPUs.
"""

from __future__ import annotations

from ..compare import compare_grouped
from ..registry import Source, experiment, machine_cpus, published_source
from .fibtest import LABELS, METRICS, PROFILES, QUICK_SECONDS, SECONDS, fibtest_scenario

NAME = "fibtest-scaling"
COUNTS = (8, 16, 40, 80)
BEFORE, AFTER = "expiring-4.18-5.3", "no-expiry-5.4"


def config_name(behaviour: str, n: int) -> str:
    return f"{behaviour}@{n}cpu"


CONFIGS = [config_name(b, n) for n in COUNTS for b in (BEFORE, AFTER)]
GROUPS = [([config_name(BEFORE, n), config_name(AFTER, n)], config_name(BEFORE, n)) for n in COUNTS]


def parse_config(config: str) -> tuple[str, int]:
    behaviour, _, n = config.partition("@")
    return behaviour, int(n.removesuffix("cpu"))


@experiment(
    name=NAME,
    title="fibtest before/after ratio vs CPU count (fibtest -t N on the 80-CPU machine)",
    source=published_source(NAME) or Source("002_ea7a89f00d69f01d.txt", "PATCH v6 commit message"),
    machines=["xeon-80"],
    configs=CONFIGS,
    labels={config_name(b, n): f"{LABELS[b]}, {n} CPUs" for n in COUNTS for b in (BEFORE, AFTER)},
    baseline=config_name(BEFORE, COUNTS[-1]),
    metrics=METRICS,
    seeds=10,
    quick_seeds=2,
    description=__doc__.split("\n\n", 1)[1],
    compare=lambda exp, runs: compare_grouped(exp, runs, GROUPS),
)
def build(machine: str, config: str, quick: bool) -> dict:
    """`fibtest -t N` (threads on CPUs 0..N-1) under the behaviour of ``config``."""
    behaviour, n = parse_config(config)
    cpus = machine_cpus(machine)
    if n > cpus:
        raise ValueError(f"{NAME}: configuration {config} needs {n} CPUs but machine '{machine}' has {cpus}; "
                         f"use a machine with at least {max(COUNTS)} CPUs (e.g. xeon-80 or 'topo(2,1,40,1)')")
    seconds = QUICK_SECONDS if quick else SECONDS
    return fibtest_scenario(f"{NAME}-{behaviour}-{n}cpu", machine, PROFILES[behaviour], n, seconds)
