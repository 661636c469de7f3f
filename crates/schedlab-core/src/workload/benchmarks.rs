//! The benchmarks scheduler developers judge wakeup and balance changes by.
//!
//! Mirrors: rt-tests `hackbench.c` (also `perf bench sched messaging`), schbench
//! (github.com/masoncl/schbench `schbench.c`), and a Meta-style HHVM web tier as the
//! shared runqueue RFC describes it (seed 000).
//! Model:
//! - `hackbench`: `groups` groups of `fds` receivers and `fds` senders; every sender
//!   writes `loops` messages of `datasize` bytes to each receiver of its group, every
//!   receiver reads `fds * loops` messages. A receiver's fd is a socketpair (default) or
//!   a pipe: a bounded channel that blocks writers when full (sockets: the write end's
//!   sk_sndbuf, writers woken when it is three quarters free, unix_writable(); pipes: 16
//!   pages of merged writes, a writer woken when a page is freed). Everyone starts on
//!   one "GO" (a poll on a pipe woken at once); figure: `Time:` from GO to the last
//!   exit. Processes (-P, the default) or threads of one process (-T): a process's
//!   exit(0) tears down the address space and the files its fork() copied before the
//!   parent's wait() reaps it, a thread's exit does neither (its pthread_join() is a
//!   futex wake); the switch between two processes' threads also switches mm, which
//!   the engine's one context-switch cost does not tell apart (not modeled).
//! - `schbench` (its default mode, with `-L`: no per-CPU spin lock around the work):
//!   `m` message threads, each with `t` workers. A worker posts its message thread's
//!   futex and waits on its list; the message thread wakes its whole list, stamping one
//!   clock read, and each woken worker records its wakeup latency from that stamp. A
//!   request is `usleep(s)` then `n` naive matrix multiplications over a private
//!   `F` KiB working set; request latency runs from before the sleep to the end of the
//!   work. Figures: wakeup and request latency percentiles, requests per second.
//!   With `-R` (requests per second) each message thread instead posts its share of
//!   the rate (R / m) once a second, round robin over its workers, then sleeps to the
//!   second's end (run_rps_thread); a worker runs every request queued for it. With
//!   `-p` (pipe mode) there is no sleep and no work: a worker writes its `p`-byte page,
//!   posts and waits, and the message thread writes each waiter's page before waking
//!   it; the figure is transfers per second.
//! - `hhvm`: open-loop load generators (nice -20) sending requests (Poisson) to a pool of
//!   worker threads of one process; a request is CPU bursts with backend waits between
//!   them and a large working set (JIT code and heap: poor cache locality, a costly
//!   refill after every migration). Figures: throughput, p50/p95/p99 latency from arrival
//!   to completion.

use serde::Deserialize;

use super::{params, task, Generated};
use crate::error::ScenarioError;
use crate::scenario::{Duration, LoopSpec, OpSpec, RecordSince, RecordSpec, SendSpec};
use crate::topology::Machine;

fn forever(body: Vec<OpSpec>) -> OpSpec {
    OpSpec::Loop(LoopSpec { count: None, body })
}

fn record(name: &str, since: RecordSince) -> OpSpec {
    OpSpec::Record(RecordSpec { histogram: name.into(), since })
}

fn percentiles(r: &crate::metrics::RunResult, hist: &str, prefix: &str, out: &mut std::collections::BTreeMap<String, f64>) {
    if let Some(h) = r.histograms.get(hist) {
        for (k, v) in [("p50", h.p50_ns), ("p90", h.p90_ns), ("p95", h.p95_ns), ("p99", h.p99_ns), ("p999", h.p999_ns)] {
            out.insert(format!("{prefix}_{k}_us"), v as f64 / 1e3);
        }
        out.insert(format!("{prefix}_samples"), h.count as f64);
    }
}

