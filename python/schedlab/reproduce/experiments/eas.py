"""eas: energy-aware placement on the Pixel 6, on against off (issue 34).

A small periodic task set in rt-app's shape (run + timer on an absolute 10 ms grid):
four tasks of 10-20 % of an A55's capacity and one of 80 % of an A76's, started on the
big and mid CPUs. Both configurations run schedutil on every cluster (one policy per
performance domain, rate_limit_us 1000); ``eas-off`` places wakeups by capacity alone
(ENERGY_AWARE off: wake_affine, select_idle_capacity, misfit), ``eas-on`` by
find_energy_efficient_cpu() over gs101's Energy Model while no CPU is overutilized.
Figures: where the tasks ran (busy seconds per cluster), active energy per cluster and
in all (the Energy Model's dynamic power at the OPPs schedutil chose: gs101.dtsi's
dynamic-power-coefficient and OPP tables, no leakage), and the latency cost: the tasks'
run time over their work (1 = an X1 at its top OPP). No published figure exists for
this: the rows are simulated figures only.
"""

from __future__ import annotations

from ..registry import Metric, Source, experiment, machine_spec

NAME = "eas"
CONFIGS = {"eas-off": False, "eas-on": True}
CLUSTERS = {"a55": "cortex-a55", "a76": "cortex-a76", "x1": "cortex-x1"}
# (name, work per period in us at capacity 1024, start CPU): 156 us is 10 % of an A55
# (160 x 0.1 / 1024 of 10 ms), 312 us 20 %; 3890 us is 80 % of an A76 (498 x 0.8).
TASKS = [("small0", 156, 4), ("small1", 200, 5), ("small2", 250, 6), ("small3", 312, 7), ("medium", 3890, 0)]

METRICS = (
    [Metric(f"summary.busy_{core}_seconds", "s", f"{c}: busy time (where the tasks ran)") for c, core in CLUSTERS.items()]
    + [Metric(f"summary.energy_active_{core}_mj", "mJ", f"{c}: active energy at the OPPs used") for c, core in CLUSTERS.items()]
    + [
        Metric("summary.energy_cpu_mj", "mJ", "CPU energy: active + idle states"),
        Metric("summary.work_stretch", "x", "run time over work (latency cost; 1 = X1 at its top OPP)"),
        Metric("summary.cpufreq_changes", "changes", "OPP changes made by schedutil"),
    ]
)


@experiment(
    name=NAME,
    title="EAS on the Pixel 6: a periodic set's placement, energy per cluster and latency cost, on vs off",
    source=Source("none (issue 34)", "no published figure: simulated rows only",
                  note="Energy Model: gs101.dtsi dynamic-power-coefficient and OPP tables"),
    machines=["pixel6"],
    configs=list(CONFIGS),
    baseline="eas-off",
    metrics=METRICS,
    seeds=3,
    quick_seeds=1,
    description=__doc__.split("\n\n", 1)[1],
)
def build(machine: str, config: str, quick: bool) -> dict:
    seconds = 1.0 if quick else 5.0
    tasks = [
        {
            "name": name,
            "cpu": cpu,
            "program": [{"loop": {"body": [{"run": f"{work}us"}, {"periodic": {"period": "10ms"}}]}}],
        }
        for name, work, cpu in TASKS
    ]
    return {
        "name": f"{NAME}-{config}",
        "machine": machine_spec(machine),
        "kernel": {"profile": "6.6", "governor": "schedutil", "features": {"ENERGY_AWARE": CONFIGS[config]}},
        "tasks": tasks,
        "run": {"duration_s": seconds},
    }
