"""Byte-identity of results: every example, every experiment scenario (quick form) and
the speed cases in this directory, each seed, against digests committed before the
engine's data structures were optimised.

An optimisation must never change a result. This module runs every case and compares
the SHA-256 of its results (the RunResult JSON without the echo of its configuration:
the scenario's name, machine, kernel version, policy, tunables and features; and
without the engine's own ``events`` counts, which dropping stale events legitimately
changes, its read set ``constants_read`` and its ``wall_ns``) with ``fixtures.json``.
Beside each digest the fixture keeps a few key figures of the case (``KEY_FIGURES``), so
a change of the fixtures reads as a diff (``git diff tests/identity``) and a check that
fails names the figures that moved. A new feature or tunable line moves no digest.

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


# The configuration a RunResult echoes: the same scenario gives the same echo, and a new
# feature or tunable line would move every digest by itself.
ECHO = ("schema_version", "scenario", "seed", "machine", "nr_cpus", "kernel", "features")
# The engine's own figures: how the run was computed, not what it found.
ENGINE_OWN = ("events", "events_by_kind", "constants_read", "wall_ns")
# Figures kept beside each digest (when the result has them), so a moved case says what
# moved: the time simulated, the scheduler's main counters and the benchmark's first two.
KEY_FIGURES = ("engine.sim_ns", "summary.context_switches", "summary.migrations", "summary.wakeups",
               "summary.cpu_busy_seconds")


def results_of(result_json: str) -> dict:
    """The RunResult without its configuration's echo and the engine's own figures."""
    doc = json.loads(result_json)
    for k in ECHO:
        doc.pop(k, None)
    for own in ENGINE_OWN:
        doc.get("engine", {}).pop(own, None)
    return doc


def digest(result_json: str) -> str:
    """SHA-256 of a RunResult's results (`results_of`)."""
    return hashlib.sha256(json.dumps(results_of(result_json), sort_keys=True).encode()).hexdigest()


def key_figures(result_json: str) -> dict[str, float]:
    """The case's KEY_FIGURES, then the benchmark's first two figures, as far as it has them."""
    doc = json.loads(result_json)
    out: dict[str, float] = {}
    for path in KEY_FIGURES:
        section, name = path.split(".")
        if name in doc.get(section, {}):
            out[path] = doc[section][name]
    for name in sorted(doc.get("workload", {}))[:2]:
        if isinstance(doc["workload"][name], (int, float)):
            out[f"workload.{name}"] = doc["workload"][name]
    return out


def run_all(workers: int | None = None) -> dict[str, tuple[str, str]]:
    """key -> (digest, RunResult JSON) for every case, run in parallel."""
    from schedlab.parallel import Job, map_runs

    todo = cases()
    texts = map_runs([Job(js, seed) for _, js, seed in todo], workers=workers)
    return {key: (digest(text), text) for (key, _, _), text in zip(todo, texts)}


def fixture_entry(text: str) -> dict:
    """What fixtures.json keeps of a case: its digest and its key figures."""
    return {"digest": digest(text), "figures": key_figures(text)}


def differences(got: dict[str, dict], want: dict[str, dict]) -> list[str]:
    """Lines naming every case that is new, missing or changed, with the figures that moved."""
    lines = []
    for k in sorted(got.keys() & want.keys()):
        if got[k]["digest"] == want[k]["digest"]:
            continue
        g, w = got[k].get("figures", {}), want[k].get("figures", {})
        moved = [f"{f} {w.get(f)} -> {g.get(f)}" for f in sorted(g.keys() | w.keys()) if g.get(f) != w.get(f)]
        lines.append(f"changed: {k}" + (f" ({'; '.join(moved)})" if moved else " (no key figure moved)"))
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
    got = {k: fixture_entry(text) for k, (_, text) in results.items()}
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
