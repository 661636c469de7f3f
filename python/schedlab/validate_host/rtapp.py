"""``schedlab validate-host --rt-app FILE``: one rt-app file on this machine's kernel and
in schedlab, compared per thread from rt-app's own logs.

Host: the file runs under the installed rt-app in a fresh cgroup (as the probes do),
with its ``logdir`` and ``log_basename`` pointed at a temporary directory and, with
``--seconds``, its duration set. rt-app writes one log per thread instance,
``BASENAME-THREAD-INDEX.log``, one line per activation (one iteration of a phase's
loop): ``run`` (wall time of the run events), ``period`` (wall time of the
activation), ``slack`` (the timer's next boundary minus the time the timer event
began: negative when late), ``wu_lat`` (how late the timer woke the thread; 0 when
late), ``c_duration`` and ``c_period`` (what the file asked) (scheduler-tools/rt-app
src/rt-app.c ``run_event`` and ``thread_body``, src/rt-app_utils.c ``log_timing``;
the same columns in 1.0 and upstream).

schedlab: the same file imported on the host's topology, HZ and kernel profile, with
``schedlab.mark`` / ``schedlab.record`` steps around each run-like event and each
timer (measurement only: they cost no simulated time beyond a clock read) and one
record per activation, so each thread's histograms give the same per-activation
means: run, period (the thread's life / its activations), time in the timer event
(slack + wu_lat when on time). The engine's ``timer_latency`` histogram (every timed
wakeup, measured as rt-app and cyclictest measure it) is the wakeup latency of the
one thread that sleeps on timers, where exactly one does; slack is then the time in
the timer less it. A file whose timed sleepers are several gets wu_lat and slack on
the real side only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InputError
from .host import CgroupAccess, HostInfo, child_cpu_ns, cpu_busy_ns

# rt-app's events in the order its parser tries them (prefix match), upstream's list.
EVENTS = ["lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer", "suspend", "resume",
          "memrun", "mem", "iorun", "yield", "barrier", "fork", "sem_post", "sem_wait"]
# What rt-app 1.0 (Debian's) does not know: events it skips, keys it ignores.
NEWER = ["memrun", "fork", "sem_post", "sem_wait", "taskgroup", "util_min", "util_max"]
RUN_LIKE = ("run", "runtime", "mem", "iorun", "memrun")
SCHEDLAB_PREFIX = "rtapp:"

METRICS = [
    ("activations", "", "log lines: iterations of the thread's phases, all instances"),
    ("run_us", "us", "wall time of the run events per activation (rt-app 'run')"),
    ("period_us", "us", "wall time of an activation (rt-app 'period')"),
    ("slack_us", "us", "timer boundary minus the start of the timer event (rt-app 'slack')"),
    ("wu_lat_us", "us", "how late the timer woke the thread (rt-app 'wu_lat')"),
]


class RtAppError(InputError):
    """The file cannot be compared (its problem, named in one line)."""


# ------------------------------------------------------------------ JSON with comments
class Pairs(list):
    """A JSON object as its (key, value) pairs, in order and with repeated keys (rt-app's
    workgen files repeat keys)."""

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self:
            if k == key:
                return v
        return default

    def set(self, key: str, value: Any) -> None:
        for i, (k, _) in enumerate(self):
            if k == key:
                self[i] = (k, value)
                return
        self.append((key, value))


def _strip_comments(text: str) -> str:
    """Drops /* */ and // comments outside strings, and trailing commas (json-c takes
    both; Python's json does not)."""
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        else:
            out.append(c)
        i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def load(text: str, origin: str) -> Pairs:
    try:
        doc = json.loads(_strip_comments(text), object_pairs_hook=Pairs)
    except json.JSONDecodeError as e:
        raise RtAppError(f"{origin}:{e.lineno}: json: {e.msg}") from None
    if not isinstance(doc, Pairs) or not isinstance(doc.get("tasks"), Pairs):
        raise RtAppError(f"{origin}: tasks: expected an rt-app file (an object with a \"tasks\" object)")
    return doc


def dump(v: Any) -> str:
    if isinstance(v, Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {dump(x)}" for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(dump(x) for x in v) + "]"
    return json.dumps(v)


