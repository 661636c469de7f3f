"""timers: the timer pull model (6.9) against the push heuristic before it (seed 001).

Three experiments, each on the patch's own benchmark shape:

- ``timers``: the enqueue micro-benchmark. A timer is enqueued and dequeued 1000 times
  in kernel context on an isolated CPU (nohz_full: outside timer housekeeping, so the
  push model's get_nohz_timer_target() walks the sched domains for a busy CPU) while a
  quarter of the other CPUs, drawn per seed, run hogs. ``push`` = TIMER_PULL off,
  ``pull`` = on, same 6.6 profile otherwise. The figure is ns per repetition, from the
  modeled costs of the local path, the domain walk and the remote base lock.
  One factor may be calibrated on the push level; the ratio never is.
- ``timers-dbench``: dbench's network mode (tbench), NR client/server pairs over
  loopback TCP: blocking reads without a timeout; every write re-arms TCP's
  retransmit (200 ms) and the peer's delayed-ACK (40 ms) timers with mod_timer() on
  the sending CPU. Zen 3 server, menu and teo governors; figure:
  operations per second, compared as pull/push ratios per NR (the patch's MB/s and the
  model's ops/s are different units). The published teo table is withheld.
- ``timers-ui``: a UI-frame workload on the Pixel 6 (60 Hz UI and render threads and a
  compositor on the mid/big clusters, background threads on the littles, an
  Android-like set of background kernel timers); figures: each cluster's share of time
  active (cpu_idle state -1), in WFI (state 0) and in the power-down state (1), against
  the patch's residency table turned into shares; and each rail's mean power (the
  device tree's Energy Model, dynamic power at the top OPP: no cpufreq governor and no
  leakage in the model), compared with the patch's per-rail power as pull/push ratios.
- ``timers-ui-android``: the same frame loop placed as Android places it on the Pixel 6:
  gs101's cpusets and cpu cgroups instead of pinning, EAS with schedutil at
  sched_pixel's rate limits, the cgroups' uclamp at the frame loop's steady state, and the
  power HAL's touch boost as a fourth variant; the patch's table is held against
  ``android``. What moves (5 seeds, push): the top-app threads leave the top OPPs of the
  mid and big clusters for low OPPs (UI thread on the A76s at ~0.8 GHz, render thread on
  the X1s at ~0.9-1 GHz, the compositor on littles and A76s), so every cluster's active
  share grows (little 0.07 -> 0.28, mid 0.15 -> 0.41, big 0.11 -> 0.30; the patch's 0.67,
  0.26, 0.22) and CPU power falls 656 -> 210 mW (the patch's rails: 196.6 mW). The
  steady-state clamps change nothing (0.1 % is under every lowest OPP; no background
  thread nears 50 %); the 20 % touch boost moves the UI thread to the X1s (mid 0.26,
  big 0.43). Schedutil sizes each thread's OPP by its own utilization, so the serial
  UI -> render -> compose chain outgrows the 16.7 ms frame: 33 frames a second, not 59
  (the per-frame work is an estimate; Android's ADPF hints, which raise the frame
  threads' uclamp_min from their measured work, are not modelled).
"""

from __future__ import annotations

from ..compare import compare_grouped
from ..registry import Metric, Source, Verdict, experiment, machine_spec, published_source

PROFILE = "6.6"
MODELS = {"push": False, "pull": True}


def _kernel(pull: bool, **tunables) -> dict:
    k = {"profile": PROFILE, "features": {"TIMER_PULL": pull}}
    if tunables:
        k["tunables"] = tunables
    return k


# ---------------------------------------------------------------- enqueue micro-benchmark
@experiment(
    name="timers",
    title="Timer enqueue+dequeue on an isolated CPU, a quarter of the others busy: push (<= 6.8) vs pull (6.9)",
    source=published_source("timers") or Source("001_52e82ace3171c26a.txt", "Testing / Enqueue"),
    machines=["zen3-2s"],
    configs=list(MODELS),
    baseline="push",
    metrics=[
        Metric("ns_per_iteration", "ns", "time of one enqueue + dequeue", calibrate=True),
        Metric("summary.timers_pushed", "timers", "timers the push heuristic placed on another CPU"),
    ],
    seeds=10,
    quick_seeds=3,
    verdict=Verdict(seeds=10),
    description=__doc__.split("\n\n", 1)[1],
)
def build_enqueue(machine: str, config: str, quick: bool) -> dict:
    from ..registry import machine_cpus

    last = machine_cpus(machine) - 1
    return {
        "name": f"timers-enqueue-{config}",
        "machine": machine_spec(machine),
        "kernel": _kernel(MODELS[config], nohz_full=str(last)),
        "workload": {"kind": "timer_enqueue", "params": {"cpu": last, "reps": 1000, "rounds": 5 if quick else 20}},
        "run": {"duration_s": 0.03 if quick else 0.05},
    }


