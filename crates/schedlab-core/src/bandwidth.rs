//! CFS bandwidth control: per-group quota pools, per-CPU runtime, throttling.
//!
//! Mirrors: kernel/sched/fair.c: account_cfs_rq_runtime(), assign_cfs_rq_runtime(),
//! throttle_cfs_rq(), unthrottle_cfs_rq(), distribute_cfs_runtime(),
//! sched_cfs_period_timer(), sched_cfs_slack_timer(), return_cfs_rq_runtime().

use crate::scenario::GroupSpec;
use crate::time::{Ns, NSEC_PER_USEC};

/// A group's bandwidth limits as the scenario wrote them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandwidthSpec {
    /// Runtime per period; None = unlimited (RUNTIME_INF).
    pub quota_ns: Option<Ns>,
    /// Period length.
    pub period_ns: Ns,
    /// Burst (5.14+): unused quota that may accumulate.
    pub burst_ns: Ns,
}

impl BandwidthSpec {
    /// Reads and checks a group's limits; errors name the field (relative to the group).
    pub fn from_group(g: &GroupSpec) -> Result<BandwidthSpec, (&'static str, String)> {
        let (mut quota_us, mut period_us) = (g.cfs_quota_us.unwrap_or(-1), g.cfs_period_us.unwrap_or(100_000));
        if let Some(max) = &g.cpu_max {
            if g.cfs_quota_us.is_some() || g.cfs_period_us.is_some() {
                return Err(("cpu_max", "give either cpu_max or cfs_quota_us/cfs_period_us, not both".into()));
            }
            let mut it = max.split_whitespace();
            let q = it.next().unwrap_or("");
            quota_us = if q == "max" {
                -1
            } else {
                q.parse().map_err(|_| ("cpu_max", format!("'{max}': expected \"QUOTA PERIOD\" in µs or \"max PERIOD\"")))?
            };
            if let Some(p) = it.next() {
                period_us = p.parse().map_err(|_| ("cpu_max", format!("'{max}': the period must be an integer in µs")))?;
            }
        }
        // Kernel limits (tg_set_cfs_bandwidth): period 1 ms .. 1 s, quota >= 1 ms.
        if !(1_000..=1_000_000).contains(&period_us) {
            return Err(("cfs_period_us", format!("{period_us} µs is outside the kernel's 1000..1000000")));
        }
        if quota_us != -1 && quota_us < 1_000 {
            return Err(("cfs_quota_us", format!("{quota_us} µs: expected -1 (unlimited) or at least 1000")));
        }
        let burst_us = g.cfs_burst_us.unwrap_or(0);
        if quota_us != -1 && burst_us > quota_us as u64 {
            return Err(("cfs_burst_us", format!("{burst_us} µs exceeds the quota {quota_us} µs")));
        }
        Ok(BandwidthSpec {
            quota_ns: (quota_us != -1).then(|| quota_us as Ns * NSEC_PER_USEC),
            period_ns: period_us * NSEC_PER_USEC,
            burst_ns: burst_us * NSEC_PER_USEC,
        })
    }
}
