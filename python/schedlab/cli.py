"""The ``schedlab`` command (typer + rich). Orchestration only: loading, running and
simulating happen in the library; this module parses arguments, shows progress and
prints tables or JSON.

Exit status: 0 success; 2 bad input (scenario file, experiment or machine name,
option), printed as ONE line ``error: ...`` on stderr with no traceback; 3 a run hit its
limit; 70 an internal error (a schedlab bug); 130 interrupted (Ctrl-C), 143 and 129 stopped by
SIGTERM and SIGHUP, which are handled as Ctrl-C is (:mod:`schedlab._signals`).
"""

from __future__ import annotations

import contextlib
import enum
import json
import sys
from pathlib import Path
from typing import Iterator, List, NoReturn, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from . import _core
from .errors import InternalError, RunInterrupted, ScenarioError, SchedlabError, SimulationLimitError
from ._signals import interrupt_status
from .limits import limits_json

app = typer.Typer(
    name="schedlab",
    help="Deterministic discrete-event simulator of the Linux kernel's per-CPU scheduling machinery.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Piped or captured output is not squeezed to 80 columns (and emit() strips the padding).
out = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False)


def emit(renderable) -> None:
    """Prints a table: as rich draws it on a terminal; piped or captured, without the
    trailing blanks that pad every line to the console's width."""
    if out.is_terminal:
        out.print(renderable)
        return
    with out.capture() as cap:
        out.print(renderable)
    text = "\n".join(line.rstrip() for line in cap.get().split("\n"))
    out.file.write(text if text.endswith("\n") else text + "\n")
    out.file.flush()


class TraceFormat(str, enum.Enum):
    perfetto = "perfetto"
    json = "json"
    ftrace = "ftrace"
    perf = "perf"


class Backend(str, enum.Enum):
    process = "process"
    thread = "thread"
    ray = "ray"
    serial = "serial"


def fail(message: str, code: int = 2) -> NoReturn:
    """Prints one line ``error: MESSAGE`` on stderr and exits with ``code``."""
    one_line = " ".join(str(message).split("\n")).strip()
    sys.stderr.write(f"error: {one_line}\n")
    sys.stderr.flush()
    raise typer.Exit(code)


@contextlib.contextmanager
def errors() -> Iterator[None]:
    """Turns schedlab's errors and bad arguments into one line and an exit status."""
    try:
        yield
    except ScenarioError as e:
        fail(str(e), 2)
    except SimulationLimitError as e:
        fail(str(e), 3)
    except InternalError as e:
        fail(str(e), 70)
    except SchedlabError as e:  # pragma: no cover - every subclass is listed above
        fail(str(e), 70)
    except KeyError as e:
        fail(e.args[0] if e.args else str(e), 2)
    except ValueError as e:
        fail(str(e), 2)
    except OSError as e:
        fail(f"{e.filename or ''}: {e.strerror or e}".lstrip(": "), 2)
    except KeyboardInterrupt:
        fail("interrupted", interrupt_status())