# ---------------------------------------------------------------- dbench pairs
NRS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
GOVERNORS = ["menu", "teo"]
DBENCH_CONFIGS = [f"{g}:NR{n}:{m}" for g in GOVERNORS for n in NRS for m in MODELS]
DBENCH_GROUPS = [([f"{g}:NR{n}:push", f"{g}:NR{n}:pull"], f"{g}:NR{n}:push") for g in GOVERNORS for n in NRS]


@experiment(
    name="timers-dbench",
    title="dbench network mode (tbench pairs over loopback TCP) on Zen 3: pull/push throughput, menu and teo",
    source=published_source("timers-dbench") or Source("001_52e82ace3171c26a.txt", "dbench test"),
    machines=["zen3-2s"],
    configs=DBENCH_CONFIGS,
    baseline="menu:NR1:push",
    metrics=[
        Metric("ops_per_s", "ops/s", "client operations completed per second"),
        Metric("summary.timer_remote_expiries", "timers", "wheel timers expired by another CPU"),
    ],
    seeds=3,
    quick_seeds=2,
    verdict=Verdict(seeds=3, quick=True, why="0.1 s runs: 1 s at 1024 pairs takes a minute a run"),
    compare=lambda exp, runs: compare_grouped(exp, runs, DBENCH_GROUPS),
    description="NR client/server pairs (dbench's NR) exchanging requests over loopback TCP: blocking reads, "
                "TCP's retransmit and delayed-ACK timers re-armed per write; 20/30 us mean operations. "
                "Ratios pull/push per NR and governor. `schedlab reproduce timers-dbench --cost "
                "cpuidle.C2.wake_us=40` has a wakeup from C2 take 40 us on the hardware (default: its "
                "advertised exit latency; the governors still choose by the advertised figures).",
)
def build_dbench(machine: str, config: str, quick: bool) -> dict:
    gov, nr, model = config.split(":")
    pairs = int(nr[2:])
    return {
        "name": f"timers-dbench-{gov}-{nr}-{model}",
        "machine": machine_spec(machine),
        "kernel": _kernel(MODELS[model], cpuidle_governor=gov),
        "workload": {"kind": "dbench_pairs", "params": {"pairs": pairs}},
        "run": {"duration_s": 0.1 if quick else 1.0},
    }


# ---------------------------------------------------------------- UI frames on a phone
CLUSTERS = ["little", "mid", "big"]
UI_METRICS = [Metric(f"{c}_{s}_share", "share", f"{c} cluster: share of time {s}") for c in CLUSTERS
              for s in ("active", "state0", "state1")] + [
    Metric(f"{c}_power_mw", "mW", f"{c} cluster rail: mean dynamic power (Energy Model, top OPP)")
    for c in CLUSTERS + ["cpu"]] + [Metric("frames_per_s", "fps", "frames composed per second")]


@experiment(
    name="timers-ui",
    title="UI frames on a Pixel 6: idle residency per cluster and state, push vs pull",
    source=published_source("timers-ui") or Source("001_52e82ace3171c26a.txt", "Pixel 6 residency"),
    machines=["pixel6"],
    configs=list(MODELS),
    baseline="push",
    metrics=UI_METRICS,
    seeds=5,
    quick_seeds=2,
    verdict=Verdict(seeds=5),
    description="60 Hz UI + render + compositor on the mid/big clusters, background threads on the littles, "
                "Android-like background kernel timers (estimates); shares of each cluster's time per cpu_idle state, "
                "and each rail's mean dynamic power from the device tree's Energy Model (top OPP, no leakage).",
)
def build_ui(machine: str, config: str, quick: bool) -> dict:
    return {
        "name": f"timers-ui-{config}",
        "machine": machine_spec(machine),
        # At the top OPP, as described: the phone's own default is schedutil (timers-ui-android).
        "kernel": {**_kernel(MODELS[config], cpuidle_governor="teo"), "governor": "performance"},
        "workload": {"kind": "ui_frame", "params": {"fps": 60}},
        "run": {"duration_s": 3.0 if quick else 20.0},
    }