def event_of(key: str) -> str | None:
    return next((e for e in EVENTS if key.startswith(e)), None)


def phases(thread: Pairs) -> list[Pairs]:
    """A thread's phase objects (the thread itself when it has no "phases")."""
    ph = thread.get("phases")
    return [v for _, v in ph] if isinstance(ph, Pairs) else [thread]


def used(doc: Pairs) -> set[str]:
    """The events (and newer thread keys) the file uses."""
    out: set[str] = set()
    for _, t in doc.get("tasks"):
        for key in ("taskgroup", "util_min", "util_max"):
            if t.get(key) is not None or any(p.get(key) is not None for p in phases(t)):
                out.add(key)
        for p in phases(t):
            for k, _ in p:
                e = event_of(k)
                if e:
                    out.add(e)
    return out


def timer_threads(doc: Pairs) -> list[str]:
    """Threads with a timed sleep (timer or sleep events)."""
    return [name for name, t in doc.get("tasks") if any(event_of(k) in ("timer", "sleep") for p in phases(t) for k, _ in p)]


# ------------------------------------------------------------------ the host side
def rt_app_binary() -> str | None:
    return shutil.which("rt-app")


def known(binary: str, names: list[str]) -> set[str]:
    """Which of `names` the rt-app binary knows: its parser's keys are NUL-terminated
    strings in the program (rt-app has no --version)."""
    data = Path(binary).read_bytes()
    return {n for n in names if b"\0" + n.encode() + b"\0" in data}


def check_binary(doc: Pairs, origin: str, binary: str) -> None:
    newer = sorted(used(doc) & set(NEWER))
    missing = sorted(set(newer) - known(binary, newer))
    if missing:
        raise RtAppError(f"{origin}: uses {', '.join(missing)}, which {binary} does not know (rt-app 1.0 skips or ignores it): "
                         "run it with upstream rt-app")


def host_doc(doc: Pairs, logdir: str, seconds: float | None) -> Pairs:
    """The file as run on the host: logs into `logdir`, duration `seconds` if given."""
    d = json.loads(dump(doc), object_pairs_hook=Pairs)
    g = d.get("global")
    if not isinstance(g, Pairs):
        g = Pairs()
        d.set("global", g)
    g.set("logdir", logdir)
    g.set("log_basename", "rtapp")
    if seconds is not None:
        g.set("duration", max(1, int(round(seconds))))
    if isinstance(g.get("ftrace"), str):
        g.set("ftrace", False)  # rt-app 1.0 reads a boolean; tracing does not change the workload
    return d


def parse_log(text: str) -> list[dict[str, int]]:
    """The activation lines of one rt-app thread log, by column name."""
    cols: list[str] = []
    rows = []
    for line in text.splitlines():
        if line.startswith("#idx"):
            cols = ["idx"] + line.split()[1:]
            continue
        if not line.strip() or line.startswith("#") or not cols:
            continue
        vals = line.split()
        if len(vals) == len(cols):
            rows.append(dict(zip(cols, (int(v) for v in vals))))
    return rows


def logs_by_thread(logdir: str, names: list[str]) -> dict[str, list[dict[str, int]]]:
    """Every instance's log lines, by thread name (rtapp-NAME-INDEX.log)."""
    out: dict[str, list[dict[str, int]]] = {n: [] for n in names}
    files = os.listdir(logdir)
    for n in names:
        pat = re.compile(rf"^rtapp-{re.escape(n)}-(\d+)\.log$")
        for f in sorted(files):
            if pat.match(f):
                out[n] += parse_log(Path(logdir, f).read_text())
    return out


def real_figures(rows: list[dict[str, int]]) -> dict[str, float]:
    if not rows:
        return {"activations": 0.0}
    out = {"activations": float(len(rows)), "run_us": statistics.fmean(r["run"] for r in rows),
           "period_us": statistics.fmean(r["period"] for r in rows)}
    timed = [r for r in rows if r.get("c_period", 0) > 0]
    if timed:
        out["slack_us"] = statistics.fmean(r["slack"] for r in timed)
        out["wu_lat_us"] = statistics.fmean(r["wu_lat"] for r in timed)
    return out