def _version(value: bool) -> None:
    if value:
        from . import __version__

        out.print(f"schedlab {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """schedlab: what does this kernel mechanism do to my workload on that machine?"""


# ----------------------------------------------------------------------------- run
def _figure_rows(raws: list[dict]) -> list[tuple[str, list]]:
    """(label, per-seed values) for the figures worth a glance, workload first, then the
    cpu.stat of groups with a quota."""
    from .results import bandwidth_figures

    rows: list[tuple[str, list]] = []
    for section in ("workload", "summary"):
        keys = list(dict.fromkeys(k for r in raws for k in r.get(section, {})))
        for k in keys:
            rows.append((f"{section}.{k}", [r.get(section, {}).get(k) for r in raws]))
        if section == "workload":
            # cpu.stat of every group with a quota (and usage against it), after the workload.
            per_run = [bandwidth_figures(r) for r in raws]
            for name in dict.fromkeys(n for f in per_run for n in f):
                for k in dict.fromkeys(k for f in per_run for k in f.get(name, {})):
                    rows.append((f"group.{name}.{k}", [f.get(name, {}).get(k) for f in per_run]))
            from .figures import latency_figures, rate_figures  # latency p50/p99 (µs), rates (/s)

            lat = [{**latency_figures(r), **rate_figures(r)} for r in raws]
            for k in dict.fromkeys(k for f in lat for k in f if k.endswith((".p50_us", ".p99_us", ".p50_per_s"))):
                rows.append((k, [f.get(k) for f in lat]))
    for k in ("events", "sim_ns", "stopped_by"):
        rows.append((f"engine.{k}", [r.get("engine", {}).get(k) for r in raws]))
    return rows


def _cell(v) -> str:
    from .reproduce.report import fmt

    if isinstance(v, bool) or isinstance(v, str):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return fmt(v)


def _print_run(results, traces: list[Optional[str]], overrides: dict) -> None:
    from .reproduce.compare import mean_std

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
    for label, vals in _figure_rows(raws):
        cells = [_cell(x) for x in vals] if show_seeds else []
        if several:
            nums = [float(x) for x in vals if isinstance(x, (int, float)) and not isinstance(x, bool)]
            m, s = mean_std(nums)
            from .reproduce.report import fmt

            cells.append(f"{fmt(m)} ± {fmt(s, m)}" if m is not None else "")
        t.add_row(label, *cells)
    emit(t)
    for p in traces:
        if p:
            out.print(f"trace written to [bold]{p}[/] (open it at https://ui.perfetto.dev)"
                      if p.endswith((".json", ".pftrace")) else f"trace written to [bold]{p}[/]")


@app.command()
def run(
    scenario: str = typer.Argument(..., help="Scenario file (.toml or .json).", show_default=False),
    seed: Optional[List[int]] = typer.Option(None, "--seed", "-s", min=0, max=2**64 - 1, help="Seed to run (repeatable). Default: the scenario's \\[run] seeds."),
    json_out: bool = typer.Option(False, "--json", help="Print the RunResult JSON (a list if several seeds); see docs/schema.md."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="Write a trace here (several seeds: '.seedN' is added, or use {seed})."),
    trace_format: Optional[TraceFormat] = typer.Option(None, "--trace-format", help="perfetto (protobuf, opens in ui.perfetto.dev and trace_processor), json (Chrome JSON, small traces), ftrace (tracefs text, ns timestamps) or perf (perf script text). Default: from the file's suffix (.json, .txt, .perf.txt), else perfetto.", show_default=False),
    workers: Optional[int] = typer.Option(None, "--workers", "-j", min=1, help="Parallel runs (default: CPUs)."),
    backend: Backend = typer.Option(Backend.process, "--backend", help="How seeds run in parallel."),
    wall_time: bool = typer.Option(False, "--wall-time", help="Keep engine.wall_ns in --json output (it differs between runs)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also write plots here: timeline, latency CDFs, throttling, idle states."),
    machine: Optional[str] = typer.Option(None, "--machine", "-m", help="Run on this machine instead of the scenario's: a preset, topo(S,L,C,T) or host (an rt-app file without one: a synthetic 8-CPU machine).", show_default=False),
    max_events: Optional[int] = typer.Option(None, "--max-events", min=1, help="Stop each run after this many events (and at the scenario's run.max_events)."),
    max_sim_time: Optional[str] = typer.Option(None, "--max-sim-time", help="Stop each run at this simulated time (e.g. 2s, 500ms)."),
    max_wall_time: Optional[str] = typer.Option(None, "--max-wall-time", help="Stop each run after this much real time (e.g. 30s, 5min)."),
    max_memory: Optional[str] = typer.Option(None, "--max-memory", help="Memory a run may use (e.g. 2GiB); default: what the machine has available. A scenario estimated above it is refused."),
    set_: Optional[List[str]] = typer.Option(None, "--set", help="KEY=VALUE: change the scenario by dotted path (repeatable), e.g. --set tasks.worker.count=8 --set kernel.tunables.hz=250.", show_default=False),
    profile: Optional[str] = typer.Option(None, "--profile", help="Kernel profile (e.g. 6.5), as --set kernel.profile=6.5.", show_default=False),
    feature: Optional[List[str]] = typer.Option(None, "--feature", help="NAME, NAME=1 or NAME=0 (repeatable), as --set kernel.features.NAME=true.", show_default=False),
    tunable: Optional[List[str]] = typer.Option(None, "--tunable", help="NAME=VALUE (repeatable), as --set kernel.tunables.NAME=VALUE.", show_default=False),
) -> None:
    """Run a scenario file (TOML, JSON, or an rt-app JSON workload), once per seed.

    A run that stops short of what the scenario asked (a limit, a deadlock) prints what
    it has, warns and exits with status 3; Ctrl-C, SIGTERM and SIGHUP stop it the same
    way, with status 130, 143 and 129."""
    from ._progress import DelayedProgress, RunProgress
    from .api import run as run_one
    from .parallel import run_many
    from .results import ResultSet
    from .scenario import load_scenario

    interrupted = False
    with errors():
        from .limits import format_bytes, parse_bytes
        from .scenario import LARGE_INPUT_BYTES, input_size

        size = input_size(scenario) or 0
        if size >= LARGE_INPUT_BYTES:  # a large file parses for a while: say so first
            sys.stderr.write(f"note: reading {scenario} ({format_bytes(size)}): about a second per 2 MiB\n")
            sys.stderr.flush()
        with DelayedProgress(f"reading {scenario}", total=None, units=False):
            s = load_scenario(scenario, machine=machine, max_memory=parse_bytes("max_memory", max_memory))
        changes = run_changes(s.doc, set_, profile, feature, tunable)
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
            if len(seeds) == 1:
                with RunProgress(f"{s.name or 'run'} seed {seeds[0]}") as bar:
                    res = ResultSet([run_one(s, seeds[0], trace=trace_arg, trace_format=fmt, progress=bar, **limits)])
            else:
                with DelayedProgress(f"{s.name or 'run'}: {len(seeds)} seeds", total=len(seeds)) as bar:
                    res = run_many(s, seeds, workers=workers, backend=backend.value, trace=trace_arg,
                                   trace_format=fmt, on_done=bar.advance, **limits)
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
        from .cli_studies import run_plot

        with errors():
            run_plot(plot, s, res, res[0].trace_path)
    if json_out:
        if len(res) == 1:
            sys.stdout.write(res[0].to_json(wall_time=wall_time, indent=2) + "\n")
        else:
            sys.stdout.write(res.to_json(wall_time=wall_time, indent=2) + "\n")
    else:
        _print_run(res, [r.trace_path for r in res], s.doc.get("kernel", {}).get("features", {}))
    if interrupted:
        raise typer.Exit(interrupt_status())
    if partial:
        raise typer.Exit(3)  # a partial result: printed, but not what the scenario asked for


def run_changes(doc: dict, sets: Optional[List[str]], profile: Optional[str], features: Optional[List[str]],
                tunables: Optional[List[str]]) -> dict:
    """The dotted-path changes of `run`'s --set, --profile, --feature and --tunable (the
    flags `compare`, `hackbench` and `schbench` take), in that order of precedence."""
    from .changes import parse_assignment

    changes: dict = {}
    if profile is not None:
        changes["kernel.profile"] = profile
    for f in features or []:
        name, _, val = f.partition("=")
        if not name.strip() or val not in ("", "0", "1", "true", "false"):
            raise ValueError(f"--feature {f}: expected NAME, NAME=1 or NAME=0")
        changes[f"kernel.features.{name.strip()}"] = val in ("", "1", "true")
    for t in tunables or []:
        name, eq, _ = t.partition("=")
        if not eq or not name.strip():
            raise ValueError(f"--tunable {t}: expected NAME=VALUE")
        k, v = parse_assignment(f"kernel.tunables.{name.strip()}={t.split('=', 1)[1]}", doc)
        changes[k] = v
    for text in sets or []:
        k, v = parse_assignment(text, doc)
        changes[k] = v
    return changes


def _partial_warning(seed: int, eng: dict) -> Optional[str]:
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


# ------------------------------------------------------------------------ machines
def _flatten(d: dict, prefix: str = "") -> list[tuple[str, object]]:
    items: list[tuple[str, object]] = []
    for k, v in d.items():
        if isinstance(v, dict):
            items += _flatten(v, f"{prefix}{k}.")
        else:
            items.append((f"{prefix}{k}", v))
    return items


@app.command()
def machines(
    name: Optional[str] = typer.Argument(None, help="A preset name, or topo(SOCKETS,LLCS,CORES,SMT).", show_default=False),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the machine presets, or describe one (topology, costs, sched domains)."""
    with errors():
        if name is None:
            doc = json.loads(_core.machines())
            if json_out:
                sys.stdout.write(json.dumps(doc, indent=2) + "\n")
                return
            t = Table(title="machine presets", title_justify="left")
            for c in ("name", "CPUs", "arch", "topology", "description"):
                t.add_column(c, overflow="fold")
            for m in doc:
                t.add_row(m["name"], str(m["nr_cpus"]), m["arch"], m["summary"], m["description"])
            emit(t)
            if not doc:
                out.print("(no presets built into this version)")
            out.print("Synthetic machines: machine.topo = { sockets, llcs, cores, smt } in a scenario, "
                      "or `schedlab machines 'topo(1,2,8,2)'`.")
            return
        m = json.loads(_core.machine(name))
    if json_out:
        sys.stdout.write(json.dumps(m, indent=2) + "\n")
        return
    kernel = m.get("host_kernel")
    kernel_line = (f"\nkernel {kernel['release']}: profile {kernel['profile']}, HZ {kernel['hz'] or 'unknown'} "
                   f"(a host scenario's defaults)") if kernel else ""
    out.print(Panel.fit(f"[bold]{m['name']}[/]: {m['description']}\n{m['summary']}{kernel_line}", title="machine"))
    t = Table(title="spans", title_justify="left", show_edge=False)
    t.add_column("level")
    t.add_column("count", justify="right")
    t.add_column("CPUs of each", overflow="fold")
    for level in ("nodes", "llcs", "cores"):
        spans = m.get(level, [])
        shown = spans if len(spans) <= 16 else spans[:16] + [f"... {len(spans) - 16} more"]
        t.add_row(level, str(len(spans)), "  ".join(shown))
    emit(t)
    c0 = m["cpus"][0] if m.get("cpus") else {}
    types = sorted({(c.get("core_type"), c.get("capacity"), c.get("freq_mhz")) for c in m.get("cpus", [])}, key=str)
    out.print("core types: " + ", ".join(f"{ct} (capacity {cap}, {mhz} MHz)" for ct, cap, mhz in types) if c0 else "")
    t = Table(title="sched domains of CPU 0", title_justify="left", show_edge=False)
    for c in ("level", "span", "groups", "interval ms", "imbalance %", "flags"):
        t.add_column(c)
    for d in m.get("domains_cpu0", []):
        groups = d.get("groups", [])
        gtext = " | ".join(groups) if len(groups) <= 8 else f"{len(groups)} groups"
        t.add_row(str(d["level"]), d["span"], gtext, f"{d['min_interval_ms']}-{d['max_interval_ms']}",
                  str(d["imbalance_pct"]), " ".join(f.removeprefix("SD_") for f in d.get("flags", [])))
    emit(t)
    t = Table(title="cost table (override with \\[machine.cost] in a scenario)", title_justify="left", show_edge=False)
    for c, j in (("field", "left"), ("value", "right"), ("kind", "left"), ("band", "right"), ("source", "left")):
        t.add_column(c, justify=j, overflow="fold")
    sources = m.get("cost_sources", {})
    for k, v in _flatten(m.get("cost", {})):
        p = sources.get(k, {})
        band = f"{_cell(p['low'])}-{_cell(p['high'])}" if p and p["low"] != p["high"] else ""
        t.add_row(k, _cell(v), p.get("kind", ""), band, escape(p.get("source", "")))
    emit(t)
    for table in _idle_state_tables(m):
        emit(table)


