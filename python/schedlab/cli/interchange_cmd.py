"""``schedlab export-rt-app``, ``schedlab trace-info``, ``schedlab replay`` and
``schedlab sched latency|timehist|map``: workloads
and traces in the formats other tools speak. Registered on the ``app`` of
:mod:`schedlab.cli.base` (imported by :mod:`schedlab.cli.entry`); the work is in :mod:`schedlab.interchange`.
rt-app files run with plain ``schedlab run workload.json``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.table import Table

from .base import TraceFormat, app, errors, out
from .flags import check_machine, check_profile

__all__ = ["export_rt_app", "trace_info", "replay", "sched_latency", "sched_timehist", "sched_map"]


@app.command("export-rt-app")
def export_rt_app(
    scenario: str = typer.Argument(..., help="Scenario file (.toml or .json).", show_default=False),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write here (default: standard output)."),
    seed: int | None = typer.Option(None, "--seed", "-s", min=0, help="Seed of a generator's tasks (default: the scenario's first)."),
) -> None:
    """Write a scenario's tasks as rt-app JSON, to run the workload on real hardware."""
    from ..interchange import to_rt_app

    with errors():
        doc, notes = to_rt_app(scenario, seed)
        text = json.dumps(doc, indent=2) + "\n"
        if output is None:
            sys.stdout.write(text)
        else:
            output.write_text(text, encoding="utf-8")
    for n in notes:
        sys.stderr.write(f"note: {n}\n")
    if output is not None:
        out.print(f"rt-app workload written to [bold]{output}[/] (run it with `rt-app {output}`)")


def _print_warnings(w: dict) -> None:
    names = {"unknown_pids": "events of pids never seen running", "missing_wakeups": "switch-ins from a sleep with no wakeup seen",
             "cut_runs": "runs already going when the trace starts", "lost_events": "events the tracer lost",
             "inconsistent_switches": "switches whose prev was not the CPU's task"}
    for k, label in names.items():
        if w.get(k):
            sys.stderr.write(f"warning: {w[k]:,} {label}\n")


@app.command("trace-info")
def trace_info(
    trace: Path = typer.Argument(..., help="ftrace text (tracefs `trace`, `trace-cmd report`, -R too) or `perf script` text.", show_default=False),
    json_out: bool = typer.Option(False, "--json", help="Print the timelines as JSON."),
    top: int = typer.Option(40, "--top", min=1, help="Tasks shown (by CPU time)."),
) -> None:
    """Per-task timelines of a text trace: CPU time, sleeps, who woke whom, waits."""
    from dataclasses import asdict

    from ..interchange import read_trace

    with errors():
        tl = read_trace(trace)
    if json_out:
        sys.stdout.write(json.dumps(asdict(tl), indent=1) + "\n")
        return
    comm = {t["pid"]: t["comm"] for t in tl.tasks}
    t = Table(title=f"{trace}: {tl.flavour} text, {len(tl.tasks)} tasks, {tl.nr_cpus} CPUs, "
                    f"{(tl.end_ns - tl.start_ns) / 1e6:,.3f} ms", title_justify="left", show_edge=False)
    for c in ("pid", "comm", "runs", "run ms", "sleeps", "sleep ms", "wait ms", "woken most by"):
        t.add_column(c, justify="left" if c in ("comm", "woken most by") else "right")
    for task in sorted(tl.tasks, key=lambda x: -x["run_ns"])[:top]:
        wakers: dict = {}
        for _, _, w in task["sleeps"]:
            if w is not None:
                wakers[w] = wakers.get(w, 0) + 1
        best = max(wakers.items(), key=lambda kv: kv[1]) if wakers else None
        t.add_row(str(task["pid"]), task["comm"], f"{len(task['runs']):,}", f"{task['run_ns'] / 1e6:,.3f}",
                  f"{len(task['sleeps']):,}", f"{task['sleep_ns'] / 1e6:,.3f}", f"{task['wait_ns'] / 1e6:,.3f}",
                  f"{comm.get(best[0], '?')}-{best[0]} ({best[1]})" if best else "")
    out.print(t)
    _print_warnings(tl.warnings)


