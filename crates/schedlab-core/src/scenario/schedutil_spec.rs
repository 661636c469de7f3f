//! `[kernel] governor` and `[kernel.schedutil]`: the cpufreq governor and schedutil's
//! rate limits per policy.

use serde::{Deserialize, Serialize};

/// `[kernel] governor`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GovernorSpec {
    /// The top OPP throughout.
    #[default]
    Performance,
    /// cpufreq_schedutil.c.
    Schedutil,
}

impl From<GovernorSpec> for crate::eas::schedutil::Governor {
    fn from(g: GovernorSpec) -> Self {
        match g {
            GovernorSpec::Performance => crate::eas::schedutil::Governor::Performance,
            GovernorSpec::Schedutil => crate::eas::schedutil::Governor::Schedutil,
        }
    }
}

/// `[kernel.schedutil]`: the policies' rate limits, µs. Mainline has one,
/// `rate_limit_us`; the Android common kernel's schedutil (before 5.10) and Pixel's
/// sched_pixel split it into `up_rate_limit_us` (before a raise) and
/// `down_rate_limit_us` (before a lowering). Each is one value for every policy or a
/// list, one per policy (performance domain) in CPU order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedutilSpec {
    /// Mainline's rate_limit_us (default 1000: cpufreq.c's LATENCY_MULTIPLIER when the
    /// driver declares no transition latency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_us: Option<PerPolicy>,
    /// The Android split: the limit on raising the frequency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_rate_limit_us: Option<PerPolicy>,
    /// The Android split: the limit on lowering it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_rate_limit_us: Option<PerPolicy>,
}

/// One value for every cpufreq policy, or one per policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PerPolicy {
    /// Every policy.
    All(u64),
    /// One per policy, in CPU order.
    Each(Vec<u64>),
}

/// Longest rate limit accepted, µs (one second: a longer one leaves a cluster at one OPP
/// for most of a run).
pub const MAX_RATE_LIMIT_US: u64 = 1_000_000;

impl SchedutilSpec {
    /// Per policy: (rate_limit_us, Some((up, down)) when split), for `nr` policies;
    /// errors name the field relative to `kernel.schedutil`.
    pub fn resolve(&self, nr: usize, default_us: u64) -> Result<Vec<(u64, Option<(u64, u64)>)>, (&'static str, String)> {
        let get = |field: &'static str, v: &Option<PerPolicy>| -> Result<Option<Vec<u64>>, (&'static str, String)> {
            let vals = match v {
                None => return Ok(None),
                Some(PerPolicy::All(x)) => vec![*x; nr],
                Some(PerPolicy::Each(xs)) if xs.len() == nr => xs.clone(),
                Some(PerPolicy::Each(xs)) => {
                    return Err((
                        field,
                        format!("{} values: expected one for every policy or a list of {nr}, one per cpufreq policy in CPU order", xs.len()),
                    ))
                }
            };
            if let Some(x) = vals.iter().find(|&&x| x > MAX_RATE_LIMIT_US) {
                return Err((field, format!("{x}: expected at most {MAX_RATE_LIMIT_US} us")));
            }
            Ok(Some(vals))
        };
        let base = get("rate_limit_us", &self.rate_limit_us)?.unwrap_or_else(|| vec![default_us; nr]);
        let up = get("up_rate_limit_us", &self.up_rate_limit_us)?;
        let down = get("down_rate_limit_us", &self.down_rate_limit_us)?;
        Ok((0..nr)
            .map(|i| {
                let split =
                    (up.is_some() || down.is_some()).then(|| (up.as_ref().map_or(base[i], |u| u[i]), down.as_ref().map_or(base[i], |d| d[i])));
                (base[i], split)
            })
            .collect())
    }
}