def run_host(doc: Pairs, origin: str, access: CgroupAccess, seconds: float | None) -> dict[str, Any]:
    """One rt-app run in a fresh cgroup: per-thread figures, rt-app's CPU time and the
    rest of the host's meanwhile."""
    from .configs import Config
    from .probe import Cgroup, ProbeError

    binary = rt_app_binary()
    if binary is None:
        raise ProbeError("rt-app is not installed (Debian: apt-get install rt-app)")
    names = [n for n, _ in doc.get("tasks")]
    cg = Cgroup(access, f"schedlab-{os.getpid()}-rtapp")
    with tempfile.TemporaryDirectory(prefix="schedlab-rtapp-") as tmp:
        try:
            cg.set_limits(Config("rt-app", origin, "tool"))
            procs = cg.procs_file()

            def enter() -> None:
                with open(procs, "w") as f:
                    f.write(str(os.getpid()))

            path = Path(tmp, "workload.json")
            path.write_text(dump(host_doc(doc, tmp, seconds)))
            g = doc.get("global") or Pairs()
            duration = seconds if seconds is not None else float(g.get("duration", -1))
            if duration <= 0:
                raise RtAppError(f"{origin}: global.duration: the file runs until stopped; give --seconds")
            busy0, own0, t0 = cpu_busy_ns(), child_cpu_ns(), time.monotonic_ns()
            done = subprocess.run([binary, str(path)], capture_output=True, text=True, preexec_fn=enter,
                                  timeout=duration + 60, cwd=tmp)
            busy1, own1, t1 = cpu_busy_ns(), child_cpu_ns(), time.monotonic_ns()
            if done.returncode != 0:
                crit = [x for x in (done.stdout + done.stderr).splitlines() if "<crit>" in x or "<error>" in x]
                raise ProbeError(f"rt-app {origin} exited with {done.returncode}: {'; '.join(crit[-3:]) or done.stderr[-300:]}")
            out: dict[str, Any] = {"elapsed_ns": t1 - t0, "cpu_ns": own1 - own0,
                                   "threads": {n: real_figures(rows) for n, rows in logs_by_thread(tmp, names).items()}}
            if busy0 is not None and busy1 is not None:
                out["others_cpu_ns"] = max(0, busy1 - busy0 - out["cpu_ns"])
            return out
        finally:
            cg.remove()


# ------------------------------------------------------------------ the simulated side
def _instrumented_phase(thread: str, phase: Pairs) -> Pairs:
    out = Pairs()
    for k, v in phase:
        e = event_of(k)
        if e in RUN_LIKE or e == "timer":
            out.append(("schedlab.mark", None))
            out.append((k, v))
            out.append(("schedlab.record", {"histogram": f"{SCHEDLAB_PREFIX}{thread}:{'timer' if e == 'timer' else 'run'}"}))
        else:
            out.append((k, v))
    if any(event_of(k) for k, _ in phase):
        out.append(("schedlab.record", {"histogram": f"{SCHEDLAB_PREFIX}{thread}:act"}))
    return out


def instrumented(doc: Pairs) -> str:
    """The file with measuring steps around each run and timer event and at the end of
    each activation, as JSON text for schedlab's importer (which numbers nothing: keys
    repeat, as workgen files do)."""
    d = json.loads(dump(doc), object_pairs_hook=Pairs)
    for name, t in d.get("tasks"):
        ph = t.get("phases")
        if isinstance(ph, Pairs):
            for i, (pn, p) in enumerate(ph):
                ph[i] = (pn, _instrumented_phase(name, p))
        else:
            keep = Pairs((k, v) for k, v in t if not event_of(k))
            events = Pairs((k, v) for k, v in t if event_of(k))
            t[:] = keep + _instrumented_phase(name, events)
    return dump(d)


def sim_scenario(doc: Pairs, origin: str, info: HostInfo, seconds: float | None) -> dict[str, Any]:
    from ..scenario import Scenario

    s = Scenario.from_rt_app(instrumented(doc), origin=origin, machine="host")
    d = s.doc
    d["kernel"]["profile"] = info.profile
    if info.hz:
        d["kernel"].setdefault("tunables", {})["hz"] = info.hz
    if seconds is not None:
        d["run"]["duration_s"] = float(max(1, int(round(seconds))))
    return d


