"""The catalogue of bad input (docs/errors.md): every kind, its exact message, asserted.

One row of ``CATALOGUE`` per kind: what is fed in and the exact one line a user gets
(``error: ...`` on stderr for the command, ``Type: message`` for the Python API). Each
message must also appear verbatim in docs/errors.md, so the page and the program cannot
drift apart. Adding a kind is one row here and its entry on the page. Commands run in a
fresh directory holding the scenario as ``bad.toml`` (``bad.json``), so paths are short.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import schedlab
from conftest import ROOT

DOC = ROOT / "docs" / "errors.md"
OK_TASK = '[[tasks]]\nname = "t"\nprogram = [{ run = "1ms" }]\n'
OK_RUN = "[run]\nduration_s = 0.01\n"
TWO_CPUS = "[machine]\ntopo = { cores = 2 }\n"
PIXEL6 = "[machine]\npreset = \"pixel6\"\n"


def ok(*parts: str) -> str:
    """A valid scenario with the given sections replacing the defaults."""
    text = "".join(parts)
    if "[machine]" not in text:
        text = TWO_CPUS + text
    if "[[tasks]]" not in text and "[workload]" not in text:
        text += OK_TASK
    if "[run]" not in text:
        text += OK_RUN
    return text


@dataclass(frozen=True)
class Case:
    kind: str
    # A scenario file's text (run as `schedlab run bad.toml` plus `args`), or `args` alone,
    # or a Python callable given the directory.
    scenario: str | bytes | None = None
    args: tuple[str, ...] = ()
    api: Callable[[Path], object] | None = None
    expected: str = ""
    status: int = 2
    file_name: str = "bad.toml"


def run_cli(args: list[str]) -> tuple[int, str, str]:
    from schedlab.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def api_run(seed=None, **kw):
    return lambda d: schedlab.run(str(ROOT / "examples" / "pipe_pingpong.toml"), seed=seed, **kw)


CATALOGUE = [
    # -- scenario files: syntax and fields -------------------------------------------------
    Case("TOML syntax error", "# not TOML\n[machine\ntopo = { cores = 2 }\n",
         expected="error: bad.toml:2:9: unclosed table, expected `]`"),
    Case("JSON syntax error", '{"machine": {"topo": {"cores": 2}},\n "tasks": [}\n', file_name="bad.json",
         expected="error: bad.json:2:12: tasks[0]: expected value"),
    Case("unknown field", ok(OK_TASK, "[run]\nduraton_s = 1.0\n"),
         expected="error: bad.toml:7:1: run.duraton_s: unknown field `duraton_s` (did you mean `duration_s`?), expected one of `duration_s`, "
                  "`until`, `seeds`, `trace`, `max_events`, `warmup_s`"),
    Case("duration without a unit", ok('[[tasks]]\nname = "t"\nprogram = [{ sleep = "10" }]\n'),
         expected="error: bad.toml:5:22: tasks[0].program[0].sleep: '10' has no unit: expected a number with ns, "
                  "us, ms or s"),
    Case("a number where a duration is expected", ok('[[tasks]]\nname = "t"\nprogram = [{ sleep = 5 }]\n'),
         expected="error: bad.toml:5:22: tasks[0].program[0].sleep: invalid type: integer `5`, expected a "
                  "duration string with a unit, like \"10ms\", \"250us\" or \"1.5s\""),
    Case("unknown unit", ok('[[tasks]]\nname = "t"\nprogram = [{ run = "10 parsecs" }]\n'),
         expected="error: bad.toml:5:20: tasks[0].program[0].run: unknown unit 'parsecs' in '10 parsecs': "
                  "expected ns, us, ms or s"),
    Case("negative duration", ok('[[tasks]]\nname = "t"\nprogram = [{ run = "-5ms" }]\n'),
         expected="error: bad.toml:5:20: tasks[0].program[0].run: '-5ms' is not a number followed by a unit"),
    Case("duration too long", ok('[[tasks]]\nname = "t"\nprogram = [{ sleep = "2000000s" }]\n'),
         expected="error: bad.toml:5:22: tasks[0].program[0].sleep: '2000000s' is longer than the 1000000 s a "
                  "duration may be"),
    Case("zero run length", ok("[run]\nduration_s = 0\n"),
         expected="error: bad.toml:4:14: run.duration_s: expected a positive number of seconds, got 0"),
    Case("negative run length", ok("[run]\nduration_s = -1.0\n"),
         expected="error: bad.toml:4:14: run.duration_s: expected a positive number of seconds, got -1"),
    Case("run length too long", ok("[run]\nduration_s = 1e7\n"),
         expected="error: bad.toml:4:14: run.duration_s: 10000000 s is longer than the 1000000 s a run may be"),
    Case("no end to the run", ok("[run]\nseeds = [1]\n"),
         expected="error: bad.toml:3:1: run: expected duration_s or until = \"workload_done\""),
    Case("no seeds", ok("[run]\nduration_s = 1.0\nseeds = []\n"),
         expected="error: bad.toml:5:9: run.seeds: expected at least one seed"),
    Case("no workload", TWO_CPUS + OK_RUN,
         expected="error: bad.toml: workload: the scenario has no workload: give [workload] or [[tasks]]"),
    Case("zero timer period", ok('[[timers]]\nname = "k"\nperiod = "0ms"\n'),
         expected="error: bad.toml:5:10: timers[0].period: expected a positive duration"),
    # -- machines ------------------------------------------------------------------------------
    Case("unknown preset", ok('[machine]\npreset = "no-such-machine"\n'),
         expected="error: bad.toml:2:10: machine.preset: unknown preset 'no-such-machine': expected one of "
                  "ryzen-7950x, milan-72, bergamo, epyc-9654-2s, zen3-2s, pixel6, snapdragon-888, kunpeng-920-2s, "
                  "xeon-80"),
    Case("two machines at once", ok('[machine]\npreset = "pixel6"\ntopo = { cores = 2 }\n'),
         expected="error: bad.toml:1:1: machine: expected exactly one of preset, topo or host = true"),
    Case("impossible topology", ok("[machine]\ntopo = { cores = 0 }\n"),
         expected="error: bad.toml:2:8: machine.topo: sockets, llcs, cores and smt must all be at least 1"),
    Case("more CPUs than modeled", ok("[machine]\ntopo = { sockets = 16, llcs = 16, cores = 8, smt = 2 }\n"),
         expected="error: bad.toml:2:8: machine.topo: 4096 CPUs is more than the 2048 schedlab models"),
    Case("unknown cost field", ok("[machine]\ntopo = { cores = 2 }\ncost = { warp_drive_ns = 1 }\n"),
         expected="error: bad.toml:3:8: machine.cost: unknown cost 'warp_drive_ns': see `schedlab machines NAME` "
                  "for the fields"),
    # -- kernel ------------------------------------------------------------------------------------
    Case("unknown feature", ok("[kernel]\nfeatures = { NO_SUCH = true }\n"),
         expected="error: bad.toml:4:24: kernel.features.NO_SUCH: unknown feature: `schedlab features` lists them"),
    Case("profile outside 3.x-7.x", ok('[kernel]\nprofile = "2.6"\n'),
         expected="error: bad.toml:4:11: kernel.profile: '2.6' is not a kernel version like \"6.5\" or \"6.18.35\" (3.x to 7.x)"),
    Case("unknown tunable", ok("[kernel]\ntunables = { sched_latency = 5 }\n"),
         expected="error: bad.toml:4:14: kernel.tunables.sched_latency: unknown field `sched_latency` (did you mean `sched_latency_ns`?), expected one of "
                  "`hz`, `tick_phase_ns`, `latency_ns`, `sched_latency_ns`, `min_granularity_ns`, "
                  "`sched_min_granularity_ns`, `sched_wakeup_granularity_ns`, `wakeup_granularity_ns`, `base_slice_ns`,"
                  " `sched_base_slice_ns`, `migration_cost_ns`, `sched_migration_cost_ns`, `nr_migrate`, "
                  "`sched_nr_migrate`, `sched_cfs_bandwidth_slice_us`, `busy_factor`, `cpuidle_governor`, "
                  "`cpuidle_max_state`, `cpuidle_latency_req_ns`, `timer_slack_ns`, `timer_migration`, `nohz_full`, "
                  "`watchdog_thresh`, `tlb_batch_min_cpus`, `kpti`, `arm64_repeat_tlbi`, `sched_rt_runtime_us`, "
                  "`sched_rt_period_us`, `sched_rr_timeslice_ms`, `fair_server_runtime_ns`, `fair_server_period_ns`, "
                  "`shared_runq_shard_sz`"),
    # -- tasks -------------------------------------------------------------------------------------
    Case("affinity to no CPU of the machine", ok('[[tasks]]\nname = "t"\naffinity = "7"\nprogram = [{ run = "1ms" }]\n'),
         expected="error: bad.toml:5:12: tasks[0].affinity: no CPU of '7' exists on this machine"),
    Case("malformed cpulist", ok('[[tasks]]\nname = "t"\naffinity = "3-1"\nprogram = [{ run = "1ms" }]\n'),
         expected="error: bad.toml:5:12: tasks[0].affinity: '3-1' is not a valid range below 2048"),
    Case("start CPU outside the affinity",
         ok('[[tasks]]\nname = "t"\naffinity = "0"\ncpu = 1\nprogram = [{ run = "1ms" }]\n'),
         expected="error: bad.toml:6:7: tasks[0].cpu: CPU 1 is not in the task's affinity"),
    Case("nice out of range", ok('[[tasks]]\nname = "t"\nnice = 30\nprogram = [{ run = "1ms" }]\n'),
         expected="error: bad.toml:5:8: tasks[0].nice: 30 is outside -20..19"),
    Case("zero tasks", ok('[[tasks]]\nname = "t"\ncount = 0\nprogram = [{ run = "1ms" }]\n'),
         expected="error: bad.toml:5:9: tasks[0].count: expected at least 1"),
    Case("empty program", ok('[[tasks]]\nname = "t"\nprogram = []\n'),
         expected="error: bad.toml:5:11: tasks[0].program: expected at least one step"),
    Case("wait on a channel nobody signals",
         ok('[[tasks]]\nname = "ping"\nprogram = [{ loop = { body = [{ signal = "ping" }, { wait = "pnig" }] } }]\n'),
         expected="error: bad.toml:5:11: tasks[0].program (ping): waits on channel 'pnig', which no signal step or "
                  "timer ever signals (a misspelt channel name?)"),
    Case("fork of an unknown template", ok('[[tasks]]\nname = "t"\nprogram = [{ fork = { template = "cc2" } }]\n'),
         expected="error: bad.toml:5:34: tasks[0].program[0].fork.template: unknown template 'cc2'"),
    Case("unknown step", ok('[[tasks]]\nname = "t"\nprogram = [{ jump = "1ms" }]\n'),
         expected="error: bad.toml:5:14: tasks[0].program[0]: unknown variant `jump`, expected one of `run`, `run_exp`,"
                  " `run_for`, `sleep`, `poll`, `sleep_exp`, `sleep_timeout`, `mod_timer`, `del_timer`, `wait_timeout`,"
                  " `periodic`, `timer_bench`, `wait`, `signal`, `cond_wait`, `cond_signal`, `cond_broadcast`, "
                  "`barrier`, `yield`, `set_affinity`, `set_group`, `send`, `post`, `wake_all`, `mark`, `rt_app_phase`, `record`, "
                  "`lock`, `unlock`, `fork`, `wait_children`, `loop`, `touch_area`, `touch_pages`, `page_out`, `mem`, `iorun`, `set_sched_attr`, `exit`"),
    # -- groups --------------------------------------------------------------------------------------
    Case("task in an unknown group", ok('[[tasks]]\nname = "t"\ngroup = "nosuch"\nprogram = [{ run = "1ms" }]\n'),
         expected="error: bad.toml:5:9: tasks[0].group: unknown group 'nosuch'"),
    Case("cyclic groups", ok('[[groups]]\nname = "a"\nparent = "b"\n[[groups]]\nname = "b"\nparent = "a"\n'),
         expected="error: bad.toml:5:10: groups[0].parent: unknown group 'b': parents must be listed before children"),
    Case("duplicate group", ok('[[groups]]\nname = "a"\n[[groups]]\nname = "a"\n'),
         expected="error: bad.toml:6:8: groups[1].name: 'a' must be unique, non-empty and not 'root'"),
    Case("quota more than the machine (a typo)", ok('[[groups]]\nname = "g"\ncpu_max = "5000000 100000"\n'),
         expected="error: bad.toml:5:11: groups[0].cpu_max: a quota of 5000000 µs per 100000 µs period is 50.0 "
                  "CPUs' worth, more than the machine's 2: it could never throttle (a typo? \"max 100000\" is no "
                  "limit)"),
    Case("malformed cpu.max", ok('[[groups]]\nname = "g"\ncpu_max = "lots"\n'),
         expected="error: bad.toml:5:11: groups[0].cpu_max: 'lots': expected \"QUOTA PERIOD\" in µs or "
                  "\"max PERIOD\""),
    Case("period outside the kernel's range", ok('[[groups]]\nname = "g"\ncfs_quota_us = 5000\ncfs_period_us = 100\n'),
         expected="error: bad.toml:6:17: groups[0].cfs_period_us: 100 µs is outside the kernel's 1000..1000000"),
    Case("burst above the quota", ok('[[groups]]\nname = "g"\ncfs_quota_us = 5000\ncfs_burst_us = 9000\n'),
         expected="error: bad.toml:6:16: groups[0].cfs_burst_us: 9000 µs exceeds the quota 5000 µs"),
    # -- workload generators -----------------------------------------------------------------------
    Case("unknown generator", ok('[workload]\nkind = "no-such-generator"\n'),
         expected="error: bad.toml:4:8: workload.kind: unknown generator 'no-such-generator': expected one of fibtest, "
                  "make, pingpong, threadpool, rseq_burst, timer_enqueue, dbench_pairs, ui_frame, hackbench, schbench, "
                  "hhvm, netperf, swap_bench"),
    Case("unknown generator parameter", ok('[workload]\nkind = "make"\nparams = { jobz = 4 }\n'),
         expected="error: bad.toml:5:19: workload.params.jobz: unknown field `jobz` (did you mean `jobs`?), expected one of `jobs`, "
                  "`units`, `unit_mean`, `link`, `footprint_kib`, `pipe_chunks`, `as_fraction`"),
    # -- files -------------------------------------------------------------------------------------
    Case("missing file", args=("run", "nosuch.toml"), expected="error: nosuch.toml: no such file"),
    Case("a directory where a file is expected", args=("run", "."),
         expected="error: .: is a directory, expected a .toml or .json file"),
    Case("not UTF-8", b"\xff\xfe[machine]\n",
         expected="error: bad.toml: not UTF-8 text (invalid start byte at byte 0)"),
    # -- limits ------------------------------------------------------------------------------------
    Case("scenario too big for the memory",
         ok('[machine]\ntopo = { sockets = 2, llcs = 16, cores = 8, smt = 2 }\n',
            '[[tasks]]\nname = "w"\ncount = 100000000\nprogram = [{ run = "1ms" }]\n'),
         args=("--max-memory", "2GiB"),
         expected="error: bad.toml:5:9: tasks[0].count: 100000000 tasks on 512 CPUs would need about 334 GiB, "
                  "more than the memory limit of 2.0 GiB (by default the memory available; --max-memory, or "
                  "max_memory= from Python)"),
    Case("cost override the simulator would clamp",
         ok('[machine]\ntopo = { cores = 2 }\ncost = { miss_parallelism = 0 }\n'),
         expected="error: bad.toml:3:8: machine.cost: cost 'miss_parallelism' must be at least 1 (transfers a core "
                  "keeps in flight), got 0"),
    Case("cost override out of an integer field's range",
         ok('[machine]\ntopo = { cores = 2 }\ncost = { "cache.llc_kib" = 1e30 }\n'),
         expected="error: bad.toml:3:8: machine.cost: cost 'cache.llc_kib' must be a whole number up to 2^53, got 1e30"),
    Case("guest halt stages out of order",
         ok('[machine]\ntopo = { cores = 2 }\nguest_halt = { stages = [[0, 0], [200, 9], [100, 50]] }\n'),
         expected="error: bad.toml:3:14: machine.guest_halt: stages[2]: idle_us must be greater than the stage "
                  "before it (200 us), got 100"),
    Case("vendor Energy Model on a machine without one",
         ok('[machine]\npreset = "pixel6"\nenergy_model = { kernel = "vendor" }\n'),
         expected="error: bad.toml:3:27: machine.energy_model.kernel: machine pixel6 has no vendor kernel's Energy "
                  "Model modeled (only snapdragon-888 does; pixel6's comes from mainline gs101.dtsi)"),
    Case("clock reads too often", ok('[[tasks]]\nname = "t"\ncputime_poll = "10ns"\nprogram = [{ run = "1ms" }]\n'),
         expected="error: bad.toml:5:16: tasks[0].cputime_poll: 10 ns: expected at least 100ns"),
    Case("RT priority outside 1..99",
         ok('[[tasks]]\nname = "t"\nsched_attr = { policy = "SCHED_FIFO", priority = 120 }\nprogram = [{ run = "1ms" }]\n'),
         expected="error: bad.toml:5:50: tasks[0].sched_attr.priority: 120 for SCHED_FIFO: expected 1..99 "
                  "(EINVAL as sched_setattr())"),
    Case("deadline bandwidth over the limit",
         "[machine]\ntopo = { cores = 1 }\n[[tasks]]\nname = \"a\"\ncount = 2\n"
         "sched_attr = { policy = \"SCHED_DEADLINE\", runtime = \"40ms\", period = \"100ms\" }\nprogram = [{ run = \"1ms\" }]\n"
         "[[tasks]]\nname = \"c\"\nsched_attr = { policy = \"SCHED_DEADLINE\", runtime = \"40ms\", period = \"100ms\" }\n"
         "program = [{ run = \"1ms\" }]\n[run]\nduration_s = 0.01\n",
         expected="error: bad.toml:10:14: tasks[1].sched_attr: task 'c': refused with EBUSY as sched_setattr(): its "
                  "bandwidth 0.400 on top of the 0.800 admitted exceeds the root domain's 1 CPUs x sched_rt_runtime_us "
                  "/ sched_rt_period_us (950000 / 1000000)"),
    Case("RT runtime beyond its period",
         ok("[kernel]\ntunables = { sched_rt_runtime_us = 2000000 }\n"),
         expected="error: bad.toml:4:12: kernel.tunables: kernel.tunables.sched_rt_runtime_us = 2000000 of "
                  "sched_rt_period_us = 1000000: expected -1 or 0..period, and a positive period (EINVAL as the sysctl)"),
    # -- command-line options ----------------------------------------------------------------------
    Case("seed out of range", ok(), args=("--seed", "-1"),
         expected="error: Invalid value for '--seed' / '-s': Input should be greater than or equal to 0 "
                  "(see 'schedlab run -h')"),
    Case("malformed memory limit", ok(), args=("--max-memory", "2 parsecs"),
         expected="error: Invalid value for '--max-memory': '2 parsecs' is not a size like 2GiB, 512MiB or a number of bytes "
                  "(see 'schedlab run -h')"),
    Case("malformed time limit", ok(), args=("--max-wall-time", "soon"),
         expected="error: Invalid value for '--max-wall-time': 'soon' is not a duration like 30s, 500ms or 2min "
                  "(see 'schedlab run -h')"),
    Case("unknown option", ok(), args=("--colour",),
         expected="error: No such option: --colour (see 'schedlab run -h')"),
    Case("unknown command", args=("simulate",), expected="error: No such command 'simulate'. (see 'schedlab -h')"),
    Case("unknown experiment", args=("reproduce", "no-such-experiment"),
         expected="error: unknown experiment 'no-such-experiment': expected one of bandwidth-whatif, eas, fibtest, "
                  "fibtest-scaling, make-core, mm_cid, rt, shared-runq, swap, swap-sweep, swqueue, timers, timers-dbench, "
                  "timers-ui, timers-ui-android"),
    Case("unknown machine", args=("machines", "no-such-machine"),
         expected="error: unknown preset 'no-such-machine': expected one of ryzen-7950x, milan-72, bergamo, "
                  "epyc-9654-2s, zen3-2s, pixel6, snapdragon-888, kunpeng-920-2s, xeon-80"),
    Case("cyclictest -a: a CPU the machine does not have",
         args=("cyclictest", "-l", "10", "-a", "5", "--machine", "topo(1,1,2,1)"),
         expected="error: -a 5: CPU 5 is not on topo(1,1,2,1) (2 CPUs: 0-1)"),
    Case("cyclictest -a: not a cpulist", args=("cyclictest", "-l", "10", "-a", "x"),
         expected="error: -a x: expected a cpulist such as 0-3,8"),
    Case("cyclictest: a word that is no CPUSET after -a", args=("cyclictest", "-l", "10", "7"),
         expected="error: unexpected argument '7': cyclictest takes a CPUSET after -a only"),
    Case("trace path that cannot be written", ok(), args=("--trace", "no-such-dir/t.json"),
         expected="error: cannot write trace no-such-dir/t.json: No such file or directory (os error 2)"),
    Case("a directory where the trace file goes", ok(), args=("--trace", "."),
         expected="error: cannot write trace .: Is a directory (os error 21)"),
    # -- flags that name what the core knows (issue 50) ---------------------------------------
    Case("unknown preset on --machine", ok(), args=("--machine", "ryzen-7960x"),
         expected="error: Invalid value for '--machine' / '-m': unknown preset 'ryzen-7960x' (did you mean "
                  "ryzen-7950x?): expected one of ryzen-7950x, milan-72, bergamo, epyc-9654-2s, zen3-2s, pixel6, "
                  "snapdragon-888, kunpeng-920-2s, xeon-80, topo(SOCKETS,LLCS,CORES,SMT) or host (see 'schedlab run -h')"),
    Case("misspelt feature on --feature", ok(), args=("--feature", "SIS_NOD"),
         expected="error: Invalid value for '--feature': unknown feature 'SIS_NOD' (did you mean SIS_NODE?): "
                  "`schedlab features` lists them (see 'schedlab run -h')"),
    Case("misspelt tunable on --tunable", ok(), args=("--tunable", "hzz=250"),
         expected="error: Invalid value for '--tunable': unknown tunable 'hzz' (did you mean hz?): `schedlab "
                  "tunables` lists them (see 'schedlab run -h')"),
    Case("kernel release that does not exist", ok('[kernel]\nprofile = "6.66"\n'),
         expected="error: bad.toml:4:11: kernel.profile: '6.66' is not a kernel release: the 6.x series ended at "
                  "6.19 (the newest profile is 7.0)"),
    Case("kernel newer than the profiles", ok(), args=("--profile", "7.9"),
         expected="error: Invalid value for '--profile': '7.9' is newer than the newest kernel profile schedlab "
                  "knows, 7.0 (see 'schedlab run -h')"),
    Case("repeated seed", ok(), args=("--seed", "1", "--seed", "1"),
         expected="error: Invalid value for '--seed' / '-s': seed 1 is given twice: each seed once (a seed's run is "
                  "the same every time, so a second one would count its figures twice) (see 'schedlab run -h')"),
    Case("trace file suffix no format has", ok(), args=("--trace", "x.pdf"),
         expected="error: Invalid value for '--trace': x.pdf: unknown trace file suffix '.pdf': expected .pftrace "
                  "or .perfetto-trace or .pb (perfetto), .json (json), .txt (ftrace), .perf.txt or .perf (perf), .dat "
                  "(trace-cmd), .parquet (parquet), no suffix (perfetto), or name the format with --trace-format "
                  "(see 'schedlab run -h')"),
    Case("YAML file", "name: small\nmachine:\n  preset: ryzen-7950x\n", file_name="bad.yaml",
         expected="error: bad.yaml: a YAML file: schedlab reads TOML or JSON scenarios (docs/scenario.md)"),
    Case("YAML in a .toml file", "name: small\nmachine:\n  preset: ryzen-7950x\n",
         expected="error: bad.toml: YAML, not TOML (line 1 reads as YAML's `key: value`): schedlab reads TOML or "
                  "JSON scenarios (docs/scenario.md)"),
    Case("run length far too long", ok("[run]\nduration_s = 1e300\n"),
         expected="error: bad.toml:4:14: run.duration_s: 1e300 s is longer than the 1000000 s a run may be"),
    Case("a value of the wrong type from a flag", ok(), args=("--set", "tasks.t.count=-1"),
         expected="error: tasks.t.count = -1: invalid value: integer `-1`, expected a whole number ≥ 0 (a change to "
                  "bad.toml)"),
    Case("a tool's count out of range", args=("hackbench", "-g", "0"),
         expected="error: Invalid value for '-g' / '--groups': Input should be greater than or equal to 1 (see "
                  "'schedlab hackbench -h')"),
    Case("a figure compare -m does not know", ok(),
         args=("compare", "bad.toml", "--set", "kernel.profile=6.5", "--set", "kernel.profile=6.6", "-n", "1",
               "-m", "sumary"),
         expected="error: Invalid value for '--metric' / '-m': no figure starts with 'sumary' (did you mean summary?): "
                  "figures start with engine, summary (--all --json lists them) (see "
                  "'schedlab compare -h')"),
    # -- the Python API ----------------------------------------------------------------------------
    Case("seed out of range (Python)", api=api_run(seed=-1),
         expected="InputError: seed: expected a whole number from 0 to 2**64 - 1, got -1"),
    Case("unknown trace format (Python)", api=api_run(seed=1, trace_format="svg"),
         expected="InputError: unknown trace format 'svg': expected one of perfetto, json, ftrace, perf, trace-cmd, parquet"),
    Case("not a scenario (Python)", api=lambda d: schedlab.load_scenario(42),
         expected="TypeError: expected a path, a dict or a Scenario, got int"),
    Case("dict with a value JSON cannot hold (Python)", api=lambda d: schedlab.load_scenario({"name": {1, 2}}),
         expected="ScenarioError: <dict>: not JSON-serializable: Object of type set is not JSON serializable"),
    Case("change to a path that does not exist (Python)",
         api=lambda d: schedlab.load_scenario(str(ROOT / "examples" / "pipe_pingpong.toml")).with_changes(
             {"kernel.colour": "red"}),
         expected="ScenarioError: kernel.colour = \"red\": unknown field `colour`, expected one of `profile`, "
                  "`features`, `tunables`, `governor`, `schedutil`, `sched_ext`, `background`, `background_profile` (a change to {ROOT}/examples/pipe_pingpong.toml)"),
    Case("malformed limit (Python)", api=api_run(seed=1, max_sim_time=-3),
         expected="InputError: max_sim_time: expected a positive duration, got -3"),
    # -- sweep files -------------------------------------------------------------------------------
    # -- rt-app files and traces (docs/interchange.md) --------------------------------------
    Case("rt-app: unknown event", '{\n  "tasks": {\n    "t": { "loop": 1, "jump": 1000 }\n  }\n}\n', file_name="bad.json",
         expected='error: bad.json:3: tasks.t.jump: unknown event \'jump\': expected one of lock, unlock, wait, signal, broad, sync, sleep, runtime, run, timer, suspend, resume, memrun, mem, iorun, yield, barrier, fork, sem_post, sem_wait (with an optional suffix such as run1), a thread or phase key (instance, loop, phases, priority, policy, cpus, nodes_membind, delay, taskgroup, dl-runtime, dl-period, dl-deadline, util_min, util_max), or "schedlab.STEP"'),
    Case("rt-app: negative duration", '{\n  "tasks": {\n    "t": { "loop": 1, "run": -5 }\n  }\n}\n', file_name="bad.json",
         expected="error: bad.json:3: tasks.t.run: negative duration -5 \u00b5s: expected \u00b5s >= 0"),
    Case("rt-app: broken JSON", '{\n  "tasks": {\n    "t": { "run": 1000,, }\n  }\n}\n', file_name="bad.json",
         expected="error: bad.json:3: json: expected a \"key\" or '}' in an object"),
    Case("rt-app: RT priority outside 1..99",
         '{\n  "tasks": {\n    "t": { "loop": 1, "policy": "SCHED_FIFO", "priority": 0, "run": 1000 }\n  }\n}\n',
         file_name="bad.json",
         expected="error: bad.json:3: tasks.t.priority: 0 for SCHED_FIFO: expected 1..99 (EINVAL as sched_setattr())"),
    Case("SCHED_IDLE with a priority",
         TWO_CPUS + '[[tasks]]\nname = "t"\nsched_attr = { policy = "SCHED_IDLE", priority = 5 }\n'
         'program = [{ run = "1ms" }]\n' + OK_RUN,
         expected="error: bad.toml:5:50: tasks[0].sched_attr.priority: 5 for SCHED_IDLE: expected none (a SCHED_IDLE "
                  "task has no priority or nice; sched_setattr() refuses a sched_priority with EINVAL)"),
    Case("rt-app: SCHED_IDLE with a priority",
         '{\n  "tasks": {\n    "t": { "loop": 1, "policy": "SCHED_IDLE", "priority": 5, "run": 1000 }\n  }\n}\n',
         file_name="bad.json",
         expected="error: bad.json:3: tasks.t.priority: 5 for SCHED_IDLE: expected none (SCHED_IDLE has no priority or nice)"),
    Case("custom slice before 6.12",
         TWO_CPUS + '[kernel]\nprofile = "6.6"\n[[tasks]]\nname = "t"\nslice_us = 1000\nprogram = [{ run = "1ms" }]\n' + OK_RUN,
         expected="error: bad.toml:7:12: tasks[0].slice_us: a custom slice needs kernel 6.12 or later "
                  "(sched_attr.sched_runtime on a fair task); the profile is 6.6"),
    Case("custom slice out of range",
         TWO_CPUS + '[kernel]\nprofile = "6.12"\n[[tasks]]\nname = "t"\nslice_us = 50\nprogram = [{ run = "1ms" }]\n' + OK_RUN,
         expected="error: bad.toml:7:12: tasks[0].slice_us: 50 us: expected 100..100000 (0.1 to 100 ms, the range "
                  "__setparam_fair() clamps to)"),
    Case("schedutil rate limits without schedutil",
         PIXEL6 + '[kernel]\ngovernor = "performance"\nschedutil = { rate_limit_us = 500 }\n[[tasks]]\nname = "t"\nprogram = [{ run = "1ms" }]\n' + OK_RUN,
         expected="error: bad.toml:5:13: kernel.schedutil: needs governor = \"schedutil\" on a machine with an Energy "
                  "Model (no schedutil policy to apply it to)"),
    Case("schedutil rate limits: one per policy",
         PIXEL6 + '[kernel]\ngovernor = "schedutil"\nschedutil = { up_rate_limit_us = 500, down_rate_limit_us = [5000, 20000] }\n'
         '[[tasks]]\nname = "t"\nprogram = [{ run = "1ms" }]\n' + OK_RUN,
         expected="error: bad.toml:5:60: kernel.schedutil.down_rate_limit_us: 2 values: expected one for every policy "
                  "or a list of 3, one per cpufreq policy in CPU order"),
    Case("trace: event line missing a field", args=("trace-info", "bad.trace"),
         scenario="# tracer: nop\n   bash-12 [000] 1.000000: sched_switch: prev_comm=a prev_pid=1\nthis is garbage\n",
         file_name="bad.trace", expected="error: bad.trace:2: sched_switch.prev_state: missing field prev_state"),
    Case("trace: CPU beyond what schedlab models", args=("trace-info", "bad.trace"),
         scenario="# tracer: nop\n  <idle>-0 [99999] 1.000000: cpu_idle: state=1 cpu_id=99999\n",
         file_name="bad.trace", expected="error: bad.trace:2: cpu: CPU 99999 is beyond the 2048 CPUs schedlab models"),
    Case("trace: .gz file that is not gzip", args=("trace-info", "bad.trace.gz"), scenario="# tracer: nop\n",
         file_name="bad.trace.gz",
         expected="error: bad.trace.gz: not gzip-compressed or cut short: expected a .gz file whole (name a plain-text file without .gz)"),
    Case("background profile: the file is missing",
         TWO_CPUS + '[kernel]\nbackground = "kernel"\nbackground_profile = "host.toml"\n' + OK_TASK + OK_RUN,
         expected="error: bad.toml:5:22: kernel.background_profile: cannot read host.toml: No such file or directory (os error 2)"),
    Case("background profile: a rate of zero",
         TWO_CPUS + '[kernel.background_profile]\norigin = "estimate: by hand"\n[[kernel.background_profile.source]]\n'
         'name = "sshd"\nwakeups_per_s = 0\nrun_us = 50.0\n' + OK_TASK + OK_RUN,
         expected="error: bad.toml:7:17: kernel.background_profile.source[0].wakeups_per_s: expected a rate above 0 and at "
                  "most 1000000, got 0"),
    Case("sweep output outside its directory", args=("sweep", "sweep.toml"),
         scenario='base = "scenario.toml"\nout = "../../elsewhere"\n[parameters]\n"kernel.profile" = ["6.5", "6.6"]\n',
         file_name="sweep.toml",
         expected="error: sweep.toml: out: '../../elsewhere' must be a relative path inside the sweep file's "
                  "directory (give another place with --out)"),
]


def outcome(case: Case, tmp_path: Path) -> tuple[int, str]:
    """(exit status or -1 for the API, the one line a user sees)."""
    if case.scenario is not None:
        data = case.scenario.encode() if isinstance(case.scenario, str) else case.scenario
        (tmp_path / case.file_name).write_bytes(data)
        (tmp_path / "scenario.toml").write_text(ok())
    if case.api is not None:
        try:
            case.api(tmp_path)
        except Exception as e:  # noqa: BLE001 - the type is part of the expected line
            return -1, f"{type(e).__name__}: {e}"
        return -1, "(no error)"
    args = list(case.args)
    if case.scenario is not None and args[:1] not in (["sweep"], ["trace-info"], ["compare"]):
        args = ["run", case.file_name] + args
    code, out, err = run_cli(args)
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return code, lines[0]


@pytest.mark.parametrize("case", CATALOGUE, ids=lambda c: c.kind)
def test_bad_input_gets_its_exact_message(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, line = outcome(case, tmp_path)
    expected = case.expected.replace("{ROOT}", str(ROOT))
    assert line == expected
    if case.api is None:
        assert code == case.status


def test_catalogue_is_documented():
    text = DOC.read_text(encoding="utf-8")
    blocks = "\n".join(re.findall(r"```text\n(.*?)```", text, flags=re.S))
    documented = set(blocks.splitlines())
    missing = [c.kind for c in CATALOGUE if c.expected.replace("{ROOT}", "<repo>") not in documented]
    assert not missing, f"not in docs/errors.md: {missing}"
    assert len(CATALOGUE) >= 30


if __name__ == "__main__":  # pragma: no cover - prints what each case gives, to write the table
    import tempfile

    os.chdir(tempfile.mkdtemp())
    for c in CATALOGUE:
        d = Path(tempfile.mkdtemp())
        os.chdir(d)
        code, line = outcome(c, d)
        mark = "ok " if line == c.expected.replace("{ROOT}", str(ROOT)) else "DIFF"
        print(f"{mark} [{c.kind}] ({code})\n     {line}")