@app.command()
def replay(
    trace: Path = typer.Argument(..., help="ftrace or `perf script` text to replay.", show_default=False),
    machine: str = typer.Option(..., "--machine", "-m", callback=check_machine, help="Machine to replay on: a preset, topo(S,L,C,T) or host."),
    from_machine: str | None = typer.Option(None, "--from-machine", callback=check_machine, help="Machine the trace was taken on (its CPU capacities scale the bursts; default all 1024)."),
    profile: str | None = typer.Option(None, "--profile", "-p", callback=check_profile, help="Kernel profile of the replay (default 6.6)."),
    seed: int = typer.Option(1, "--seed", "-s", min=0, help="Seed."),
    save: Path | None = typer.Option(None, "--save", help="Also write the replay scenario here (JSON)."),
    json_out: bool = typer.Option(False, "--json", help="Print the RunResult JSON."),
    trace_out: Path | None = typer.Option(None, "--trace", help="Write the replay's own trace here."),
    trace_format: TraceFormat | None = typer.Option(None, "--trace-format", help="As for `schedlab run`.", show_default=False),
) -> None:
    """Replay a trace's tasks as a scenario on another machine or kernel profile."""
    from ..api import run as run_one
    from ..interchange import replay_trace
    from ..results import ResultSet
    from .run_cmd import _print_run

    with errors():
        s, warnings = replay_trace(trace, machine, source_machine=from_machine, profile=profile)
        _print_warnings(warnings)
        if save is not None:
            save.write_text(json.dumps(s.doc, indent=1) + "\n", encoding="utf-8")
        res = run_one(s, seed, trace=trace_out, trace_format=trace_format.value if trace_format else None)
    if json_out:
        sys.stdout.write(res.to_json(indent=2) + "\n")
        return
    _print_run(ResultSet([res]), [res.trace_path], {})
    if save is not None:
        out.print(f"replay scenario written to [bold]{save}[/]")


sched_app = typer.Typer(help="perf sched's reports, from a trace or a run.", no_args_is_help=True)
app.add_typer(sched_app, name="sched")

SCENARIO_SUFFIXES = (".toml", ".json")


TARGET_HELP = "A text trace (as for trace-info), or a scenario (.toml, .json) to run and trace."
SEED_HELP = "Seed of the run (a scenario)."


def _timelines(target: Path, seed: int):
    """The timelines of a text trace, or of a scenario's run (traced as ftrace text)."""
    import tempfile

    from ..api import run as run_one
    from ..interchange import read_trace

    if not target.name.lower().endswith(SCENARIO_SUFFIXES):
        return read_trace(target)
    with tempfile.TemporaryDirectory(prefix="schedlab-sched-") as d:
        trace = Path(d) / "run.trace.txt"
        run_one(str(target), seed, trace=trace, trace_format="ftrace")
        return read_trace(trace)


@sched_app.command("latency")
def sched_latency(
    target: Path = typer.Argument(..., help=TARGET_HELP, show_default=False),
    seed: int = typer.Option(1, "--seed", "-s", min=0, help=SEED_HELP),
) -> None:
    """Per-task CPU time and waits for a CPU, in `perf sched latency -p`'s table."""
    from ..interchange import format_sched_latency
    from ..interchange import sched_latency as latency_rows

    with errors():
        tl = _timelines(target, seed)
    sys.stdout.write(format_sched_latency(latency_rows(tl)))
    _print_warnings(tl.warnings)


@sched_app.command("timehist")
def sched_timehist(
    target: Path = typer.Argument(..., help=TARGET_HELP, show_default=False),
    seed: int = typer.Option(1, "--seed", "-s", min=0, help=SEED_HELP),
) -> None:
    """A line per context switch: the task leaving, its wait, scheduling delay and run time, as `perf sched timehist`."""
    from ..interchange import sched_timehist as timehist

    with errors():
        tl = _timelines(target, seed)
    sys.stdout.write(timehist(tl))
    _print_warnings(tl.warnings)


@sched_app.command("map")
def sched_map(
    target: Path = typer.Argument(..., help=TARGET_HELP, show_default=False),
    seed: int = typer.Option(1, "--seed", "-s", min=0, help=SEED_HELP),
    compact: bool = typer.Option(False, "--compact", help="Only the CPUs that switched so far, in the order they first did."),
) -> None:
    """A line per context switch with what every CPU runs, as `perf sched map`."""
    from ..interchange import sched_map as cpu_map

    with errors():
        tl = _timelines(target, seed)
    sys.stdout.write(cpu_map(tl, compact=compact))
    _print_warnings(tl.warnings)