# ---------------------------------------------------------------- UI frames as Android runs them
# Android's configuration of the Pixel 6 (gs101) at the patch's date, as device/google/gs101
# sets it (GrapheneOS/device_google_gs101 at 0c4376b09891, 2023-11-30, the last change of
# conf/init.gs101.rc before the patch's 2024-01-30 reply; declared):
# - cpusets at sys.boot_completed (lines 732-737): top-app 0-7, foreground 0-5,
#   background 0-3, system-background 0-3. SurfaceFlinger's main thread joins the top-app
#   cpuset (the device's task_profiles.json SFMainPolicy overrides AOSP's system-background).
# - cpu.shares (lines 780-789): top-app, foreground, system 20480; background 1024.
# - uclamp (lines 741 and 756): the top-app group's uclamp_min 1 (of 1024) and the
#   background group's uclamp_max 512, through Pixel's vendor_sched groups, which the
#   device kept aligned with the cgroups' cpu.uclamp ("cfs_rq clamp is using tg->uclamp
#   setting": /dev/cpuctl/background/cpu.uclamp.max 50 until 98a1a13d, 2023-05-01); here as
#   cgroup v2 cpu.uclamp.min 0.1 % and cpu.uclamp.max 50 %. prefer_idle (line 165) is a
#   vendor extension (as is cpu.uclamp.latency_sensitive): not modelled.
# - the power HAL (powerhint_a1.json, TAUClampBoost): a touch at 60 Hz (INTERACTION_60)
#   raises the top-app uclamp_min to 205 (20 %) for up to 6 s, until DISPLAY_IDLE; the
#   steady state of the frame loop is init's 1. ``android-touch`` runs the boost throughout.
# - cpufreq (lines 172-181): Pixel's sched_pixel governor, schedutil with the Android
#   split of the rate limit: up_rate_limit_us 500 on every cluster, down_rate_limit_us
#   5000 (little) and 20000 (mid, big); the little's down_rate_limit_scale_pow 2 (a
#   sched_pixel scaling of the down limit) is not modelled.
ANDROID_CPUSETS = {"top_app_cpus": "0-7", "background_cpus": "0-3"}
ANDROID_SCHEDUTIL = {"up_rate_limit_us": 500, "down_rate_limit_us": [5000, 20000, 20000]}
TOP_APP_UCLAMP_MIN = 0.1  # percent: vendor_sched ta uclamp_min 1 of 1024
TOUCH_UCLAMP_MIN = 20.0  # percent: the power HAL's INTERACTION_60 boost, 205 of 1024
BACKGROUND_UCLAMP_MAX = 50.0  # percent: 512 of 1024
UI_VARIANTS = ("pinned", "eas", "android", "android-touch")
ANDROID_CONFIGS = [f"{v}:{m}" for v in UI_VARIANTS for m in MODELS]
ANDROID_GROUPS = [([f"{v}:push", f"{v}:pull"], f"{v}:push") for v in UI_VARIANTS]
VARIANT_GROUPS = [([f"{v}:{m}" for v in UI_VARIANTS], f"pinned:{m}") for m in MODELS]


def _android_published() -> list:
    """The patch's table (timers-ui's figures) held against the ``android`` configurations."""
    from dataclasses import replace

    from ..registry import load_published

    return [replace(p, config=" vs ".join(f"android:{c.strip()}" for c in p.config.split(" vs ")))
            for p in load_published("timers-ui")]


def _android_rows(exp, runs):
    rows = compare_grouped(exp, runs, ANDROID_GROUPS)
    # Each variant against the pinned stand-in, per timer model: the change rows only.
    return rows + [r for r in compare_grouped(exp, runs, VARIANT_GROUPS) if " vs " in r.config]


@experiment(
    name="timers-ui-android",
    title="UI frames on a Pixel 6 as Android runs them (cpusets, cgroup uclamp, EAS, schedutil): push vs pull",
    source=published_source("timers-ui") or Source("001_52e82ace3171c26a.txt", "Pixel 6 residency"),
    machines=["pixel6"],
    configs=ANDROID_CONFIGS,
    baseline="pinned:push",
    metrics=[Metric(m.name, m.unit, m.label.replace("top OPP", "top OPP, or the OPPs schedutil chose"))
             for m in UI_METRICS],
    seeds=5,
    quick_seeds=2,
    verdict=Verdict(seeds=5),
    published=_android_published(),
    compare=_android_rows,
    description="timers-ui's frame loop under Android's own placement instead of pinning. ``pinned``: timers-ui "
                "as it is (top-app threads pinned to the mid and big clusters, background to the littles, top "
                "OPP). ``eas``: gs101's cpusets (top-app 0-7, background 0-3) and cpu cgroups (top-app and "
                "system 20480 shares, background 1024), no other affinity, EAS with schedutil at sched_pixel's "
                "rate limits (up 500 us; down 5/20/20 ms). ``android``: plus the cgroups' clamps at the frame "
                "loop's steady state (top-app cpu.uclamp.min 0.1 %, background cpu.uclamp.max 50 %). "
                "``android-touch``: the power HAL's 60 Hz touch boost (top-app cpu.uclamp.min 20 %) held "
                "throughout. The patch's table is held against ``android``. Sources in timers.py.",
)
def build_ui_android(machine: str, config: str, quick: bool) -> dict:
    variant, model = config.split(":")
    doc = build_ui(machine, model, quick)
    doc["name"] = f"timers-ui-{variant}-{model}"
    if variant == "pinned":
        return doc
    params = {**doc["workload"]["params"], **ANDROID_CPUSETS, "cgroups": True}
    if variant != "eas":
        params["top_app_uclamp_min"] = TOUCH_UCLAMP_MIN if variant == "android-touch" else TOP_APP_UCLAMP_MIN
        params["background_uclamp_max"] = BACKGROUND_UCLAMP_MAX
    doc["workload"] = {**doc["workload"], "params": params}
    kernel = doc["kernel"]
    kernel["governor"] = "schedutil"
    kernel["features"] = {**kernel["features"], "ENERGY_AWARE": True}
    kernel["schedutil"] = dict(ANDROID_SCHEDUTIL)
    return doc
