"""One report, three renderings: ``report.md`` (Markdown linking the PNGs),
``report.html`` (one self-contained page: interactive plotly figures with plotly.js
inlined once, no network needed) and ``png/*.png`` (matplotlib, Agg backend: no display,
no browser).

A report is a list of blocks (headings, paragraphs, tables, figures); each figure is
drawn twice, by matplotlib for the PNG and by plotly for the page, from the same data.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Report", "mpl", "PALETTE", "series_colors", "slug"]

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
PNG_DPI = 110


def series_colors(n: int) -> list[str]:
    """``n`` colours, no two alike: the Okabe-Ito palette for up to 8 series, then hues
    spread evenly around the wheel in two lightness bands (the palette wrapped round
    before, so series 9 looked like series 1)."""
    import colorsys

    if n <= len(PALETTE):
        return list(PALETTE[:n])
    out = []
    for i in range(n):
        light = 0.42 if i % 2 == 0 else 0.62
        r, g, b = colorsys.hls_to_rgb(i / n, light, 0.75)
        out.append(f"#{round(r * 255):02X}{round(g * 255):02X}{round(b * 255):02X}")
    return out

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1180px; margin: 2em auto;
       padding: 0 1em; color: #1b1b1b; line-height: 1.45; }
h1 { font-size: 1.6em; border-bottom: 2px solid #0072B2; padding-bottom: .2em; }
h2 { font-size: 1.25em; margin-top: 2em; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: .8em 0; font-size: .9em; }
th, td { border: 1px solid #d0d0d0; padding: .25em .6em; text-align: right; }
th { background: #f3f6fa; } td:first-child, th:first-child { text-align: left; }
code { background: #f3f3f3; padding: 0 .25em; border-radius: 3px; }
figure { margin: 1em 0 2em; } figcaption { color: #555; font-size: .9em; }
.muted { color: #666; font-size: .9em; }
"""


def mpl():
    """matplotlib.pyplot on the Agg backend (selected before pyplot is imported)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": PNG_DPI, "axes.spines.top": False, "axes.spines.right": False,
                         "axes.grid": True, "grid.alpha": 0.3, "axes.prop_cycle": plt.cycler(color=PALETTE),
                         "font.size": 9})
    return plt


def slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")
    return s[:100] or "figure"


def _inline_md(text: str) -> str:
    """Escapes text for HTML, keeping `code` spans and **bold**."""
    out = html.escape(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)


@dataclass
class _Block:
    kind: str
    data: Any


@dataclass
class Report:
    """Collects blocks, then writes Markdown, HTML and PNGs into ``out_dir``."""

    title: str
    out_dir: Path
    blocks: list[_Block] = field(default_factory=list)
    pngs: list[Path] = field(default_factory=list)

    def heading(self, text: str, level: int = 2) -> None:
        self.blocks.append(_Block("heading", (level, text)))

    def text(self, text: str, muted: bool = False) -> None:
        self.blocks.append(_Block("text", (text, muted)))

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        self.blocks.append(_Block("table", (list(headers), [[str(c) for c in r] for r in rows])))

    def figure(self, name: str, caption: str, mpl_fig: Any, plotly_fig: Any = None) -> Path:
        """Saves ``mpl_fig`` as ``png/NAME.png`` (and closes it); the page shows
        ``plotly_fig`` (or the PNG, inlined, if there is none)."""
        png_dir = self.out_dir / "png"
        png_dir.mkdir(parents=True, exist_ok=True)
        path = png_dir / f"{slug(name)}.png"
        mpl_fig.savefig(path, dpi=PNG_DPI, bbox_inches="tight", metadata={"Software": None})
        mpl().close(mpl_fig)
        self.pngs.append(path)
        self.blocks.append(_Block("figure", (path, caption, plotly_fig)))
        return path

    # -- rendering ----------------------------------------------------------------
    def markdown(self) -> str:
        lines = [f"# {self.title}", ""]
        for b in self.blocks:
            if b.kind == "heading":
                level, text = b.data
                lines += ["#" * level + " " + text, ""]
            elif b.kind == "text":
                lines += [b.data[0], ""]
            elif b.kind == "table":
                headers, rows = b.data
                lines.append("| " + " | ".join(headers) + " |")
                lines.append("|" + "|".join(["---"] + ["---:"] * (len(headers) - 1)) + "|")
                lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
                lines.append("")
            else:
                path, caption, _ = b.data
                rel = path.relative_to(self.out_dir).as_posix()
                lines += [f"![{caption}]({rel})", "", f"*{caption}*", ""]
        return "\n".join(lines)

    def html(self) -> str:
        import base64

        parts = [f"<h1>{html.escape(self.title)}</h1>"]
        js_included = False
        for b in self.blocks:
            if b.kind == "heading":
                level, text = b.data
                parts.append(f"<h{level}>{_inline_md(text)}</h{level}>")
            elif b.kind == "text":
                text, muted = b.data
                cls = ' class="muted"' if muted else ""
                for para in text.split("\n\n"):
                    parts.append(f"<p{cls}>{_inline_md(para)}</p>")
            elif b.kind == "table":
                headers, rows = b.data
                head = "".join(f"<th>{_inline_md(h)}</th>" for h in headers)
                body = "".join("<tr>" + "".join(f"<td>{_inline_md(c)}</td>" for c in r) + "</tr>" for r in rows)
                parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
            else:
                path, caption, fig = b.data
                if fig is not None:
                    # plotly.js once, inlined in the first figure: the page needs no network.
                    div = fig.to_html(full_html=False, include_plotlyjs=not js_included,
                                      config={"displaylogo": False, "responsive": True})
                    js_included = True
                else:
                    data = base64.b64encode(path.read_bytes()).decode()
                    div = f'<img alt="{html.escape(caption)}" src="data:image/png;base64,{data}" style="max-width:100%">'
                parts.append(f"<figure>{div}<figcaption>{_inline_md(caption)}</figcaption></figure>")
        body = "\n".join(parts)
        return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                f"<title>{html.escape(self.title)}</title><style>{CSS}</style></head>\n<body>\n{body}\n</body></html>\n")

    def write(self, stem: str = "report") -> tuple[Path, Path]:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        md = self.out_dir / f"{stem}.md"
        page = self.out_dir / f"{stem}.html"
        md.write_text(self.markdown(), encoding="utf-8")
        page.write_text(self.html(), encoding="utf-8")
        return md, page


def plotly_go():
    import plotly.graph_objects as go

    return go


def subplots(rows: int, cols: int, titles: Sequence[str] | None = None, **kw: Any):
    from plotly.subplots import make_subplots

    return make_subplots(rows=rows, cols=cols, subplot_titles=list(titles) if titles else None, **kw)
