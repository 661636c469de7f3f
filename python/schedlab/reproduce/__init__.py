"""Reproductions of published results: ``schedlab reproduce``.

See :mod:`schedlab.reproduce.registry` for how an experiment is declared and
:mod:`schedlab.reproduce.compare` for how rows are computed.
"""

from .compare import ROW_FIELDS, Row, compare
from .registry import Experiment, Metric, Published, Source, all_experiments, experiment, get, register
from .runner import plan, run_experiments

__all__ = [
    "Experiment",
    "Metric",
    "Published",
    "Source",
    "Row",
    "ROW_FIELDS",
    "register",
    "experiment",
    "get",
    "all_experiments",
    "compare",
    "plan",
    "run_experiments",
]
