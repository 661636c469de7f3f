"""``schedlab hackbench``, ``schedlab schbench`` and ``schedlab cyclictest``: the benchmarks with their own flags,
run once on a simulated machine, printed as the tools print. Registered on the ``app`` of
:mod:`schedlab.cli.base` (imported by :mod:`schedlab.cli.entry`)."""

from __future__ import annotations

import json
import sys

import typer

from .base import app, errors, fail
from .flags import check_features, check_machine, check_profile, check_tunables

__all__ = ["hackbench", "schbench", "cyclictest", "tbench"]


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


# The flags that fill each scenario field the tools write, for an error the core finds
# in one (it names the field of a scenario the user never wrote, in ``<dict>``).
FLAG_OF = {
    "hackbench": {"workload.params.groups": "-g / --groups", "workload.params.fds": "-f / --fds",
                  "workload.params.loops": "-l / --loops", "workload.params.datasize": "-s / --datasize",
                  "workload.params": "-g, -f, -l or -s"},
    "schbench": {"workload.params.message_threads": "-m / --message-threads", "workload.params.threads": "-t / --threads",
                 "workload.params.cache_footprint_kb": "-F / --cache_footprint",
                 "workload.params.operations": "-n / --operations", "workload.params.sleep_usec": "-s / --sleep_usec",
                 "workload.params.rps": "-R / --rps", "workload.params.pipe": "-p / --pipe",
                 "workload.params": "-m, -t or -F", "run.duration_s": "-r / --runtime", "run.warmup_s": "-w / --warmuptime"},
    "cyclictest": {"run": "-D / --duration"},
    "dbench_pairs": {"workload.params.pairs": "NPROCS", "workload.params": "NPROCS",  # tbench
                     "run.duration_s": "-t / --timelimit", "run.warmup_s": "-t / --timelimit"},
}


def _run_doc(doc: dict, seed: int, json_out: bool):
    """Runs scenario ``doc`` once; returns the RunResult dict, or None once printed as JSON."""
    from ..api import run
    from ..errors import ScenarioError
    from .flags import flag_error

    try:
        res = run(doc, seed=seed)
    except ScenarioError as e:
        field = getattr(e, "field", "") or ""
        flags = FLAG_OF.get(doc.get("name", ""), {})
        key = max((k for k in flags if field == k or field.startswith(k + ".") or field.startswith(k + "[")),
                  key=len, default=None)
        if getattr(e, "origin", "") != "<dict>" or key is None:
            raise
        raise flag_error(flags[key], f"{field}: {e.message}") from None
    if json_out:
        sys.stdout.write(json.dumps(res.raw, indent=2) + "\n")
        return None
    if res.raw["engine"]["stopped_by"] not in ("workload_done", "duration"):
        sys.stderr.write(f"warning: the run stopped by {res.raw['engine']['stopped_by']}\n")
    return res.raw


def _note(text: str) -> None:
    """A flag the simulation takes but that changes nothing: said once, on stderr."""
    sys.stderr.write(f"note: {text}\n")


def _nothing_done(what: str, empty: str) -> None:
    """A benchmark that completed nothing: said on stderr, so a report with empty
    figures (schbench's bare ``min=0, max=0``) is never taken for a measurement."""
    sys.stderr.write(f"warning: {what}: {empty} (run longer, or with fewer threads)\n")


def _mode(ctx: typer.Context, param: typer.CallbackParam, value: bool) -> bool:
    """hackbench's getopt keeps the last of -T and -P: click calls this in command-line
    order, so the last flag given is the one left in ctx.meta."""
    if value:
        ctx.meta["hackbench_mode"] = param.name
    return value


MACHINE = typer.Option("ryzen-7950x", "--machine", callback=check_machine, help="Preset or topo(S,L,C,T).")
PROFILE = typer.Option("6.6", "--profile", callback=check_profile, help="Kernel profile.")
FEATURE = typer.Option(None, "--feature", callback=check_features, help="NAME, NAME=1 or NAME=0 (repeatable), e.g. SHARED_RUNQ_V4.")
TUNABLE = typer.Option(None, "--tunable", callback=check_tunables, help="NAME=VALUE (repeatable), e.g. sched_migration_cost_ns=0.")
SEED = typer.Option(1, "--seed", help="Seed.")
JSON = typer.Option(False, "--json", help="Print the RunResult JSON instead.")


