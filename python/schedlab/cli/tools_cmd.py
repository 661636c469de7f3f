"""``schedlab hackbench``, ``schedlab schbench`` and ``schedlab cyclictest``: the benchmarks with their own flags,
run once on a simulated machine, printed as the tools print. Registered on the ``app`` of
:mod:`schedlab.cli.base` (imported by :mod:`schedlab.cli.entry`)."""

from __future__ import annotations

import json
import sys

import typer

from .base import app, errors, fail

__all__ = ["hackbench", "schbench", "cyclictest"]


def _kernel(profile: str, features: list[str] | None, tunables: list[str] | None) -> dict:
    feats: dict[str, bool] = {}
    for f in features or []:
        name, _, val = f.partition("=")
        if val not in ("", "0", "1", "true", "false"):
            fail(f"--feature {f}: expected NAME, NAME=1 or NAME=0")
        feats[name.strip()] = val in ("", "1", "true")
    tuns: dict[str, object] = {}
    for t in tunables or []:
        name, sep, val = t.partition("=")
        if not sep:
            fail(f"--tunable {t}: expected NAME=VALUE")
        try:
            tuns[name.strip()] = int(val)
        except ValueError:
            tuns[name.strip()] = val
    return {"profile": profile, "features": feats, "tunables": tuns}


def _run(kind: str, params: dict, run_spec: dict, machine: str, profile: str, features: list[str] | None,
         tunables: list[str] | None, seed: int, json_out: bool):
    """Runs generator ``kind`` once; returns the RunResult dict, or None once printed as JSON."""
    from ..reproduce.registry import machine_spec

    doc = {"name": kind, "machine": machine_spec(machine), "kernel": _kernel(profile, features, tunables),
           "workload": {"kind": kind, "params": params}, "run": run_spec}
    return _run_doc(doc, seed, json_out)


def _run_doc(doc: dict, seed: int, json_out: bool):
    """Runs scenario ``doc`` once; returns the RunResult dict, or None once printed as JSON."""
    from ..api import run

    res = run(doc, seed=seed)
    if json_out:
        sys.stdout.write(json.dumps(res.raw, indent=2) + "\n")
        return None
    if res.raw["engine"]["stopped_by"] not in ("workload_done", "duration"):
        sys.stderr.write(f"warning: the run stopped by {res.raw['engine']['stopped_by']}\n")
    return res.raw


def _mode(ctx: typer.Context, param: typer.CallbackParam, value: bool) -> bool:
    """hackbench's getopt keeps the last of -T and -P: click calls this in command-line
    order, so the last flag given is the one left in ctx.meta."""
    if value:
        ctx.meta["hackbench_mode"] = param.name
    return value


MACHINE = typer.Option("ryzen-7950x", "--machine", help="Preset or topo(S,L,C,T).")
PROFILE = typer.Option("6.6", "--profile", help="Kernel profile.")
FEATURE = typer.Option(None, "--feature", help="NAME, NAME=1 or NAME=0 (repeatable), e.g. SHARED_RUNQ_V4.")
TUNABLE = typer.Option(None, "--tunable", help="NAME=VALUE (repeatable), e.g. sched_migration_cost_ns=0.")
SEED = typer.Option(1, "--seed", help="Seed.")
JSON = typer.Option(False, "--json", help="Print the RunResult JSON instead.")


@app.command()
def hackbench(
    ctx: typer.Context,
    pipe: bool = typer.Option(False, "-p", "--pipe", help="Use pipes instead of sockets."),
    datasize: int = typer.Option(100, "-s", "--datasize", help="Bytes per message."),
    loops: int = typer.Option(100, "-l", "--loops", help="Messages each sender sends each receiver."),
    groups: int = typer.Option(10, "-g", "--groups", help="Groups of senders and receivers."),
    fds: int = typer.Option(20, "-f", "--fds", help="Receivers (and senders) per group."),
    threads: bool = typer.Option(False, "-T", "--threads", callback=_mode, help="Threads of one process (the last of -T and -P wins)."),
    processes: bool = typer.Option(False, "-P", "--process", "--processes", callback=_mode, help="Processes, each forked (the default)."),
    machine: str = MACHINE,
    profile: str = PROFILE,
    feature: list[str] | None = FEATURE,
    tunable: list[str] | None = TUNABLE,
    seed: int = SEED,
    json_out: bool = JSON,
) -> None:
    """rt-tests hackbench on a simulated machine; prints its report (Time: in seconds) as hackbench does."""
    from ..toolfmt import hackbench_text

    if threads and processes:
        threads = ctx.meta.get("hackbench_mode") == "threads"
    params = {"groups": groups, "fds": fds, "loops": loops, "datasize": datasize, "pipe": pipe, "threads": threads}
    with errors():
        raw = _run("hackbench", params, {"until": "workload_done"}, machine, profile, feature, tunable, seed, json_out)
    if raw is not None:
        sys.stdout.write(hackbench_text(raw, params))


