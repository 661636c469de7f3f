"""fibtest-scaling: the fibtest before/after ratio at 8, 16, 40, 64 and 80 CPUs, HZ 1000 and 250.

The commit message says the fix "greatly improves performance of high-thread-count, non-cpu bound
applications with low cfs_quota_us allocation on high-core-count machines", i.e. the
effect grows with the number of CPUs the group runs on. This sweep runs the fibtest
experiment's case (10 ms quota per 100 ms, 5 s) with N = 8, 16, 40, 64 and 80 threads on
the patch's 80-CPU machine: fibtest pins thread i to CPU i, so `fibtest -t N` uses CPUs
0..N-1 and the group's bandwidth is spread over exactly N per-CPU runqueues, while the
machine, its costs and the kernel stay those of the 80-CPU case (the other CPUs idle).
On xeon-80, CPUs 0-39 are the first SMT thread of the 40 cores (0-19 on socket 0), so
N <= 40 uses no SMT sibling. Each N runs at HZ 1000 and HZ 250 (`/hz250`): the tick
that accounts the fast thread's overrun decides the expiring case. For each point, the
change row "no-expiry-5.4@N vs expiring-4.18-5.3@N" is the ratio of fibtest's
iterations, with its median and 5-95 % range over seeds (tick phases), and a
"(ratio of means)" row. Published per CPU count: the patch's ~30x at 80 and the fibtest
README's 8.1x on a 64-CPU machine (HZ unknown: both rows carry them). Nothing is
calibrated. Seeds: 40 (10 with `--quick`). --machine runs the sweep on another machine,
which needs at least 80 CPUs.
"""

from __future__ import annotations

from ...errors import InputError
from ..registry import Source, Verdict, experiment, machine_cpus, published_source
from .fibtest import AFTER, BEFORE, HZS, LABELS, METRICS, PROFILES, SECONDS, compare_distributions, fibtest_scenario

NAME = "fibtest-scaling"
COUNTS = (8, 16, 40, 64, 80)


def config_name(behaviour: str, n: int, hz: int = 1000) -> str:
    return f"{behaviour}@{n}cpu" + ("" if hz == 1000 else f"/hz{hz}")


CONFIGS = [config_name(b, n, hz) for hz in HZS for n in COUNTS for b in (BEFORE, AFTER)]
GROUPS = [([config_name(BEFORE, n, hz), config_name(AFTER, n, hz)], config_name(BEFORE, n, hz))
          for hz in HZS for n in COUNTS]


def parse_config(config: str) -> tuple[str, int, int]:
    """(behaviour, CPUs, HZ) of a configuration name."""
    behaviour, _, rest = config.partition("@")
    n, _, hz = rest.partition("/hz")
    if behaviour not in PROFILES or not n.endswith("cpu") or not n[:-3].isdigit() or (hz and not hz.isdigit()):
        raise InputError(f"experiment {NAME}: unknown configuration '{config}'")
    return behaviour, int(n[:-3]), int(hz or 1000)


@experiment(
    name=NAME,
    title="fibtest before/after ratio vs CPU count and HZ (fibtest -t N on the 80-CPU machine)",
    source=published_source(NAME) or Source("002_ea7a89f00d69f01d.txt", "PATCH v6 commit message"),
    machines=["xeon-80"],
    configs=CONFIGS,
    labels={config_name(b, n, hz): f"{LABELS[b]}, {n} CPUs, HZ {hz}" for hz in HZS for n in COUNTS
            for b in (BEFORE, AFTER)},
    baseline=config_name(BEFORE, COUNTS[-1]),
    metrics=METRICS,
    seeds=40,
    quick_seeds=10,
    verdict=Verdict(seeds=40),
    description=__doc__.split("\n\n", 1)[1],
    compare=lambda exp, runs: compare_distributions(exp, runs, GROUPS),
)
def build(machine: str, config: str, quick: bool) -> dict:
    """`fibtest -t N` (threads on CPUs 0..N-1) under the behaviour and HZ of ``config``."""
    behaviour, n, hz = parse_config(config)
    cpus = machine_cpus(machine)
    if n > cpus:
        raise InputError(f"{NAME}: configuration {config} needs {n} CPUs but machine '{machine}' has {cpus}; "
                         f"use a machine with at least {max(COUNTS)} CPUs (e.g. xeon-80 or 'topo(2,1,40,1)')")
    return fibtest_scenario(f"{NAME}-{behaviour}-{n}cpu-hz{hz}", machine, PROFILES[behaviour], n, SECONDS, hz)
