"""swap: batched TLB shootdown on page reclaim, the seed's MADV_PAGEOUT benchmark (arm64 6.4 vs 6.5).

The seed's program (workload `swap_bench`): one thread pinned to CPU 4 maps 1 MiB
MAP_SHARED|MAP_ANONYMOUS, fills it, then 10000 times reads every page (swapping it back
in from zram) and MADV_PAGEOUTs the region. "before" is profile 6.4 with TLB_BATCH off:
every unmapped page is flushed synchronously (arm64: TLBI broadcast, then DSB ISH waiting
for every PE of the inner-shareable domain; x86: INVLPG and IPIs to the non-lazy CPUs of
mm_cpumask). "after" is profile 6.5 with TLB_BATCH on: TLBIs are posted and one wait (or
one IPI round) closes each batch. On arm64 these are the profiles' own defaults; on x86
(which batches since 4.3) "before" forces TLB_BATCH off. Figures: elapsed, user and sys
seconds as time(1) prints them, and the share of elapsed time in ptep_clear_flush (the
synchronous path) as perf report shows it.

The idle state of the seven other CPUs decides what a DSB waits for, so each kernel runs
twice:

- `before`, `after`: the other CPUs idle in WFI (deeper idle states disabled, cpuidle_max_state = 0):
  clock-gated but coherent, they must acknowledge every DVM Sync;
- `before/idle-off`, `after/idle-off` (what-if): the cpuidle governor picks the states, so the
  other CPUs, idle from the start, are powered down and out of the DVM domain; the DSB then waits
  for nobody but the issuing PE. Any threshold shorter than the run gives the same answer.

The published run measured one phone in whatever states its cpuidle governor chose; both
pairs are compared with it. The WFI pair is the primary one: its share of time in
ptep_clear_flush is the one closer to the published 5.36 %, which says the DSBs did wait
for the other PEs (with them powered down the synchronous flush costs almost nothing and
the published 5 % saving could not arise).

Calibration: one factor for the machine, fitted so the simulated `before` elapsed time
equals the published 14.69 s, multiplies the elapsed, user and sys seconds of every
configuration (marked †, factor printed). The change rows ("after vs before") are per-seed
ratios of uncalibrated figures; the percentage is not calibrated. The benchmark is
deterministic (one thread, no random input), so seeds only confirm that.

`--machine NAME` runs the same four configurations on any preset (CPU 4, or the last CPU
of a smaller machine); nothing is calibrated where nothing was published.
"""

from __future__ import annotations

from ..compare import Row, change_row, seed_values, value_row
from ..registry import ExpOption, Metric, Source, experiment, machine_cpus, machine_spec, published_source

NAME = "swap"
CONFIGS = ["before", "after", "before/idle-off", "after/idle-off"]
PROFILES = {"before": "6.4", "after": "6.5"}
# WFI only: every idle state deeper than state 0 disabled (cpuidle.off-like).
WFI_ONLY = {"cpuidle_max_state": 0}
ITERATIONS = 10_000
TIME_METRICS = ("elapsed_s", "user_s", "sys_s")
METRICS = [
    Metric("elapsed_s", "s", "elapsed (time)", calibrate=True),
    Metric("user_s", "s", "user (time)", calibrate=True),
    Metric("sys_s", "s", "system (time)", calibrate=True),
    Metric("ptep_clear_flush_pct", "%", "perf report share of ptep_clear_flush"),
    Metric("tlb_completion_waits", "count", "DSB ISH completion waits (arm64)"),
]


def bench_cpu(machine: str) -> int:
    """CPU the benchmark is pinned to: 4 as in the seed (`taskset -c 4`), or the last CPU."""
    return min(4, machine_cpus(machine) - 1)


def _compare(exp, runs) -> list[Row]:
    """Per metric: the four configurations, then "after vs before" for each idle state.
    Published figures of before/after apply to both idle states (one measurement, two
    hypotheses about the idle CPUs); one calibration factor per machine, from the WFI
    "before" elapsed time, scales the three time figures."""
    rows: list[Row] = []
    for machine in dict.fromkeys(m for m, _ in runs):
        vals = {(c, m.key): seed_values(runs.get((machine, c), []), m.name) for c in exp.configs for m in exp.metrics}
        base = list(vals[("before", "elapsed_s")].values())
        pub_base = exp.published_value(machine, "before", "elapsed_s")
        scale = pub_base / (sum(base) / len(base)) if (pub_base is not None and base and sum(base)) else None

        def pub(config: str, metric: str):
            return exp.published_value(machine, config.split("/")[0], metric)

        for m in exp.metrics:
            s = scale if m.key in TIME_METRICS else None
            for c in exp.configs:
                rows.append(value_row(exp, machine, c, m.key, m.unit, vals[(c, m.key)], pub(c, m.key), s))
            if m.key == "ptep_clear_flush_pct":
                continue  # the batched path never enters ptep_clear_flush: no ratio to show
            for after, before in (("after", "before"), ("after/idle-off", "before/idle-off")):
                pa, pb = pub(after, m.key), pub(before, m.key)
                rows.append(change_row(exp, machine, after, before, m.key, vals[(after, m.key)],
                                       vals[(before, m.key)], pa / pb if pa is not None and pb else None))
    return rows