@app.command()
def schbench(
    message_threads: int = typer.Option(1, "-m", "--message-threads", help="Message threads."),
    threads: int | None = typer.Option(None, "-t", "--threads", help="Workers per message thread (default: CPUs / m)."),
    runtime: float = typer.Option(1.0, "-r", "--runtime", help="Simulated seconds to run."),
    cache_footprint: int = typer.Option(256, "-F", "--cache_footprint", help="Cache footprint, KiB."),
    operations: int = typer.Option(5, "-n", "--operations", help="Matrix multiplications per request."),
    sleep_usec: int = typer.Option(100, "-s", "--sleep_usec", help="usleep() per request, µs."),
    rps: int = typer.Option(0, "-R", "--rps", min=0, help="Requests per second, all message threads (0: off)."),
    warmuptime: int = typer.Option(0, "-w", "--warmuptime", min=0,
                                   help="Seconds before the statistics are reset (schbench ignores it below 30 s of runtime, with -R, -p and -A)."),
    auto_rps: int = typer.Option(0, "-A", "--auto-rps", min=0, max=100,
                                 help="Grow or shrink the request rate until CPU busy % reaches this (starts at -R, or 10)."),
    pipe_bytes: int = typer.Option(0, "-p", "--pipe", min=0, help="Pipe mode: bytes per transfer (0: off; at most 1 MiB)."),
    machine: str = MACHINE,
    profile: str = PROFILE,
    feature: list[str] | None = FEATURE,
    tunable: list[str] | None = TUNABLE,
    seed: int = SEED,
    json_out: bool = JSON,
) -> None:
    """schbench (its default mode with -L) on a simulated machine; prints its report."""
    from ..toolfmt import schbench_text

    params: dict = {"message_threads": message_threads, "cache_footprint_kb": cache_footprint, "operations": operations,
                    "sleep_usec": sleep_usec}
    if threads is not None:
        params["threads"] = threads
    if rps and pipe_bytes:
        fail("-R and -p: give one mode")
    if pipe_bytes > PIPE_TRANSFER_BUFFER:
        sys.stderr.write(f"pipe size too big, using {PIPE_TRANSFER_BUFFER}\n")  # as schbench says
        pipe_bytes = PIPE_TRANSFER_BUFFER
    run_spec: dict = {"duration_s": runtime}
    # parse_options(): -A, -p (and -R) leave no warm-up, nor does a run under 30 s.
    if warmuptime and not (rps or pipe_bytes or auto_rps) and runtime >= 30:
        run_spec["warmup_s"] = float(warmuptime)
    goal = None
    with errors():
        if auto_rps:
            rps, goal = _auto_rps(auto_rps, rps or 10, params, machine, profile, feature, tunable, seed)
        if rps:
            params["rps"] = rps
        if pipe_bytes:
            params["pipe"] = pipe_bytes
        raw = _run("schbench", params, run_spec, machine, profile, feature, tunable, seed, json_out)
    if raw is not None:
        sys.stdout.write(schbench_text(raw, pipe=pipe_bytes, rps_goal=goal))


PIPE_TRANSFER_BUFFER = 1024 * 1024  # schbench.c: the largest -p

POLICIES = {"other": "SCHED_OTHER", "normal": "SCHED_OTHER", "batch": "SCHED_BATCH", "idle": "SCHED_IDLE",
            "fifo": "SCHED_FIFO", "rr": "SCHED_RR"}


