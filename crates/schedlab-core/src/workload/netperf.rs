//! netperf's request/response test over loopback (`netperf -t UDP_RR`).
//!
//! Mirrors: HewlettPackard/netperf `src/nettest_omni.c`: send_omni_inner()'s loop for a
//! request/response test (send_data() of req_size bytes, then a blocking recv_data() of
//! rsp_size bytes: one transaction outstanding, no first burst) and recv_omni(), the
//! netserver child that serves it (recv then send); `send_udp_rr()`'s report; and
//! `src/netlib.c`'s calc_service_demand() (CPU utilization from /proc/stat, the whole
//! machine, so -c and -C read the same figure on one host).
//! Model: each instance is a netperf process and its own netserver child, two
//! processes. A sendto() over loopback runs the transmit path (udp_sendmsg(),
//! ip6_finish_output(), loopback_xmit() onto this CPU's backlog with netif_rx()) and,
//! at the local_bh_enable() that ends it, the NET_RX softirq on the same CPU
//! (net_rx_action(), process_backlog(), ipv6_rcv(), udpv6_rcv(), the socket enqueue)
//! whose sock_def_readable() wakes the receiver synchronously (WF_SYNC); the woken
//! recvfrom() then copies the datagram out and returns. The CPU times of these paths
//! are parameters (estimates below), never fitted to a published netperf figure.
//! Figures: transactions per second per instance and in all, the round trip's
//! percentiles, CPU utilization and service demand as netperf computes them.

use serde::Deserialize;

use super::{params, task, Generated};
use crate::error::ScenarioError;
use crate::scenario::{Duration, LoopSpec, OpSpec, RecordSince, RecordSpec};
use crate::topology::Machine;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NetperfParams {
    /// -t: the test; UDP_RR is the one modeled.
    #[serde(default = "udp_rr")]
    test: String,
    /// Concurrent netperf instances (`for i in $(seq N); do netperf ... & done`).
    #[serde(default = "super::count::<1>")]
    instances: usize,
    /// -r req: request size, bytes.
    #[serde(default = "super::num::<1>")]
    request_size: u64,
    /// -r ,rsp: response size, bytes.
    #[serde(default = "super::num::<1>")]
    response_size: u64,
    /// CPU time of netperf's own loop per transaction (ring advance, counters).
    #[serde(default = "user_work")]
    user_work: Duration,
    /// CPU time of netserver's loop per transaction.
    #[serde(default = "user_work")]
    server_work: Duration,
    /// The transmit path of one small datagram over loopback.
    #[serde(default = "send_work")]
    send_work: Duration,
    /// The NET_RX softirq's receive path up to the socket enqueue and wakeup.
    #[serde(default = "softirq_work")]
    softirq_work: Duration,
    /// recvfrom() after the wakeup: dequeue, copy out, free.
    #[serde(default = "recv_work")]
    recv_work: Duration,
    /// Copy cost per byte of payload, each way (ns/byte).
    #[serde(default = "copy_ns_per_byte")]
    copy_ns_per_byte: f64,
}

fn udp_rr() -> String {
    "UDP_RR".into()
}
/// estimate: netperf's per-transaction bookkeeping in user space, ~0.2 us (band 0.1-0.5).
fn user_work() -> Duration {
    Duration(200)
}
/// estimate: udp_sendmsg() through loopback_xmit() for a 1-byte datagram, ~1.5 us on a
/// 3-4 GHz x86 core (route and socket lookups, skb allocation, the IPv6 output path);
/// band 1-3 us.
fn send_work() -> Duration {
    Duration(1_500)
}
/// estimate: the NET_RX softirq's share, process_backlog() to sock_def_readable()
/// (IPv6 and UDP receive, the socket lookup and enqueue), ~1.5 us; band 1-3 us.
fn softirq_work() -> Duration {
    Duration(1_500)
}
/// estimate: udpv6_recvmsg() after the wakeup (skb dequeue, copy, free), ~0.5 us;
/// band 0.3-1 us.
fn recv_work() -> Duration {
    Duration(500)
}
/// estimate: a copy of a few cache-resident bytes, ~0.1 ns per byte.
fn copy_ns_per_byte() -> f64 {
    0.1
}

