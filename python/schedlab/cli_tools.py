"""``schedlab hackbench`` and ``schedlab schbench``: the benchmarks with their own flags,
run once on a simulated machine, printed as the tools print. Registered on the app of
:mod:`schedlab.cli` (imported at its end)."""

from __future__ import annotations

import json
import sys
from typing import List, Optional

import typer

from .cli import app, errors, fail

__all__ = ["hackbench", "schbench"]


def _kernel(profile: str, features: Optional[List[str]], tunables: Optional[List[str]]) -> dict:
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


def _run(kind: str, params: dict, run_spec: dict, machine: str, profile: str, features: Optional[List[str]],
         tunables: Optional[List[str]], seed: int, json_out: bool):
    """Runs generator ``kind`` once; returns the RunResult dict, or None once printed as JSON."""
    from .api import run
    from .reproduce.registry import machine_spec

    doc = {"name": kind, "machine": machine_spec(machine), "kernel": _kernel(profile, features, tunables),
           "workload": {"kind": kind, "params": params}, "run": run_spec}
    res = run(doc, seed=seed)
    if json_out:
        sys.stdout.write(json.dumps(res.raw, indent=2) + "\n")
        return None
    if res.raw["engine"]["stopped_by"] not in ("workload_done", "duration"):
        sys.stderr.write(f"warning: the run stopped by {res.raw['engine']['stopped_by']}\n")
    return res.raw


MACHINE = typer.Option("ryzen-7950x", "--machine", help="Preset or topo(S,L,C,T).")
PROFILE = typer.Option("6.6", "--profile", help="Kernel profile.")
FEATURE = typer.Option(None, "--feature", help="NAME, NAME=1 or NAME=0 (repeatable), e.g. SHARED_RUNQ_V4.")
TUNABLE = typer.Option(None, "--tunable", help="NAME=VALUE (repeatable), e.g. sched_migration_cost_ns=0.")
SEED = typer.Option(1, "--seed", help="Seed.")
JSON = typer.Option(False, "--json", help="Print the RunResult JSON instead.")


@app.command()
def hackbench(
    pipe: bool = typer.Option(False, "-p", "--pipe", help="Use pipes instead of sockets."),
    datasize: int = typer.Option(100, "-s", "--datasize", help="Bytes per message."),
    loops: int = typer.Option(100, "-l", "--loops", help="Messages each sender sends each receiver."),
    groups: int = typer.Option(10, "-g", "--groups", help="Groups of senders and receivers."),
    fds: int = typer.Option(20, "-f", "--fds", help="Receivers (and senders) per group."),
    threads: bool = typer.Option(False, "-T", "--threads", help="Threads instead of processes."),
    machine: str = MACHINE,
    profile: str = PROFILE,
    feature: Optional[List[str]] = FEATURE,
    tunable: Optional[List[str]] = TUNABLE,
    seed: int = SEED,
    json_out: bool = JSON,
) -> None:
    """rt-tests hackbench on a simulated machine; prints its report (Time: in seconds) as hackbench does."""
    from .toolfmt import hackbench_text

    params = {"groups": groups, "fds": fds, "loops": loops, "datasize": datasize, "pipe": pipe, "threads": threads}
    with errors():
        raw = _run("hackbench", params, {"until": "workload_done"}, machine, profile, feature, tunable, seed, json_out)
    if raw is not None:
        sys.stdout.write(hackbench_text(raw, params))


@app.command()
def schbench(
    message_threads: int = typer.Option(1, "-m", "--message-threads", help="Message threads."),
    threads: Optional[int] = typer.Option(None, "-t", "--threads", help="Workers per message thread (default: CPUs / m)."),
    runtime: float = typer.Option(1.0, "-r", "--runtime", help="Simulated seconds to run."),
    cache_footprint: int = typer.Option(256, "-F", "--cache_footprint", help="Cache footprint, KiB."),
    operations: int = typer.Option(5, "-n", "--operations", help="Matrix multiplications per request."),
    sleep_usec: int = typer.Option(100, "-s", "--sleep_usec", help="usleep() per request, µs."),
    machine: str = MACHINE,
    profile: str = PROFILE,
    feature: Optional[List[str]] = FEATURE,
    tunable: Optional[List[str]] = TUNABLE,
    seed: int = SEED,
    json_out: bool = JSON,
) -> None:
    """schbench (its default mode with -L) on a simulated machine; prints its report."""
    from .toolfmt import schbench_text

    params = {"message_threads": message_threads, "cache_footprint_kb": cache_footprint, "operations": operations,
              "sleep_usec": sleep_usec}
    if threads is not None:
        params["threads"] = threads
    with errors():
        raw = _run("schbench", params, {"duration_s": runtime}, machine, profile, feature, tunable, seed, json_out)
    if raw is not None:
        sys.stdout.write(schbench_text(raw))
