"""``schedlab sweep``, ``schedlab report`` and ``schedlab compare``: the commands for
studies over many runs. Registered on the ``app`` of :mod:`schedlab.cli.base` (imported
by :mod:`schedlab.cli.entry`); orchestration only, the work is in :mod:`schedlab.sweep`,
:mod:`schedlab.report` and :mod:`schedlab.variants`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.table import Table

from ..errors import InputError
from .base import app, emit, errors, fail, out
from .flags import check_seeds, did_you_mean, flag_error

__all__ = ["sweep", "report", "compare", "run_plot"]


# --------------------------------------------------------------------------- sweep
@app.command()
def sweep(
    spec: Path = typer.Argument(..., help="Sweep spec (TOML): base scenario, parameters, seeds (docs/sweeps.md).",
                                show_default=False),
    status: bool = typer.Option(False, "--status", help="Say how far the sweep is, run nothing."),
    out_dir: Path | None = typer.Option(None, "--out", "-o", help="Results directory (default: the spec's `out`, "
                                                                     "or SPEC.sweep beside it)."),
    workers: int | None = typer.Option(None, "--workers", "-j", min=1, help="Parallel runs (default: CPUs)."),
    executor: str = typer.Option("process", "--executor", "-e",
                                 help="process (default), thread, serial, ray or dask (pip install 'schedlab\\[ray]' / "
                                      "'schedlab\\[dask]')."),
    address: str | None = typer.Option(None, "--address", help="Ray or Dask cluster to use (default: a local one)."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Run at most this many missing runs, then stop."),
    flush_s: float = typer.Option(2.0, "--flush-s", min=0.0, hidden=True, help="Seconds between part files."),
) -> None:
    """Run a parameter sweep (or resume it): every point x seed without a row yet."""
    from .._signals import interrupt_status
    from ..sweep import load_spec, run_sweep, sweep_status
    from ..sweep.driver import SweepInterrupted

    with errors():
        s = load_spec(spec, out=out_dir)
        if status:
            st = sweep_status(s)
            _print_status(st)
            return
        interrupted = False
        try:
            outcome = run_sweep(s, executor=executor, workers=workers, address=address, limit=limit, flush_s=flush_s)
        except SweepInterrupted as e:
            outcome, interrupted = e.outcome, True
    _print_outcome(s, outcome)
    if interrupted:
        fail(f"interrupted: {outcome.computed} rows written by this run; rerun `schedlab sweep {spec}` to resume",
             interrupt_status())
    left = outcome.total - outcome.already - outcome.computed
    if left and outcome.not_submitted == left and not outcome.failed:
        # --limit: a partial run by request, not a failure.
        out.print(f"stopped at --limit {limit}: {left} of {outcome.total} runs left; `schedlab sweep {spec}` "
                  "runs them (or another --limit)", soft_wrap=True, markup=False)
        return
    if not outcome.complete:
        fail(f"{left} of {outcome.total} runs are missing ({len(outcome.failed)} failed): rerun "
             f"`schedlab sweep {spec}` to retry them", 1)
    out.print(f"report: schedlab report {s.out}")


def _print_outcome(s, outcome) -> None:
    t = Table(show_edge=False, show_header=False)
    t.add_column()
    t.add_column(justify="right")
    for k, v in (("rows (points x seeds)", f"{outcome.total} ({len(s.points())} x {len(s.seeds)})"),
                 ("already there", outcome.already), ("computed now", outcome.computed),
                 ("failed", len(outcome.failed)), ("executor restarts", outcome.restarts),
                 ("wall time", f"{outcome.wall_s:.1f} s")):
        t.add_row(k, str(v))
    out.print(f"[bold]sweep {s.name}[/] -> {s.out}/rows/")
    emit(t)
    for f in outcome.failed[:5]:
        out.print(f"  failed: point {f['point']} seed {f['seed']}: {f['error']}", soft_wrap=True)


def _print_status(st) -> None:
    out.print(f"[bold]sweep {st.name}[/] in {st.out}")
    out.print(f"  {st.done} of {st.total} rows ({st.points} points x {st.seeds} seeds), {st.missing} missing, "
              f"{len(st.failures)} failed" + (f", {st.duplicates} duplicated rows" if st.duplicates else "")
              + (f", {st.stale} rows of points no longer in the spec" if st.stale else ""))
    for f in st.failures[:5]:
        out.print(f"  failed: point {f.get('point')} seed {f.get('seed')}: {f.get('error')}", soft_wrap=True)
    out.print(("  complete: " if st.missing == 0 else "  run `schedlab sweep SPEC` to resume; ")
              + f"report with `schedlab report {st.out}`")


# -------------------------------------------------------------------------- report
@app.command()
def report(
    directory: Path = typer.Argument(..., help="A sweep's results directory.", show_default=False),
    out_dir: Path | None = typer.Option(None, "--out", "-o", help="Where to write (default: DIR/report)."),
    metric: list[str] | None = typer.Option(None, "--metric", "-m", help="Figure to plot (repeatable; default: "
                                                                            "the spec's \\[report] metrics)."),
) -> None:
    """Write a sweep's report: Markdown, one self-contained HTML page and PNGs."""
    from ..report import sweep_report

    with errors():
        if not directory.is_dir():
            raise InputError(f"{directory}: no such directory (a sweep's results directory)")
        rep = sweep_report(directory, out_dir, list(metric) if metric else None)
    out.print(f"report written to {rep.out_dir}/report.html, report.md and {len(rep.pngs)} PNGs in {rep.out_dir}/png/")