/// `netperf`.
pub(super) fn build(v: &serde_json::Value, _m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: NetperfParams = params(v)?;
    if p.test != "UDP_RR" {
        return Err(ScenarioError::new("workload.params.test", format!("'{}': only UDP_RR is modeled", p.test)));
    }
    if p.instances == 0 || p.request_size == 0 || p.response_size == 0 {
        return Err(ScenarioError::new("workload.params", "instances, request_size and response_size must be at least 1"));
    }
    if !(p.copy_ns_per_byte.is_finite() && p.copy_ns_per_byte >= 0.0) {
        return Err(ScenarioError::new("workload.params.copy_ns_per_byte", "expected a non-negative number"));
    }
    let copy = |bytes: u64| Duration((bytes as f64 * p.copy_ns_per_byte).round() as u64);
    let send = |bytes: u64| Duration(p.send_work.0 + copy(bytes).0 + p.softirq_work.0);
    let recv = |bytes: u64| Duration(p.recv_work.0 + copy(bytes).0);
    let mut tasks = Vec::new();
    for i in 0..p.instances {
        let (req, rsp) = (format!("netperf{i}-req"), format!("netperf{i}-rsp"));
        // send_data(): sendto() with the loopback receive in its softirq, waking netserver;
        // recv_data(): the blocking recvfrom() of the answer.
        let client = vec![
            OpSpec::Mark,
            OpSpec::Run(p.user_work),
            OpSpec::Run(send(p.request_size)),
            OpSpec::Signal(req.clone()),
            OpSpec::Wait(rsp.clone()),
            OpSpec::Run(recv(p.response_size)),
            OpSpec::Record(RecordSpec { histogram: format!("netperf{i}_rr"), since: RecordSince::Mark }),
        ];
        let server = vec![
            OpSpec::Wait(req),
            OpSpec::Run(recv(p.request_size)),
            OpSpec::Run(p.server_work),
            OpSpec::Run(send(p.response_size)),
            OpSpec::Signal(rsp),
        ];
        let mut c = task(&format!("netperf-{i}"), vec![OpSpec::Loop(LoopSpec { count: None, body: client })]);
        c.process = Some(format!("netperf-{i}"));
        let mut s = task(&format!("netserver-{i}"), vec![OpSpec::Loop(LoopSpec { count: None, body: server })]);
        s.process = Some(format!("netserver-{i}"));
        tasks.push(c);
        tasks.push(s);
    }
    let instances = p.instances;
    Ok(Generated::new(
        tasks,
        Box::new(move |r| {
            let mut out = std::collections::BTreeMap::new();
            let secs = r.measured_s().max(1e-9);
            let util = r.summary.get("utilization").copied().unwrap_or(0.0) * 100.0;
            let mut total = 0.0;
            for i in 0..instances {
                let n = r.histograms.get(&format!("netperf{i}_rr")).map_or(0, |h| h.count) as f64;
                let rate = n / secs;
                total += rate;
                out.insert(format!("instance{i}_trans_per_s"), rate);
                // calc_service_demand(): util% x 10000 / rate x CPUs, us per transaction.
                let sd = if rate > 0.0 { util * 10_000.0 / rate * r.nr_cpus as f64 } else { 0.0 };
                out.insert(format!("instance{i}_service_demand_us"), sd);
            }
            out.insert("trans_per_s".into(), total);
            out.insert("trans_per_s_per_instance".into(), total / instances as f64);
            out.insert("cpu_util_pct".into(), util);
            out.insert("elapsed_s".into(), secs);
            out
        }),
    ))
}