// ------------------------------------------------------------------ hackbench
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HackbenchParams {
    /// -g: groups.
    #[serde(default = "super::count::<10>")]
    groups: usize,
    /// -f: receivers (and senders) per group.
    #[serde(default = "super::count::<20>")]
    fds: usize,
    /// -l: messages each sender writes to each receiver.
    #[serde(default = "super::num::<100>")]
    loops: u64,
    /// -s: bytes per message.
    #[serde(default = "super::num::<100>")]
    datasize: u64,
    /// -p: pipes instead of AF_UNIX stream sockets.
    #[serde(default)]
    pipe: bool,
    /// -T: threads of one process instead of processes.
    #[serde(default)]
    threads: bool,
    /// Kernel CPU time of one write beyond the system call itself (skb or pipe-buffer
    /// work and the copy). Estimate: a few hundred ns for a 100-byte AF_UNIX send.
    #[serde(default = "write_work")]
    write_work: Duration,
    /// Kernel CPU time of one read beyond the system call. Estimate.
    #[serde(default = "read_work")]
    read_work: Duration,
    /// Kernel CPU time of a worker process's exit(0) and its reaping (exit_mm's
    /// teardown of the address space fork() copied, exit_files' close of the inherited
    /// descriptors); absent: the machine's `fork_ns`, taken as what undoing the fork
    /// costs (an estimate). Threads (-T) exit without either.
    process_exit: Option<Duration>,
}

fn write_work() -> Duration {
    Duration(600)
}
fn read_work() -> Duration {
    Duration(400)
}

/// net.core.wmem_default (Documentation/admin-guide/sysctl/net.rst: 212992 on 64-bit).
const WMEM_DEFAULT: u64 = 212_992;
/// truesize of an skb holding a small AF_UNIX write on x86-64: the 512-byte kmalloc
/// bucket of its data plus skb_shared_info, and the 256-byte cache-aligned sk_buff
/// (SKB_TRUESIZE). Estimate from the structure sizes, for writes up to ~190 bytes.
const SMALL_SKB_TRUESIZE: u64 = 768;
/// A pipe holds PIPE_DEF_BUFFERS (16) pages; small writes merge into the last page.
const PIPE_BUFFERS: u64 = 16;
const PAGE_SIZE: u64 = 4096;

/// Channel capacity (messages) and writer wake threshold of one receiver's fd.
fn hackbench_buffer(p: &HackbenchParams) -> (u64, u64) {
    if p.pipe {
        let per_page = (PAGE_SIZE / p.datasize.max(1)).max(1);
        let cap = PIPE_BUFFERS * per_page;
        (cap, cap - per_page) // pipe_read() wakes writers once a full pipe frees a page
    } else {
        let truesize = SMALL_SKB_TRUESIZE.max(p.datasize + 668);
        let cap = (WMEM_DEFAULT / truesize).max(1);
        (cap, cap / 4) // unix_writable(): wmem_alloc * 4 <= sndbuf
    }
}

/// `hackbench`.
pub(super) fn hackbench(v: &serde_json::Value, m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: HackbenchParams = params(v)?;
    if p.groups == 0 || p.fds == 0 || p.loops == 0 || p.datasize == 0 {
        return Err(ScenarioError::new("workload.params", "groups, fds, loops and datasize must be at least 1"));
    }
    let (capacity, wake_at) = hackbench_buffer(&p);
    let process = p.threads.then(|| "hackbench".to_string());
    // Each worker process ends with its exit(0): the teardown a thread does not do.
    let exit = (!p.threads).then(|| OpSpec::Run(p.process_exit.unwrap_or(Duration(m.cost.fork_ns.round() as u64))));
    let mut tasks = Vec::new();
    for g in 0..p.groups {
        for r in 0..p.fds {
            let ch = format!("hb{g}.{r}");
            let body = vec![OpSpec::Wait(ch), OpSpec::Run(p.read_work)];
            let mut prog = vec![OpSpec::Wait("hb-go".into()), OpSpec::Loop(LoopSpec { count: Some(p.fds as u64 * p.loops), body })];
            prog.extend(exit.clone());
            let mut t = task(&format!("receiver-{g}.{r}"), prog);
            t.process = process.clone();
            tasks.push(t);
        }
        for s in 0..p.fds {
            let mut body = Vec::with_capacity(2 * p.fds);
            for r in 0..p.fds {
                body.push(OpSpec::Run(p.write_work));
                body.push(OpSpec::Send(SendSpec { channel: format!("hb{g}.{r}"), capacity, wake_at: Some(wake_at) }));
            }
            let mut prog = vec![OpSpec::Wait("hb-go".into()), OpSpec::Loop(LoopSpec { count: Some(p.loops), body })];
            prog.extend(exit.clone());
            let mut t = task(&format!("sender-{g}.{s}"), prog);
            t.process = process.clone();
            tasks.push(t);
        }
    }
    // The parent writes the GO byte once every child waits in poll() (all at once).
    tasks.push(task("hackbench", vec![OpSpec::Sleep(Duration(1_000_000)), OpSpec::WakeAll("hb-go".into())]));
    let messages = (p.groups * p.fds * p.fds) as f64 * p.loops as f64;
    Ok(Generated::new(
        tasks,
        Box::new(move |r| {
            let mut out = std::collections::BTreeMap::new();
            // rt-tests src/hackbench/hackbench.c main(): after reading every ready byte it
            // calls gettimeofday(&start) and only then write(wakefds[1]) (the GO byte);
            // stop is read after reap_workers(). So the parent's wake-up of every child
            // (its whole run after the sleep) is inside Time.
            let go = r.tasks.iter().find(|t| t.name == "hackbench").and_then(|t| t.exit_ns.map(|e| e.saturating_sub(t.run_ns))).unwrap_or(0);
            let workers = r.tasks.iter().filter(|t| t.name != "hackbench");
            let done = workers.clone().all(|t| t.exit_ns.is_some());
            let last = workers.filter_map(|t| t.exit_ns).max().unwrap_or(r.engine.sim_ns);
            if done {
                out.insert("time_s".into(), last.saturating_sub(go) as f64 / 1e9);
            }
            out.insert("messages".into(), messages);
            out.insert("buffer_messages".into(), capacity as f64);
            out
        }),
    ))
}

