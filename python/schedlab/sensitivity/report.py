"""A study's report: the table (sensitivity.md), published-vs-simulated charts with the
bands as error bars, and a tornado chart per row (report.html, png/)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError

__all__ = ["markdown", "bands_of", "read_bands", "sensitivity_report"]


def _g(v: Any) -> str:
    return "-" if v is None else f"{v:.4g}"


def _designs_lines(doc: dict) -> list[str]:
    out = []
    for d in doc.get("designs", []):
        how = (f"{d['screened_out']} screened out (not read by the runs, or moved no published figure)"
               if d["constants_read_by_engine"] else f"{d['screened_out']} screened out (moved no published figure)")
        out.append(f"- {d['experiment']} on {d['machine']}: {len(d['varied'])} constants varied, {how}; "
                   f"{len(d['not_varied'])} not varied (zero-width band, set by the experiment or differing between "
                   f"core types); {len(d['seeds'])} seeds")
    return out


def _verdict(r: dict) -> str:
    # A study written before the verdict was stored has only the flag.
    v = r.get("verdict") or {True: "yes", False: "no", None: "-"}[r["consistent"]]
    if v in ("not reproduced", "no"):
        v = f"**{v}**"
    if r.get("why"):
        v += f" ({r['why']})"
    if r.get("needed"):
        v += f": {r['needed']}" + (" (WARNING: outside its band)" if r.get("needed_outside_band") else "")
    return v


HEADER = ["experiment", "machine", "row", "published", "simulated", "seed p5..p95", "constant band",
          "top constants (mu*)", "verdict"]


def _cells(r: dict) -> list[str]:
    top = ", ".join(f"{c['key']} ({c['mu_star']:.3g})" for c in r["top"]) or "none"
    if r.get("within_seed_noise"):
        top += " (within seed noise)"
    return [r["experiment"], r["machine"], f"{r['config']} {r['metric']}", _g(r["published"]), _g(r["simulated"]),
            f"{_g(r['seed_p5'])}..{_g(r['seed_p95'])} ({r['n_seeds']})",
            f"{_g(r['constant_min'])}..{_g(r['constant_max'])}", top, _verdict(r)]


def markdown(doc: dict) -> str:
    """``doc``: what ``sensitivity.json`` holds."""
    lines = _designs_lines(doc) + ["", "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in _cells(r)) + " |" for r in doc.get("rows", [])]
    return "\n".join(lines) + "\n"


def bands_of(doc: dict) -> dict[tuple[str, str, str, str], tuple[float, float]]:
    """``{(experiment, machine, config, metric): (low, high)}``: each row's seed spread
    widened by its constant band, as the reproduction report draws them."""
    return {(r["experiment"], r["machine"], r["config"], r["metric"]): tuple(r["interval"])
            for r in doc.get("rows", []) if r.get("interval")}


def read_bands(path: Path) -> dict[tuple[str, str, str, str], tuple[float, float]]:
    """:func:`bands_of` a ``sensitivity.json`` file; ValueError naming the file if it is not one."""
    import json

    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        if any(k not in r for r in doc["rows"] for k in ("experiment", "machine", "config", "metric", "interval")):
            raise KeyError("a row lacks a field")
        return bands_of(doc)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror or e}") from None
    except (ValueError, KeyError, TypeError, AttributeError):
        raise InputError(f"{path}: expected the sensitivity.json of `schedlab sensitivity --out DIR` (rows with "
                         f"experiment, machine, config, metric and interval)") from None


def _tornado(rep, r: dict) -> None:
    from ..report.page import PALETTE, mpl, plotly_go

    top = [c for c in r["top"] if c.get("at_low") is not None and c.get("at_high") is not None][::-1]
    if not top:
        return
    ref = r["reference"]
    labels = [f"{c['key']} [{c['low']:.4g}..{c['high']:.4g}]" for c in top]
    lows = [c["at_low"] - ref for c in top]
    highs = [c["at_high"] - ref for c in top]
    plt = mpl()
    fig, ax = plt.subplots(figsize=(7, 0.6 + 0.45 * len(top)))
    ax.barh(labels, lows, left=ref, color=PALETTE[1], label="constant at its band's low edge")
    ax.barh(labels, highs, left=ref, color=PALETTE[0], label="at its high edge")
    ax.axvline(ref, color="black", lw=0.8)
    if r["published"] is not None:
        ax.axvline(r["published"], color="#8c8c8c", ls="--", lw=1, label="published")
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, frameon=False, loc="best")
    title = f"{r['experiment']} {r['machine']} {r['config']} {r['metric']}"
    ax.set_title(title, fontsize=9)
    go = plotly_go()
    pfig = go.Figure()
    pfig.add_bar(y=labels, x=lows, base=ref, orientation="h", name="low edge", marker_color=PALETTE[1])
    pfig.add_bar(y=labels, x=highs, base=ref, orientation="h", name="high edge", marker_color=PALETTE[0])
    pfig.add_vline(x=ref, line_width=1, line_color="black")
    if r["published"] is not None:
        pfig.add_vline(x=r["published"], line_dash="dash", line_color="#8c8c8c", annotation_text="published")
    pfig.update_layout(barmode="overlay", height=120 + 40 * len(top), template="plotly_white", title=title,
                       margin={"t": 40, "l": 10, "r": 10, "b": 30})
    rep.figure(f"tornado-{title}", f"{title}: the figure with each top constant at its band's edges (the others "
               f"nominal, reference seed {_g(ref)})", fig, pfig)


def sensitivity_report(out_dir: Path, doc: dict, experiments: Sequence = (), version: str = "",
                       title: str | None = None):
    """Writes ``report.md``, ``report.html`` and ``png/`` into ``out_dir``."""
    from ..report.page import Report
    from ..report.reproduction import _draw, _panel_rows
    from ..reproduce.compare import Row

    rep = Report(title or "schedlab sensitivity: published figures with the uncertainty of their constants",
                 Path(out_dir))
    rep.text("Per published row: the seed spread (p5..p95 at the nominal constants), the constant band (min..max "
             "of the figure at the reference seed over the screening edges and a Morris design over the bands of "
             "the constants that move it, SALib; shown around the mean over seeds), the three constants that move it "
             "most (mu*, per full band) and the verdict of `schedlab reproduce` on the row (docs/experiments.md); "
             "where it is not reproduced, whether the seed spread widened by the constant band reaches the "
             "published figure. "
             + (f"schedlab {version}." if version else ""))
    rep.text("\n".join(_designs_lines(doc)))
    rows = doc.get("rows", [])
    rep.table(HEADER, [_cells(r) for r in rows])
    bands = bands_of(doc)
    as_rows = [Row(r["experiment"], r["machine"], r["config"], r["metric"], r["unit"], r["published"],
                   r["simulated"], None, r["n_seeds"], False, None, None) for r in rows]
    for exp_name, machine in dict.fromkeys((r.experiment, r.machine) for r in as_rows):
        mine = [r for r in as_rows if r.experiment == exp_name and r.machine == machine]
        rep.heading(f"{exp_name} on {machine}")
        metrics = list(dict.fromkeys(r.metric for r in mine))
        for change in (False, True):
            panels = [(m, _panel_rows(mine, m, change)) for m in metrics if _panel_rows(mine, m, change)]
            if panels:
                kind = "changes" if change else "values"
                _draw(rep, f"{exp_name}-{machine}-{kind}", f"{exp_name} on {machine}: {kind}, simulated with the seed "
                      f"spread widened by the constant band, vs published", panels, ratio=change, bands=bands)
        for r in rows:
            if r["experiment"] == exp_name and r["machine"] == machine:
                _tornado(rep, r)
    rep.write()
    return rep
