"""``schedlab sensitivity``: every published figure with the uncertainty its constants
carry (schedlab.sensitivity). Registered on the ``app`` of
:mod:`schedlab.cli.base` (imported by :mod:`schedlab.cli.entry`)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import typer
from rich.table import Table

from .._signals import interrupt_status
from ..errors import InputError
from .base import app, emit, err, errors, fail, out

__all__ = ["sensitivity", "sensitivity_table"]


class _Progress:
    """A bar per phase on a terminal; elsewhere a log line every 10 s and at each phase's end."""

    def __init__(self, every: float = 10.0):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.bar = err.is_terminal
        self.every, self._last, self._t0 = every, 0.0, time.monotonic()
        self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=err,
                                 transient=False) if self.bar else None
        self.tasks: dict[str, int] = {}

    def __enter__(self):
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.stop()

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.progress is not None:
            if phase not in self.tasks:
                self.tasks[phase] = self.progress.add_task(f"sensitivity {phase}", total=total)
            self.progress.update(self.tasks[phase], completed=done, total=total)
            return
        now = time.monotonic()
        if done == total or now - self._last >= self.every:
            self._last = now
            sys.stderr.write(f"sensitivity {phase}: {done}/{total} runs, {now - self._t0:.0f} s elapsed\n")
            sys.stderr.flush()


def _g(v) -> str:
    return "-" if v is None else f"{v:.4g}"


def sensitivity_table(rows) -> Table:
    t = Table(title="Published figures with their seed spread and constant band")
    for col in ("experiment", "machine", "row", "published", "simulated", "seed p5-p95", "constant band",
                "top constants (mu*)", "verdict"):
        t.add_column(col, overflow="fold")
    style = {"reproduced": "green", "direction only": "yellow", "not reproduced": "red", "fitted": "dim",
             "no result": "red"}
    for r in rows:
        top = ", ".join(f"{c['key']} ({c['mu_star']:.3g})" for c in r.top) or "none"
        if r.within_seed_noise:
            top += " [yellow](within seed noise)[/]"
        # The verdict's class and reason, as `schedlab reproduce` prints them for the row.
        verdict = f"[{style.get(r.verdict, 'default')}]{r.verdict or '-'}[/]" + (f" ({r.why})" if r.why else "")
        if r.needed:
            verdict += f"\n{r.needed}" + (" [yellow]WARNING: outside its band[/]" if r.needed_outside_band else "")
        t.add_row(r.experiment, r.machine, f"{r.config} {r.metric}", _g(r.published), _g(r.simulated),
                  f"{_g(r.seed_p5)}..{_g(r.seed_p95)} ({r.n_seeds})",
                  f"{_g(r.constant_min)}..{_g(r.constant_max)} ({r.n_design} runs)", top, verdict)
    return t


@app.command()
def sensitivity(
    experiment: list[str] | None = typer.Argument(None, help="Experiments with published figures (default: all "
                                                     "of them).", show_default=False),
    quick: bool = typer.Option(False, "--quick", help="Shorter runs (the experiments' quick settings)."),
    seeds: int | None = typer.Option(None, "--seeds", "-n", min=1, help="Seeds at the nominal constants "
                                        "(default: the verdict's)."),
    trajectories: int = typer.Option(4, "--trajectories", "-r", min=1, help="Morris trajectories (k + 1 runs each)."),
    levels: int = typer.Option(4, "--levels", min=2, help="Morris grid levels."),
    constant: list[str] | None = typer.Option(None, "--constant", help="Vary only these constants (repeatable).",
                                                 show_default=False),
    out_dir: Path | None = typer.Option(None, "--out", help="Keep every run here and write sensitivity.json; "
                                           "rerunning with the same --out resumes.", show_default=False),
    executor: str = typer.Option("process", "--executor", "-e", help="process, thread, serial, ray or dask."),
    address: str | None = typer.Option(None, "--address", help="Ray or Dask cluster address (default: local)."),
    workers: int | None = typer.Option(None, "--workers", "-j", min=1, help="Parallel runs (default: CPUs)."),
    json_out: bool = typer.Option(False, "--json", help="Print the rows as JSON."),
    report: bool = typer.Option(False, "--report", help="Also write sensitivity.md and report.html (charts with the "
                                "bands as error bars, a tornado per row) into --out."),
) -> None:
    """Each published figure with its seed spread (p5-p95), its constant band, the three
    constants that move it most (mu*) and `schedlab reproduce`'s verdict on the same row.

    The constant band is the min-max over a Morris design over the bands of the constants
    the figure depends on (SALib); the verdict's bar is in docs/experiments.md. Where a row
    is not reproduced, the table says whether the seed spread widened by the constant band
    reaches the published figure."""
    from ..reproduce import registry
    from ..reproduce.runner import verdict_experiments
    from ..sensitivity.store import RunStore
    from ..sensitivity.study import run_study
    from ..sweep.executors import make_executor

    with errors():
        if report and out_dir is None:
            raise InputError("--report writes into --out DIR: give one")
        exps = verdict_experiments(registry.select(list(experiment or [])))
        names = [e.name for e in registry.select(list(experiment or []))]
        missing = sorted(set(names) - {e.name for e in exps})
        if missing:
            raise InputError(f"no published figures for {', '.join(missing)}: nothing to judge")
        store = RunStore(out_dir)
        try:
            ex = make_executor(executor, workers, address)
            try:
                with _Progress() as bar:
                    rows, designs = run_study(exps, executor=ex, store=store, quick=quick, seeds=seeds,
                                              trajectories=trajectories, levels=levels, only=constant, progress=bar)
            except KeyboardInterrupt:
                from ..sweep.driver import _stop_workers

                # A run in progress has nothing to keep: its workers end now (they ignore SIGINT).
                _stop_workers(ex, executor)
                ex.shutdown(wait=False, cancel_futures=True)
                kept = f"{len(store)} runs kept in {out_dir}; rerun the same command to resume" if out_dir else \
                    "nothing kept (no --out)"
                fail(f"interrupted: {kept}", interrupt_status())
            ex.shutdown(wait=True)
            doc = {"quick": quick, "trajectories": trajectories, "levels": levels,
                   "designs": [{"experiment": d.exp.name, "machine": d.machine, "seeds": list(d.seeds),
                                "varied": [c.key for c in d.kept], "screened_out": d.screened_out,
                                "constants_read_by_engine": d.read_by_engine, "not_varied": d.not_varied}
                               for d in designs],
                   "rows": [r.to_dict() for r in rows]}
            store.write_json("sensitivity.json", doc)
        finally:
            store.close()
        if report:
            from .. import __version__
            from ..sensitivity.report import markdown, sensitivity_report

            (out_dir / "sensitivity.md").write_text(markdown(doc), encoding="utf-8")
            sensitivity_report(out_dir, doc, exps, __version__)
    if json_out:
        print(json.dumps(doc, indent=2))
        return
    for d in designs:
        how = "as the runs read them" if d.read_by_engine else f"{d.screened_out} screened out (no published figure moves)"
        out.print(f"[bold]{d.exp.name}[/] on {d.machine}: {len(d.kept)} constants varied, {how}; "
                  f"{len(d.not_varied)} not varied (zero-width band or set by the experiment); seeds {len(d.seeds)}")
    emit(sensitivity_table(rows))
    bad = [r for r in rows if r.needed_outside_band]
    for r in bad:
        err.print(f"[yellow]warning:[/] {r.experiment} {r.machine} {r.config} {r.metric}: {r.needed}")
