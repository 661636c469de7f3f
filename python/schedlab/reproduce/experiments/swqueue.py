"""swqueue: the shared wakequeue RFC against SIS_NODE, make -j$(nproc) on the 7950X and Milan.

The RFC (David Vernet, "sched: Implement shared wakequeue in CFS", 2023-06-13)
measured `make -j$(nproc) built-in.a` of an allyesconfig kernel with the four
combinations of SWQUEUE and SIS_NODE (Peter Zijlstra's select_idle_node(), then in tip)
on a 6.4-era CFS kernel: build time and CPU utilisation as time(1) prints it.

The simulated job is the `make` generator: a jobserver with -j$(nproc) slots forking one
gcc driver per unit, which forks `cc1 | as` joined by a pipe (cc1 writes its output in
8 chunks, and `as` wakes for each, doing a tenth of the unit's work), exponentially
distributed CPU time, 1 MiB working set.

`--scale real` (the default) runs the build at the size of the one measured: 28,000
compile units (an estimate of the objects an x86-64 allyesconfig built-in.a compiles),
with the mean CPU time per unit set so the units add up to the published baseline's CPU
time (build time x CPU%): that is this experiment's one calibration, so the build time
comes out at the published level when the simulated CPU% matches the published one, and
the † factor (fitted on the NO_SWQUEUE+NO_SIS_NODE build time) stays near 1; what is left
of it is the model's error in CPU%. `--scale small` runs the old 120 units per CPU of
40 ms each (about 5 s of build) and calibrates the level on the same baseline. CPU% is never calibrated; the differences between configurations (the
mechanisms' effects) are uncalibrated per-seed ratios.

What to expect: the shared wakequeue acts on woken tasks (here the `as` processes and
make itself) and SIS_NODE only when a wakeup finds its own LLC busy; with -j$(nproc)
most CPUs are busy most of the time. The seed found both effects within noise on the
7950X and a 0.2 % gain from SWQUEUE on Milan.
"""

from __future__ import annotations

from ...errors import InputError
from ..registry import ExpOption, Metric, Source, Verdict, experiment, load_published, machine_cpus, machine_spec, published_source

NAME = "swqueue"
CONFIGS = {
    "NO_SWQUEUE+NO_SIS_NODE": {"SHARED_RUNQ": False, "SIS_NODE": False},
    "NO_SWQUEUE+SIS_NODE": {"SHARED_RUNQ": False, "SIS_NODE": True},
    "SWQUEUE+NO_SIS_NODE": {"SHARED_RUNQ": True, "SIS_NODE": False},
    "SWQUEUE+SIS_NODE": {"SHARED_RUNQ": True, "SIS_NODE": True},
}
# Compile units per CPU: enough for several rounds of jobs per CPU, small enough to run fast.
UNITS_PER_CPU, QUICK_UNITS_PER_CPU = 120, 20
# cc1 -> as pipe writes per compile unit.
PIPE_CHUNKS = 8
# Estimate: objects compiled by `make allyesconfig; make built-in.a` on x86-64 at the
# seed's commit (about 28k of the tree's ~33k .c files build for x86-64).
REAL_UNITS, QUICK_REAL_UNITS = 28_000, 280


def real_unit_mean_ns(machine: str) -> int:
    """Mean CPU time of one unit such that REAL_UNITS add up to the published baseline's
    CPU time (build time x CPU%) on ``machine``: the one calibration of `--scale real`."""
    pub = {(p.config, p.metric): p.value for p in load_published(NAME) if p.machine == machine}
    wall, pct = pub[("NO_SWQUEUE+NO_SIS_NODE", "makespan_s")], pub[("NO_SWQUEUE+NO_SIS_NODE", "cpu_pct")]
    return int(round(wall * pct / 100 / REAL_UNITS * 1e9))


@experiment(
    name=NAME,
    title="Shared wakequeue (swqueue RFC) and SIS_NODE: make -j$(nproc) build time and CPU%",
    source=published_source(NAME) or Source("000_8095fe63da30d972.txt", "make -j$(nproc) built-in.a"),
    machines=["ryzen-7950x", "milan-72"],
    configs=list(CONFIGS),
    baseline="NO_SWQUEUE+NO_SIS_NODE",
    metrics=[
        Metric("makespan_s", "s", "build time", calibrate=True),
        Metric("cpu_pct", "%", "CPU utilisation as time(1) prints it"),
    ],
    seeds=5,
    quick_seeds=2,
    verdict=Verdict(seeds=5, options=(("scale", "small"),), why="the real-size build (28,000 units) takes about 5 min a seed"),
    description=__doc__.split("\n\n", 1)[1],
    options=[ExpOption("scale", str, "real", "real: the measured build's size (28,000 units, CPU time from the "
                       "published baseline); small: 120 units of 40 ms per CPU, level calibrated",
                       published_at_default=False)],
)
def build(machine: str, config: str, quick: bool, scale: str = "real") -> dict:
    """The make job on ``machine`` with the features of ``config`` (6.4 CFS profile)."""
    cpus = machine_cpus(machine)
    if scale not in ("real", "small"):
        raise InputError(f"option --scale: '{scale}': expected real or small")
    if scale == "real":
        # quick: a hundredth of the build, with the same units.
        units, mean = (QUICK_REAL_UNITS if quick else REAL_UNITS), f"{real_unit_mean_ns(machine)}ns"
    else:
        units, mean = cpus * (QUICK_UNITS_PER_CPU if quick else UNITS_PER_CPU), "40ms"
    return {
        "name": f"{NAME}-{config}",
        "description": "make -j$(nproc): one compile process per unit, jobserver slots",
        "machine": machine_spec(machine),
        "kernel": {"profile": "6.4", "features": dict(CONFIGS[config])},
        "workload": {
            "kind": "make",
            "params": {
                "jobs": cpus,
                "units": units,
                "unit_mean": mean,
                "pipe_chunks": PIPE_CHUNKS,
            },
        },
        "run": {"until": "workload_done"},
    }