# ------------------------------------------------------------------------- compare
def _variants(a: str, b: str | None, sets: list[str]):
    """(A, B, label A, label B): a key given once in --set applies to both variants, a key
    given twice gives A its first value and B its second."""
    from ..changes import describe, parse_assignment
    from ..scenario import load_scenario

    sa = load_scenario(a)
    sb = load_scenario(b) if b else sa
    by_key: dict[str, list] = {}
    for text in sets:
        k, v = parse_assignment(text, sa.doc)
        by_key.setdefault(k, []).append(v)
    common, ca, cb = {}, {}, {}
    for k, vals in by_key.items():
        if len(vals) == 1:
            common[k] = vals[0]
        elif len(vals) == 2:
            ca[k], cb[k] = vals
        else:
            raise InputError(f"--set {k} given {len(vals)} times: once (both variants) or twice (A, then B)")
    va = sa.with_changes({**common, **ca}) if (common or ca) else sa
    vb = sb.with_changes({**common, **cb}) if (common or cb) else sb
    la = a if b else (describe(ca, list(ca)) or a)
    lb = b if b else (describe(cb, list(cb)) or a)
    if va == vb:
        raise InputError("the two variants are the same scenario: give two files, or one --set KEY=VALUE twice "
                         "(e.g. --set kernel.profile=6.5 --set kernel.profile=6.6)")
    return va, vb, la, lb


def check_metric_prefixes(prefixes: list[str] | None, names: list[str]) -> None:
    """compare -m: a prefix no figure starts with is a typo, not "no figure differs"."""
    for p in prefixes or []:
        if any(n.startswith(p) for n in names):
            continue
        # Close matches among the figures and their dotted heads (workload, summary.migrations, ...).
        heads = sorted({".".join(n.split(".")[:i]) for n in names for i in range(1, n.count(".") + 2)})
        sections = sorted({n.split(".")[0] for n in names})
        raise flag_error("--metric / -m", f"no figure starts with '{p}'{did_you_mean(p, heads)}: figures start with "
                                          f"{', '.join(sections)} (--all --json lists them)")