def _idle_state_tables(m: dict) -> list[Table]:
    """One table per idle driver: each state's declared figures (what the governors
    read) beside the wake a wakeup pays, with its kind, band and source."""
    us = lambda ns: f"{ns / 1000:g}"
    tables = []
    for i, drv in enumerate(m.get("idle_drivers", [])):
        types = sorted({c["core_type"] for c, d in zip(m.get("cpus", []), m.get("cpu_idle_driver", [])) if d == i})
        t = Table(title=f"idle states of {', '.join(types)} ({drv['name']}; override cpuidle.STATE.FIELD in \\[machine.cost])",
                  title_justify="left", show_edge=False)
        for c in ("state", "declared exit/residency us", "wake us", "kind", "band us", "source (wake; declared)"):
            t.add_column(c, overflow="fold")
        for s in drv["states"]:
            w, d = s["wake"], s["declared"]
            t.add_row(s["name"], f"{us(s['exit_latency_ns'])} / {us(s['target_residency_ns'])}", us(s["wake_ns"]),
                      w["kind"], f"{us(w['low'])}-{us(w['high'])}", escape(f"{w['source']}; {d['source']}"))
        tables.append(t)
        fd = drv["core_flush_delay"]
        lines = [f"core: the shallowest state its threads request; power-down after {us(drv['core_flush_delay_ns'])} us "
                 f"({fd['kind']}, {us(fd['low'])}-{us(fd['high'])} us: {escape(fd['source'])})"]
        if drv.get("package"):
            p = drv["package"]
            lines.append(f"package: {p['name']} once every core of the socket is down; "
                         f"{'flushes' if p['flushes_llc'] else 'keeps'} the LLC ({escape(p['source'])})")
        t.caption = "\n".join(lines)
        t.caption_justify = "left"
    return tables


