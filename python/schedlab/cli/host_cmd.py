"""``schedlab validate-host``: schedlab against this machine's own kernel. Registered on the ``app`` of
:mod:`schedlab.cli.base` (imported by :mod:`schedlab.cli.entry`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.table import Table

from ..validate_host.sidebyside import BUSY_CPUS
from .base import app, err, errors, fail, out

__all__ = ["validate_host_cmd"]


def _fmt(v: float | None) -> str:
    if v is None:
        return "—"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 0.01:
        return f"{v:.3f}"
    return f"{v:.2e}"


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:+.0f} %"


def _spread(r: dict) -> str:
    sp = r.get("spread")
    return "—" if not sp else f"{_fmt(sp[0])}..{_fmt(sp[1])}"


def _verdict(r: dict) -> str:
    v = r.get("verdict")
    mark = (" !" if r.get("busy") else "") + (" V" if r.get("vendor") else "")
    return ("—" if v is None else v) + mark


def _table(title: str, rows: list[dict], real_label: str = "real") -> Table:
    t = Table(title=title, title_justify="left")
    for col, just in (("metric", "left"), ("unit", "left"), (real_label, "right"), ("spread", "right"), ("schedlab", "right"),
                      ("diff", "right"), ("verdict", "left")):
        t.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
    for r in rows:
        t.add_row(r["metric"], r["unit"], _fmt(r["real"]), _spread(r), _fmt(r["sim"]), _pct(r["rel_diff"]), _verdict(r))
    return t


def _load_line(c: dict, what: str) -> None:
    others = c.get("others_cpus") or []
    if others:
        busy = max(others) > BUSY_CPUS
        line = (f"  the rest of the host used {', '.join(f'{o:.2f}' for o in others)} CPUs during the {len(others)} real runs; "
                f"schedlab: mean of {c['sim_seeds']} seeds")
        out.print(line)
        if busy:
            err.print(f"[yellow]warning[/yellow]: {what}: other load on the host above {BUSY_CPUS} CPUs during a real run "
                      "(rows marked !): re-run when the machine is quieter")


def _halt_line(doc: dict) -> None:
    """The host's measured halt ladder (validate_host/halt.py), or why there is none."""
    g = doc.get("guest_halt")
    if g and g.get("applied"):
        from ..validate_host.halt import medians

        steps = ", ".join(f"{e:g} us from {i:g} us" for i, e in medians(g["guest_halt"]))
        out.print(f"halt exit (measured here; the simulated host's halt draws from its percentiles by idle time), "
                  f"medians: {steps}")
        if g.get("others_cpus", 0.0) > BUSY_CPUS:
            err.print(f"[yellow]warning[/yellow]: the rest of the host used {g['others_cpus']:.2f} CPUs while the halt exit "
                      "was measured: the 'idle' CPU was not idle, and the ladder is not this host's")
    elif g:
        out.print(f"halt exit: the simulated host's halt pays its estimated wake only: {g['why']}")


