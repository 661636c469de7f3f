"""Machine names as ``--machine`` and scenario changes take them: a preset, ``host`` or
``topo(SOCKETS,LLCS,CORES,SMT)``, read by the core (one reading for every command)."""

from __future__ import annotations

import json
from typing import Any

from . import _core
from .errors import core_input

__all__ = ["machine_spec"]


def machine_spec(name: str) -> dict[str, Any]:
    """A ``[machine]`` table from a name, as the core reads one: a preset,
    ``topo(SOCKETS,LLCS,CORES,SMT)`` or ``host`` (the name is checked when the machine is
    built)."""
    with core_input():
        spec = json.loads(_core.machine_spec(name))
    # Only what the name set: the table a user would write.
    return {k: ({f: x for f, x in v.items() if x is not None} if isinstance(v, dict) else v)
            for k, v in spec.items() if v not in (None, False, {})}
