"""shared-runq: every published form of the shared runqueue, and the upstream alternative,
on the workloads its reviewers judged it by.

The swqueue RFC and its later versions: v1 (wakeup-only enqueue, pulled in
pick_next_task_fair() before newidle balance), v2 (pulled at the top of newidle_balance(),
head-only pop; WAKEUP: enqueue on wakeup as v1; ALL: enqueue whenever a task enters the
CFS tree), v3 (ALL, sharded by SHARED_RUNQ_SHARD_SZ = 6 with (cpu >> 1) % n, and its
ineffective skip of <= LLC domains), v4 (enqueue onto non-empty runqueues only, pulled
after the rd->overload gate ignoring avg_idle, <= LLC domains skipped), and NI_RANDOM
(2025: newidle balance of a domain with probability = its recent success ratio, no
shared runqueue). Each runs on the patch's machines (7950X, Milan), Bergamo, a 2-socket
Zen 3 server and the 2-socket Xeon, with five workloads sized to the machine:

- make: `make -j$(nproc)` as in the swqueue experiment (gcc | as pipes);
- hackbench: rt-tests defaults, 10 groups x 20 fds, sockets, processes;
- schbench: 2 message threads, ceil(CPUs / 2) workers each, -F 256 -n 5 -s 100 (-L);
- tbench: dbench's network mode, CPUs / 2 client/server pairs over loopback;
- hhvm: a web tier at 85 % of the machine's capacity, 2 x CPUs workers, with the patch's
  HHVM debugfs knobs (migration_cost_ns 0, latency_ns 20 ms, min_granularity_ns 10 ms,
  wakeup_granularity_ns 12 ms).

The patch's make table is compared as in `swqueue` (none = NO_SWQUEUE+NO_SIS_NODE, v1 =
SWQUEUE+NO_SIS_NODE; the build time's level calibrated per machine on `none`, the
ratios never). The later versions' published figures are not shared with schedlab, so
every other row is a simulated figure with its spread over seeds, a change ratio against
`none` on the same seeds, and the mechanism's own counters: pulls from the shared
runqueue, shard-lock wait per lock, newidle balances skipped (by avg_idle, by NI_RANDOM's
die, by v4's domain skip), and idle-while-waiting time per LLC.
"""

from __future__ import annotations

from ...errors import UnknownNameError
from ..compare import Row, change_row, mean_std, value_row
from ..registry import ExpOption, Metric, Source, Verdict, experiment, machine_cpus, machine_spec, published_source

NAME = "shared-runq"
MACHINES = ["ryzen-7950x", "milan-72", "bergamo", "zen3-2s", "xeon-80"]
VARIANTS = {
    "none": {},
    "v1": {"SHARED_RUNQ": True},
    "v2-wakeup": {"SHARED_RUNQ_V2": True},
    "v2-all": {"SHARED_RUNQ_V2": True, "SHARED_RUNQ_ALL": True},
    "v3-sharded": {"SHARED_RUNQ_V3": True, "SHARED_RUNQ_V3_LLC_SKIP": True},
    "v4": {"SHARED_RUNQ_V4": True},
    "ni-random": {"NI_RANDOM": True},
}
WORKLOADS = ["make", "hackbench", "schbench", "tbench", "hhvm"]
CONFIGS = [f"{w}:{v}" for w in WORKLOADS for v in VARIANTS]
# The patch's HHVM knobs (debugfs names; CFS tunables).
HHVM_KNOBS = {"sched_migration_cost_ns": 0, "sched_latency_ns": 20_000_000,
              "sched_min_granularity_ns": 10_000_000, "sched_wakeup_granularity_ns": 12_000_000}

# The benchmark's own figures per workload (the change rows compare these).
FIGURES = {
    "make": [Metric("makespan_s", "s", "build time", calibrate=True), Metric("cpu_pct", "%", "CPU%")],
    "hackbench": [Metric("time_s", "s", "hackbench Time:")],
    "schbench": [Metric("request_p99_us", "us", "request latency p99"), Metric("wakeup_p99_us", "us", "wakeup latency p99"),
                 Metric("rps", "req/s", "requests per second")],
    "tbench": [Metric("ops_per_s", "ops/s", "tbench operations per second")],
    "hhvm": [Metric("throughput_rps", "req/s", "throughput"), Metric("latency_p95_ms", "ms", "p95 latency"),
             Metric("latency_p99_ms", "ms", "p99 latency")],
}
# The mechanism's counters, shown for every configuration.
COUNTERS = [
    Metric("summary.shared_runq_pulls", "tasks", "pulled from the shared runqueue"),
    Metric("summary.shared_runq_lock_wait_avg_us", "us", "shard-lock wait per contention (lock_stat waittime-avg)"),
    Metric("summary.newidle_skips", "", "newidle balances skipped by the avg_idle/overload gates"),
    Metric("summary.newidle_random_skips", "", "newidle domains skipped by NI_RANDOM"),
    Metric("summary.newidle_domain_skips", "", "newidle domains skipped by v4 (<= LLC)"),
    Metric("idle_while_waiting_per_llc_ms", "ms", "CPU time idle while a task waited, per LLC (mean)"),
]


