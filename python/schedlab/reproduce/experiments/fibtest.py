"""fibtest: CFS bandwidth slices that expire (4.18-5.3) vs slices that do not (5.4+).

The patch's artificial test case (indeedeng/fibtest, run by runfibtest): one cgroup with
cpu.cfs_quota_us = 10000 per 100 ms period, `fibtest -t N -s 5` with one thread per CPU:
thread 0 computes Fibonacci numbers in 1M-iteration chunks without pause (the "fast"
thread), threads 1..N-1 each do 100 iterations and usleep(10 ms); thread i is pinned to
CPU i; fibtest's main thread creates them one after the other. The score is fibtest's
own, "Iterations Completed(M)" (`iterations_m`): every thread's iterations, almost all
of them the fast thread's. Published: "almost 30x" more iterations without expiry
(commit de53fd7aedb1, v5.4) than with it (4.18-5.3, after 512ac999d275) on an 80-CPU
machine (the commit message), and 150 M against 1209 M iterations (8.1x), CPU usage 88 against
493 ms, 58 against 51 throttled periods on a 64-CPU machine (the fibtest README of
the pull request that documents the bug, "This test was from an affected kernel on a
machine with 64 CPUs").

What decides the expiring case is the phase of the tick against the period boundary:
after each refill the slow CPUs carve the 10 ms pool into 1 ms silos within microseconds
and the fast thread runs on credit until its CPU's next tick accounts it. That phase is
fixed for a boot and differs between boots, so one published run is one draw. Each seed
draws a tick phase (the `tick_phase_ns` tunable sets it explicitly), and each ratio is
reported as a distribution over seeds: the change rows carry the median and the 5th and
95th percentiles of the per-seed ratio (`simulated_median`, `simulated_p5`,
`simulated_p95`), and a "(ratio of means)" row gives mean(no expiry) / mean(expiry),
which does not ride the heavy tail of small expiring scores. HZ was published for
neither machine, so every point runs at HZ 1000 and HZ 250 (`@hz250`); the README's
machine is modeled as `fibtest -t 64` on the 80-CPU preset (CPUs 0-63; the other 16
idle). The 3.16-4.17 behaviour (inverted expiry test: slices live on by accident) runs
beside them at the patch's point for contrast. Nothing is calibrated: the published
absolute figures (README) are of an unknown machine and are shown for reference.

Seeds: 40 by default (the tick phase spans the ratio's range); `--quick` runs 10; any
count with `--seeds`. `--background HZ` adds that many background kernel wakeups per
second on CPU 0 (kworkers, RCU, timer softirq; 10 us each, outside the cgroup), which
cut the fast thread's runs on credit short (`fibtest` workload,
`cpu0_background_hz`). `--machine` runs one thread per CPU of that machine (and 64 where
it has at least 64 CPUs).
"""

from __future__ import annotations

from ...errors import InputError
from ..compare import Row, change_row, ratio_of_means_row, seed_values, value_row
from ..registry import ExpOption, Metric, Source, Verdict, experiment, machine_cpus, machine_spec, published_source

NAME = "fibtest"
BASELINE = "expiring-4.18-5.3"
# Behaviour -> kernel profile; the profile selects the bandwidth behaviour
# (features BW_SLICE_EXPIRY / BW_EXPIRY_INVERTED, `schedlab features --profile X`).
PROFILES = {
    "expiring-4.18-5.3": "5.3",
    "no-expiry-5.4": "5.4",
    "never-expiring-3.16-4.17": "4.14",
}
LABELS = {
    "expiring-4.18-5.3": "per-CPU slices expire at the period boundary (profile 5.3)",
    "no-expiry-5.4": "slices never expire, de53fd7aedb1 (profile 5.4)",
    "never-expiring-3.16-4.17": "inverted expiry test extends leftovers (profile 4.14)",
}
BEFORE, AFTER, NEVER = "expiring-4.18-5.3", "no-expiry-5.4", "never-expiring-3.16-4.17"
# runfibtest: cpu.cfs_quota_us = 10000, cpu.cfs_period_us left at its default 100000.
QUOTA_US = 10_000
PERIOD_US = 100_000
# fibtest -s 5 (runfibtest's run length).
SECONDS = 5.0
HZS = (1000, 250)
# Points: (threads, HZ) -> configuration suffix; None threads = the machine's CPU count.
POINTS = {(None, 1000): "", (None, 250): "@hz250", (64, 1000): "@64cpu", (64, 250): "@64cpu-hz250"}

METRICS = [
    Metric("iterations_m", "M", "fibtest's score: iterations completed by all threads, millions"),
    Metric("fast_work_ms", "ms", "the fast thread's CPU time"),
    Metric("usage_ms", "ms", "the group's CPU usage (cpuacct.usage)"),
    Metric("nr_throttled", "periods", "cpu.stat nr_throttled"),
    Metric("nr_periods", "periods", "cpu.stat nr_periods"),
]