# ------------------------------------------------------------------------ features
@app.command()
def features(
    profile: str = typer.Option("6.6", "--profile", "-p", help="Kernel version whose defaults to show."),
    arch: str = typer.Option("x86_64", "--arch", help="x86_64 or arm64."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the scheduler feature switches with their defaults for a kernel profile."""
    with errors():
        doc = json.loads(_core.features(profile, arch))
        kernel = json.loads(_core.kernel(profile, 8))
    if json_out:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    v = kernel["version"]
    t = Table(title=f"features, profile {v['major']}.{v['minor']} ({kernel['policy'].upper()}), {arch}",
              title_justify="left")
    t.add_column("feature")
    t.add_column("default", justify="center")
    t.add_column("what it selects", overflow="fold")
    for f in doc:
        t.add_row(f["name"], "[green]on[/]" if f["default"] else "[dim]off[/]", f["reason"])
    emit(t)
    out.print("Override in a scenario: [kernel] features = { SIS_NODE = true }")


# ----------------------------------------------------------------------- workloads
@app.command()
def workloads(
    name: Optional[str] = typer.Argument(None, help="A generator: show its parameters and their defaults.",
                                         show_default=False),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the workload generators (\\[workload] kind = "NAME" in a scenario), or one
    generator's parameters with their defaults."""
    with errors():
        doc = json.loads(_core.workloads())
        if name is not None:
            found = [g for g in doc if g["name"] == name]
            if not found:
                raise KeyError(f"unknown workload generator '{name}': expected one of {', '.join(g['name'] for g in doc)}")
            doc = found[0]
    if json_out:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    if name is not None:
        t = Table(title=f"{doc['name']}: {doc['description']}", title_justify="left")
        t.add_column("parameter", no_wrap=True)
        t.add_column("default")
        t.add_column("meaning")
        for p in doc["params"]:
            t.add_row(p["name"], p["default"], p["meaning"])
        emit(t)
        out.print(f'In a scenario: [workload] kind = "{doc["name"]}", params = {{ ... }}; durations as "10ms".',
                  markup=False)
        return
    t = Table(title="workload generators", title_justify="left")
    t.add_column("kind", no_wrap=True)
    t.add_column("what it models")
    for g in doc:
        t.add_row(g["name"], g["description"])
    emit(t)
    out.print("Parameters: schedlab workloads NAME; figures: the RunResult's workload section.")


# ----------------------------------------------------------------------- reproduce
def _split_experiment_options(words: List[str]) -> tuple[list[str], dict[str, str]]:
    """Separates experiment names from per-experiment options (``--delay-ms 10`` or
    ``--delay-ms=10``), which click leaves among the arguments."""
    names: list[str] = []
    opts: dict[str, str] = {}
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("--") and len(w) > 2:
            key, eq, value = w[2:].partition("=")
            if not eq:
                if i + 1 >= len(words):
                    raise ValueError(f"option --{key} needs a value")
                value = words[i + 1]
                i += 1
            opts[key.replace("-", "_")] = value
        elif w.startswith("-") and len(w) > 1 and not w[1:].replace(".", "").isdigit():
            raise ValueError(f"unknown option '{w}'")
        else:
            names.append(w)
        i += 1
    return names, opts


@app.command(context_settings={"ignore_unknown_options": True})
def reproduce(
    experiment: Optional[List[str]] = typer.Argument(
        None, help="Experiments to run in full, and their own options, e.g. `mm_cid --delay-ms 10` (`--list` shows "
                   "them). Default: the verdict: every published figure, simulated and judged, in one table.",
        show_default=False),
    all_: bool = typer.Option(False, "--all", help="Run every experiment in full, what-if grids included."),
    quick: bool = typer.Option(False, "--quick", help="Fewer seeds and shorter runs."),
    seeds: Optional[int] = typer.Option(None, "--seeds", "-n", min=1, help="Seeds per configuration (1..N)."),
    json_out: bool = typer.Option(False, "--json", help="Print the rows as JSON (docs/schema.md)."),
    out_dir: Optional[Path] = typer.Option(None, "--out", help="Also write the full report here: verdict.md, "
                                                               "Markdown tables, report.html, PNGs."),
    machine: Optional[str] = typer.Option(None, "--machine", "-m", help="Run on this preset instead of the experiments' own."),
    cost: Optional[List[str]] = typer.Option(
        None, "--cost", help="Override the machine's cost table in every run, KEY=NUMBER (repeatable; the fields "
                             "of \\[machine.cost], e.g. smt_slowdown=1.6 or cpuidle.C2.wake_us=40). Published figures "
                             "are still compared.", show_default=False),
    list_: bool = typer.Option(False, "--list", help="List the experiments and exit."),
    workers: Optional[int] = typer.Option(None, "--workers", "-j", min=1, help="Parallel runs (default: CPUs)."),
    backend: Backend = typer.Option(Backend.process, "--backend", help="How runs are spread."),
    idle_check: bool = typer.Option(False, "--idle-check", help="Run everything again with idle capped at the halt "
                                    "state (C1/WFI) and flag each effect that changes sign or by more than 2x: "
                                    "effects of the idle states, not of the mechanism."),
    bands: Optional[Path] = typer.Option(None, "--bands", help="A `schedlab sensitivity` study's sensitivity.json: "
                                         "the report's error bars become each row's seed spread widened by its "
                                         "constant band.", show_default=False),
) -> None:
    """Re-derive published results: each published figure simulated and judged (reproduced or not).

    Without experiment names: the experiments that have published figures, only the
    configurations those figures need, ending with one verdict table (the bar is in
    docs/experiments.md). With names or --all: the experiments in full, every table."""
    from . import __version__
    from ._progress import RunsProgress
    from .reproduce import registry
    from .reproduce.report import (notes, rich_tables, rows_json, verdict_markdown, verdict_rich, verdict_summary,
                                   write_markdown)
    from .reproduce.runner import apply_options, parse_cost, run_experiments, verdict_experiments
    from .reproduce.verdict import seeds_note, verdict_rows

    with errors():
        names, exp_opts = _split_experiment_options(list(experiment or []))
        verdict = not names and not all_
        if verdict and exp_opts:
            raise ValueError(f"experiment options ({', '.join('--' + k.replace('_', '-') for k in exp_opts)}) "
                             "need the experiment's name, e.g. `schedlab reproduce mm_cid --delay-ms 10`")
        exps = apply_options(registry.select(names), exp_opts)
        cost_overrides = parse_cost(cost or [])
        band_map = None
        if bands is not None:
            from .sensitivity.report import read_bands

            band_map = read_bands(bands)
        if list_:
            _print_experiment_list(exps, json_out)
            return
        if verdict:
            exps = verdict_experiments(exps)
        with RunsProgress("reproduce") as bar:
            rows = run_experiments(exps, quick=quick, seeds=seeds, machine=machine, workers=workers,
                                   backend=backend.value, on_jobs=bar.set_jobs, on_done=bar.advance,
                                   cost=cost_overrides, verdict=verdict, idle_check_runs=idle_check)
        # The overrides go with the version line of every report, so a table says what it ran.
        overrides = " ".join(f"--cost {k}={v:g}" for k, v in cost_overrides.items())
        generated_by = f"{__version__} with {overrides}" if overrides else __version__
        judged = verdict_rows(rows, exps)
        how = seeds_note(exps, rows)
        if out_dir is not None:
            from .report import reproduction_report

            write_markdown(out_dir, exps, rows, generated_by)
            (out_dir / "verdict.md").write_text(verdict_markdown(judged, exps, how, generated_by), encoding="utf-8")
            reproduction_report(out_dir, exps, rows, generated_by, judged=judged, how=how, bands=band_map)
    if json_out:
        sys.stdout.write(json.dumps(rows_json(rows), indent=2) + "\n")
        return
    if not verdict:
        for table in rich_tables(rows, exps):
            emit(table)
        for n in notes(rows, exps):
            out.print(n, soft_wrap=True, markup=False)
    if judged:
        emit(verdict_rich(judged, exps, how))
        for e in exps:
            if any(j.row.experiment == e.name for j in judged):
                out.print(f"  {e.name}: {e.source.citation()}; table \"{e.source.table}\"", soft_wrap=True,
                          markup=False)
        out.print(verdict_summary(judged) + " (the table above; the bar: docs/experiments.md).", soft_wrap=True,
                  markup=False)
    elif not rows:
        out.print("No runs: nothing selected has a published figure (name an experiment, or --all).")
    if idle_check:
        emit(_idle_check_table(rows))
    if overrides:
        out.print(f"Every run with {overrides}.", soft_wrap=True)
    if out_dir is not None:
        out.print(f"Full report: {out_dir}/report.html (verdict.md, one Markdown table per experiment, PNGs in "
                  f"{out_dir}/png/)", soft_wrap=True, markup=False)
    elif verdict:
        out.print("Every row of every experiment, with plots: `schedlab reproduce --out DIR` (DIR/report.html); "
                  "the what-if grids too: `--all` or by name (`--list`).", soft_wrap=True, markup=False)


def _idle_check_table(rows) -> Table:
    """The effects (change rows) with idle free and capped at the halt state."""
    t = Table(title="idle check: each effect with the governor's idle states and with idle capped at the halt state "
                    "(flag: sign = the effect changes sign, x2 = it changes by more than 2x)",
              title_justify="left", show_edge=False)
    for c in ("experiment", "machine", "change", "metric", "effect", "idle capped", "flag"):
        t.add_column(c, overflow="fold")
    flagged = 0
    for r in rows:
        if r.idle_dependent is None:
            continue
        flagged += r.idle_dependent != "no"
        style = "bold red" if r.idle_dependent != "no" else None
        t.add_row(r.experiment, r.machine, escape(r.config), r.metric, f"{r.simulated_mean:.4g}",
                  f"{r.idle_capped_mean:.4g}", r.idle_dependent, style=style)
    t.caption = f"{flagged} effect(s) depend on the idle states"
    t.caption_justify = "left"
    return t


def _print_experiment_list(exps, json_out: bool) -> None:
    if json_out:
        doc = [{"name": e.name, "title": e.title, "seed": e.source.seed, "table": e.source.table,
                "subject": e.source.subject, "posted": e.source.posted, "commit": e.source.commit,
                "merged": e.source.merged, "published_figures": len(e.published or []),
                "machines": list(e.machines), "configs": list(e.configs), "baseline": e.baseline,
                "metrics": [m.key for m in e.metrics],
                "options": [{"flag": o.flag, "default": o.default, "help": o.help} for o in e.options]}
               for e in exps]
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    for e in exps:
        configs = [f"{e.baseline} (baseline)"] + [c for c in e.configs if c != e.baseline]
        n = len(e.published or [])
        out.print(f"[bold]{e.name}[/]: {escape(e.title)}")
        out.print(f"    patch: {e.source.citation()}", soft_wrap=True, markup=False)
        out.print(f"    published figures: {n} from table \"{e.source.table}\" (thread {e.source.seed})"
                  if n else f"    published figures: none ({e.source.table}); runs with --all or by name",
                  soft_wrap=True, markup=False)
        out.print(f"    machines: {', '.join(e.machines)}; configs: {', '.join(configs)}; "
                  f"metrics: {', '.join(m.key for m in e.metrics)}; seeds: {e.seeds} ({e.quick_seeds} with --quick)",
                  soft_wrap=True, markup=False)
        for o in e.options:
            out.print(f"    option {o.flag} (default {o.default}): {o.help}", soft_wrap=True, markup=False)


from . import cli_studies  # noqa: E402,F401  (registers sweep, report, compare)
from . import cli_bench  # noqa: E402,F401  (registers bench)
from . import cli_host  # noqa: E402,F401  (registers validate-host)
from . import cli_interchange  # noqa: E402,F401  (registers export-rt-app, trace-info, replay)
from . import cli_tools  # noqa: E402,F401  (registers hackbench, schbench)
from . import cli_netperf  # noqa: E402,F401  (registers netperf)
from . import cli_sensitivity  # noqa: E402,F401  (registers sensitivity)


def _reflow(doc: str) -> str:
    """A docstring as help text: each paragraph's lines joined (rich's help keeps a
    docstring's line breaks, so a sentence wrapped in the source broke mid-line in
    `--help`); paragraphs that are lists or indented blocks are left as they are."""
    import inspect

    out = []
    for para in inspect.cleandoc(doc).split("\n\n"):
        lines = para.split("\n")
        if any(l.startswith((" ", "-", "*", "\b")) for l in lines):
            out.append(para)
        else:
            out.append(" ".join(" ".join(lines).split()))
    return "\n\n".join(out)


def _tidy_help() -> None:
    """Every command's help reflowed, its first paragraph as the one-line summary of
    `schedlab --help`, and flags shown without a ``<bool>`` type (they take no value)."""
    for info in app.registered_commands:
        doc = info.help or (info.callback.__doc__ if info.callback else None)
        if doc:
            info.help = _reflow(doc)
            if info.short_help is None:
                info.short_help = info.help.split("\n\n")[0]
    try:
        from typer.core import TyperOption

        shown = TyperOption.display_type_rich

        def display_type_rich(self, ctx):
            return None if getattr(self, "is_flag", False) and self.metavar is None else shown(self, ctx)

        TyperOption.display_type_rich = display_type_rich
    except (ImportError, AttributeError):  # pragma: no cover - another typer: its own display
        pass


_tidy_help()


def main(argv: Optional[List[str]] = None) -> NoReturn:
    """The ``schedlab`` command: ``app`` with usage errors (a bad option, a missing
    argument, an unknown command) as one line ``error: ...`` and exit status 2, like
    every other bad input, instead of click's boxed usage text."""
    from . import _signals

    _signals.install()
    try:
        code = app(args=argv, prog_name="schedlab", standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("error: interrupted\n")
        code = interrupt_status()
    except Exception as e:
        # click's ClickException family (typer vendors click, so matched by its shape).
        if not (hasattr(e, "format_message") and isinstance(getattr(e, "exit_code", None), int)):
            raise
        message = " ".join(str(e.format_message()).split())
        ctx = getattr(e, "ctx", None)
        hint = f" (see '{ctx.command_path} -h')" if ctx is not None and type(e).__name__ != "ClickException" else ""
        sys.stderr.write(f"error: {message}{hint}\n")
        code = e.exit_code
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
