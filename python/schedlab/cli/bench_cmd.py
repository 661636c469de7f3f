"""``schedlab bench``: the engine's speed suite (schedlab_core::bench), case by case in
this process, as a table for people or JSON for machines. Registered on the ``app`` of
:mod:`schedlab.cli.base` (imported by :mod:`schedlab.cli.entry`)."""

from __future__ import annotations

import json
import sys

import typer
from rich.table import Table

from .. import _core
from .base import app, emit, err, errors, fail, out

__all__ = ["bench"]

# Pop+push pairs of the bare heap reference (as schedlab_core::bench::HEAP_OPS and
# HEAP_OPS_QUICK).
HEAP_OPS = 20_000_000
HEAP_OPS_QUICK = 2_000_000
#: What [kernel] background takes (the core's BackgroundSpec).
BACKGROUNDS = ("none", "kernel")


@app.command()
def bench(
    cases: list[str] | None = typer.Argument(None, help="Cases to run (default: all; --list names them).",
                                                 show_default=False),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    list_cases: bool = typer.Option(False, "--list", help="List the cases and run nothing."),
    events: bool = typer.Option(False, "--events", help="Also break each case's events down by kind, with events "
                                "per modeled wakeup."),
    quick: bool = typer.Option(False, "--quick", help="Stop each case at its short simulated time (--list shows it): "
                               "the whole suite in under a minute, for CI."),
    background: str = typer.Option("none", "--background", help="Every case's \\[kernel] background: none (the "
                                   "cases as written) or kernel (the kernel's own per-CPU work beside them: "
                                   "what it costs the engine)."),
) -> None:
    """Time the engine: events/s, simulated s per wall s, peak RSS, and each case's wall
    time as a multiple of what a bare binary heap needs for its events."""
    with errors():
        known = json.loads(_core.bench_cases())
        if list_cases:
            for c in known:
                out.print(f"{c['name']:<14} {c['what']} (--quick: {c['quick_ms']} ms)")
            return
        names = [c["name"] for c in known]
        todo = list(cases or names)
        bad = [c for c in todo if c not in names]
        if bad:
            fail(f"unknown bench case '{bad[0]}': expected one of {', '.join(names)}")
        if background not in BACKGROUNDS:
            fail(f"--background: expected one of {', '.join(BACKGROUNDS)}, got '{background}'")
        heap_ns = _core.bench_heap(1000, HEAP_OPS_QUICK if quick else HEAP_OPS)
        err.print(f"bare heap: {heap_ns:.1f} ns per pop+push at 1,000 pending")
        rows = []
        for name in todo:
            with err.status(f"{name} ...", spinner="dots"):
                row = json.loads(_core.bench_case(name, heap_ns, quick, background))
            rows.append(row)
            err.print(f"{name}: {row['wall_s']:.2f} s" + (f" ({row['error']})" if row["error"] else ""))
    if json_out:
        sys.stdout.write(json.dumps({"heap_ns_per_op": heap_ns, "rows": rows}, indent=2) + "\n")
        return
    mode = (" --quick" if quick else "") + (f" --background {background}" if background != "none" else "")
    t = Table(title=f"schedlab bench{mode} (bare heap {heap_ns:.1f} ns per pop+push at 1,000 pending)",
              title_justify="left")
    for col in ("case", "cpus", "tasks", "events", "wall s", "build s", "M events/s", "sim s / wall s",
                "x heap", "peak RSS MiB"):
        t.add_column(col, justify="left" if col == "case" else "right", no_wrap=True)
    for r in rows:
        if r["error"]:
            t.add_row(r["case"], *([""] * 8), f"error: {r['error']}")
            continue
        t.add_row(r["case"], str(r["cpus"]), f"{r['tasks']:,}", f"{r['events']:,}", f"{r['wall_s']:.2f}",
                  f"{r['build_s']:.2f}", f"{r['events_per_s'] / 1e6:.2f}", f"{r['sim_s_per_wall_s']:.3f}",
                  f"{r['heap_multiple']:.1f}", f"{r['peak_rss_mib']:.0f}")
    emit(t)
    out.print("x heap: wall time over events x the bare heap's ns per pop+push (this machine's speed drifts; "
              "the multiple does not). peak RSS includes the Python process itself.")
    if events:
        emit(_events_table(rows))


def _events_table(rows: list) -> Table:
    """Each case's events by kind (per modeled wakeup), stale generations apart."""
    kinds = sorted({k for r in rows if not r["error"] for k in r["events_by_kind"]})
    t = Table(title="events by kind, per modeled wakeup (stale: popped and dropped, a generation behind)",
              title_justify="left")
    t.add_column("case", no_wrap=True)
    t.add_column("wakeups", justify="right")
    t.add_column("events / wakeup", justify="right")
    # inline: events popped from the queue's head slot (exact elision), counted under
    # their kind too; queued: the rest, each a list insert and two walks of the tree.
    t.add_column("queued / wakeup", justify="right")
    for k in kinds:
        t.add_column(k.replace("_", " "), justify="right")
    for r in rows:
        if r["error"]:
            continue
        w = r["wakeups"] or 1
        queued = r["events"] - r["events_by_kind"].get("inline", 0)
        t.add_row(r["case"], f"{r['wakeups']:,}", f"{r['events'] / w:.2f}", f"{queued / w:.2f}",
                  *(f"{r['events_by_kind'].get(k, 0) / w:.2f}" for k in kinds))
    return t
