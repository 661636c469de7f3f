"""swap: batched TLB shootdown on page reclaim, the patch's MADV_PAGEOUT benchmark (arm64 6.4 vs 6.5).

The patch's program (workload `swap_bench`): one thread pinned to CPU 4 maps 1 MiB
MAP_SHARED|MAP_ANONYMOUS, fills it, then 10000 times reads every page (swapping it back
in from zram) and MADV_PAGEOUTs the region. "before" is profile 6.4 with TLB_BATCH off:
every unmapped page is flushed synchronously (arm64: DSB ISHST, TLBI broadcast, then DSB
ISH waiting for every DVM participant of the inner-shareable domain; x86: INVLPG and IPIs
to the non-lazy CPUs of mm_cpumask). "after" is profile 6.5 with TLB_BATCH on: TLBIs are
posted and one wait (or one IPI round) closes each batch. Figures: elapsed, user and sys
seconds as time(1) prints them, the share of cycles in ptep_clear_flush as perf report
shows it, and the elapsed reduction in %.

Configurations (pairs, each "before" and "after"):

- `before`, `after`: the patch's case. The other seven CPUs idle in WFI (deeper idle states
  disabled, cpuidle_max_state = 0): clock-gated but coherent, they answer every DVM Sync.
  The seed measured its v3 patch on a 2022 phone kernel, which predates the Cortex-A55
  erratum #2441007 workaround: ARM64_WORKAROUND_REPEAT_TLBI off (`arm64_repeat_tlbi = 0`).
- `before/idle-off`, `after/idle-off` (what-if): the cpuidle governor picks the states, so
  the other CPUs, idle from the start, are powered down and out of the DVM domain.
- `before/erratum`, `after/erratum` (what-if): 6.4 and 6.5 as released on this SoC. Its
  A55 cores turn the REPEAT_TLBI workaround on (default y since 6.1): every TLBI is
  TLBI; DSB ISH; TLBI, and 6.5's arch_tlbbatch_should_defer() refuses to batch.
- `before@dsbN`, `after@dsbN`: the patch's case with the synchronous DSB ISH wait set to N
  ns (`tlb.dsb_sync_override_ns`). No latency of a TLBI + DSB was found published for the
  Snapdragon 888's DSU and interconnect: the modeled wait (about 140 ns, the `tlb` terms of
  `schedlab machines snapdragon-888`) is built from estimates, so this sweep shows how the
  published effect depends on it.

Calibration: the model prices the kernel's instruction path of a page (faults, swap
cache, zram, LRU) from cycle estimates, and the TLB maintenance from the DVM model. One
factor per pair, fitted so the pair's "before" elapsed time equals the published 14.69 s,
scales the instruction part only (elapsed minus the time in TLB maintenance, `tlb_s`);
the TLB part stays as modeled (marked †, factor printed). The flush share is then perf's:
cycles in ptep_clear_flush over all cycles of the (single-threaded, never waiting)
process, and the reduction is 100 x (1 - after / before) of the calibrated elapsed times;
both are rows of their own. The "after vs before" ratio rows are of the uncalibrated
figures. The erratum pair runs kernels the patch did not measure: it takes the published pair's
factor and is compared with no published figure (its elapsed reduction is 0 by design:
6.5 does not batch with the workaround on; the patch's 6.06 % belongs to its own pair). The benchmark is deterministic (one thread, no random input), so seeds only
confirm that.

`--machine NAME` runs the same configurations on any preset (CPU 4, or the last CPU
of a smaller machine); nothing is calibrated where nothing was published.
"""

from __future__ import annotations

import dataclasses

from ...errors import InputError
from ..compare import Row, change_row, seed_values, value_row
from ..registry import ExpOption, Metric, Source, Verdict, experiment, machine_cpus, machine_spec, published_source

NAME = "swap"
PROFILES = {"before": "6.4", "after": "6.5"}
DSB_SWEEP_NS = (100, 200, 300, 400, 600)
FAMILIES = ["", "/idle-off", "/erratum"] + [f"@dsb{n}" for n in DSB_SWEEP_NS]
CONFIGS = [f"{k}{f}" for f in FAMILIES for k in ("before", "after")]
# Families whose kernels the seed did not measure: compared with no published figure.
UNMEASURED_FAMILIES = ("/erratum",)
# WFI only: every idle state deeper than state 0 disabled (cpuidle.off-like).
WFI_ONLY = {"cpuidle_max_state": 0}
ITERATIONS = 10_000
TIME_METRICS = ("elapsed_s", "user_s", "sys_s")
METRICS = [
    Metric("elapsed_s", "s", "elapsed (time)", calibrate=True),
    Metric("user_s", "s", "user (time)", calibrate=True),
    Metric("sys_s", "s", "system (time)", calibrate=True),
    Metric("ptep_clear_flush_pct", "%", "perf report share of ptep_clear_flush"),
    Metric("tlb_s", "s", "time in TLB maintenance (not calibrated)"),
    Metric("tlb_completion_waits", "count", "DSB ISH completion waits (arm64)"),
]


