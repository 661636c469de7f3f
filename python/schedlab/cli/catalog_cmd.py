"""`schedlab machines`, `features`, `tunables` and `workloads`: what the core has built in."""

from __future__ import annotations

import json
import sys

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from .. import _core
from ..errors import UnknownNameError, core_input
from .base import _cell, app, emit, errors, out
from .flags import profile_input


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
    name: str | None = typer.Argument(None, help="A preset name, or topo(SOCKETS,LLCS,CORES,SMT).", show_default=False),
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
        with core_input():
            m = json.loads(_core.machine(name))
    if json_out:
        sys.stdout.write(json.dumps(m, indent=2) + "\n")
        return
    kernel = m.get("host_kernel")
    kernel_line = (f"\nkernel {kernel['release']}: profile {kernel['profile']}, HZ {kernel['hz'] or 'unknown'} "
                   f"(a host scenario's defaults)") if kernel else ""
    out.print(Panel.fit(f"[bold]{m['name']}[/]: {m['description']}\n{m['summary']}{kernel_line}\n"
                        f"cpufreq governor: {_governor_line(m)}", title="machine"))
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


def _governor_line(m: dict) -> str:
    """What a scenario with no ``[kernel] governor`` runs on machine ``m``, and EAS with it."""
    g = m.get("governor", "performance")
    if g != "schedutil":
        return f"{g} (the default; the top OPP throughout)"
    if m.get("energy_model"):
        return "schedutil (its kernel's default), with energy-aware scheduling; governor = \"performance\" for the top OPP"
    return ("schedutil (its kernel's default), but no Energy Model under mainline, so no OPP table to choose from: "
            "the top OPP, no EAS ([machine.energy_model] kernel = \"vendor\" brings both)")


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
        profile_input(profile, "features")
        with core_input():
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


# ------------------------------------------------------------------------ tunables
@app.command()
def tunables(
    profile: str = typer.Option("6.6", "--profile", "-p", help="Kernel version whose defaults to show."),
    cpus: int = typer.Option(8, "--cpus", min=1, help="CPUs of the machine (latency, granularity and slice scale "
                             "with them up to 8, SCHED_TUNABLESCALING_LOG)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the scheduler tunables a scenario may set, with their defaults for a kernel
    profile on a machine of --cpus CPUs."""
    with errors():
        profile_input(profile, "tunables")
        with core_input():
            doc = json.loads(_core.tunables(profile, cpus))
            kernel = json.loads(_core.kernel(profile, cpus))
    if json_out:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    v = kernel["version"]
    t = Table(title=f"tunables, profile {v['major']}.{v['minor']} ({kernel['policy'].upper()}), {cpus} CPUs",
              title_justify="left")
    t.add_column("tunable (alias)")
    t.add_column("default", justify="right")
    t.add_column("unit")
    t.add_column("what it is", overflow="fold")
    for x in doc:
        name = x["name"] + (f" ({x['alias']})" if x["alias"] else "")
        default = "unset" if x["default"] is None else str(x["default"]).lower() \
            if isinstance(x["default"], bool) else str(x["default"])
        t.add_row(name, escape(default), x["unit"], escape(x["doc"]))
    emit(t)
    out.print("Override in a scenario: [kernel] tunables = { sched_migration_cost_ns = 0 }")


# ----------------------------------------------------------------------- sched_ext
scx_app = typer.Typer(help="sched_ext: the schedulers a scenario can load into the ext class.", no_args_is_help=True)
app.add_typer(scx_app, name="scx")


@scx_app.command("list")
def scx_list(json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the sched_ext schedulers (\\[kernel.sched_ext] scheduler = "NAME", or run --scx
    NAME): the policies written here from the kernel's tools/sched_ext examples."""
    with errors():
        doc = json.loads(_core.scx_schedulers())
    if json_out:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    t = Table(title="sched_ext schedulers (Linux 6.12+)", title_justify="left")
    t.add_column("scheduler", no_wrap=True)
    t.add_column("what it does")
    for s in doc:
        t.add_row(s["name"], escape(s["description"]))
    emit(t)
    out.print('In a scenario: [kernel] profile = "6.12", sched_ext = { scheduler = "NAME" }; or schedlab run FILE --profile 6.12 --scx NAME. '
              "Schedulers compiled from BPF C (scx_bpfland, scx_lavd) are not run yet.", markup=False)


# ----------------------------------------------------------------------- workloads
@app.command()
def workloads(
    name: str | None = typer.Argument(None, help="A generator: show its parameters and their defaults.",
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
                raise UnknownNameError(f"unknown workload generator '{name}': expected one of {', '.join(g['name'] for g in doc)}")
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


