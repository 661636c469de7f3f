"""eas: energy-aware placement on the Pixel 6 and the Snapdragon 888, on against off.

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

LISA's EAS behaviour workloads, each EAS off against on (rt-app's 16 ms period, work
sized at capacity 1024 as rt-app calibrates on the biggest CPU; durations shortened):
``two-big`` (two tasks of 80 % of an X1, both started on CPU 6: TwoBigTasks),
``wake-mig`` (one task per X1 alternating 20 % of an A55 and 70 % of an X1 every 0.5 s,
twice: EnergyModelWakeMigration) and ``ramp`` (one task from 10 % of an A55 to 70 % of
an X1 in 14 steps of 0.25 s: RampUp), and the periodic set on 5.15 (feec's 1/16 energy
margin, removed in 6.0), without util_est (``eas-on-no-util-est``: UTIL_EST off, so
schedutil and feec read the decayed util_avg after each sleep), and with a 60 Hz UI
thread added, plain (``eas-on-ui``) and boosted by ``uclamp_min`` 205 (``eas-on-ui-boost``:
the 20 % top-app boost of Pixel's power HAL on touch). On the EAS runs, ``eas_check_within_5pct`` is the LISA-style
check: the fraction of feec's decisions whose energy (compute_energy() on the snapshot
feec read) is within 5 % of the cheapest allowed CPU's on that snapshot; a workload
whose root domain stays overutilized has no decision to judge (no row).

On the Snapdragon 888 the same shapes run at its own capacities (A55 325, A78 828, one
X1 of 1024: LISA's "big" CPUs are the X1 alone, so ``wake-mig`` has one task and
``two-big`` starts both on CPU 7) with the vendor kernel's Energy Model (mainline's
sm8350.dtsi gives it none): lahaina.dtsi's coefficients, the LUT's frequencies, and
voltages derived from gs101's with a +/-7.98 % band. ``--em-voltage`` picks the band's
end: ``low``, ``centre`` (default) or ``high`` for every cluster, or the corners
``little-low`` (A55 at the low end, A78 and X1 at the high end) and ``little-high``
(the reverse), where the clusters' costs move apart. A uniform end scales every OPP's
power by the same factor, so it moves energy, not the ratios feec compares.
"""

from __future__ import annotations

from ...errors import InputError
from ..compare import compare_grouped
from ..registry import ExpOption, Metric, Source, experiment, machine_spec

NAME = "eas"
# LISA's workload shapes (lisa/tests/scheduler/eas_behaviour.py): rt-app's period.
PERIOD_US = 16_000
WORKLOADS = ("two-big", "wake-mig", "ramp")
CONFIGS = {"eas-off": False, "eas-on": True, "eas-on-5.15": True, "eas-on-no-util-est": True,
           "eas-on-ui": True, "eas-on-ui-boost": True}
CONFIGS.update({f"{w}:{c}": on for w in WORKLOADS for c, on in (("eas-off", False), ("eas-on", True))})
GROUPS = [(("eas-off", "eas-on", "eas-on-5.15", "eas-on-no-util-est"), "eas-off"),
          (("eas-on-ui", "eas-on-ui-boost"), "eas-on-ui")] + [
    ((f"{w}:eas-off", f"{w}:eas-on"), f"{w}:eas-off") for w in WORKLOADS
]
# Capacities as the presets compute them from the device trees' capacity-dmips-mhz
# (gs101.dtsi; Qualcomm's lahaina.dtsi): the little's and the biggest's, and LISA's
# "big" CPUs (those of the biggest capacity).
PLATFORMS = {
    "pixel6": {"little": 160, "mid": 498, "big_cpus": (6, 7)},
    "snapdragon-888": {"little": 325, "mid": 828, "big_cpus": (7,)},
}
X1_CAP = 1024
CLUSTERS = {"a55": "cortex-a55", "a76": "cortex-a76", "a78": "cortex-a78", "x1": "cortex-x1"}
# The periodic set, (name, share of a little's capacity or of a mid's, start CPU): four
# small tasks of 10-20 % of a little, one of 80 % of a mid, started on the mid and big
# CPUs (the smalls) and on CPU 0 (the medium).
SMALL = [("small0", 10.0, 4), ("small1", 12.8, 5), ("small2", 16.0, 6), ("small3", 20.0, 7)]
MEDIUM = ("medium", 80.0, 0)
# The Pixel 6's, as first written (work per 10 ms in us at capacity 1024): 156 us is 10 %
# of an A55 (160 x 0.1 / 1024 of 10 ms), 312 us 20 %; 3890 us is 80 % of an A76.
TASKS = [("small0", 156, 4), ("small1", 200, 5), ("small2", 250, 6), ("small3", 312, 7), ("medium", 3890, 0)]
# The UI thread of the ui configurations: a 60 Hz frame of 3 ms of work at capacity 1024
# (an estimate of a light frame: 18 % of an X1), started on CPU 0; boosted, it carries
# uclamp_min 205 (20 %), the top-app boost Pixel's power HAL sets on touch
# (GrapheneOS/device_google_gs101 powerhint_a1.json; timers-ui-android's source).
UI_TASK = {"name": "ui", "cpu": 0,
           "program": [{"loop": {"body": [{"run": "3000us"}, {"periodic": {"period": "16667us"}}]}}]}