def bench_cpu(machine: str) -> int:
    """CPU the benchmark is pinned to: 4 as in the patch's benchmark (`taskset -c 4`), or the last CPU."""
    return min(4, machine_cpus(machine) - 1)


def _compare(exp, runs) -> list[Row]:
    """Per pair ("before"/"after" of one family): the calibrated times, the perf share and
    the elapsed reduction, then the uncalibrated parts and change ratios. The scale factor
    of a pair is fitted on its "before" elapsed time and applies to the instruction part."""
    rows: list[Row] = []
    for machine in dict.fromkeys(m for m, _ in runs):
        seed_pair_scale = None
        for fam in FAMILIES:
            b, a = f"before{fam}", f"after{fam}"
            v = {(c, k): seed_values(runs.get((machine, c), []), k)
                 for c in (b, a) for k in ("elapsed_s", "user_s", "sys_s", "tlb_s", "ptep_clear_flush_s",
                                          "ptep_clear_flush_pct", "tlb_completion_waits")}
            if not v[(b, "elapsed_s")]:
                continue
            # The erratum pair runs other kernels than the seed measured (6.4/6.5 as released,
            # with the A55 workaround that stops 6.5 from batching): no published figure is
            # its, and its factor is the seed pair's (one per machine and benchmark).
            measured = fam not in UNMEASURED_FAMILIES
            pub_base = exp.published_value(machine, "before", "elapsed_s") if measured else None
            seeds_b = v[(b, "elapsed_s")]
            instr_b = [seeds_b[s] - v[(b, "tlb_s")].get(s, 0.0) for s in seeds_b]
            tlb_b = [v[(b, "tlb_s")].get(s, 0.0) for s in seeds_b]
            scale = None
            if pub_base is not None and instr_b and sum(instr_b):
                scale = (pub_base - sum(tlb_b) / len(tlb_b)) / (sum(instr_b) / len(instr_b))
            if fam == "":
                seed_pair_scale = scale
            elif not measured:
                scale = seed_pair_scale

            def pub(config: str, metric: str):
                if not measured:
                    return None
                return exp.published_value(machine, config.split("/")[0].split("@")[0], metric)

            def cal(c: str, key: str) -> dict[int, float]:
                """Calibrated time figure: the instruction part scaled, the TLB part kept."""
                out = {}
                for s, x in v[(c, key)].items():
                    tlb = v[(c, "tlb_s")].get(s, 0.0) if key != "user_s" else 0.0
                    out[s] = scale * (x - tlb) + tlb if scale is not None else x
                return out

            for key in TIME_METRICS:
                for c in (b, a):
                    row = value_row(exp, machine, c, key, "s", cal(c, key), pub(c, key))
                    rows.append(dataclasses.replace(row, calibrated=True, scale=scale) if scale is not None else row)
            for c in (b, a):
                el = cal(c, "elapsed_s")
                share = {s: 100.0 * v[(c, "ptep_clear_flush_s")].get(s, 0.0) / el[s] for s in el if el[s]}
                rows.append(value_row(exp, machine, c, "ptep_clear_flush_pct", "%",
                                      share if scale is not None else v[(c, "ptep_clear_flush_pct")],
                                      pub(c, "ptep_clear_flush_pct")))
            eb, ea = cal(b, "elapsed_s"), cal(a, "elapsed_s")
            red = {s: 100.0 * (1.0 - ea[s] / eb[s]) for s in eb if s in ea and eb[s]}
            pa, pb = pub(a, "elapsed_s"), pub_base
            rows.append(value_row(exp, machine, f"{a} vs {b}", "elapsed_reduction_pct", "%", red,
                                  100.0 * (1.0 - pa / pb) if pa is not None and pb else None))
            for c in (b, a):
                rows.append(value_row(exp, machine, c, "tlb_s", "s", v[(c, "tlb_s")], None))
                rows.append(value_row(exp, machine, c, "tlb_completion_waits", "count",
                                      v[(c, "tlb_completion_waits")], None))
            for key in TIME_METRICS:
                pa_k, pb_k = pub(a, key), pub(b, key)
                rows.append(change_row(exp, machine, a, b, key, v[(a, key)], v[(b, key)],
                                       pa_k / pb_k if pa_k is not None and pb_k else None))
    return rows