// ------------------------------------------------------------------ schbench
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SchbenchParams {
    /// -m: message threads.
    #[serde(default = "super::count::<1>")]
    message_threads: usize,
    /// -t: workers per message thread (default: ceil(CPUs / message_threads)).
    threads: Option<usize>,
    /// -F: cache footprint of each worker's matrices, KiB.
    #[serde(default = "super::num::<256>")]
    cache_footprint_kb: u64,
    /// -n: matrix multiplications per request.
    #[serde(default = "super::num::<5>")]
    operations: u64,
    /// -s: usleep() before each request's work, µs.
    #[serde(default = "super::num::<100>")]
    sleep_usec: u64,
    /// CPU time of one multiply-add of the naive matrix product (capacity 1024).
    /// Estimate: ~1 ns with the column walk hitting L2; schbench -C measures a host's.
    #[serde(default = "one_f")]
    ns_per_madd: f64,
    /// -R: requests per second, all message threads together (0: the default mode).
    #[serde(default)]
    rps: u64,
    /// -p: pipe mode, bytes each transfer writes (0: off; schbench caps it at 1 MiB).
    #[serde(default)]
    pipe: u64,
}

/// schbench's PIPE_TRANSFER_BUFFER: the largest -p.
const PIPE_TRANSFER_BUFFER: u64 = 1024 * 1024;
/// run_rps_thread() posts a second's requests, then sleeps to the second's end.
const RPS_ROUND: Duration = Duration(1_000_000_000);

fn one_f() -> f64 {
    1.0
}