def print_report(doc: dict) -> None:
    h = doc["host"]
    out.print(f"host: Linux {h['kernel_release']} (schedlab profile {h['profile']}), {h['nr_cpus']} CPUs, "
              f"HZ {h['hz'] or 'unknown'} ({h['hz_source']}), load average {h['loadavg']}")
    out.print(f"cgroup: {h['cgroup']['reason']}; compiler: {h['compiler'] or 'none'}")
    _halt_line(doc)
    spin = doc.get("probe_spin")
    if spin:
        from ..validate_host.configs import spin_cpu_ns

        out.print(f"probe spin (measured here): a step of its loop takes {spin['step_ns']:.0f} ns, a clock read "
                  f"{spin['read_ns']:.0f} ns; so 1 us of work spins {spin_cpu_ns(1000, spin['step_ns'], spin['read_ns']):.0f} ns, "
                  "and the simulated probe reads its clock every step")
    if h.get("vendor_sched"):
        err.print(f"[yellow]warning[/yellow]: this kernel's scheduler is not mainline's ({' '.join(h['vendor_sched'])} on its "
                  "command line); rows of per-thread shares (marked V) follow its own wake placement, which schedlab "
                  "does not model (docs/validate-host.md)")
    if not doc["compared"] and "reason" in doc:
        out.print(f"[bold]nothing compared[/bold]: {doc['reason']}")
        return
    verdicts: list[str] = []
    vendor_off: list[str] = []
    for c in doc["configs"]:
        out.print(_table(f"{c['name']}: {c['what']}", c["rows"]))
        _load_line(c, c["name"])
        verdicts += [r["verdict"] for r in c["rows"] if r.get("verdict")]
        vendor_off += [f"{c['name']} {r['metric']}" for r in c["rows"] if r.get("verdict") == "off" and r.get("vendor")]
    for c in doc.get("tools", []):
        if c.get("skipped"):
            out.print(f"{c['name']}: skipped: {c['skipped']}")
            continue
        out.print(_table(f"{c['name']}: {c['what']}", c["rows"]))
        _load_line(c, c["name"])
    if doc["configs"]:
        ok = verdicts.count("ok")
        out.print(f"verdicts: {ok} of {len(verdicts)} rows within their bar (usage ±5 %, throttled share ±0.05, "
                  "throttled_time ±25 %, share min/max ±0.05, burst_time and nr_bursts ±25 %, or inside the real spread)"
                  + (f"; of those off, marked V (the host's own wake placement): {', '.join(vendor_off)}" if vendor_off else ""))
    out.print(f"real = this machine's kernel, mean of {doc.get('repeats', 1)} runs (spread: their min..max); "
              "diff = (schedlab - real) / real; ! = other load above "
              f"{BUSY_CPUS} CPUs during a real run; V = a figure of wake placement on a scheduler that is not mainline's; "
              "cpu.stat as the kernel defines it (docs/schema.md)")


def print_rt_app(doc: dict) -> None:
    h = doc["host"]
    out.print(f"host: Linux {h['kernel_release']} (schedlab profile {h['profile']}), {h['nr_cpus']} CPUs, HZ {h['hz'] or 'unknown'}")
    _halt_line(doc)
    for e in doc["files"]:
        for n in e["threads"]:
            out.print(_table(f"{e['file']}: thread {n}", e["rows"][n]))
        _load_line(e, e["file"])
        timed = e.get("timer_threads", [])
        if len(timed) > 1:
            out.print(f"  schedlab's wu_lat and slack need a single thread with timed sleeps; this file has {len(timed)}: "
                      "real side only")
    out.print(f"real = rt-app's own logs on this machine, mean of {doc.get('repeats', 1)} runs (spread: their min..max); "
              "per activation (one log line: one iteration of a phase); ! = other load above "
              f"{BUSY_CPUS} CPUs during a real run")


@app.command("validate-host")
def validate_host_cmd(
    configs: list[str] | None = typer.Argument(None, help="Configurations and tools to run (default: all; --list names them).",
                                                  show_default=False),
    seconds: float | None = typer.Option(None, "--seconds", "-s", min=0.5, show_default=False,
                                            help="Length of each workload, real and simulated (default 5; with --rt-app, the file's duration)."),
    seeds: int = typer.Option(3, "--seeds", "-n", min=1, help="Simulated seeds per configuration (averaged)."),
    repeats: int = typer.Option(3, "--repeats", "-r", min=1, help="Real runs per configuration (their mean and spread)."),
    rt_app: Path | None = typer.Option(None, "--rt-app", help="Compare this rt-app file per thread from rt-app's logs "
                                          "(instead of the configurations).", show_default=False),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the report as JSON to this file."),
    sim_only: bool = typer.Option(False, "--sim-only", help="Run only the simulated side (no host probes)."),
    list_configs: bool = typer.Option(False, "--list", help="List the configurations and tools and exit."),
    record_background: Path | None = typer.Option(
        None, "--record-background", show_default=False,
        help="Measure this host's background (every thread's wakeups and CPU time over --seconds, default 30) into "
             "this profile file, which a scenario names as \\[kernel] background_profile, and exit."),
    background_profile: Path | None = typer.Option(
        None, "--background-profile", show_default=False,
        help="Run every simulated side with the kernel's background and this profile (from --record-background)."),
) -> None:
    """Compare schedlab with this machine's kernel: the same bandwidth and latency
    workloads, cyclictest and hackbench, in a fresh cgroup per configuration and in the
    simulator (host topology, HZ and kernel version), or one rt-app file with --rt-app.
    Without the rights to make cgroups it says so and exits 0."""
    from ..validate_host import configurations, validate_host
    from ..validate_host.host import host_info
    from ..validate_host.tools import tools

    with errors():
        if list_configs:
            info = host_info()
            for c in configurations(info.nr_cpus):
                out.print(f"{c.name:<20} {c.what}")
            for t in tools(info.nr_cpus):
                out.print(f"{t.name:<20} {t.what}")
            return

        def step(msg: str) -> None:
            if sys.stderr.isatty():
                err.print(f"[dim]{msg}[/dim]")

        if record_background is not None:
            _record_background(record_background, seconds or 30.0, step)
            return
        background = _read_profile(background_profile) if background_profile is not None else None

        if rt_app is not None:
            if configs:
                fail(f"--rt-app {rt_app} and configurations {' '.join(configs)}: give one or the other")
            doc = _rt_app_report(str(rt_app), seconds, seeds, repeats, sim_only, step)
            if doc is None:
                return
            print_rt_app(doc)
        else:
            doc = validate_host(seconds=seconds or 5.0, only=configs or None, seeds=seeds, sim_only=sim_only, on_step=step,
                                repeats=repeats, background=background)
            print_report(doc)
        if json_out is not None:
            json_out.write_text(json.dumps(doc, indent=1) + "\n")
            out.print(f"wrote {json_out}")