@app.command()
def cyclictest(
    threads: int = typer.Option(1, "-t", "--threads", min=1, help="Measurement threads."),
    interval: int = typer.Option(1000, "-i", "--interval", min=1, help="Base interval of the threads, µs."),
    distance: int = typer.Option(500, "-d", "--distance", min=0, help="Distance of the threads' intervals, µs (0 with -h, as cyclictest)."),
    loops: int = typer.Option(0, "-l", "--loops", min=0, help="Cycles per thread (0: until -D)."),
    duration: float = typer.Option(10.0, "-D", "--duration", help="Simulated seconds to run when -l is 0."),
    priority: int = typer.Option(0, "-p", "--priority", min=0, max=99, help="Priority of the highest thread (SCHED_FIFO unless --policy)."),
    policy: str | None = typer.Option(None, "--policy", help="other, normal, batch, idle, fifo or rr (default: fifo with -p, else other)."),
    histogram: int = typer.Option(0, "-h", "--histogram", min=0, help="Print a 1-µs histogram up to this many µs."),
    laptop: bool = typer.Option(False, "--laptop", help="Leave /dev/cpu_dma_latency alone: idle states stay on (cyclictest otherwise writes 0, capping them)."),
    machine: str = MACHINE,
    profile: str = PROFILE,
    feature: list[str] | None = FEATURE,
    tunable: list[str] | None = TUNABLE,
    seed: int = SEED,
    json_out: bool = JSON,
) -> None:
    """rt-tests cyclictest on a simulated machine: timer wakeup latency per thread, printed as cyclictest prints it (-q)."""
    from ..reproduce.registry import machine_spec
    from ..toolfmt import cyclictest_text

    name = (policy or ("fifo" if priority else "other")).lower()
    if name not in POLICIES:
        fail(f"--policy {policy}: expected one of {', '.join(POLICIES)}")
    rt = name in ("fifo", "rr")
    if rt and priority == 0:
        fail(f"--policy {name}: needs a priority 1..99 (-p)")
    if histogram:
        distance = 0  # cyclictest: -h sets every interval to -i
    kernel = _kernel(profile, feature, tunable)
    if not laptop:
        # set_latency_target(): cyclictest holds /dev/cpu_dma_latency at 0 while it runs.
        kernel["tunables"].setdefault("cpuidle_latency_req_ns", 0)
    tasks, meta = [], []
    for i in range(threads):
        period_us = interval + i * distance
        cycles = loops or max(1, int(duration * 1e6 // period_us))
        # cyclictest: without -h, thread i runs at -p minus i; with it, all at -p.
        prio = (priority if histogram else max(1, priority - i)) if rt else 0
        task = {"name": f"cyclictest-{i}", "timer_histogram": f"T{i}",
                "program": [{"loop": {"count": cycles, "body": [{"periodic": {"period": f"{period_us}us"}}]}}]}
        if name != "other" and name != "normal":
            task["sched_attr"] = {"policy": POLICIES[name], **({"priority": prio} if rt else {})}
        tasks.append(task)
        meta.append({"hist": f"T{i}", "prio": prio, "interval_us": period_us})
    doc = {"name": "cyclictest", "machine": machine_spec(machine), "kernel": kernel, "tasks": tasks,
           "run": {"until": "workload_done"}}
    with errors():
        raw = _run_doc(doc, seed, json_out)
    if raw is None:
        return
    pids = {t["name"]: t["pid"] for t in raw["tasks"]}
    for i, m in enumerate(meta):
        m["tid"] = pids.get(f"cyclictest-{i}", 0)
    capped = "idle states on (--laptop)" if laptop else "/dev/cpu_dma_latency set to 0us"
    sys.stdout.write(f"# schedlab cyclictest: {machine}, profile {profile}, seed {seed}, {capped}\n")
    sys.stdout.write(cyclictest_text(raw, meta, histogram))


def _busy_pct(raw: dict) -> float:
    """CPU busy % over the machine, as schbench's read_busy() takes it from /proc/stat."""
    cpus = raw.get("cpus", [])
    total = sum(c["busy_ns"] + c["idle_ns"] for c in cpus)
    return 100.0 * sum(c["busy_ns"] for c in cpus) / total if total else 0.0


def _auto_rps(target: int, rps: int, params: dict, machine: str, profile: str, features, tunables, seed: int) -> tuple[int, int]:
    """schbench -A: auto_scale_rps() once a second, from busy % (schbench.c). schbench
    scales the rate inside its one run; here each second is a one-second run at the
    rate so far (a fresh start each time), until the rate settles or 30 rounds pass;
    the measured run then runs at the rate found. Returns (rate, rate)."""
    import math

    for _ in range(30):
        raw = _run("schbench", dict(params, rps=rps), {"duration_s": 1.0}, machine, profile, features, tunables, seed, False)
        busy = _busy_pct(raw) or 1e-9
        if busy < target:
            delta = target / busy
            if delta > 3:
                delta = 3.0
            elif delta < 1.2:
                delta = 1 + (delta - 1) / 8
            elif delta < 1.5:
                delta = 1 + (delta - 1) / 4
            new = math.ceil(rps * delta)
        elif busy > target:
            delta = target / busy
            if delta < 0.3:
                delta = 0.3
            elif delta > 0.9:
                delta += (1 - delta) / 8
            elif delta > 0.8:
                delta += (1 - delta) / 4
            new = max(0, math.floor(rps * delta))
        else:
            new = rps
        if new == rps:
            break
        rps = new
    return rps, rps
