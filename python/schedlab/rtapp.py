"""A workload builder in LISA's style: rt-app workloads written in Python.

Mirrors: ARM-software/lisa ``lisa/wlgen/rta.py`` (``RTAPhase``, ``PeriodicWload``,
``RunWload``, ``SleepWload``, ``TimerWload``, ``BarrierWload``, ...): times in
**seconds** in Python, µs in the JSON; workloads join with ``+`` and repeat with ``*``;
phases join with ``+``; a periodic workload becomes ``run`` + ``timer`` events in a
phase looped ``floor(duration / period)`` times (LISA's own test:
``Periodic(duty_cycle_pct=20, period=100e-3, duration=1)`` gives
``{"loop": 10, "run": 20000, "timer": {"period": 100000, "ref": "unique"}}``).

The builder writes rt-app JSON; :func:`to_scenario` hands that to the same importer
as ``schedlab run workload.json``, so a built workload and its JSON file are one
scenario::

    from schedlab.rtapp import Periodic, Phase, Run, Sleep, to_scenario
    light = Phase(Periodic(duty_cycle_pct=10, period=16e-3, duration=1))
    burst = Phase(Run(5e-3) + Sleep(1e-3), loop=20, cpus=[4, 5, 6, 7])
    s = to_scenario({"ui": light + burst, "bg": Phase(Run(1) * 3)}, machine="pixel6", duration=4)
    schedlab.run(s)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import InputError

__all__ = [
    "Run", "RunFor", "Sleep", "Timer", "Periodic", "Barrier", "Lock", "Unlock", "Yield", "Fork", "SemPost", "SemWait",
    "Phase", "Task", "to_json", "to_scenario",
]


def _us(seconds: float, what: str) -> int:
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not math.isfinite(seconds):
        raise InputError(f"{what}: expected seconds (a number), got {seconds!r}")
    if seconds < 0:
        raise InputError(f"{what}: negative duration {seconds} s")
    return int(round(seconds * 1e6))


class Wload:
    """A workload: a sequence of rt-app events. ``a + b`` runs a then b; ``a * n``
    repeats a n times."""

    def blocks(self) -> list[tuple[int, list[tuple[str, Any]]]]:
        """(loop count, events) blocks: what fits in one rt-app phase each."""
        raise NotImplementedError

    def __add__(self, other: Wload) -> Wload:
        if not isinstance(other, Wload):
            return NotImplemented
        return _Seq((self, other))

    def __mul__(self, n: int) -> Wload:
        if not isinstance(n, int) or n < 0:
            raise InputError(f"a workload repeats a whole number of times, got {n!r}")
        return _Repeat(self, n)

    __rmul__ = __mul__


@dataclass(frozen=True)
class _Event(Wload):
    key: str
    value: Any

    def blocks(self):
        return [(1, [(self.key, self.value)])]


@dataclass(frozen=True)
class _Seq(Wload):
    parts: tuple

    def blocks(self):
        out: list = []
        for p in self.parts:
            for count, evs in p.blocks():
                if count == 1 and out and out[-1][0] == 1:
                    out[-1] = (1, out[-1][1] + evs)
                else:
                    out.append((count, list(evs)))
        return out


@dataclass(frozen=True)
class _Repeat(Wload):
    inner: Wload
    n: int

    def blocks(self):
        b = self.inner.blocks()
        if len(b) == 1:
            return [(b[0][0] * self.n, b[0][1])] if self.n else []
        return [blk for _ in range(self.n) for blk in b]


def Run(duration: float) -> Wload:
    """``run``: work that takes ``duration`` seconds on the calibration CPU."""
    return _Event("run", _us(duration, "Run"))


def RunFor(duration: float) -> Wload:
    """``runtime``: spin for ``duration`` seconds of wall-clock time."""
    return _Event("runtime", _us(duration, "RunFor"))


def Sleep(duration: float) -> Wload:
    """``sleep`` for ``duration`` seconds."""
    return _Event("sleep", _us(duration, "Sleep"))


def Timer(period: float, *, relative: bool = True) -> Wload:
    """``timer``: sleep until the thread's next period boundary (``ref`` "unique")."""
    v: dict[str, Any] = {"ref": "unique", "period": _us(period, "Timer.period")}
    if not relative:
        v["mode"] = "absolute"
    return _Event("timer", v)