def _units(quick: bool, cpus: int) -> int:
    return cpus * (5 if quick else 20)


def _workload(name: str, machine: str, quick: bool) -> tuple[dict, dict]:
    """(workload table, run table) of one workload on ``machine``."""
    cpus = machine_cpus(machine)
    if name == "make":
        return ({"kind": "make", "params": {"jobs": cpus, "units": _units(quick, cpus), "unit_mean": "40ms",
                                            "pipe_chunks": 8}}, {"until": "workload_done"})
    if name == "hackbench":
        return ({"kind": "hackbench", "params": {"groups": 10, "fds": 20, "loops": 20 if quick else 100}},
                {"until": "workload_done"})
    if name == "schbench":
        return ({"kind": "schbench", "params": {"message_threads": 2}}, {"duration_s": 0.15 if quick else 0.6})
    if name == "tbench":
        return ({"kind": "dbench_pairs", "params": {"pairs": max(1, cpus // 2)}}, {"duration_s": 0.05 if quick else 0.2})
    if name == "hhvm":
        return ({"kind": "hhvm", "params": {"load": 0.85}}, {"duration_s": 0.2 if quick else 0.8})
    raise UnknownNameError(f"unknown workload '{name}'")


def _value(raw: dict, metric: str):
    if metric == "idle_while_waiting_per_llc_ms":
        llcs = raw.get("llcs") or []
        return sum(llc["idle_while_waiting_ns"] for llc in llcs) / len(llcs) / 1e6 if llcs else None
    from ...results import figure
    try:
        return figure(raw, metric)
    except KeyError:
        return None


def _values(raws, metric: str) -> dict[int, float]:
    out = {}
    for r in raws:
        v = _value(r, metric)
        if v is not None:
            out[r["seed"]] = v
    return out


def compare(exp, runs) -> list[Row]:
    """Per machine and workload: each variant's figures and counters, the change ratio of
    the figures against `none`; the make build time calibrated where the patch has it."""
    rows: list[Row] = []
    for machine in dict.fromkeys(m for m, _ in runs):
        for w in WORKLOADS:
            base = f"{w}:none"
            for metric in FIGURES[w] + COUNTERS:
                per = {v: _values(runs.get((machine, f"{w}:{v}"), []), metric.name) for v in VARIANTS}
                scale = None
                if metric.calibrate:
                    pub = exp.published_value(machine, base, metric.key)
                    m, _ = mean_std(list(per["none"].values()))
                    scale = pub / m if pub is not None and m else None
                for v in VARIANTS:
                    if not per[v]:
                        continue
                    cfg = f"{w}:{v}"
                    rows.append(value_row(exp, machine, cfg, metric.key, metric.unit, per[v],
                                          exp.published_value(machine, cfg, metric.key), scale))
                if metric in COUNTERS:
                    continue
                for v in VARIANTS:
                    if v == "none" or not per[v]:
                        continue
                    cfg = f"{w}:{v}"
                    a, b = exp.published_value(machine, cfg, metric.key), exp.published_value(machine, base, metric.key)
                    pub = a / b if a is not None and b else None
                    rows.append(change_row(exp, machine, cfg, base, metric.key, per[v], per["none"], pub))
    return rows


@experiment(
    name=NAME,
    title="Shared runqueue v1-v4 and NI_RANDOM: make, hackbench, schbench, tbench, HHVM-like",
    source=published_source(NAME) or Source("000_8095fe63da30d972.txt", "make -j$(nproc) built-in.a"),
    machines=MACHINES,
    configs=CONFIGS,
    baseline="make:none",
    metrics=[m for w in WORKLOADS for m in FIGURES[w]] + COUNTERS,
    seeds=3,
    quick_seeds=2,
    verdict=Verdict(seeds=3),
    description=__doc__.split("\n\n", 1)[1],
    compare=compare,
    options=[ExpOption("profile", str, "6.5", "kernel profile of every run (CFS before 6.6, EEVDF from 6.6)"),
             ExpOption("cpuidle_max_state", int, -1, "deepest idle state allowed (-1: all; 1 keeps the AMD presets "
                       "out of CC6, whose 400 us exit latency dominates tbench's round trips)")],
)
def build(machine: str, config: str, quick: bool, profile: str = "6.5", cpuidle_max_state: int = -1) -> dict:
    """One workload under one shared-runqueue variant on ``machine``."""
    w, v = config.split(":")
    workload, run = _workload(w, machine, quick)
    kernel = {"profile": profile, "features": dict(VARIANTS[v]), "tunables": {}}
    if w == "hhvm":
        kernel["tunables"].update(HHVM_KNOBS)
    if cpuidle_max_state >= 0:
        kernel["tunables"]["cpuidle_max_state"] = cpuidle_max_state
    return {"name": f"{NAME}-{w}-{v}", "machine": machine_spec(machine), "kernel": kernel,
            "workload": workload, "run": run}
