"""make-core: a make -j$(nproc) kernel-build-like job, CFS (6.5) vs EEVDF (6.6).

It exercises the core end to end: fork-heavy compile jobs over every CPU of a
2-CCX desktop part, placement at fork and wakeup, newidle and periodic balance, and the
fair class (CFS before 6.6, EEVDF from 6.6). The seed thread (shared wakequeue RFC)
published make -j$(nproc) build times on the 7950X for its own feature switches
(SWQUEUE, SIS_NODE) on a full allyesconfig build; there is no published CFS-vs-EEVDF
figure, so `published` is null and no figure is calibrated. The shape of the job
(compile units of tens of milliseconds, jobs = CPUs) follows that benchmark.
"""

from __future__ import annotations

from ..registry import Metric, Source, experiment, machine_cpus, machine_spec, published_source

NAME = "make-core"
PROFILES = {"cfs-6.5": "6.5", "eevdf-6.6": "6.6"}


@experiment(
    name=NAME,
    title="make -j$(nproc) kernel-build-like job: CFS (6.5) vs EEVDF (6.6)",
    source=published_source(NAME)
    or Source("000_8095fe63da30d972.txt", "Single-socket | 32-core | 2-CCX | AMD 7950X Zen4"),
    machines=["ryzen-7950x"],
    configs=list(PROFILES),
    labels={"cfs-6.5": "CFS (profile 6.5)", "eevdf-6.6": "EEVDF (profile 6.6)"},
    baseline="cfs-6.5",
    metrics=[Metric("makespan_s", "s", "build time"), Metric("cpu_pct", "%", "CPU utilisation as time(1) prints it")],
    seeds=5,
    quick_seeds=2,
    description=__doc__.split("\n\n", 1)[1],
)
def build(machine: str, config: str, quick: bool) -> dict:
    """The make job on ``machine`` with the kernel profile of ``config``."""
    return {
        "name": f"{NAME}-{config}",
        "description": "make -jN: N parallel compile jobs over a queue of compile units",
        "machine": machine_spec(machine),
        "kernel": {"profile": PROFILES[config]},
        "workload": {
            "kind": "make",
            "params": {"jobs": machine_cpus(machine), "units": 300 if quick else 1500, "unit_mean": "40ms"},
        },
        "run": {"until": "workload_done"},
    }