def Periodic(duty_cycle_pct: float, period: float, duration: float, *, guaranteed_time: str = "period") -> Wload:
    """LISA's ``PeriodicWload``: run ``duty_cycle_pct`` % of each ``period`` for
    ``duration`` seconds (``floor(duration / period)`` periods); ``guaranteed_time``
    "period" keeps the period with a timer, "sleep" sleeps the rest after each run."""
    if not 0 <= duty_cycle_pct <= 100:
        raise InputError(f"Periodic: duty_cycle_pct {duty_cycle_pct} is outside 0..100")
    per = _us(period, "Periodic.period")
    if per == 0:
        raise InputError("Periodic: period must be > 0")
    n = int(_us(duration, "Periodic.duration") // per)
    run = int(round(per * duty_cycle_pct / 100))
    if guaranteed_time == "period":
        body = _Seq((_Event("run", run), _Event("timer", {"ref": "unique", "period": per})))
    elif guaranteed_time == "sleep":
        body = _Seq((_Event("run", run), _Event("sleep", per - run)))
    else:
        raise InputError(f"Periodic: guaranteed_time '{guaranteed_time}': expected period or sleep")
    return body * n


def Barrier(name: str) -> Wload:
    """``barrier``: wait until every thread using ``name`` has reached it."""
    return _Event("barrier", name)


def Lock(name: str) -> Wload:
    """``lock`` a mutex."""
    return _Event("lock", name)


def Unlock(name: str) -> Wload:
    """``unlock`` a mutex."""
    return _Event("unlock", name)


def Yield() -> Wload:
    """``yield``: sched_yield()."""
    return _Event("yield", "")


def Fork(task: str) -> Wload:
    """``fork`` an instance of another task."""
    return _Event("fork", task)


def SemPost(name: str) -> Wload:
    """``sem_post``."""
    return _Event("sem_post", name)


def SemWait(name: str) -> Wload:
    """``sem_wait``."""
    return _Event("sem_wait", name)


@dataclass(frozen=True)
class Phase:
    """A phase: a workload looped ``loop`` times, with optional ``cpus`` (affinity),
    ``taskgroup`` (cgroup path, "/" = root) and ``priority`` (nice). ``a + b`` makes a
    sequence of phases."""

    wload: Wload
    loop: int = 1
    cpus: Sequence[int] | None = None
    taskgroup: str | None = None
    priority: int | None = None

    def __add__(self, other: Phase | _Phases) -> _Phases:
        return _Phases((self,)) + other

    def to_json(self) -> list[dict[str, Any]]:
        """The rt-app phase objects (one per block the workload splits into)."""
        out = []
        for i, (count, events) in enumerate(self.wload.blocks()):
            ph: dict[str, Any] = {"loop": count * self.loop}
            if i == 0:
                if self.cpus is not None:
                    ph["cpus"] = list(self.cpus)
                if self.taskgroup is not None:
                    ph["taskgroup"] = self.taskgroup
                if self.priority is not None:
                    ph["priority"] = self.priority
            for key, value in events:
                k, n = key, 1
                while k in ph:  # rt-app matches events by prefix: run, run1, run2, ...
                    k, n = f"{key}{n}", n + 1
                ph[k] = value
            out.append(ph)
        return out


@dataclass(frozen=True)
class _Phases:
    phases: tuple

    def __add__(self, other: Phase | _Phases) -> _Phases:
        if isinstance(other, Phase):
            return _Phases(self.phases + (other,))
        if isinstance(other, _Phases):
            return _Phases(self.phases + other.phases)
        return NotImplemented


@dataclass(frozen=True)
class Task:
    """A thread: its phases, ``instance`` copies, the thread ``loop`` (default once;
    -1 = until the run ends), ``delay`` (s), and thread-level ``cpus``, ``priority``,
    ``taskgroup``."""

    phases: Phase | _Phases | Wload
    instance: int = 1
    loop: int = 1
    delay: float = 0.0
    cpus: Sequence[int] | None = None
    priority: int | None = None
    taskgroup: str | None = None

    def to_json(self) -> dict[str, Any]:
        t: dict[str, Any] = {"instance": self.instance, "loop": self.loop}
        if self.delay:
            t["delay"] = _us(self.delay, "Task.delay")
        for k in ("cpus", "priority", "taskgroup"):
            v = getattr(self, k)
            if v is not None:
                t[k] = list(v) if k == "cpus" else v
        p = self.phases
        phases = p.phases if isinstance(p, _Phases) else (p if isinstance(p, Phase) else Phase(p),)
        objs = [o for ph in phases for o in ph.to_json()]
        t["phases"] = {f"p{i}": o for i, o in enumerate(objs)}
        return t


Profile = Mapping[str, Task | Phase | _Phases | Wload]


def to_json(profile: Profile, *, duration: float | None = None, machine: str | None = None,
            kernel: Mapping[str, Any] | None = None, taskgroups: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The rt-app document of ``{task name: Task or phases}``: ``duration`` (s, whole
    seconds as rt-app takes them; None: until every thread ends), and under
    ``"schedlab"`` the machine, the kernel and taskgroup bandwidth
    (``{"/tg1": {"cpu_max": "50000 100000"}}``)."""
    tasks = {name: (t if isinstance(t, Task) else Task(t)).to_json() for name, t in profile.items()}
    doc: dict[str, Any] = {"tasks": tasks}
    glob: dict[str, Any] = {"calibration": "CPU0", "default_policy": "SCHED_OTHER"}
    if duration is not None:
        if duration <= 0 or duration != int(duration):
            raise InputError(f"duration: rt-app takes whole seconds > 0, got {duration}")
        glob["duration"] = int(duration)
    doc["global"] = glob
    ext: dict[str, Any] = {}
    if machine is not None:
        from .scenario import machine_spec

        ext["machine"] = machine_spec(machine)
    if kernel:
        ext["kernel"] = dict(kernel)
    if taskgroups:
        ext["taskgroups"] = {k: dict(v) for k, v in taskgroups.items()}
    if ext:
        doc["schedlab"] = ext
    return doc


def to_scenario(profile: Profile, *, name: str = "rtapp", **kw: Any):
    """The scenario of a profile: :func:`to_json`, then the rt-app importer (the same
    as ``schedlab run`` on the JSON file)."""
    from .scenario import Scenario

    return Scenario.from_rt_app(json.dumps(to_json(profile, **kw)), origin=f"{name}.json")