@experiment(
    name=NAME,
    title="MADV_PAGEOUT swap benchmark: synchronous (6.4) vs batched (6.5) TLB flush on reclaim",
    source=published_source(NAME) or Source("004_7ff82031f40dd91b.txt", "Snapdragon 888 time / perf report"),
    machines=["snapdragon-888"],
    configs=CONFIGS,
    baseline="before",
    metrics=METRICS,
    seeds=3,
    quick_seeds=1,
    description=__doc__.split("\n\n", 1)[1],
    compare=_compare,
)
def build(machine: str, config: str, quick: bool) -> dict:
    """The seed's benchmark on ``machine`` with one kernel and one idle-state hypothesis."""
    kernel, _, idle = config.partition("/")
    if kernel not in PROFILES or idle not in ("", "idle-off"):
        raise ValueError(f"experiment {NAME}: unknown configuration '{config}': expected one of {', '.join(CONFIGS)}")
    k: dict = {"profile": PROFILES[kernel], "features": {"TLB_BATCH": kernel == "after"}}
    if not idle:
        k["tunables"] = dict(WFI_ONLY)
    return {
        "name": f"{NAME}-{kernel}" + (f"-{idle}" if idle else ""),
        "description": "taskset -c 4 ./a.out: 1 MiB shared anonymous region, 10000 x (read every page, MADV_PAGEOUT)",
        "machine": machine_spec(machine),
        "kernel": k,
        # The run is cheap (about 30 000 events): --quick keeps every iteration, so the
        # calibrated figures stay comparable; it runs one seed instead of three.
        "workload": {"kind": "swap_bench", "params": {"cpu": bench_cpu(machine), "region_kib": 1024,
                                                      "iterations": ITERATIONS}},
        "run": {"until": "workload_done"},
    }


# ----------------------------------------------------------------------------- sweep
SWEEP = "swap-sweep"
SWEEP_ARCHES = ("topo-arm64", "topo-x86_64")
SWEEP_CPUS = (2, 4, 8, 16, 32, 64, 128)
SWEEP_MAPPERS = (1, 2, 5, 10, 20, 50, 100)
SWEEP_MAPPER_CPUS = 8
SWEEP_POINTS = [f"{n}cpu" for n in SWEEP_CPUS] + [f"{m}map" for m in SWEEP_MAPPERS]
SWEEP_CONFIGS = [f"{p}:{mode}" for p in SWEEP_POINTS for mode in ("sync", "batched")]
SWEEP_QUICK_ITERATIONS = 1_000