@app.command()
def hackbench(
    ctx: typer.Context,
    pipe: bool = typer.Option(False, "-p", "--pipe", help="Use pipes instead of sockets."),
    datasize: int = typer.Option(100, "-s", "--datasize", min=1, help="Bytes per message."),
    loops: int = typer.Option(100, "-l", "--loops", min=1, help="Messages each sender sends each receiver."),
    groups: int = typer.Option(10, "-g", "--groups", min=1, help="Groups of senders and receivers."),
    fds: int = typer.Option(20, "-f", "--fds", min=1, help="Receivers (and senders) per group."),
    threads: bool = typer.Option(False, "-T", "--threads", callback=_mode, help="Threads of one process (the last of -T and -P wins)."),
    processes: bool = typer.Option(False, "-P", "--process", "--processes", callback=_mode, help="Processes, each forked (the default)."),
    precise: bool = typer.Option(False, "--precise", help="Print Time: to the nanosecond (hackbench prints milliseconds, truncated)."),
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
        sys.stdout.write(hackbench_text(raw, params, precise=precise))
        if raw.get("workload", {}).get("time_s") is None:
            sys.stderr.write("No measurements available\n")  # hackbench's line, on stderr as hackbench has it


@app.command()
def schbench(
    message_threads: int = typer.Option(1, "-m", "--message-threads", min=1, help="Message threads."),
    threads: int | None = typer.Option(None, "-t", "--threads", min=1, help="Workers per message thread (default: CPUs / m)."),
    runtime: float = typer.Option(1.0, "-r", "--runtime", help="Simulated seconds to run."),
    cache_footprint: int = typer.Option(256, "-F", "--cache_footprint", min=1, help="Cache footprint, KiB."),
    operations: int = typer.Option(5, "-n", "--operations", help="Matrix multiplications per request."),
    sleep_usec: int = typer.Option(100, "-s", "--sleep_usec", help="usleep() per request, µs."),
    rps: int = typer.Option(0, "-R", "--rps", min=0, help="Requests per second, all message threads (0: off)."),
    warmuptime: int = typer.Option(0, "-w", "--warmuptime", min=0,
                                   help="Seconds before the statistics are reset (schbench ignores it below 30 s of runtime, with -R, -p and -A)."),
    auto_rps: int = typer.Option(0, "-A", "--auto-rps", min=0, max=100,
                                 help="Grow or shrink the request rate until CPU busy % reaches this (starts at -R, or 10)."),
    pipe_bytes: int = typer.Option(0, "-p", "--pipe", min=0, help="Pipe mode: bytes per transfer (0: off; at most 1 MiB)."),
    no_locking: bool = typer.Option(False, "-L", "--no-locking", help="Don't spinlock during CPU work: the mode modeled (schbench otherwise takes a per-CPU lock around each request's work)."),
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
    if not no_locking and not pipe_bytes:
        # schbench.c do_work(): without -L each request's work runs under its CPU's
        # pthread mutex, taken by a trylock spin; the generator models the work unlocked.
        # Said once the run is done, so a refused command prints its one error line alone.
        _note("schbench's per-CPU lock around the work (on unless -L) is not modeled: this runs as schbench -L")
    if raw is not None:
        sys.stdout.write(schbench_text(raw, pipe=pipe_bytes, rps_goal=goal))
        hist = raw.get("histograms", {})
        if pipe_bytes and not hist.get("schbench_wakeup", {}).get("count"):
            _nothing_done(f"no transfer completed in {runtime:g} s", "the report has no measurement")
        elif not pipe_bytes and not hist.get("schbench_request", {}).get("count"):
            _nothing_done(f"no request completed in {runtime:g} s", "the request latencies and rates are empty")


PIPE_TRANSFER_BUFFER = 1024 * 1024  # schbench.c: the largest -p
MAX_RUN_S = 1_000_000  # the longest run the core takes (run.duration_s)


@app.command()
def tbench(
    nprocs: int = typer.Argument(..., min=1, help="Clients, each with its tbench_srv process (the dbench_pairs generator's pairs).", show_default=False),
    server: str | None = typer.Argument(None, help="tbench's server address: accepted, always loopback here.", show_default=False),
    timelimit: int = typer.Option(10, "-t", "--timelimit", min=1, help="Simulated seconds (tbench's own default is 600)."),
    machine: str = MACHINE,
    profile: str = PROFILE,
    feature: list[str] | None = FEATURE,
    tunable: list[str] | None = TUNABLE,
    seed: int = SEED,
    json_out: bool = JSON,
) -> None:
    """dbench 4.0's tbench (network mode over loopback) on a simulated machine; prints its Throughput line in MB/sec."""
    from ..toolfmt import DBENCH_BYTES_PER_OP, tbench_mb_per_s, tbench_text

    if server not in (None, "localhost", "127.0.0.1", "::1"):
        _note(f"server {server}: the clients and servers run on the simulated machine, over loopback")
    warmup = timelimit // 5  # dbench.c: options.warmup = timelimit / 5 unless given
    run_spec: dict = {"duration_s": float(timelimit)}
    if warmup:
        run_spec["warmup_s"] = float(warmup)
    with errors():
        raw = _run("dbench_pairs", {"pairs": nprocs}, run_spec, machine, profile, feature, tunable, seed, json_out)
    if raw is None:
        return
    sys.stdout.write(f"# schedlab tbench: {machine}, profile {profile}, seed {seed}; "
                     f"{DBENCH_BYTES_PER_OP:.1f} bytes per operation (dbench 4.0's client.txt)\n")
    sys.stdout.write(tbench_text(raw, nprocs, timelimit, warmup))
    ops, _ = tbench_mb_per_s(raw)
    if ops == 0:
        _nothing_done(f"no operation completed in {timelimit - warmup} s after the warm-up", "the throughput is 0")

POLICIES = {"other": "SCHED_OTHER", "normal": "SCHED_OTHER", "batch": "SCHED_BATCH", "idle": "SCHED_IDLE",
            "fifo": "SCHED_FIFO", "rr": "SCHED_RR"}


@app.command(context_settings={"allow_extra_args": True})
def cyclictest(
    ctx: typer.Context,
    threads: int = typer.Option(1, "-t", "--threads", min=1, help="Measurement threads."),
    interval: int = typer.Option(1000, "-i", "--interval", min=1, help="Base interval of the threads, µs."),
    distance: int = typer.Option(500, "-d", "--distance", min=0, help="Distance of the threads' intervals, µs (0 with -h, as cyclictest)."),
    loops: int = typer.Option(0, "-l", "--loops", min=0, help="Cycles per thread (0: until -D)."),
    duration: float = typer.Option(10.0, "-D", "--duration", help="Simulated seconds to run when -l is 0."),
    priority: int = typer.Option(0, "-p", "--priority", min=0, max=99, help="Priority of the highest thread (SCHED_FIFO unless --policy)."),
    policy: str | None = typer.Option(None, "--policy", help="other, normal, batch, idle, fifo or rr (default: fifo with -p, else other)."),
    histogram: int = typer.Option(0, "-h", "--histogram", min=0, help="Print a 1-µs histogram up to this many µs."),
    laptop: bool = typer.Option(False, "--laptop", help="Leave /dev/cpu_dma_latency alone: idle states stay on (cyclictest otherwise writes 0, capping them)."),
    priospread: bool = typer.Option(False, "--priospread", help="Thread i at -p minus i (cyclictest: every thread at -p otherwise)."),
    smp: bool = typer.Option(False, "-S", "--smp", help="Standard SMP testing: one thread per CPU, each pinned to its CPU (-t nr CPUs and -a), all at -p."),
    pin_threads: bool = typer.Option(False, "-a", "--affinity", help="-a \\[CPUSET]: pin thread N to CPU N, or to CPUSET's CPUs in round-robin order (-a 3-5,0)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Print the summary only, as cyclictest -q (no schedlab header line)."),
    mlockall: bool = typer.Option(False, "-m", "--mlockall", help="Accepted; no effect in a simulation (nothing is paged)."),
    nanosleep: bool = typer.Option(False, "-n", "--nanosleep", help="Accepted; the threads sleep in clock_nanosleep() anyway."),
    machine: str = MACHINE,
    profile: str = PROFILE,
    feature: list[str] | None = FEATURE,
    tunable: list[str] | None = TUNABLE,
    seed: int = SEED,
    json_out: bool = JSON,
) -> None:
    """rt-tests cyclictest on a simulated machine: timer wakeup latency per thread, printed as cyclictest prints it (-q)."""
    from ..reproduce.registry import machine_cpus, machine_spec, parse_cpulist
    from ..toolfmt import cyclictest_text

    if mlockall:
        _note("--mlockall has no effect in a simulation (nothing is paged out)")
    if nanosleep:
        _note("--nanosleep: the threads sleep in clock_nanosleep() anyway, as cyclictest 2.x always does")
    # cyclictest's -a takes an optional CPUSET as the next word (it has no other operand).
    extra = list(ctx.args)
    if extra and not pin_threads or len(extra) > 1:
        fail(f"unexpected argument '{extra[-1]}': cyclictest takes a CPUSET after -a only")
    affinity = (extra[0] if extra else "") if pin_threads else None
    with errors():
        nr_cpus = machine_cpus(machine)
    if smp:
        # cyclictest -S: num_threads = the CPUs, each thread on its own CPU (AFFINITY_USEALL).
        threads, affinity = nr_cpus, ""
    pin: list[int | None] = [None] * threads
    if affinity is not None:
        try:
            cpus = parse_cpulist(affinity) if affinity else list(range(nr_cpus))
        except ValueError:
            fail(f"-a {affinity}: expected a cpulist such as 0-3,8")
        bad = [c for c in cpus if c >= nr_cpus]
        if not cpus or bad:
            fail(f"-a {affinity}: CPU {bad[0] if bad else affinity} is not on {machine} ({nr_cpus} CPUs: 0-{nr_cpus - 1})")
        # Thread N on the set's Nth CPU, round-robin (cyclictest's -a).
        pin = [cpus[i % len(cpus)] for i in range(threads)]

    name = (policy or ("fifo" if priority else "other")).lower()
    if name not in POLICIES:
        fail(f"--policy {policy}: expected one of {', '.join(POLICIES)}")
    rt = name in ("fifo", "rr")
    if rt and priority == 0:
        fail(f"--policy {name}: needs a priority 1..99 (-p)")
    if not loops and not 0 < duration <= MAX_RUN_S:  # -D becomes the loop counts, past the core's run check
        from .flags import flag_error

        raise flag_error("-D / --duration", f"{duration:g} s: expected a positive number of seconds up to "
                                            f"{MAX_RUN_S:,} (or -l)")
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
        # cyclictest 2.x runs every thread at -p; --priospread (not with -h) steps down by one.
        prio = (max(1, priority - i) if priospread and not histogram else priority) if rt else 0
        task = {"name": f"cyclictest-{i}", "timer_histogram": f"T{i}",
                "program": [{"loop": {"count": cycles, "body": [{"periodic": {"period": f"{period_us}us"}}]}}]}
        if pin[i] is not None:
            task["affinity"] = str(pin[i])
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
    if quiet:
        if not laptop:
            sys.stdout.write("# /dev/cpu_dma_latency set to 0us\n")  # what cyclictest -q prints first
    else:
        capped = "idle states on (--laptop)" if laptop else "/dev/cpu_dma_latency set to 0us"
        sys.stdout.write(f"# schedlab cyclictest: {machine}, profile {profile}, seed {seed}, {capped}\n")
    sys.stdout.write(cyclictest_text(raw, meta, histogram))
    idle = [f"T:{i}" for i, m in enumerate(meta) if not raw["histograms"].get(m["hist"], {}).get("count")]
    if idle:
        _nothing_done(f"{', '.join(idle)} completed no cycle", "their lines have no latency")


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
