"""Byte-identity of results: every example, every experiment scenario (quick form) and
the speed cases in this directory, each seed, against digests committed before the
engine's data structures were optimised.

An optimisation must never change a result. This module runs every case and compares
the SHA-256 of its RunResult JSON (minus the engine's own ``events`` count, which dropping
stale events legitimately changes, its read set ``constants_read`` and its ``wall_ns``) with ``fixtures.json``.

    python tests/identity/cases.py            # check, listing what differs
    python tests/identity/cases.py --update   # after an intended change of the model
    python tests/identity/cases.py --dump DIR # write each result, to diff two commits

A change that is meant to move results (a model fix) regenerates the fixtures in the
same commit and says so; a speed change must leave them alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIXTURES = HERE / "fixtures.json"


def cases() -> list[tuple[str, str, int]]:
    """(key, normalized scenario JSON, seed) for every case, in a stable order."""
    from schedlab.reproduce.registry import all_experiments, seeds_for
    from schedlab.reproduce.runner import plan
    from schedlab.scenario import load_scenario

    out: list[tuple[str, str, int]] = []
    files = sorted((ROOT / "examples").glob("*.toml")) + sorted(HERE.glob("*.toml"))
    for path in files:
        s = load_scenario(path)
        for seed in s.seeds:
            out.append((f"{path.relative_to(ROOT)}#{seed}", s.json, seed))
    for p in plan(all_experiments(), quick=True):
        for seed in seeds_for(p.experiment, True, None):
            out.append((f"reproduce:{p.experiment.name}:{p.machine}:{p.config}#{seed}", p.scenario.json, seed))
    return out


def digest(result_json: str) -> str:
    """SHA-256 of a RunResult with the engine's event count and wall time left out."""
    doc = json.loads(result_json)
    for own in ("events", "events_by_kind", "constants_read", "wall_ns"):
        doc.get("engine", {}).pop(own, None)
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def run_all(workers: int | None = None) -> dict[str, tuple[str, str]]:
    """key -> (digest, RunResult JSON) for every case, run in parallel."""
    from schedlab.parallel import Job, map_runs

    todo = cases()
    texts = map_runs([Job(js, seed) for _, js, seed in todo], workers=workers)
    return {key: (digest(text), text) for (key, _, _), text in zip(todo, texts)}


def differences(got: dict[str, str], want: dict[str, str]) -> list[str]:
    """Lines naming every case that is new, missing or changed."""
    lines = [f"changed: {k}" for k in sorted(got.keys() & want.keys()) if got[k] != want[k]]
    lines += [f"new (no fixture): {k}" for k in sorted(got.keys() - want.keys())]
    lines += [f"missing (fixture without a case): {k}" for k in sorted(want.keys() - got.keys())]
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite fixtures.json from this build")
    ap.add_argument("--dump", metavar="DIR", help="also write every RunResult JSON into DIR")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    results = run_all(args.workers)
    got = {k: d for k, (d, _) in results.items()}
    if args.dump:
        out = Path(args.dump)
        out.mkdir(parents=True, exist_ok=True)
        for k, (_, text) in results.items():
            name = k.replace("/", "_").replace(":", "_").replace("#", "_seed")
            (out / f"{name}.json").write_text(text)
    if args.update:
        FIXTURES.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(got)} digests to {FIXTURES.relative_to(ROOT)}")
        return 0
    want = json.loads(FIXTURES.read_text())
    diff = differences(got, want)
    print("\n".join(diff) if diff else f"all {len(got)} cases identical")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