def sim_figures(doc: Pairs, raw: dict[str, Any]) -> dict[str, dict[str, float]]:
    hists = raw.get("histograms", {})
    names = [n for n, _ in doc.get("tasks")]
    timed = timer_threads(doc)
    end = raw["engine"]["sim_ns"]
    out: dict[str, dict[str, float]] = {}
    for n in names:
        act = hists.get(f"{SCHEDLAB_PREFIX}{n}:act", {}).get("count", 0)
        f: dict[str, float] = {"activations": float(act)}
        if act:
            run = hists.get(f"{SCHEDLAB_PREFIX}{n}:run", {})
            f["run_us"] = run.get("count", 0) * run.get("mean_ns", 0.0) / act / 1e3
            mine = [t for t in raw["tasks"] if t["name"] == n or re.fullmatch(rf"{re.escape(n)}-\d+", t["name"])]
            life = sum((t["exit_ns"] if t.get("exit_ns") is not None else end) - t["start_ns"] for t in mine)
            f["period_us"] = life / act / 1e3
            timer = hists.get(f"{SCHEDLAB_PREFIX}{n}:timer", {})
            if timer.get("count") and timed == [n]:
                wu = hists.get("timer_latency", {}).get("mean_ns", 0.0) / 1e3
                f["wu_lat_us"] = wu
                f["slack_us"] = timer["mean_ns"] / 1e3 - wu
        out[n] = f
    return out


def compare_file(path: str, info: HostInfo, seconds: float | None, seeds: int, repeats: int, sim_only: bool,
                 on_step: Callable[[str], None] | None = None,
                 guest_halt: dict[str, Any] | None = None) -> dict[str, Any]:
    """The report of one rt-app file: per thread, real (mean and spread over `repeats`
    runs) and simulated (mean over `seeds`) figures, and rows. `guest_halt` is the
    host's measured halt ladder, if any (`halt.py`)."""
    from .. import run_many
    from . import sidebyside as cmp

    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise RtAppError(f"{path}: cannot read: {e.strerror or e}") from None
    doc = load(text, path)
    entry: dict[str, Any] = {"file": path, "threads": [n for n, _ in doc.get("tasks")], "timer_threads": timer_threads(doc)}
    if not sim_only:
        binary = rt_app_binary()
        if binary is None:
            raise RtAppError("rt-app is not installed (Debian: apt-get install rt-app)")
        check_binary(doc, path, binary)
        entry["measurements"] = []
        for r in range(repeats):
            if on_step:
                on_step(f"host: rt-app {path} ({r + 1}/{repeats})")
            entry["measurements"].append(run_host(doc, path, info.cgroup, seconds))
    if on_step:
        on_step(f"schedlab: {path}")
    sim_doc = sim_scenario(doc, path, info, seconds)
    if guest_halt is not None:
        sim_doc["machine"]["guest_halt"] = guest_halt
    runs = run_many(sim_doc, seeds=list(range(1, seeds + 1)))
    per_seed = [sim_figures(doc, r.raw) for r in runs]
    entry["sim_seeds"] = seeds
    entry["sim"] = {n: cmp.mean_figures([p[n] for p in per_seed]) for n in entry["threads"]}
    return recompare_file(entry)


def recompare_file(entry: dict[str, Any]) -> dict[str, Any]:
    """Real means, spreads, other load and rows of a file's entry (no host needed)."""
    from . import sidebyside as cmp

    ms = entry.get("measurements", [])
    entry["others_cpus"] = [m["others_cpu_ns"] / max(1, m["elapsed_ns"]) for m in ms if "others_cpu_ns" in m]
    busy = any(o > cmp.BUSY_CPUS for o in entry["others_cpus"])
    entry["rows"] = {}
    entry["real"] = {}
    for n in entry["threads"]:
        reals = [m["threads"][n] for m in ms if n in m["threads"]]
        real = cmp.mean_figures(reals) if reals else {}
        entry["real"][n] = real
        entry["rows"][n] = cmp.compare(real, entry["sim"].get(n, {}), cmp.spread(reals) if len(reals) > 1 else None, busy,
                                       metrics=METRICS, tolerances={})
    return entry
