"""Benchmark output in the tools' own format, from a run's RunResult.

- :func:`hackbench_text`: rt-tests hackbench (``Running in process mode with 10 groups
  using 40 file descriptors each (== 400 tasks)`` / ``Each sender will pass 100 messages of
  100 bytes`` / ``Time: 0.890``).
- :func:`schbench_text`: schbench's closing report (``Wakeup Latencies percentiles (usec)
  runtime 30 (s) (N total samples)``, the 50/90/99/99.9th lines with the 99th starred,
  ``min=, max=``; the same for request latencies; the RPS percentiles 20/50/90 with the
  50th starred; ``average rps:``; ``sched delay: message X (usec) worker Y (usec)``).
- :func:`tbench_text`: dbench 4.0's tbench closing line (``Throughput 385.058 MB/sec  1
  clients  1 procs``) from the ``dbench_pairs`` generator's operations and
  :data:`DBENCH_BYTES_PER_OP`.
- :func:`cyclictest_text`: rt-tests cyclictest's closing output: with ``-h``, the 1-µs
  histogram (``%06d`` then a count per thread), ``# Total:``, ``# Min/Avg/Max Latencies:``
  and ``# Histogram Overflows:``; then a ``T: i (tid) P: I: C: Min: Act: Avg: Max:`` line
  per thread. schedlab keeps no last sample, so ``Act:`` shows the thread's median.

Percentile values are the simulator's HDR histogram quantiles in µs; the per-line sample
counts are the samples between consecutive percentiles, as schbench prints them.
"""

from __future__ import annotations

__all__ = ["hackbench_text", "schbench_text", "cyclictest_text", "tbench_text", "tbench_mb_per_s",
           "DBENCH_BYTES_PER_OP"]

# declared: the bytes one tbench operation moves on average, from the load tbench runs by
# default, dbench 4.0's client.txt (Debian's dbench 4.0-2.1, /usr/share/dbench/client.txt):
# 458,344 operations (lines), whose ReadX and WriteX sizes add to 2,488,062,937 bytes.
# tbench counts those sizes (child->bytes) and reports 1e-6 x bytes / seconds as MB/sec;
# every line is one request/response over the socket, one dbench_pairs operation.
DBENCH_BYTES_PER_OP = 2_488_062_937 / 458_344


def hackbench_text(raw: dict, params: dict, precise: bool = False) -> str:
    """hackbench's report. ``Time:`` as hackbench.c prints it, ``%lu.%03lu`` of
    tv_sec and tv_usec / 1000: milliseconds, truncated; ``precise``: to the nanosecond."""
    groups, fds = int(params.get("groups", 10)), int(params.get("fds", 20))
    loops, size = int(params.get("loops", 100)), int(params.get("datasize", 100))
    mode = "threaded" if params.get("threads") else "process"
    lines = [f"Running in {mode} mode with {groups} groups using {2 * fds} file descriptors each (== {groups * 2 * fds} tasks)",
             f"Each sender will pass {loops} messages of {size} bytes"]
    t = raw.get("workload", {}).get("time_s")
    if t is not None:  # without one, hackbench says "No measurements available" on stderr
        ns = int(round(t * 1e9))  # the run's time is whole nanoseconds: no float floor error
        if precise:
            lines.append(f"Time: {ns // 1_000_000_000}.{ns % 1_000_000_000:09d}")
        else:
            lines.append(f"Time: {ns // 1_000_000_000}.{ns % 1_000_000_000 // 1_000_000:03d}")
    return "\n".join(lines) + "\n"


def _block(h: dict, label: str, units: str, runtime: int, plist: list[tuple[str, str]], star: str, scale: float) -> list[str]:
    n = int(h.get("count", 0))
    out = []
    if n:
        out.append(f"{label} percentiles ({units}) runtime {runtime} (s) ({n} total samples)")
        last = 0.0
        for name, key in plist:
            pct = float(name)
            count = int(round(n * (pct - last) / 100.0))
            last = pct
            mark = "* " if name == star else "  "
            out.append(f"\t{mark}{pct:2.1f}th: {int(round(h[key] / scale)):<10d} ({count} samples)")
    out.append(f"\t  min={int(round(h.get('min_ns', 0) / scale))}, max={int(round(h.get('max_ns', 0) / scale))}")
    return out


def _pretty_size(n: float) -> tuple[float, str]:
    """schbench's pretty_size(): divide by 1024 while it can."""
    units = ["B", "KB", "MB", "GB", "TB", "PB", "EB"]
    i = 0
    while n >= 1024 and i + 1 < len(units):
        n /= 1024
        i += 1
    return n, units[i]