UI_BOOST_UTIL_MIN = 205
# --em-voltage: the SD888 vendor EM's voltage band end for every cluster, or a corner.
EM_VOLTAGES = {
    "low": "low",
    "centre": "centre",
    "high": "high",
    "little-low": {"cortex-a55": "low", "cortex-a78": "high", "cortex-x1": "high"},
    "little-high": {"cortex-a55": "high", "cortex-a78": "low", "cortex-x1": "low"},
}

METRICS = (
    [Metric(f"summary.busy_{core}_seconds", "s", f"{c}: busy time (where the tasks ran)") for c, core in CLUSTERS.items()]
    + [Metric(f"summary.energy_active_{core}_mj", "mJ", f"{c}: active energy at the OPPs used") for c, core in CLUSTERS.items()]
    + [
        Metric("summary.energy_cpu_mj", "mJ", "CPU energy: active + idle states"),
        Metric("summary.work_stretch", "x", "run time over work (latency cost; 1 = X1 at its top OPP)"),
        Metric("summary.cpufreq_changes", "changes", "OPP changes made by schedutil"),
        Metric("summary.eas_overutilized_seconds", "s", "rd->overutilized set (EAS stands aside)"),
        Metric("summary.eas_check_decisions", "decisions", "feec decisions judged (LISA-style check)"),
        Metric("summary.eas_check_within_5pct", "fraction",
               "feec decisions within 5 % of the best CPU's energy on their snapshot"),
        Metric("summary.eas_check_max_excess", "fraction", "largest excess of a decision over the best"),
    ]
)


def _rows(exp, runs):
    # The check's rows exist on EAS runs only; drop the empty ones of the EAS-off runs.
    return [r for r in compare_grouped(exp, runs, GROUPS) if r.n_seeds > 0]


def _machine(machine: str, em_voltage: str) -> dict:
    """The ``[machine]`` table: the SD888 with its vendor kernel's Energy Model."""
    if em_voltage not in EM_VOLTAGES:
        raise InputError(f"option --em-voltage: '{em_voltage}' is not one of {', '.join(EM_VOLTAGES)}")
    spec = machine_spec(machine)
    if machine == "snapdragon-888":
        spec["energy_model"] = {"kernel": "vendor", "voltage": EM_VOLTAGES[em_voltage]}
    return spec


def _tasks(machine: str) -> list[tuple[str, int, int]]:
    """The periodic set's (name, work per 10 ms in us at capacity 1024, start CPU)."""
    if machine == "pixel6":
        return TASKS
    p = PLATFORMS[machine]
    work = lambda cap, pct: int(10_000 * cap / 1024 * pct / 100)
    name, pct, cpu = MEDIUM
    return [(n, work(p["little"], q), c) for n, q, c in SMALL] + [(name, work(p["mid"], pct), cpu)]