def sweep_shape(nr_cpus: int) -> dict:
    """Synthetic machine of ``nr_cpus`` CPUs: one LLC up to 8 cores, then LLCs of 8 cores,
    two sockets at 128 (the shape of the generic cost table's Zen 3-class server)."""
    if nr_cpus <= 8:
        return {"sockets": 1, "llcs": 1, "cores": nr_cpus, "smt": 1}
    sockets = 2 if nr_cpus >= 128 else 1
    return {"sockets": sockets, "llcs": nr_cpus // 8 // sockets, "cores": 8, "smt": 1}


def _sweep_point(point: str) -> tuple[int, int]:
    """(CPUs, processes mapping each page) of a sweep point."""
    if point.endswith("cpu"):
        return int(point[:-3]), 1
    return SWEEP_MAPPER_CPUS, int(point[:-3])


def _sweep_compare(exp, runs) -> list[Row]:
    """Per point: elapsed seconds synchronous and batched, and the saving in % of the
    synchronous elapsed time (mean over seeds of 100 x (1 - batched / sync), uncalibrated)."""
    rows: list[Row] = []
    for machine in dict.fromkeys(m for m, _ in runs):
        for point in SWEEP_POINTS:
            sync = seed_values(runs.get((machine, f"{point}:sync"), []), "elapsed_s")
            batched = seed_values(runs.get((machine, f"{point}:batched"), []), "elapsed_s")
            rows.append(value_row(exp, machine, f"{point}:sync", "elapsed_s", "s", sync, None))
            rows.append(value_row(exp, machine, f"{point}:batched", "elapsed_s", "s", batched, None))
            saving = {s: 100.0 * (1.0 - batched[s] / sync[s]) for s in sync if s in batched and sync[s]}
            rows.append(value_row(exp, machine, point, "elapsed_saving_pct", "%", saving, None))
    return rows


@experiment(
    name=SWEEP,
    title="Where batched TLB flush on reclaim pays: CPUs in the domain and processes mapping each page",
    source=Source("004_7ff82031f40dd91b.txt", "none: a sweep beyond the published Snapdragon 888 point",
                  "no published figures"),
    machines=list(SWEEP_ARCHES),
    configs=SWEEP_CONFIGS,
    baseline=SWEEP_CONFIGS[0],
    metrics=[Metric("elapsed_s", "s", "elapsed (time)")],
    seeds=1,
    quick_seeds=1,
    description="""The swap benchmark (`swap_bench`) on synthetic machines, with TLB_BATCH off
("sync") and on ("batched"), profile 6.5 otherwise. Two families, `topo-arm64` and
`topo-x86_64`: the same synthetic topology and the same generic cost table (Zen 3-class
server latencies, 3 GHz), only the instruction set differs, so the difference is the
flush mechanism (arm64 broadcast TLBI + DSB vs x86 IPIs to mm_cpumask). Shapes: up to 8
CPUs one LLC, then LLCs of 8 cores, 2 sockets at 128. The benchmark is pinned to CPU 4
(the last CPU on smaller machines).

Axes: `Ncpu` = N CPUs, the seed's benchmark (MADV_PAGEOUT, the page mapped by the
benchmark only); `Mmap` = 8 CPUs, each page mapped by M processes (extra_mappers = M - 1,
each having run on one other CPU), reclaimed as kswapd would in batches of
SWAP_CLUSTER_MAX = 32 (MADV_PAGEOUT leaves shared pages alone, so this axis uses the
kswapd path for every M, 1 included). Rows: elapsed seconds of each mode and
`elapsed_saving_pct` = 100 x (1 - batched / sync).

The other CPUs are idle. `--idle wfi` (default): in WFI, coherent, so every arm64 DSB
waits for them and the synchronous path's cost grows with the CPU count; `--idle off`:
powered down (the states the cpuidle governor picks), outside the DVM domain, so the CPU count
stops mattering. On x86 idle CPUs are in lazy-TLB mode and get no flush IPI in either
mode, and the single-threaded benchmark's mm is loaded nowhere else: x86 deferral has
nothing to save here (it pays when the mm is live on other running CPUs, which this
benchmark does not exercise). The model is deterministic: one seed.""",
    compare=_sweep_compare,
    options=[ExpOption("idle", str, "wfi", "state of the idle CPUs: wfi (coherent, default) or off (powered down)",
                       published_at_default=False)],
)
def build_sweep(machine: str, config: str, quick: bool, idle: str = "wfi") -> dict:
    """One sweep point on the ``topo-arm64`` or ``topo-x86_64`` family."""
    if machine not in SWEEP_ARCHES:
        raise ValueError(f"experiment {SWEEP} sweeps synthetic machines: --machine must be one of "
                         f"{', '.join(SWEEP_ARCHES)}, not '{machine}'")
    if idle not in ("wfi", "off"):
        raise ValueError(f"experiment {SWEEP}: --idle must be wfi or off, not '{idle}'")
    point, _, mode = config.partition(":")
    if point not in SWEEP_POINTS or mode not in ("sync", "batched"):
        raise ValueError(f"experiment {SWEEP}: unknown configuration '{config}'")
    nr_cpus, mappers = _sweep_point(point)
    arch = machine.split("-", 1)[1]
    k: dict = {"profile": "6.5", "features": {"TLB_BATCH": mode == "batched"}}
    if idle == "wfi":
        k["tunables"] = dict(WFI_ONLY)
    params = {"cpu": min(4, nr_cpus - 1), "region_kib": 1024,
              "iterations": SWEEP_QUICK_ITERATIONS if quick else ITERATIONS}
    if point.endswith("map"):
        params.update({"extra_mappers": mappers - 1, "kswapd": True})
    return {
        "name": f"{SWEEP}-{arch}-{point}-{mode}",
        "machine": {"topo": {**sweep_shape(nr_cpus), "arch": arch}},
        "kernel": k,
        "workload": {"kind": "swap_bench", "params": params},
        "run": {"until": "workload_done"},
    }
