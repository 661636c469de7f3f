//! Each generator's parameters with their defaults, as `schedlab workloads NAME` shows
//! them. A test checks that every name listed here is one the generator accepts.

/// One parameter of a generator.
#[derive(Clone, Copy, Debug)]
pub struct ParamDoc {
    /// Key in `[workload] params`.
    pub name: &'static str,
    /// Default (or "required").
    pub default: &'static str,
    /// What it sets.
    pub meaning: &'static str,
}

macro_rules! p {
    ($name:expr, $default:expr, $meaning:expr) => {
        ParamDoc { name: $name, default: $default, meaning: $meaning }
    };
}

/// The parameters of the generator `kind` (empty for an unknown one).
pub fn params_of(kind: &str) -> &'static [ParamDoc] {
    match kind {
        "fibtest" => &[
            p!("threads", "the machine's CPU count", "threads (-t); thread i pinned to CPU i mod CPUs"),
            p!("fast_threads", "1", "threads that compute without pause (-f)"),
            p!("seconds", "5.0", "run length (-s)"),
            p!("quota_us", "10000", "cpu.cfs_quota_us of the fibtest cgroup (-1: no limit)"),
            p!("period_us", "100000", "cpu.cfs_period_us"),
            p!("burst_us", "0", "cpu.cfs_burst_us"),
            p!("cycles_per_iteration", "1.0", "core cycles per Fibonacci iteration"),
            p!("slow_iterations", "100", "iterations a slow thread runs per wakeup"),
            p!("fast_chunk", "1000000", "iterations a fast thread runs between two done() checks"),
            p!("slow_sleep", "10ms", "a slow thread's usleep()"),
            p!("create", "20us", "the main thread's time per created thread (0: all start at t = 0)"),
            p!("cpu0_background_hz", "0", "background kernel wakeups per second on CPU 0"),
            p!("cpu0_background_work", "10us", "CPU time of each background wakeup"),
        ],
        "hackbench" => &[
            p!("groups", "10", "groups (-g)"),
            p!("fds", "20", "receivers and senders per group (-f)"),
            p!("loops", "100", "messages each sender writes to each receiver (-l)"),
            p!("datasize", "100", "bytes per message (-s)"),
            p!("pipe", "false", "pipes instead of AF_UNIX stream sockets (-p)"),
            p!("threads", "false", "threads of one process (-T) instead of processes (-P)"),
            p!("write_work", "600ns", "kernel CPU time of one write beyond the system call"),
            p!("read_work", "400ns", "kernel CPU time of one read beyond the system call"),
            p!("process_exit", "the machine's fork_ns", "kernel CPU time of a worker process's exit and reaping (not for -T)"),
        ],
        "schbench" => &[
            p!("message_threads", "1", "message threads (-m)"),
            p!("threads", "ceil(CPUs / message_threads)", "workers per message thread (-t)"),
            p!("cache_footprint_kb", "256", "cache footprint of a worker's matrices, KiB (-F)"),
            p!("operations", "5", "matrix multiplications per request (-n)"),
            p!("sleep_usec", "100", "usleep() before each request's work, us (-s)"),
            p!("ns_per_madd", "1.0", "CPU time of one multiply-add of the matrix product"),
            p!("rps", "0", "requests per second, all message threads (-R; 0: the default mode)"),
            p!("pipe", "0", "pipe mode: bytes per transfer (-p; 0: off; at most 1 MiB)"),
        ],
        "hhvm" => &[
            p!("workers", "2 x CPUs", "worker threads of the server process"),
            p!("load", "0.85", "offered load as a share of the machine's CPU capacity"),
            p!("request_cpu", "20ms", "mean CPU time of one request"),
            p!("bursts", "4", "CPU bursts per request (backend waits between them)"),
            p!("backend_wait", "1ms", "mean backend wait between bursts"),
            p!("footprint_kib", "4096", "working set of a request, refilled after each migration"),
        ],
        "make" => &[
            p!("jobs", "the machine's CPU count", "parallel jobs (-jN)"),
            p!("units", "2000", "compile units in the build"),
            p!("unit_mean", "40ms", "mean CPU time of one unit"),
            p!("link", "0ns", "serial link step at the end"),
            p!("footprint_kib", "1024", "working set of a compile job, refilled after a migration"),
            p!("pipe_chunks", "0", "pipe writes from cc1 to as per unit (0: one process, no pipe)"),
            p!("as_fraction", "0.1", "share of a unit's work done by as when piped"),
        ],
        "pingpong" => &[
            p!("pairs", "1", "task pairs"),
            p!("rounds", "1000", "round trips per pair"),
            p!("work", "2us", "work each side does per message"),
            p!("threads", "false", "each pair two threads of one process (default: two processes)"),
        ],
        "threadpool" => &[
            p!("threads", "required", "worker threads"),
            p!("clients", "1", "client tasks sending requests"),
            p!("service", "required", "mean service time of a request (exponential)"),
            p!("interval", "required", "mean time between a client's requests (exponential)"),
        ],
        "rseq_burst" => &[
            p!("cpus", "every CPU", "CPUs the process may use (taskset); one thread per CPU"),
            p!("delay", "200ms", "delay between threads"),
            p!("index", "required", "area indexing: \"cpu_id\" or \"mm_cid\""),
            p!("area_bytes", "16384", "area size, bytes"),
            p!("warmup", "20000", "warm-up passes per thread"),
            p!("loops", "5", "timed passes per thread"),
            p!("create", "20us", "main thread's time per created thread (pthread_create + sched_setaffinity); 0: every thread starts at once"),
        ],
        "timer_enqueue" => &[
            p!("cpu", "the last CPU", "the isolated CPU running the loop"),
            p!("reps", "1000", "enqueue/dequeue repetitions per measurement"),
            p!("rounds", "20", "measurements"),
            p!("busy_fraction", "0.25", "share of the other CPUs kept busy"),
            p!("delay", "100ms", "expiry of each enqueued timer (never reached)"),
        ],
        "dbench_pairs" => &[
            p!("pairs", "required", "client/server pairs (dbench's NR)"),
            p!("client_op", "20us", "mean CPU time of a client operation"),
            p!("server_op", "30us", "mean CPU time of the server's handling"),
            p!("rto", "200ms", "the retransmit timer's delay (TCP_RTO_MIN)"),
            p!("delack", "40ms", "the delayed-ACK timer's delay (TCP_DELACK_MIN)"),
        ],
        "ui_frame" => &[
            p!("fps", "60", "display refresh rate, Hz"),
            p!("ui_work", "2ms", "mean UI-thread work per frame"),
            p!("render_work", "3ms", "mean render-thread work per frame"),
            p!("composer_work", "1ms", "mean compositor work per frame"),
            p!("background", "4", "background app threads"),
            p!("kernel_timers", "true", "add the Android-like background kernel timers"),
            p!("top_app_cpus", "the two biggest clusters", "CPUs of the UI, render and compositor threads"),
            p!("background_cpus", "the little cluster", "CPUs of the background threads"),
            p!("cgroups", "false", "Android's cpu cgroups: top-app, system, background (gs101's cpu.shares)"),
            p!("top_app_uclamp_min", "none", "top-app cpu.uclamp.min, percent (needs cgroups)"),
            p!("background_uclamp_max", "none", "background cpu.uclamp.max, percent (needs cgroups)"),
        ],
        "netperf" => &[
            p!("test", "UDP_RR", "-t: the test (UDP_RR is the one modeled)"),
            p!("instances", "1", "concurrent netperf instances, each with its netserver"),
            p!("request_size", "1", "-r: request size, bytes"),
            p!("response_size", "1", "-r: response size, bytes"),
            p!("user_work", "200ns", "netperf's own CPU time per transaction"),
            p!("server_work", "200ns", "netserver's own CPU time per transaction"),
            p!("send_work", "1.5us", "sendto()'s transmit path over loopback"),
            p!("softirq_work", "1.5us", "the NET_RX softirq's receive path up to the wakeup"),
            p!("recv_work", "500ns", "recvfrom() after the wakeup"),
            p!("copy_ns_per_byte", "0.1", "payload copy cost, ns per byte each way"),
        ],
        "swap_bench" => &[
            p!("cpu", "4", "CPU the benchmark is pinned to (taskset -c)"),
            p!("region_kib", "1024", "region size, KiB"),
            p!("iterations", "10000", "iterations of touch + page-out"),
            p!("extra_mappers", "0", "other processes mapping every page (running, one per CPU)"),
            p!("memory_reclaim", "false", "reclaim through memory.reclaim (LRU batches, shared pages unmapped) instead of MADV_PAGEOUT"),
            p!("kswapd", "false", "the same as memory_reclaim (its former name)"),
            p!("mapper_run", "1ms", "a mapper's computation between two reads of the region"),
            p!("mapper_sleep", "0", "a mapper's sleep after each computation (0: it runs all the time)"),
        ],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::WorkloadSpec;
    use crate::workload::{generate, GENERATORS};

    /// Every generator is documented, and every documented name is accepted (an
    /// unknown key would be an error naming it).
    #[test]
    fn every_documented_parameter_exists() {
        let m = crate::topology::presets::preset("pixel6").unwrap();
        for g in GENERATORS {
            let docs = params_of(g.name);
            assert!(!docs.is_empty(), "{} has no parameter table", g.name);
            for d in docs {
                let mut params = serde_json::Map::new();
                params.insert(d.name.to_string(), serde_json::Value::Bool(true));
                let spec = WorkloadSpec { kind: g.name.to_string(), params, rt_app: None };
                if let Err(e) = generate(&spec, &m, 1) {
                    let msg = e.to_string();
                    assert!(!msg.contains("unknown field"), "{}.{}: {msg}", g.name, d.name);
                }
            }
        }
    }

    /// The other way: every parameter a generator accepts is documented. An unknown key
    /// makes serde list the accepted ones ("expected one of `a`, `b`").
    #[test]
    fn every_accepted_parameter_is_documented() {
        let m = crate::topology::presets::preset("pixel6").unwrap();
        for g in GENERATORS {
            let mut params = serde_json::Map::new();
            params.insert("no_such_parameter".to_string(), serde_json::Value::Bool(true));
            let spec = WorkloadSpec { kind: g.name.to_string(), params, rt_app: None };
            let Err(e) = generate(&spec, &m, 1) else { continue };
            let msg = e.to_string();
            let Some((_, list)) = msg.split_once("expected one of ") else { continue };
            let documented: Vec<&str> = params_of(g.name).iter().map(|d| d.name).collect();
            for name in list.split(',').map(|n| n.trim().trim_matches('`')).filter(|n| !n.is_empty()) {
                assert!(documented.contains(&name), "{}: parameter {name} is accepted but not documented", g.name);
            }
        }
    }
}
