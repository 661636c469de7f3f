"""A sweep's results directory: the dataset and what it knows about the sweep.

::

    DIR/sweep.json                 the spec as run: parameters, points and their keys, seeds
    DIR/rows/part-*.parquet        the dataset: one row per (point, seed), appended in parts
    DIR/failures/KEY-sSEED.json    runs that failed (retried on the next run), with the error
    DIR/.lock                      held while a sweep writes here

Every part file is written to a temporary name, flushed to disk and renamed into place,
so a reader (or a resumed sweep) sees whole files or nothing: a killed process can lose
rows it had not written yet, never half a row. A row is keyed by ``point_key`` (the
hash of the point's full scenario) and ``seed``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError

__all__ = ["Store", "arrow_table", "read_parquet_dir", "PARAM_PREFIX"]

PARAM_PREFIX = "param."
INT_COLUMNS = ("point", "seed", "nr_cpus")


def _pa():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - a default dependency
        raise InputError("sweep results need pyarrow: pip install pyarrow") from None
    return pa, pq


def _column_type(pa, name: str, values: Sequence[Any], fixed: dict[str, Any]):
    if name in fixed:
        return fixed[name]
    if name in INT_COLUMNS:
        return pa.int64()
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.bool_()
    if present and all(isinstance(v, str) for v in present):
        return pa.string()
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.float64()  # every figure and tunable: one type in every part file
    return pa.string()


def _cast(v: Any, typ) -> Any:
    import pyarrow as pa

    if v is None:
        return None
    if typ == pa.float64():
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan
    if typ == pa.string() and not isinstance(v, str):
        return json.dumps(v)
    return v


def arrow_table(rows: Sequence[dict[str, Any]], fixed_types: dict[str, Any] | None = None):
    """Rows (dicts) -> a pyarrow Table, columns in first-seen order, with stable types:
    ``point``/``seed``/``nr_cpus`` int64, numbers float64, text string, flags bool, and
    ``fixed_types`` for the parameter columns."""
    pa, _ = _pa()
    names = list(dict.fromkeys(k for r in rows for k in r))
    fixed = fixed_types or {}
    arrays, fields = [], []
    for n in names:
        vals = [r.get(n) for r in rows]
        typ = _column_type(pa, n, vals, fixed)
        arrays.append(pa.array([_cast(v, typ) for v in vals], type=typ))
        fields.append(pa.field(n, typ))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def param_types(values_by_param: dict[str, Sequence[Any]]) -> dict[str, Any]:
    """An Arrow type per parameter column from all of its values (ints stay int64, any
    float makes float64, anything else but text or flags is JSON text)."""
    pa, _ = _pa()
    out = {}
    for name, values in values_by_param.items():
        present = [v for v in values if v is not None]
        if present and all(isinstance(v, bool) for v in present):
            typ = pa.bool_()
        elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            typ = pa.int64()
        elif present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
            typ = pa.float64()
        else:
            typ = pa.string()
        out[f"{PARAM_PREFIX}{name}"] = typ
    return out


def read_parquet_dir(rows_dir: Path, columns: list[str] | None = None):
    """Every part file of ``rows_dir`` as one Arrow table (schemas unified by name: a
    column missing from a part is null there)."""
    pa, pq = _pa()
    parts = sorted(rows_dir.glob("part-*.parquet")) if rows_dir.is_dir() else []
    tables = []
    for p in parts:
        if columns is None:
            tables.append(pq.read_table(p))
        else:
            have = set(pq.read_schema(p).names)
            tables.append(pq.read_table(p, columns=[c for c in columns if c in have]))
    if not tables:
        return pa.table({})
    return pa.concat_tables(tables, promote_options="permissive")


class Store:
    """The results directory of one sweep (see the module doc)."""

    def __init__(self, root: os.PathLike | str):
        self.root = Path(root)
        self.rows_dir = self.root / "rows"
        self.failures_dir = self.root / "failures"
        self._seq = 0

    # -- writing ------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Held while a sweep writes here; a second writer gets a clear error."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise InputError(f"{self.root}: another sweep is writing here (wait for it or stop it)") from None
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            self._clean_temporaries()
            yield
        finally:
            os.close(fd)

    def _clean_temporaries(self) -> None:
        for d in (self.root, self.rows_dir, self.failures_dir):
            if d.is_dir():
                for p in d.glob(".*.tmp"):
                    p.unlink(missing_ok=True)

    def _atomic_write(self, path: Path, write) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        text = json.dumps(manifest, indent=1, ensure_ascii=False, default=str).encode()
        self._atomic_write(self.root / "sweep.json", lambda f: f.write(text))

    def append(self, rows: Sequence[dict[str, Any]], fixed_types: dict[str, Any] | None = None) -> Path | None:
        """Writes ``rows`` as one new part file (atomically); returns its path."""
        if not rows:
            return None
        _, pq = _pa()
        table = arrow_table(rows, fixed_types)
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S%f")
        self._seq += 1
        path = self.rows_dir / f"part-{stamp}-{os.getpid()}-{self._seq:05d}.parquet"
        self._atomic_write(path, lambda f: pq.write_table(table, f))
        for r in rows:
            self.failure_path(r["point_key"], r["seed"]).unlink(missing_ok=True)
        return path

    def failure_path(self, key: str, seed: int) -> Path:
        return self.failures_dir / f"{key}-s{seed}.json"

    def record_failure(self, key: str, seed: int, point: int, params: dict[str, Any], error: str) -> None:
        doc = json.dumps({"point_key": key, "seed": seed, "point": point, "params": params, "error": error,
                          "when": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")},
                         default=str).encode()
        self._atomic_write(self.failure_path(key, seed), lambda f: f.write(doc))

    # -- reading ------------------------------------------------------------------
    def manifest(self) -> dict[str, Any] | None:
        p = self.root / "sweep.json"
        if not p.is_file():
            return None
        return json.loads(p.read_text(encoding="utf-8"))

    def done(self) -> list[tuple[str, int]]:
        """(point_key, seed) of every stored row (with repeats, if any ever happened)."""
        t = read_parquet_dir(self.rows_dir, ["point_key", "seed"])
        if t.num_rows == 0:
            return []
        return list(zip(t.column("point_key").to_pylist(), t.column("seed").to_pylist()))

    def failures(self) -> list[dict[str, Any]]:
        if not self.failures_dir.is_dir():
            return []
        out = []
        for p in sorted(self.failures_dir.glob("*.json")):
            with contextlib.suppress(OSError, ValueError):
                out.append(json.loads(p.read_text(encoding="utf-8")))
        return out

    def table(self):
        """The whole dataset as one Arrow table."""
        return read_parquet_dir(self.rows_dir)