@experiment(
    name=NAME,
    title="EAS on the Pixel 6 and the Snapdragon 888 (vendor EM): a periodic set's and LISA's "
          "workloads' placement, energy per cluster and latency cost, on vs off",
    source=Source("", "no published figure: simulated rows only",
                  merged="none: mainline's energy-aware scheduling (find_energy_efficient_cpu(), v5.0), "
                         "simulated without a published figure",
                  note="Energy Models: gs101.dtsi dynamic-power-coefficient and OPP tables; SD888: the "
                       "vendor kernel's (lahaina.dtsi coefficients, LUT frequencies, voltages derived "
                       "from gs101's with a band: --em-voltage)"),
    machines=["pixel6", "snapdragon-888"],
    configs=list(CONFIGS),
    baseline="eas-off",
    metrics=METRICS,
    seeds=3,
    quick_seeds=1,
    description=__doc__.split("\n\n", 1)[1],
    compare=_rows,
    eas_check=True,
    options=[ExpOption("em_voltage", str, "centre",
                       "SD888 vendor EM voltage band end: low, centre, high, little-low or little-high "
                       "(the Pixel 6's voltages are declared: no band)")],
)
def build(machine: str, config: str, quick: bool, em_voltage: str = "centre") -> dict:
    if ":" in config:
        workload, mode = config.split(":")
        return _lisa(machine, workload, CONFIGS[config], quick, em_voltage)
    seconds = 1.0 if quick else 5.0
    tasks = [
        {
            "name": name,
            "cpu": cpu,
            "program": [{"loop": {"body": [{"run": f"{work}us"}, {"periodic": {"period": "10ms"}}]}}],
        }
        for name, work, cpu in _tasks(machine)
    ]
    features = {"ENERGY_AWARE": CONFIGS[config]}
    if config == "eas-on-no-util-est":
        features["UTIL_EST"] = False
    if config.startswith("eas-on-ui"):
        ui = dict(UI_TASK)
        if config == "eas-on-ui-boost":
            ui["sched_attr"] = {"util_min": UI_BOOST_UTIL_MIN}
        tasks.append(ui)
    return {
        "name": f"{NAME}-{config}",
        "machine": _machine(machine, em_voltage),
        "kernel": {"profile": "5.15" if config == "eas-on-5.15" else "6.6", "governor": "schedutil",
                   "features": features},
        "tasks": tasks,
        "run": {"duration_s": seconds},
    }


def _work(capacity: int, pct: float) -> int:
    """Work per period (us at capacity 1024) for ``pct`` % of a CPU of ``capacity``
    (LISA's unscaled_utilization())."""
    return int(PERIOD_US * capacity / 1024 * pct / 100)


def _phases(name: str, cpu: int, steps: list, loops: int = 1) -> dict:
    """rt-app phases as consecutive counted loops: ``steps`` = [(work_us, seconds)]."""
    body = lambda work: [{"run": f"{work}us"}, {"periodic": {"period": f"{PERIOD_US}us"}}]
    prog = [{"loop": {"count": max(1, int(secs * 1e6 / PERIOD_US)), "body": body(work)}}
            for _ in range(loops) for work, secs in steps]
    return {"name": name, "cpu": cpu, "program": prog}


def _lisa(machine: str, workload: str, eas: bool, quick: bool, em_voltage: str) -> dict:
    """One of LISA's EAS behaviour workloads (shapes of eas_behaviour.py, shortened)."""
    little, big_cpus = PLATFORMS[machine]["little"], PLATFORMS[machine]["big_cpus"]
    if workload == "two-big":
        seconds = 1.0 if quick else 3.0
        tasks = [_phases(f"big{i}", big_cpus[0], [(_work(X1_CAP, 80), seconds)]) for i in range(2)]
    elif workload == "wake-mig":
        phase = 0.25 if quick else 0.5
        steps = [(_work(little, 20), phase), (_work(X1_CAP, 70), phase)]
        tasks = [_phases(f"emwm{i}", cpu, steps, loops=2) for i, cpu in enumerate(big_cpus)]
        seconds = 4 * phase
    else:  # ramp: 10 % of a little to 70 % of an X1, 14 steps
        step = 0.1 if quick else 0.25
        lo, hi = _work(little, 10), _work(X1_CAP, 70)
        tasks = [_phases("ramp", 0, [(lo + (hi - lo) * k // 13, step) for k in range(14)])]
        seconds = 14 * step
    return {
        "name": f"{NAME}-{workload}-{'on' if eas else 'off'}",
        "machine": _machine(machine, em_voltage),
        "kernel": {"profile": "6.6", "governor": "schedutil", "features": {"ENERGY_AWARE": eas}},
        "tasks": tasks,
        "run": {"duration_s": seconds},
    }
