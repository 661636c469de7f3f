"""A study's finished runs on disk, so an interrupted study resumes where it stopped.

::

    DIR/runs/PART.jsonl    one line per finished (scenario, seed): {"key", "seed", "result"}
    DIR/sensitivity.json   the study's rows, written at the end
    DIR/.lock              held while a study writes here

As the sweep store (:mod:`schedlab.sweep.store`): every run is keyed by the hash of its
full scenario and its seed; a line is written whole and flushed as its run finishes, and
a reader skips a line cut short by a kill, so a killed study loses at most the runs in
flight. Each process appends to its own part file. Results are stored without their
per-task list (comparisons read summary figures only).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..errors import InputError

__all__ = ["RunStore", "run_key"]


def run_key(scenario_json: str, seed: int) -> str:
    return hashlib.sha256(f"{scenario_json}\0{int(seed)}".encode()).hexdigest()[:20]


class RunStore:
    """``get(key)`` / ``put(key, seed, result)``; in memory only when ``path`` is None."""

    def __init__(self, path: Path | None):
        self.path = Path(path) if path is not None else None
        self._runs: dict[str, dict] = {}
        self._out = None
        self._lock = None
        if self.path is None:
            return
        (self.path / "runs").mkdir(parents=True, exist_ok=True)
        self._lock = open(self.path / ".lock", "w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise InputError(f"{self.path}: another study is writing here (.lock is held)") from None
        for part in sorted((self.path / "runs").glob("*.jsonl")):
            with open(part, encoding="utf-8") as f:
                for line in f:
                    try:
                        doc = json.loads(line)
                        self._runs[doc["key"]] = doc["result"]
                    except (ValueError, KeyError, TypeError):
                        continue  # a line cut short by a kill: that run is redone
        self._part = self.path / "runs" / f"part-{len(list((self.path / 'runs').glob('*.jsonl'))):05d}-{os.getpid()}.jsonl"

    def __len__(self) -> int:
        return len(self._runs)

    def get(self, key: str) -> dict | None:
        return self._runs.get(key)

    def put(self, key: str, seed: int, result: dict) -> None:
        self._runs[key] = result
        if self.path is None:
            return
        if self._out is None:
            self._out = open(self._part, "a", encoding="utf-8")
        self._out.write(json.dumps({"key": key, "seed": int(seed), "result": result}, separators=(",", ":")) + "\n")
        self._out.flush()

    def write_json(self, name: str, doc: Any) -> Path | None:
        if self.path is None:
            return None
        tmp = self.path / f".{name}.tmp"
        tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.path / name)
        return self.path / name

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None
        if self._lock is not None:
            self._lock.close()
            self._lock = None
