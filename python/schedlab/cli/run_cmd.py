"""`schedlab run`: a scenario once per seed, its figures as a table or JSON."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from .._signals import interrupt_status
from ..errors import InputError, RunInterrupted
from ..figures import figure_sort_key  # noqa: F401 (schedlab.cli.run_cmd.figure_sort_key, as before)
from ..limits import limits_json
from .base import Executor, TraceFormat, _cell, app, emit, errors, executor_choice, fail, out
from .flags import (
    check_duration,
    check_features,
    check_machine,
    check_profile,
    check_seeds,
    check_size,
    check_trace_suffix,
    check_tunables,
)


# ----------------------------------------------------------------------------- run
def _figure_rows(raws: list[dict]) -> list[tuple[str, list]]:
    """(label, per-seed values) for the figures worth a glance, workload first, then the
    cpu.stat of groups with a quota."""
    from ..results import bandwidth_figures

    rows: list[tuple[str, list]] = []
    for section in ("workload", "summary"):
        keys = sorted(dict.fromkeys(k for r in raws for k in r.get(section, {})), key=figure_sort_key)
        for k in keys:
            rows.append((f"{section}.{k}", [r.get(section, {}).get(k) for r in raws]))
        if section == "workload":
            # cpu.stat of every group with a quota (and usage against it), after the workload.
            per_run = [bandwidth_figures(r) for r in raws]
            for name in dict.fromkeys(n for f in per_run for n in f):
                for k in dict.fromkeys(k for f in per_run for k in f.get(name, {})):
                    rows.append((f"group.{name}.{k}", [f.get(name, {}).get(k) for f in per_run]))
            from ..figures import latency_figures, rate_figures  # latency p50/p99 (µs), rates (/s)

            lat = [{**latency_figures(r), **rate_figures(r)} for r in raws]
            for k in dict.fromkeys(k for f in lat for k in f if k.endswith((".p50_us", ".p99_us", ".p50_per_s"))):
                rows.append((k, [f.get(k) for f in lat]))
    for k in ("events", "sim_ns", "stopped_by"):
        rows.append((f"engine.{k}", [r.get("engine", {}).get(k) for r in raws]))
    return rows


def _all_zero(vals: list) -> bool:
    """A counter the run did not use: 0 in every seed (text and missing values never are)."""
    return bool(vals) and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0 for v in vals)


def _task_rows(raw: dict) -> list[tuple]:
    """perf sched latency's columns from a RunResult's per-task figures: (task, runtime ms,
    switches, wakeups, average delay ms, migrations), the longest average delay first as
    perf sorts them (its default order: avg, max, switch, runtime). The result keeps no
    per-task delay histogram, so the average is the task's runnable wait over its
    switches (perf's total delay over its scheduling-in count) and there is no max."""
    rows = []
    for t in raw.get("tasks", []):
        switches = int(t.get("nr_switches", 0))
        avg_ms = t.get("wait_ns", 0) / switches / 1e6 if switches else 0.0
        rows.append((f"{t.get('name')}:{t.get('pid')}", t.get("run_ns", 0) / 1e6, switches, int(t.get("nr_wakeups", 0)),
                     avg_ms, int(t.get("nr_migrations", 0))))
    rows.sort(key=lambda r: (-r[4], -r[2], -r[1]))
    return rows


def _print_tasks(raws: list[dict]) -> None:
    for raw in raws:
        t = Table(title=f"tasks, seed {raw.get('seed')} (as perf sched latency)", title_justify="left", show_edge=False)
        for c in ("task", "runtime ms", "switches", "wakeups", "avg delay ms", "migrations"):
            t.add_column(c, justify="left" if c == "task" else "right", no_wrap=True)
        rows = _task_rows(raw)
        for name, run_ms, sw, wk, avg, mig in rows:
            t.add_row(escape(name), f"{run_ms:.3f}", f"{sw:,}", f"{wk:,}", f"{avg:.3f}", f"{mig:,}")
        if not rows:
            t.caption = "no per-task figures in this result"
        emit(t)


def _print_run(results, traces: list[str | None], overrides: dict, show_all: bool = False,
               tasks: bool = False) -> None:
    from ..reproduce.compare import mean_std

    raws = [r.raw for r in results]
    first = raws[0]
    k = first.get("kernel", {})
    v = k.get("version", {})
    changed = ", ".join(f"{n}" if on else f"NO_{n}" for n, on in overrides.items()) or "none (profile defaults)"
    out.print(Panel.fit(
        f"[bold]{first.get('scenario') or '(unnamed)'}[/] on [bold]{first.get('machine')}[/] "
        f"({first.get('nr_cpus')} CPUs), kernel profile {v.get('major')}.{v.get('minor')} "
        f"({str(k.get('policy', '')).upper()})\nfeature overrides: {changed}",
        title="schedlab run"))
    several = len(raws) > 1
    t = Table(show_edge=False)
    t.add_column("figure", no_wrap=True)
    show_seeds = len(raws) <= 6
    if show_seeds:
        for r in raws:
            t.add_column(f"seed {r.get('seed')}", justify="right")
    if several:
        t.add_column("mean ± std", justify="right")
    hidden = 0
    for label, vals in _figure_rows(raws):
        if not show_all and _all_zero(vals):
            hidden += 1
            continue
        cells = [_cell(x) for x in vals] if show_seeds else []
        if several:
            nums = [float(x) for x in vals if isinstance(x, (int, float)) and not isinstance(x, bool)]
            m, s = mean_std(nums)
            from ..reproduce.report import fmt

            cells.append(f"{fmt(m)} ± {fmt(s, m)}" if m is not None else "")
        t.add_row(label, *cells)
    emit(t)
    if hidden:
        out.print(f"({hidden} figures are 0 in every seed, mechanisms this run does not use: --all shows them)")
    if tasks:
        _print_tasks(raws)
    for p in traces:
        if p:
            if p.endswith((".json", ".pftrace")):
                out.print(f"trace written to [bold]{p}[/] (open it at https://ui.perfetto.dev)")
            elif p.endswith(".dat"):
                out.print(f"trace written to [bold]{p}[/] (open it with `trace-cmd report {p}` or `kernelshark {p}`)")
            else:
                out.print(f"trace written to [bold]{p}[/]")


def _rtapp_log_basename(scenario: str) -> str:
    """The rt-app file's ``global.log_basename`` (rt-app's default: "rt-app")."""
    import re

    if scenario.endswith(".json") and Path(scenario).is_file():
        m = re.search(r'"log_basename"\s*:\s*"([^"/]+)"', Path(scenario).read_text(encoding="utf-8", errors="replace"))
        if m:
            return m.group(1)
    return "rt-app"


def _write_rtapp_logs(res, directory: Path, basename: str) -> None:
    from ..interchange import write_rtapp_logs

    files = write_rtapp_logs(res, directory, basename)
    if files:
        sys.stderr.write(f"rt-app logs: {len(files)} file(s) in {directory}\n")
    else:
        sys.stderr.write(f"warning: no task marks rt-app phases (only an rt-app file's tasks do): nothing written to {directory}\n")


@app.command()
def run(
    scenario: str = typer.Argument(..., help="Scenario file (.toml or .json), or - for standard input.", show_default=False),
    seed: list[int] | None = typer.Option(None, "--seed", "-s", min=0, max=2**64 - 1, callback=check_seeds, help="Seed to run (repeatable). Default: the scenario's \\[run] seeds."),
    json_out: bool = typer.Option(False, "--json", help="Print the RunResult JSON (a list if several seeds); see docs/schema.md."),
    trace: Path | None = typer.Option(None, "--trace", help="Write a trace here (several seeds: '.seedN' is added, or use {seed})."),
    trace_format: TraceFormat | None = typer.Option(None, "--trace-format", help="perfetto (protobuf, opens in ui.perfetto.dev and trace_processor), json (Chrome JSON, small traces), ftrace (tracefs text, ns timestamps), perf (perf script text) trace-cmd (trace.dat for trace-cmd report and KernelShark) or parquet (a directory of switch, wakeup and idle tables for DuckDB or pandas: runs whose text trace would be huge). Default: from the file's suffix (.json, .txt, .perf.txt, .dat, .parquet), else perfetto.", show_default=False),
    workers: int | None = typer.Option(None, "--workers", "-j", min=1, help="Parallel runs (default: CPUs)."),
    executor: Executor = typer.Option(Executor.process, "--executor", "-e", help="How seeds run in parallel."),
    backend: Executor | None = typer.Option(None, "--backend", hidden=True, help="Deprecated name of --executor."),
    wall_time: bool = typer.Option(False, "--wall-time", help="Keep engine.wall_ns in --json output (it differs between runs)."),
    plot: Path | None = typer.Option(None, "--plot", help="Also write plots here: timeline, latency CDFs, throttling, idle states (the timeline's trace is kept only with --trace)."),
    show_all: bool = typer.Option(False, "--all", help="Show every figure, those 0 in every seed too (counters of mechanisms the run does not use)."),
    tasks: bool = typer.Option(False, "--tasks", help="Also print a table per seed of every task, perf sched latency's columns: runtime, switches, wakeups, average delay, migrations."),
    machine: str | None = typer.Option(None, "--machine", "-m", callback=check_machine, help="Run on this machine instead of the scenario's: a preset, topo(S,L,C,T) or host (an rt-app file without one: a synthetic 8-CPU machine).", show_default=False),
    max_events: int | None = typer.Option(None, "--max-events", min=1, help="Stop each run after this many events (and at the scenario's run.max_events)."),
    max_sim_time: str | None = typer.Option(None, "--max-sim-time", callback=check_duration, help="Stop each run at this simulated time (e.g. 2s, 500ms)."),
    max_wall_time: str | None = typer.Option(None, "--max-wall-time", callback=check_duration, help="Stop each run after this much real time (e.g. 30s, 5min)."),
    max_memory: str | None = typer.Option(None, "--max-memory", callback=check_size, help="Memory a run may use (e.g. 2GiB); default: what the machine has available. A scenario estimated above it is refused."),
    set_: list[str] | None = typer.Option(None, "--set", help="KEY=VALUE: change the scenario by dotted path (repeatable), e.g. --set tasks.worker.count=8 --set kernel.tunables.hz=250.", show_default=False),
    profile: str | None = typer.Option(None, "--profile", callback=check_profile, help="Kernel profile (e.g. 6.5), as --set kernel.profile=6.5.", show_default=False),
    feature: list[str] | None = typer.Option(None, "--feature", callback=check_features, help="NAME, NAME=1 or NAME=0 (repeatable), as --set kernel.features.NAME=true.", show_default=False),
    tunable: list[str] | None = typer.Option(None, "--tunable", callback=check_tunables, help="NAME=VALUE (repeatable), as --set kernel.tunables.NAME=VALUE.", show_default=False),
    scx: str | None = typer.Option(None, "--scx", help="Load this sched_ext scheduler into the ext class (schedlab scx list; kernel 6.12+), as --set kernel.sched_ext.scheduler=NAME.", show_default=False),
    rtapp_logs: Path | None = typer.Option(None, "--rtapp-logs", help="Write rt-app's per-activation logs here (an rt-app file's tasks: <log_basename>-<task>.log, a line per pass of a phase; several seeds: one directory each).", show_default=False),
) -> None:
    """Run a scenario file (TOML, JSON, or an rt-app JSON workload), once per seed.

    A run that stops short of what the scenario asked (a limit, a deadlock) prints what
    it has, warns and exits with status 3; Ctrl-C, SIGTERM and SIGHUP stop it the same
    way, with status 130, 143 and 129."""
    from .._progress import DelayedProgress, RunProgress
    from ..api import run as run_one
    from ..parallel import run_many
    from ..results import ResultSet
    from ..scenario import load_scenario

    interrupted = False
    check_trace_suffix(trace, trace_format)
    with errors():
        from ..limits import format_bytes, parse_bytes
        from ..scenario import LARGE_INPUT_BYTES, input_size

        size = input_size(scenario) or 0
        if size >= LARGE_INPUT_BYTES:  # a large file parses for a while: say so first
            sys.stderr.write(f"note: reading {scenario} ({format_bytes(size)}): about a second per 2 MiB\n")
            sys.stderr.flush()
        with DelayedProgress(f"reading {scenario}", total=None, units=False):
            s = load_scenario(scenario, machine=machine, max_memory=parse_bytes("max_memory", max_memory))
        changes = run_changes(s.doc, set_, profile, feature, tunable)
        if scx is not None:
            changes = {"kernel.sched_ext.scheduler": scx, **changes}
        if changes:
            s = s.with_changes(changes)
        for n in s.notes:
            sys.stderr.write(f"note: {n}\n")
        seeds = list(seed) if seed else s.seeds
        fmt = trace_format.value if trace_format is not None else None
        trace_arg = trace if trace is not None else None
        limits = dict(max_events=max_events, max_sim_time=max_sim_time, max_wall_time=max_wall_time,
                      max_memory=max_memory)
        limits_json(**limits)  # a bad value is a usage error before anything runs
        try:
            if len(seeds) == 1 or rtapp_logs is not None:
                # With logs, seeds run one after another: each writes its own directory.
                runs = []
                for sd in seeds:
                    with RunProgress(f"{s.name or 'run'} seed {sd}") as bar:
                        runs.append(run_one(s, sd, trace=trace_arg, trace_format=fmt, progress=bar,
                                            rtapp_logs=rtapp_logs is not None, **limits))
                    if rtapp_logs is not None:
                        _write_rtapp_logs(runs[-1], rtapp_logs if len(seeds) == 1 else rtapp_logs / f"seed{sd}",
                                          _rtapp_log_basename(scenario))
                res = ResultSet(runs)
            else:
                with DelayedProgress(f"{s.name or 'run'}: {len(seeds)} seeds", total=len(seeds)) as bar:
                    res = run_many(s, seeds, workers=workers, backend=executor_choice(executor, backend),
                                   trace=trace_arg, trace_format=fmt, on_done=bar.advance, **limits)
        except RunInterrupted as e:
            interrupted = True
            res = e.results
            if len(res) == 0:
                fail("interrupted before any run had a result", interrupt_status())
    partial = False
    for r in res:
        warning = _partial_warning(r.seed, r.raw.get("engine", {}))
        if warning:
            partial = True
            sys.stderr.write(f"warning: {warning}; the figures cover that part only\n")
        for w in r.raw.get("warnings", []):
            sys.stderr.write(f"warning: seed {r.seed}: {w}\n")
    if interrupted:
        sys.stderr.write(f"warning: interrupted: {len(res)} of {len(seeds)} seeds have a (partial) result\n")
    if plot is not None:
        from .studies_cmd import run_plot

        with errors():
            run_plot(plot, s, res, res[0].trace_path)
    if json_out:
        if len(res) == 1:
            sys.stdout.write(res[0].to_json(wall_time=wall_time, indent=2) + "\n")
        else:
            sys.stdout.write(res.to_json(wall_time=wall_time, indent=2) + "\n")
    else:
        _print_run(res, [r.trace_path for r in res], s.doc.get("kernel", {}).get("features", {}), show_all=show_all,
                   tasks=tasks)
    if interrupted:
        raise typer.Exit(interrupt_status())
    if partial:
        raise typer.Exit(3)  # a partial result: printed, but not what the scenario asked for


def run_changes(doc: dict, sets: list[str] | None, profile: str | None, features: list[str] | None,
                tunables: list[str] | None) -> dict:
    """The dotted-path changes of `run`'s --set, --profile, --feature and --tunable (the
    flags `compare`, `hackbench` and `schbench` take), in that order of precedence."""
    from ..changes import parse_assignment

    changes: dict = {}
    if profile is not None:
        changes["kernel.profile"] = profile
    for f in features or []:
        name, _, val = f.partition("=")
        if not name.strip() or val not in ("", "0", "1", "true", "false"):
            raise InputError(f"--feature {f}: expected NAME, NAME=1 or NAME=0")
        changes[f"kernel.features.{name.strip()}"] = val in ("", "1", "true")
    for t in tunables or []:
        name, eq, _ = t.partition("=")
        if not eq or not name.strip():
            raise InputError(f"--tunable {t}: expected NAME=VALUE")
        k, v = parse_assignment(f"kernel.tunables.{name.strip()}={t.split('=', 1)[1]}", doc)
        changes[k] = v
    for text in sets or []:
        k, v = parse_assignment(text, doc)
        changes[k] = v
    return changes


def _partial_warning(seed: int, eng: dict) -> str | None:
    """What a run that stopped short says about it (None for a whole run)."""
    at = f"{eng.get('sim_ns', 0) / 1e9:.6g} s simulated, {eng.get('events', 0):,} events"
    return {
        "max_events": f"seed {seed} stopped at its event limit ({at})",
        "max_sim_time": f"seed {seed} stopped at its simulated-time limit ({at})",
        "max_wall_time": f"seed {seed} stopped at its wall-time limit ({at})",
        "max_memory": f"seed {seed} stopped at its memory limit ({at})",
        "deadlock": f"seed {seed} deadlocked at {eng.get('deadlock_ns', eng.get('sim_ns', 0)) / 1e9:.6g} s: every task left is blocked "
                    "and nothing can wake it" + (f" ({'; '.join(eng['blocked'])})" if eng.get("blocked") else ""),
        "interrupted": f"seed {seed} was interrupted ({at})",
    }.get(eng.get("stopped_by", ""))


