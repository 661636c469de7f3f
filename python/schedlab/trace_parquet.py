"""Compact traces: a run's context switches, wakeups and idle transitions as Parquet
tables, for runs whose text trace would be huge (``schedlab run X --trace run.parquet``).

The core streams fixed-width rows into a staging directory as the run goes
(``schedlab_core::trace::columns``); this module turns them into a directory of Parquet
files that DuckDB, pandas or polars read as they are::

    run.parquet/switch.parquet   ts, cpu, prev_pid, prev_state (R, S, X), next_pid
    run.parquet/wakeup.parquet   ts, cpu, pid, target_cpu, kind (waking, wakeup, wakeup_new), from_irq
    run.parquet/idle.parquet     ts, cpu, state (-1: leaving idle)
    run.parquet/tasks.parquet    pid, tgid, ppid, comm, prio, created_ns
    run.parquet/meta.json        nr_cpus, groups, end_ns

``duckdb -c "SELECT next_pid, count(*) FROM 'run.parquet/switch.parquet' GROUP BY 1"``.
Timestamps are ns of simulated time. Other events (timers, migrations, the mechanisms'
own) are in the text, Perfetto and trace.dat forms only.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["FORMAT", "CORE_FORMAT", "staging_path", "write_tables", "read_table"]

#: The format name users give (``--trace-format parquet``), and the core's for its staging form.
FORMAT = "parquet"
CORE_FORMAT = "columns"

_SWITCH = np.dtype([("ts", "<u8"), ("cpu", "<u4"), ("prev_pid", "<u4"), ("next_pid", "<u4"), ("prev_state", "u1"),
                    ("_pad", "V3")])
_WAKEUP = np.dtype([("ts", "<u8"), ("cpu", "<u4"), ("pid", "<u4"), ("target_cpu", "<u4"), ("kind", "u1"),
                    ("from_irq", "u1"), ("_pad", "V2")])
_IDLE = np.dtype([("ts", "<u8"), ("cpu", "<u4"), ("state", "<i4")])
_STATES = pa.array(["R", "S", "X"])
_KINDS = pa.array(["waking", "wakeup", "wakeup_new"])
#: Rows per Parquet row group (and per chunk read from the staging files).
_CHUNK = 1 << 20


def staging_path(path: str | os.PathLike) -> str:
    """Where the core writes the staging rows of a trace going to ``path``."""
    return os.fspath(path) + ".staging"


def _columns(table: str, rows: np.ndarray) -> pa.Table:
    ts = pa.array(rows["ts"].astype(np.int64))
    cpu = pa.array(rows["cpu"].astype(np.int32))
    if table == "switch":
        state = pa.DictionaryArray.from_arrays(pa.array(rows["prev_state"].astype(np.int8)), _STATES)
        return pa.table({"ts": ts, "cpu": cpu, "prev_pid": pa.array(rows["prev_pid"].astype(np.int32)),
                         "prev_state": state, "next_pid": pa.array(rows["next_pid"].astype(np.int32))})
    if table == "wakeup":
        kind = pa.DictionaryArray.from_arrays(pa.array(rows["kind"].astype(np.int8)), _KINDS)
        return pa.table({"ts": ts, "cpu": cpu, "pid": pa.array(rows["pid"].astype(np.int32)),
                         "target_cpu": pa.array(rows["target_cpu"].astype(np.int32)), "kind": kind,
                         "from_irq": pa.array(rows["from_irq"].astype(bool))})
    return pa.table({"ts": ts, "cpu": cpu, "state": pa.array(rows["state"].astype(np.int32))})


def _convert(src: Path, dst: Path, table: str, dtype: np.dtype) -> None:
    size = src.stat().st_size
    if size % dtype.itemsize:
        raise ValueError(f"{src}: {size} bytes is not a whole number of {dtype.itemsize}-byte rows")
    n = size // dtype.itemsize
    rows = np.memmap(src, dtype=dtype, mode="r") if n else np.empty(0, dtype=dtype)
    schema = _columns(table, np.empty(0, dtype=dtype)).schema
    with pq.ParquetWriter(dst, schema, compression="zstd") as w:
        for start in range(0, n, _CHUNK):
            w.write_table(_columns(table, rows[start:start + _CHUNK]), row_group_size=_CHUNK)
        if n == 0:
            w.write_table(_columns(table, rows))


def write_tables(staging: str | os.PathLike, out: str | os.PathLike) -> Path:
    """Turns the core's staging directory into the Parquet directory ``out`` (replacing
    one there) and removes the staging; returns ``out``."""
    src, dst = Path(staging), Path(out)
    if dst.exists():
        shutil.rmtree(dst) if dst.is_dir() else dst.unlink()
    dst.mkdir(parents=True)
    for table, dtype in (("switch", _SWITCH), ("wakeup", _WAKEUP), ("idle", _IDLE)):
        _convert(src / f"{table}.bin", dst / f"{table}.parquet", table, dtype)
    tasks = [json.loads(line) for line in (src / "tasks.jsonl").read_text(encoding="utf-8").splitlines() if line]
    schema = pa.schema([("pid", pa.int32()), ("tgid", pa.int32()), ("ppid", pa.int32()), ("comm", pa.string()),
                        ("prio", pa.int32()), ("created_ns", pa.int64())])
    pq.write_table(pa.Table.from_pylist(tasks, schema=schema), dst / "tasks.parquet", compression="zstd")
    meta = json.loads((src / "meta.json").read_text(encoding="utf-8"))
    meta.pop("row_bytes", None)
    (dst / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    shutil.rmtree(src)
    return dst


def read_table(path: str | os.PathLike, table: str) -> pa.Table:
    """One table (``switch``, ``wakeup``, ``idle`` or ``tasks``) of a compact trace."""
    return pq.read_table(Path(path) / f"{table}.parquet")