/// `schbench`.
pub(super) fn schbench(v: &serde_json::Value, m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: SchbenchParams = params(v)?;
    if p.message_threads == 0 || p.threads == Some(0) || p.cache_footprint_kb == 0 {
        return Err(ScenarioError::new("workload.params", "message_threads, threads and cache_footprint_kb must be at least 1"));
    }
    if !(p.ns_per_madd.is_finite() && p.ns_per_madd > 0.0) {
        return Err(ScenarioError::new("workload.params.ns_per_madd", "expected a positive number"));
    }
    if p.rps > 0 && p.pipe > 0 {
        return Err(ScenarioError::new("workload.params", "give rps (-R) or pipe (-p), not both"));
    }
    let workers = p.threads.unwrap_or(m.nr_cpus().div_ceil(p.message_threads));
    // matrix_size = sqrt(F KiB / 3 matrices / 8-byte words); one product is size^3 madds.
    let size = ((p.cache_footprint_kb * 1024 / 3 / 8) as f64).sqrt().floor();
    let work = Duration((size * size * size * p.ns_per_madd * p.operations as f64).round() as u64);
    let pipe = p.pipe.min(PIPE_TRANSFER_BUFFER);
    // memset() of a pipe page, at the same estimated speed as rt-app's mem events.
    let memset = Duration(pipe.div_ceil(crate::scenario::rt_app_spec::MEM_BYTES_PER_NS));
    let mut tasks = Vec::new();
    for i in 0..p.message_threads {
        let (msg, list) = (format!("schbench-msg{i}"), format!("schbench-list{i}"));
        let request = |body: &mut Vec<OpSpec>| {
            body.push(OpSpec::Mark);
            if p.sleep_usec > 0 {
                body.push(OpSpec::Sleep(Duration(p.sleep_usec * 1000)));
            }
            body.push(OpSpec::Run(work));
            body.push(record("schbench_request", RecordSince::Mark));
        };
        if p.rps > 0 {
            // requests_per_sec /= message_threads, posted round robin over the workers
            // within microseconds each second: a worker wakes once for its share of
            // the second and runs the requests it finds queued one after the other
            // (request_splice()), recording its wakeup latency once, as it slept once.
            let share = p.rps / p.message_threads as u64;
            let per = |k: usize| share / workers as u64 + u64::from((k as u64) < share % workers as u64);
            let own = |k: usize| format!("schbench-req{i}.{k}");
            let mut round: Vec<OpSpec> = (0..workers).filter(|&k| per(k) > 0).map(|k| OpSpec::Signal(own(k))).collect();
            round.push(OpSpec::Periodic(crate::scenario::PeriodicSpec {
                period: RPS_ROUND,
                mode: crate::scenario::PeriodicMode::Relative,
                rt_app: false,
            }));
            let mut mt = task(&format!("message-{i}"), vec![forever(round)]);
            mt.process = Some("schbench".into());
            tasks.push(mt);
            for k in (0..workers).filter(|&k| per(k) > 0) {
                let mut one = Vec::new();
                request(&mut one);
                let body = vec![
                    OpSpec::Wait(own(k)),
                    record("schbench_wakeup", RecordSince::Message),
                    OpSpec::Loop(LoopSpec { count: Some(per(k)), body: one }),
                ];
                let mut w = task(&format!("worker-{i}.{k}"), vec![forever(body)]);
                w.process = Some("schbench".into());
                w.footprint_kib = p.cache_footprint_kb;
                tasks.push(w);
            }
            continue;
        }
        let mut wake = Vec::new();
        if pipe > 0 {
            // xlist_wake_all(): a page written for each waiter before it is woken.
            wake.push(OpSpec::Run(Duration(memset.0 * workers as u64)));
        }
        wake.extend([OpSpec::WakeAll(list.clone()), OpSpec::Wait(msg.clone())]);
        let mut mt = task(&format!("message-{i}"), vec![forever(wake)]);
        mt.process = Some("schbench".into());
        tasks.push(mt);
        let mut body = Vec::new();
        if pipe > 0 {
            body.push(OpSpec::Run(memset)); // msg_and_wait(): the worker's own page
        }
        body.extend([OpSpec::Post(msg), OpSpec::Wait(list), record("schbench_wakeup", RecordSince::Message)]);
        if pipe == 0 {
            request(&mut body);
        }
        let mut w = task(&format!("worker-{i}"), vec![forever(body)]);
        w.count = workers;
        w.process = Some("schbench".into());
        w.footprint_kib = p.cache_footprint_kb;
        tasks.push(w);
    }
    let nr_workers = (workers * p.message_threads) as f64;
    Ok(Generated::new(
        tasks,
        Box::new(move |r| {
            let mut out = std::collections::BTreeMap::new();
            percentiles(r, "schbench_wakeup", "wakeup", &mut out);
            percentiles(r, "schbench_request", "request", &mut out);
            let secs = r.measured_s();
            if let Some(h) = r.histograms.get("schbench_request") {
                out.insert("rps".into(), h.count as f64 / secs.max(1e-9));
            }
            if let Some(h) = r.histograms.get("schbench_request_per_second") {
                if h.count > 0 {
                    for (k, v) in [("rps_p20", h.p20_ns), ("rps_p50", h.p50_ns), ("rps_p90", h.p90_ns)] {
                        out.insert(k.into(), v as f64);
                    }
                }
            }
            // sched delay: mean run-queue wait per schedule (schedstat), µs.
            let delay = |prefix: &str| {
                let (w, n) = r.tasks.iter().filter(|t| t.name.starts_with(prefix)).fold((0u64, 0u64), |(w, n), t| (w + t.wait_ns, n + t.nr_switches));
                if n > 0 {
                    w as f64 / n as f64 / 1e3
                } else {
                    0.0
                }
            };
            out.insert("sched_delay_message_us".into(), delay("message"));
            out.insert("sched_delay_worker_us".into(), delay("worker"));
            out.insert("request_work_us".into(), work.0 as f64 / 1e3);
            if pipe > 0 {
                // "avg worker transfer": transfers per worker-second, and their bytes.
                let n = r.histograms.get("schbench_wakeup").map_or(0, |h| h.count) as f64;
                let ops = n / (nr_workers * secs.max(1e-9));
                out.insert("transfers_per_s".into(), ops);
                out.insert("transfer_bytes_per_s".into(), ops * pipe as f64);
            }
            out
        }),
    ))
}

