"""`schedlab reproduce`: published figures simulated and judged."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import InputError
from .base import Executor, app, emit, errors, executor_choice, fail, out


# ----------------------------------------------------------------------- reproduce
def _split_experiment_options(words: list[str]) -> tuple[list[str], dict[str, str]]:
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
                    raise InputError(f"option --{key} needs a value")
                value = words[i + 1]
                i += 1
            opts[key.replace("-", "_")] = value
        elif w.startswith("-") and len(w) > 1 and not w[1:].replace(".", "").isdigit():
            raise InputError(f"unknown option '{w}'")
        else:
            names.append(w)
        i += 1
    return names, opts


@app.command(context_settings={"ignore_unknown_options": True})
def reproduce(
    experiment: list[str] | None = typer.Argument(
        None, help="Experiments to run in full, and their own options, e.g. `mm_cid --delay-ms 10` (`--list` shows "
                   "them). Default: the verdict: every published figure, simulated and judged, in one table.",
        show_default=False),
    all_: bool = typer.Option(False, "--all", help="Run every experiment in full, what-if grids included."),
    quick: bool = typer.Option(False, "--quick", help="Fewer seeds and shorter runs."),
    seeds: int | None = typer.Option(None, "--seeds", "-n", min=1, help="Seeds per configuration (1..N)."),
    json_out: bool = typer.Option(False, "--json", help="Print the rows as JSON (docs/schema.md)."),
    out_dir: Path | None = typer.Option(None, "--out", help="Also write the full report here: verdict.md, "
                                                               "Markdown tables, report.html, PNGs; and keep each "
                                                               "finished run in DIR/runs, so the same command "
                                                               "after an interruption reruns only what is missing."),
    machine: str | None = typer.Option(None, "--machine", "-m", help="Run on this preset instead of the experiments' own."),
    cost: list[str] | None = typer.Option(
        None, "--cost", help="Override the machine's cost table in every run, KEY=NUMBER (repeatable; the fields "
                             "of \\[machine.cost], e.g. smt_slowdown=1.6 or cpuidle.C2.wake_us=40). Published figures "
                             "are still compared.", show_default=False),
    background: str | None = typer.Option(
        None, "--background", help="What else runs on every run's machine, as \\[kernel] background takes it: none "
                                   "(the benchmark alone, each experiment's default) or kernel (the kernel's own "
                                   "per-CPU work: vmstat kworkers, the watchdog's stoppers). Published figures are "
                                   "still compared.", show_default=False),
    list_: bool = typer.Option(False, "--list", help="List the experiments and exit."),
    workers: int | None = typer.Option(None, "--workers", "-j", min=1, help="Parallel runs (default: CPUs)."),
    executor: Executor = typer.Option(Executor.process, "--executor", "-e", help="How runs are spread."),
    backend: Executor | None = typer.Option(None, "--backend", hidden=True, help="Deprecated name of --executor."),
    idle_check: bool = typer.Option(False, "--idle-check", help="Run everything again with idle capped at the halt "
                                    "state (C1/WFI) and flag each effect that changes sign or by more than 2x: "
                                    "effects of the idle states, not of the mechanism."),
    bands: Path | None = typer.Option(None, "--bands", help="A `schedlab sensitivity` study's sensitivity.json: "
                                         "the report's error bars become each row's seed spread widened by its "
                                         "constant band.", show_default=False),
) -> None:
    """Re-derive published results: each published figure simulated and judged (reproduced or not).

    Without experiment names: the experiments that have published figures, only the
    configurations those figures need, ending with one verdict table (the bar is in
    docs/experiments.md). With names or --all: the experiments in full, every table."""
    from .. import __version__
    from .._progress import RunsProgress
    from .._signals import interrupt_status
    from ..reproduce import registry
    from ..reproduce.report import notes, rich_tables, rows_json, verdict_bar, verdict_factors, verdict_markdown, verdict_rich, verdict_summary, write_markdown
    from ..reproduce.runner import RunStore, apply_options, parse_cost, run_experiments, verdict_experiments
    from ..reproduce.verdict import seeds_note, verdict_rows

    with errors():
        names, exp_opts = _split_experiment_options(list(experiment or []))
        verdict = not names and not all_
        if verdict and exp_opts:
            raise InputError(f"experiment options ({', '.join('--' + k.replace('_', '-') for k in exp_opts)}) "
                             "need the experiment's name, e.g. `schedlab reproduce mm_cid --delay-ms 10`")
        exps = apply_options(registry.select(names), exp_opts)
        cost_overrides = parse_cost(cost or [])
        band_map = None
        if bands is not None:
            from ..sensitivity.report import read_bands

            band_map = read_bands(bands)
        if list_:
            _print_experiment_list(exps, json_out)
            return
        if verdict:
            exps = verdict_experiments(exps)
        store = RunStore(out_dir) if out_dir is not None else None
        planned = [0]

        def reused(n: int, total: int) -> None:
            planned[0] = total
            if n:
                rest = f"; running the other {total - n}" if n < total else ""
                sys.stderr.write(f"note: {store.dir}: reusing {'all ' if n == total else ''}{n}"
                                 f"{'' if n == total else f' of {total}'} runs finished before{rest}\n")
                sys.stderr.flush()

        try:
            with RunsProgress("reproduce") as bar:
                rows = run_experiments(exps, quick=quick, seeds=seeds, machine=machine, workers=workers,
                                       backend=executor_choice(executor, backend), on_jobs=bar.set_jobs,
                                       on_done=bar.advance, cost=cost_overrides, verdict=verdict,
                                       idle_check_runs=idle_check, store=store, on_reused=reused,
                                       background=background)
        except KeyboardInterrupt:
            if store is None:
                raise
            fail(f"interrupted: {store.reused + store.saved} of {planned[0]} runs kept in {store.dir}; "
                 "the same command resumes", interrupt_status())
        # The overrides go with the version line of every report, so a table says what it ran.
        overrides = " ".join([f"--cost {k}={v:g}" for k, v in cost_overrides.items()]
                             + ([f"--background {background}"] if background is not None else []))
        generated_by = f"{__version__} with {overrides}" if overrides else __version__
        judged = verdict_rows(rows, exps)
        how = seeds_note(exps, rows)
        if out_dir is not None:
            from ..report import reproduction_report

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
        # The summary per experiment first, then what is not reproduced, then the rest.
        for table in verdict_rich(judged, exps, how):
            emit(table)
        for line in verdict_factors(judged) if verdict else ():  # by name, the notes above list them
            out.print(line, soft_wrap=True, markup=False)
        for e in exps:
            if any(j.row.experiment == e.name for j in judged):
                out.print(f"  {e.name}: {e.source.citation()}; table \"{e.source.table}\"", soft_wrap=True,
                          markup=False)
        out.print(verdict_bar(), soft_wrap=True, markup=False)
        out.print(verdict_summary(judged) + " (the tables above; the bar: docs/experiments.md).", soft_wrap=True,
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
        doc = [{"name": e.name, "title": e.title, "table": e.source.table,
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
        out.print(f"    published figures: {n} from table \"{e.source.table}\""
                  if n else f"    published figures: none ({e.source.table}); runs with --all or by name",
                  soft_wrap=True, markup=False)
        out.print(f"    machines: {', '.join(e.machines)}; configs: {', '.join(configs)}; "
                  f"metrics: {', '.join(m.key for m in e.metrics)}; seeds: {e.seeds} ({e.quick_seeds} with --quick)",
                  soft_wrap=True, markup=False)
        for o in e.options:
            out.print(f"    option {o.flag} (default {o.default}): {o.help}", soft_wrap=True, markup=False)