@app.command()
def compare(
    a: str = typer.Argument(..., help="Scenario A (.toml or .json).", show_default=False),
    b: str | None = typer.Argument(None, help="Scenario B (default: A, varied by --set).", show_default=False),
    set_: list[str] | None = typer.Option(None, "--set", help="KEY=VALUE: once for both variants, twice for A "
                                                                 "then B (e.g. --set kernel.profile=6.5 --set "
                                                                 "kernel.profile=6.6)."),
    seeds: int = typer.Option(5, "--seeds", "-n", min=1, help="Seeds 1..N, the same for both."),
    seed: list[int] | None = typer.Option(None, "--seed", "-s", min=0, max=2**64 - 1, callback=check_seeds,
                                             help="Seeds to use (repeatable; overrides -n)."),
    metric: list[str] | None = typer.Option(None, "--metric", "-m", help="Only figures starting with this "
                                                                            "(repeatable), e.g. -m workload -m latency."),
    all_: bool = typer.Option(False, "--all", help="Also show figures that are the same in every seed."),
    level: float = typer.Option(0.95, "--level", min=0.5, max=0.999, help="Confidence level of the intervals."),
    json_out: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    workers: int | None = typer.Option(None, "--workers", "-j", min=1, help="Parallel runs (default: CPUs)."),
) -> None:
    """Run two variants on the same seeds: each figure's difference B - A, with a confidence interval."""
    from .._progress import DelayedProgress
    from ..reproduce.report import fmt
    from ..variants import compare_scenarios

    with errors():
        va, vb, la, lb = _variants(a, b, list(set_ or []))
        run_seeds = list(seed) if seed else list(range(1, seeds + 1))
        with DelayedProgress("compare", total=2 * len(run_seeds)) as bar:
            cmp = compare_scenarios(va, vb, run_seeds, label_a=la, label_b=lb, level=level, workers=workers,
                                    on_done=bar.advance)
    check_metric_prefixes(metric, [d.metric for d in cmp.diffs])
    diffs = [d for d in cmp.diffs if not metric or d.metric.startswith(tuple(metric))]
    if not all_:
        diffs = [d for d in diffs if d.diff != 0 or (d.low is not None and d.high != d.low)]
    if json_out:
        doc = cmp.to_dict()
        doc["metrics"] = [d.to_dict() for d in diffs]
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    pct = round(level * 100, 1)
    t = Table(title=f"A = {la}\nB = {lb}\nseeds {', '.join(map(str, run_seeds))}; B - A: mean of the per-seed "
                    f"differences [{pct:g} % paired t-interval]; * = the interval excludes 0",
              title_justify="left", show_edge=False)
    for c, j in (("figure", "left"), ("A", "right"), ("B", "right"), ("B - A", "right"), (f"{pct:g} % CI", "right"),
                 ("change", "right"), ("", "left")):
        t.add_column(c, justify=j, no_wrap=True)
    for d in diffs:
        ci = f"[{fmt(d.low, d.diff or d.mean_a)}, {fmt(d.high, d.diff or d.mean_a)}]" if d.low is not None else "—"
        rel = "—" if d.relative is None else f"{d.relative * 100:+.1f} %" if abs(d.relative) < 10 else \
            (">+999 %" if d.relative > 0 else "<-999 %")
        t.add_row(d.metric, fmt(d.mean_a), fmt(d.mean_b), fmt(d.diff, d.diff or d.mean_a), ci, rel,
                  "*" if d.significant else "")
    emit(t)
    if not diffs:
        out.print("No figure differs between A and B on these seeds" + ("" if all_ else " (--all shows them)") + ".")


# --------------------------------------------------------------- schedlab run --plot
def run_plot(directory: Path, scenario, results, trace_path: str | None) -> None:
    """``schedlab run --plot DIR``: the per-run report. Without a JSON trace from --trace,
    the first seed is rerun (bit-identical) with one in a temporary directory, read for
    the timeline and deleted: --plot writes the plots only (a trace can be 100 MB)."""
    import tempfile

    from ..api import run as run_one
    from ..report import run_report

    raws = [r.raw for r in results]
    kept = trace_path is not None and trace_path.endswith(".json")
    with tempfile.TemporaryDirectory(prefix="schedlab-plot-") as tmp:
        if not kept:
            trace_path = str(Path(tmp) / f"{scenario.name or 'run'}.seed{raws[0]['seed']}.perfetto.json")
            run_one(scenario, raws[0]["seed"], trace=trace_path)
        rep = run_report(directory, raws, trace_path)
    out.print(f"plots written to {rep.out_dir}/report.html, report.md and {len(rep.pngs)} PNGs in {rep.out_dir}/png/"
              + (f" (trace: {trace_path})" if kept else ""))