def _record_background(path: Path, seconds: float, step) -> None:
    """--record-background: the host's background into a profile file, and its summary."""
    from ..validate_host.background import profile_toml, record

    profile = record(seconds, on_step=step)
    path.write_text(profile_toml(profile))
    t = Table(title=f"this host's background over {profile['measurement']['seconds']:g} s", title_justify="left")
    for col in ("source", "threads", "wakeups/s", "run per wakeup (us)", "CPU share"):
        t.add_column(col, justify="left" if col == "source" else "right", no_wrap=True)
    nr = profile["measurement"]["nr_cpus"]
    for s in profile["source"]:
        threads, rate = (f"{nr} (one per CPU)", s["wakeups_per_s"] * nr) if s.get("per_cpu") else (str(s["tasks"]), s["wakeups_per_s"])
        t.add_row(s["name"], threads, f"{rate:.1f}", f"{s['run_us']:.1f}", f"{rate * s['run_us'] / 1e6 / nr:.2e}")
    out.print(t)
    gaps = profile["measurement"].get("busy_loop")
    if gaps:
        out.print(f"a busy loop on CPU {gaps['cpu']}: {gaps['per_s']:.1f} interruptions a second over {gaps['threshold_us']:g} us "
                  f"(p50 {gaps['p50_us']:.1f} us, p99 {gaps['p99_us']:.1f} us, max {gaps['max_us']:.1f} us; not modeled)")
    out.print(f"wrote {path}: name it from a scenario as [kernel] background_profile = \"{path.name}\" "
              "(with background = \"kernel\")", markup=False)


def _read_profile(path: Path) -> dict:
    """--background-profile FILE: its table, read and checked by the core as a scenario
    naming it would be."""
    from ..scenario import Scenario

    text = (f"[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nbackground_profile = {json.dumps(str(path.resolve()))}\n"
            "[[tasks]]\nname = \"t\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 1.0\n")
    return Scenario.from_toml(text, origin="<--background-profile>").doc["kernel"]["background_profile"]


def _rt_app_report(path: str, seconds: float | None, seeds: int, repeats: int, sim_only: bool, step) -> dict | None:
    from ..validate_host.host import host_info
    from ..validate_host.rtapp import RtAppError, compare_file

    info = host_info()
    if not sim_only and info.cgroup.version is None:
        out.print(f"[bold]nothing compared[/bold]: {info.cgroup.reason}")
        return None
    from ..validate_host import _guest_halt

    doc: dict = {"host": info.to_dict(), "repeats": repeats, "seconds": seconds}
    ladder = _guest_halt(doc, info, sim_only, step)
    try:
        entry = compare_file(path, info, seconds, seeds, repeats, sim_only, step, guest_halt=ladder)
    except RtAppError as e:
        fail(str(e))
    doc["files"] = [entry]
    return doc
