"""Reports people would rather look at than read: Markdown, one self-contained HTML
page (plotly) and PNGs (matplotlib, Agg).

- :func:`sweep_report` -- a sweep directory: each metric against each parameter;
- :func:`reproduction_report` -- ``schedlab reproduce --out``: published vs simulated;
- :func:`run_report` -- ``schedlab run --plot``: one scenario's per-run views.
"""

from __future__ import annotations

from .page import Report
from .reproduction import reproduction_report
from .run import run_report
from .sweep import sweep_report

__all__ = ["Report", "sweep_report", "reproduction_report", "run_report"]