def schbench_text(raw: dict, pipe: int = 0, rps_goal: int | None = None) -> str:
    """schbench's closing report; with ``pipe`` (-p) its pipe-mode report, with
    ``rps_goal`` (-A) its final rate instead of the average."""
    hist = raw.get("histograms", {})
    wl = raw.get("workload", {})
    runtime = int(round(raw.get("engine", {}).get("sim_ns", 0) / 1e9))
    lat = [("50", "p50_ns"), ("90", "p90_ns"), ("99", "p99_ns"), ("99.9", "p999_ns")]
    lines: list[str] = []
    if pipe:
        lines += _block(hist.get("schbench_wakeup", {}), "Wakeup Latencies", "usec", runtime, [("20", "p20_ns")] + lat, "99", 1e3)
        size, unit = _pretty_size(float(wl.get("transfer_bytes_per_s", 0.0)))
        lines.append(f"avg worker transfer: {wl.get('transfers_per_s', 0.0):.2f} ops/sec {size:.2f}{unit}/s")
        return "\n".join(lines) + "\n"
    lines += _block(hist.get("schbench_wakeup", {}), "Wakeup Latencies", "usec", runtime, lat, "99", 1e3)
    lines += _block(hist.get("schbench_request", {}), "Request Latencies", "usec", runtime, lat, "99", 1e3)
    rps = hist.get("schbench_request_per_second", {})
    if rps.get("count"):
        lines += _block(rps, "RPS", "requests", runtime, [("20", "p20_ns"), ("50", "p50_ns"), ("90", "p90_ns")], "50", 1.0)
    if rps_goal is None:
        lines.append(f"average rps: {wl.get('rps', 0.0):.2f}")
    else:
        lines.append(f"final rps goal was {rps_goal}")
    lines.append(f"sched delay: message {int(wl.get('sched_delay_message_us', 0))} (usec) "
                 f"worker {int(wl.get('sched_delay_worker_us', 0))} (usec)")
    return "\n".join(lines) + "\n"


def cyclictest_text(raw: dict, threads: list[dict], histogram_us: int) -> str:
    """cyclictest's report from the per-thread ``timer_histogram`` histograms.

    ``threads``: per thread, ``{"hist": name, "tid": pid, "prio": P, "interval_us": I}``.
    Latencies are in whole µs, truncated as cyclictest's ``calcdiff()`` truncates."""
    hists = [raw["histograms"].get(t["hist"], {"count": 0}) for t in threads]
    lines: list[str] = []
    if histogram_us:
        bins = [dict((int(us), int(n)) for us, n in h.get("us_bins", [])) for h in hists]
        lines.append("# Histogram")
        for us in range(histogram_us):
            lines.append(f"{us:06d} " + "\t".join(f"{b.get(us, 0):06d}" for b in bins))
        totals = [sum(n for us, n in b.items() if us < histogram_us) for b in bins]
        over = [sum(n for us, n in b.items() if us >= histogram_us) for b in bins]
        lines.append("# Total:" + "".join(f" {t:09d}" for t in totals))
        lines.append("# Min Latencies:" + "".join(f" {int(h.get('min_ns', 0)) // 1000:05d}" for h in hists))
        lines.append("# Avg Latencies:" + "".join(f" {int(h.get('mean_ns', 0)) // 1000:05d}" for h in hists))
        lines.append("# Max Latencies:" + "".join(f" {int(h.get('max_ns', 0)) // 1000:05d}" for h in hists))
        lines.append("# Histogram Overflows:" + "".join(f" {o:05d}" for o in over))
    for i, (t, h) in enumerate(zip(threads, hists)):
        us = lambda k: int(h.get(k, 0)) // 1000  # noqa: E731
        lines.append(f"T:{i:2d} ({t['tid']:5d}) P:{t['prio']:2d} I:{t['interval_us']} C:{int(h.get('count', 0)):7d} "
                     f"Min:{us('min_ns'):7d} Act:{us('p50_ns'):5d} Avg:{us('mean_ns'):5d} Max:{us('max_ns'):8d}")
    return "\n".join(lines) + "\n"


def tbench_mb_per_s(raw: dict) -> tuple[int, float]:
    """(operations, MB/sec) of a ``dbench_pairs`` run over its measured window (after the
    warm-up, as tbench leaves the warm-up's bytes out): an operation ends with its client
    woken by the answer, so the clients' wakeups count them."""
    ops = sum(int(t.get("nr_wakeups", 0)) for t in raw.get("tasks", []) if str(t.get("name", "")).startswith("client"))
    secs = float(raw.get("summary", {}).get("sim_seconds") or raw.get("engine", {}).get("sim_ns", 0) / 1e9)
    return ops, (1e-6 * ops * DBENCH_BYTES_PER_OP / secs if secs > 0 else 0.0)


def tbench_text(raw: dict, nprocs: int, timelimit: int, warmup: int) -> str:
    """tbench's opening and closing lines (dbench.c: ``Running for %d seconds with load '%s'
    and minimum warmup %d secs``, ``Throughput %g MB/sec  %d clients  %d procs``). The
    per-second progress lines and ``max_latency`` need per-operation times the run does
    not keep: left out."""
    _, mb = tbench_mb_per_s(raw)
    return (f"Running for {timelimit} seconds with load 'dbench_pairs' and minimum warmup {warmup} secs\n"
            f"Throughput {mb:g} MB/sec  {nprocs} clients  {nprocs} procs\n")
