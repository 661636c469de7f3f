"""JSON Schemas of schedlab's machine-readable output (documented in docs/schema.md).

- ``run-result.schema.json``: ``schedlab run --json``
- ``reproduce-rows.schema.json``: ``schedlab reproduce --json``
"""

from __future__ import annotations

import json
from importlib import resources


def load(name: str) -> dict:
    """Returns a schema by file stem: ``load("reproduce-rows")``."""
    return json.loads(resources.files(__package__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8"))