@experiment(
    name=NAME,
    title="MADV_PAGEOUT swap benchmark: synchronous (6.4) vs batched (6.5) TLB flush on reclaim",
    source=published_source(NAME) or Source("004_7ff82031f40dd91b.txt", "Snapdragon 888 time / perf report"),
    machines=["snapdragon-888"],
    configs=CONFIGS,
    baseline="before",
    metrics=METRICS,
    seeds=1,
    quick_seeds=1,
    verdict=Verdict(seeds=1),
    description=__doc__.split("\n\n", 1)[1],
    compare=_compare,
)
def build(machine: str, config: str, quick: bool) -> dict:
    """The patch's benchmark on ``machine`` with one kernel and one hypothesis."""
    kernel, fam = config, ""
    for sep in ("/", "@"):
        if sep in config:
            kernel, _, rest = config.partition(sep)
            fam = sep + rest
    if kernel not in PROFILES or fam not in FAMILIES:
        raise InputError(f"experiment {NAME}: unknown configuration '{config}': expected one of {', '.join(CONFIGS)}")
    k: dict = {"profile": PROFILES[kernel], "features": {"TLB_BATCH": kernel == "after"}}
    tunables: dict = {}
    if fam != "/idle-off":
        tunables.update(WFI_ONLY)
    if fam != "/erratum":
        tunables["arm64_repeat_tlbi"] = False  # the patch's kernel predates the workaround
    k["tunables"] = tunables
    doc = {
        "name": f"{NAME}-{kernel}" + fam.replace("/", "-").replace("@", "-"),
        "description": "taskset -c 4 ./a.out: 1 MiB shared anonymous region, 10000 x (read every page, MADV_PAGEOUT)",
        "machine": machine_spec(machine),
        "kernel": k,
        # The run is cheap (about 30 000 events): --quick keeps every iteration, so the
        # calibrated figures stay comparable.
        "workload": {"kind": "swap_bench", "params": {"cpu": bench_cpu(machine), "region_kib": 1024,
                                                      "iterations": ITERATIONS}},
        "run": {"until": "workload_done"},
    }
    if fam.startswith("@dsb"):
        doc["machine"] = {**doc["machine"], "cost": {"tlb.dsb_sync_override_ns": float(fam[4:])}}
    return doc


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
    source=dataclasses.replace(published_source(NAME) or Source("004_7ff82031f40dd91b.txt", ""),
                               table="none: a sweep beyond the published Snapdragon 888 point",
                               note="no published figures"),
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
flush mechanism (arm64 broadcast TLBI + DSB to every DVM participant vs x86 IPIs to the
non-lazy CPUs of the mappers' mm_cpumasks). Shapes: up to 8 CPUs one LLC, then LLCs of
8 cores, 2 sockets at 128. The benchmark is pinned to CPU 4 (the last CPU on smaller
machines).

Axes: `Ncpu` = N CPUs, the patch's benchmark (MADV_PAGEOUT, the page mapped by the
benchmark only); `Mmap` = 8 CPUs, each page mapped by M processes: the benchmark and
M - 1 mapper processes, real ones that run (pinned round robin to the 7 other CPUs; each
reads the region, computes 1 ms, again, never sleeping), so their CPUs are busy when a
flush goes out. MADV_PAGEOUT leaves pages mapped by more than one process alone, so this
axis reclaims through memory.reclaim (LRU batches of SWAP_CLUSTER_MAX = 32, every mapping
unmapped; M = 1 too). Rows: elapsed seconds of each mode and `elapsed_saving_pct` =
100 x (1 - batched / sync).

The CPUs without work are idle. `--idle wfi` (default): in WFI, coherent, so every arm64
DSB waits for them and the synchronous path's cost grows with the CPU count; `--idle
off`: powered down (the states the cpuidle governor picks), outside the DVM domain, so
the CPU count stops mattering. On x86 idle CPUs are in lazy-TLB mode and get no flush
IPI; the mappers' CPUs do, once per page synchronously and once per batch batched. The
model is deterministic: one seed.""",
    compare=_sweep_compare,
    options=[ExpOption("idle", str, "wfi", "state of the idle CPUs: wfi (coherent, default) or off (powered down)",
                       published_at_default=False)],
)
def build_sweep(machine: str, config: str, quick: bool, idle: str = "wfi") -> dict:
    """One sweep point on the ``topo-arm64`` or ``topo-x86_64`` family."""
    if machine not in SWEEP_ARCHES:
        raise InputError(f"experiment {SWEEP} sweeps synthetic machines: --machine must be one of "
                         f"{', '.join(SWEEP_ARCHES)}, not '{machine}'")
    if idle not in ("wfi", "off"):
        raise InputError(f"experiment {SWEEP}: --idle must be wfi or off, not '{idle}'")
    point, _, mode = config.partition(":")
    if point not in SWEEP_POINTS or mode not in ("sync", "batched"):
        raise InputError(f"experiment {SWEEP}: unknown configuration '{config}'")
    nr_cpus, mappers = _sweep_point(point)
    arch = machine.split("-", 1)[1]
    k: dict = {"profile": "6.5", "features": {"TLB_BATCH": mode == "batched"}}
    if idle == "wfi":
        k["tunables"] = dict(WFI_ONLY)
    params = {"cpu": min(4, nr_cpus - 1), "region_kib": 1024,
              "iterations": SWEEP_QUICK_ITERATIONS if quick else ITERATIONS}
    if point.endswith("map"):
        params.update({"extra_mappers": mappers - 1, "memory_reclaim": True})
    return {
        "name": f"{SWEEP}-{arch}-{point}-{mode}",
        "machine": {"topo": {**sweep_shape(nr_cpus), "arch": arch}},
        "kernel": k,
        "workload": {"kind": "swap_bench", "params": params},
        "run": {"until": "workload_done"},
    }