// ------------------------------------------------------------------ hhvm
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HhvmParams {
    /// Worker threads of the server process (default: 2 x CPUs, an estimate of a web
    /// tier's pool sized to keep CPUs busy across backend waits).
    workers: Option<usize>,
    /// Offered load as a share of the machine's CPU capacity (the seed's gains were
    /// "not at full machine saturation").
    #[serde(default = "load")]
    load: f64,
    /// Mean CPU time of one request (capacity 1024). Estimate: a PHP/Hack page of tens
    /// of ms.
    #[serde(default = "request_cpu")]
    request_cpu: Duration,
    /// CPU bursts per request (backend waits between them).
    #[serde(default = "super::num::<4>")]
    bursts: u64,
    /// Mean backend wait (memcache/database call) between bursts.
    #[serde(default = "backend_wait")]
    backend_wait: Duration,
    /// Working set of a request (JIT code, heap), KiB: refilled after each migration.
    #[serde(default = "super::num::<4096>")]
    footprint_kib: u64,
}

fn load() -> f64 {
    0.85
}
fn request_cpu() -> Duration {
    Duration(20_000_000)
}
fn backend_wait() -> Duration {
    Duration(1_000_000)
}

/// `hhvm`.
pub(super) fn hhvm(v: &serde_json::Value, m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: HhvmParams = params(v)?;
    if !(p.load.is_finite() && p.load > 0.0) || p.bursts == 0 || p.request_cpu.0 == 0 || p.workers == Some(0) {
        return Err(ScenarioError::new("workload.params", "expected load > 0, bursts >= 1, request_cpu > 0 and workers >= 1"));
    }
    let capacity: f64 = m.cpus.iter().map(|c| c.capacity as f64 / 1024.0).sum();
    let rate = p.load * capacity * 1e9 / p.request_cpu.0 as f64;
    // Requests arrive from the network: one generator thread per 32 CPUs, at nice -20 so
    // that, like the softirq a real arrival runs in, it is not held up behind workers
    // that the HHVM knobs give 10-20 ms slices.
    let clients = m.nr_cpus().div_ceil(32);
    let gap = Duration((clients as f64 * 1e9 / rate).round().max(1.0) as u64);
    let mut client = task("loadgen", vec![forever(vec![OpSpec::SleepExp(gap), OpSpec::Signal("hhvm-requests".into())])]);
    client.count = clients;
    client.nice = -20;
    let burst = Duration(p.request_cpu.0 / p.bursts);
    let mut body = vec![OpSpec::Wait("hhvm-requests".into())];
    for b in 0..p.bursts {
        if b > 0 {
            body.push(OpSpec::SleepExp(p.backend_wait));
        }
        body.push(OpSpec::RunExp(burst));
    }
    body.push(record("hhvm_request", RecordSince::Message));
    let mut w = task("hhvm-worker", vec![forever(body)]);
    w.count = p.workers.unwrap_or(2 * m.nr_cpus());
    w.process = Some("hhvm".into());
    w.footprint_kib = p.footprint_kib;
    Ok(Generated {
        tasks: vec![client, w],
        templates: vec![],
        groups: vec![],
        timers: vec![],
        reporter: Box::new(move |r| {
            let mut out = std::collections::BTreeMap::new();
            let secs = r.measured_s();
            if let Some(h) = r.histograms.get("hhvm_request") {
                out.insert("throughput_rps".into(), h.count as f64 / secs.max(1e-9));
                for (k, v) in [("latency_p50_ms", h.p50_ns), ("latency_p95_ms", h.p95_ns), ("latency_p99_ms", h.p99_ns)] {
                    out.insert(k.into(), v as f64 / 1e6);
                }
            }
            out.insert("offered_rps".into(), rate);
            out
        }),
    })
}