def point_configs(suffix: str, with_never: bool) -> list[str]:
    names = [BEFORE, AFTER] + ([NEVER] if with_never else [])
    return [f"{b}{suffix}" for b in names]


CONFIGS = [c for (n, hz), suffix in POINTS.items() for c in point_configs(suffix, suffix == "")]
GROUPS = [(point_configs(suffix, suffix == ""), f"{BEFORE}{suffix}") for suffix in POINTS.values()]


def parse_config(config: str) -> tuple[str, int | None, int]:
    """(behaviour, threads or None for one per CPU, HZ) of a configuration."""
    behaviour, _, rest = config.partition("@")
    if behaviour not in PROFILES:
        raise InputError(f"experiment {NAME}: unknown configuration '{config}': expected one of {', '.join(CONFIGS)}")
    for (n, hz), suffix in POINTS.items():
        if "@" + rest == suffix or (not rest and not suffix):
            return behaviour, n, hz
    raise InputError(f"experiment {NAME}: unknown configuration '{config}': expected one of {', '.join(CONFIGS)}")


def fibtest_scenario(name: str, machine: str, profile: str, threads: int, seconds: float, hz: int = 1000,
                     background_hz: float = 0.0) -> dict:
    """`fibtest -t THREADS -s SECONDS` in a cgroup of 10 ms per 100 ms on ``machine``."""
    params: dict = {"threads": threads, "seconds": seconds, "quota_us": QUOTA_US, "period_us": PERIOD_US}
    if background_hz:
        params["cpu0_background_hz"] = background_hz
    kernel: dict = {"profile": profile}
    if hz != 1000:
        kernel["tunables"] = {"hz": hz}
    return {
        "name": name,
        "description": f"fibtest -t {threads} -s {seconds:g} under cpu.cfs_quota_us={QUOTA_US} "
                       f"cpu.cfs_period_us={PERIOD_US}, kernel profile {profile}, HZ {hz}",
        "machine": machine_spec(machine),
        "kernel": kernel,
        "workload": {"kind": "fibtest", "params": params},
        "run": {"duration_s": seconds},
    }


def compare_distributions(exp, runs, groups) -> list[Row]:
    """Per group (one CPU count and HZ): every metric's values per behaviour, then each
    behaviour against the group's baseline as the mean of per-seed ratios (with median
    and 5-95 % range) and as the ratio of means."""
    rows: list[Row] = []
    for machine in dict.fromkeys(m for m, _ in runs):
        for configs, base in groups:
            for m in exp.metrics:
                vals = {c: seed_values(runs.get((machine, c), []), m.name) for c in configs}
                if not any(vals.values()):
                    continue
                for c in configs:
                    rows.append(value_row(exp, machine, c, m.key, m.unit, vals[c], exp.published_value(machine, c, m.key)))
                for c in configs:
                    if c == base:
                        continue
                    name = f"{c} vs {base}"
                    pub = exp.published_value(machine, name, m.key)
                    rows.append(change_row(exp, machine, c, base, m.key, vals[c], vals[base], pub))
                    if m.key == "iterations_m":
                        rows.append(ratio_of_means_row(exp, machine, c, base, m.key, vals[c], vals[base], pub))
    return rows


@experiment(
    name=NAME,
    title="fibtest under a 10 ms / 100 ms quota: expiring slices (4.18-5.3) vs none (5.4), over tick phases",
    source=published_source(NAME) or Source("002_ea7a89f00d69f01d.txt", "commit message of v6"),
    machines=["xeon-80"],
    configs=CONFIGS,
    labels={f"{b}{sfx}": LABELS[b] + (f", {sfx[1:]}" if sfx else "") for sfx in POINTS.values() for b in PROFILES},
    baseline=BASELINE,
    metrics=METRICS,
    seeds=40,
    quick_seeds=10,
    verdict=Verdict(seeds=40),
    description=__doc__.split("\n\n", 1)[1],
    compare=lambda exp, runs: compare_distributions(exp, runs, GROUPS),
    options=[ExpOption("background", float, 0.0, "background kernel wakeups per second on CPU 0 (kworkers, RCU, "
                       "timer softirq), 10 us each (0 = none, as published)")],
)
def build(machine: str, config: str, quick: bool, background: float = 0.0) -> dict:
    """fibtest at one (behaviour, thread count, HZ) point on ``machine``."""
    behaviour, n, hz = parse_config(config)
    cpus = machine_cpus(machine)
    threads = cpus if n is None else min(n, cpus)
    if background < 0:
        raise InputError(f"experiment {NAME}: --background must be >= 0, got {background}")
    return fibtest_scenario(f"{NAME}-{config}", machine, PROFILES[behaviour], threads, SECONDS, hz, background)
