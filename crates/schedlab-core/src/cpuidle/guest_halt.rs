//! What a virtual machine's halt costs to leave: the hypervisor's idle ladder under the
//! guest's one halt state.
//!
//! Mirrors: the host side of a guest's `default_idle()` HLT (x86) or WFI (arm64) on KVM,
//! which the guest kernel cannot see. KVM's `kvm_vcpu_halt()` first polls for the vCPU's
//! `halt_poll_ns` (grown and shrunk per vCPU, at most the `halt_poll_ns` module parameter,
//! 200 us on x86 by default): a wakeup inside that window costs about what it costs on a
//! busy CPU. Past it `kvm_vcpu_block()` schedules the vCPU thread out, and the wakeup
//! waits for the host scheduler to run it again; longer still, the physical CPU itself
//! goes into its own idle states. The guest's cpuidle driver (or, without one, its single
//! halt state) declares none of this.
//! Model: a step function of how long the CPU has been halted: from each stage's idle
//! time on, a wakeup of the halted CPU pays that stage's extra time on top of the halt
//! state's own wake. A stage's extra is one figure, or its measured distribution as
//! quantiles evenly spaced from the least to the greatest; each wakeup then draws from
//! it (a draw keyed by the run's seed, the CPU and the instant, so it shifts no other
//! random stream). The stages come from a measurement (`schedlab validate-host` times a
//! timer wakeup on an idle CPU against the same wakeup on a CPU kept busy, per sleep
//! length) or from the scenario. Polling states (x86 POLL) never halt and pay nothing.

use serde::{Deserialize, Serialize};

use crate::provenance::{Kind, Provenance};
use crate::time::Ns;

/// From `after_ns` of halt on, a wakeup pays an extra drawn from `extra_ns`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GuestHaltStage {
    /// Time halted from which the stage applies, ns.
    pub after_ns: Ns,
    /// Extra wake time, ns: one figure, or quantiles at probabilities 0, 1/(n-1), ..., 1
    /// (ascending).
    pub extra_ns: Vec<Ns>,
}

impl GuestHaltStage {
    /// The extra at probability `u` in [0, 1): linear between the quantiles.
    fn extra_at(&self, u: f64) -> Ns {
        let q = &self.extra_ns;
        if q.len() == 1 {
            return q[0];
        }
        let x = u.clamp(0.0, 1.0) * (q.len() - 1) as f64;
        let i = (x as usize).min(q.len() - 2);
        let f = x - i as f64;
        (q[i] as f64 + f * (q[i + 1] - q[i]) as f64).round() as Ns
    }
}

/// The hypervisor's ladder under a guest's halt state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GuestHalt {
    /// Stages by ascending `after_ns`.
    pub stages: Vec<GuestHaltStage>,
    /// Where the stages come from; the band spans the stages' extra times.
    pub provenance: Provenance,
}

impl GuestHalt {
    /// The extra wake time after `halted_ns` in the halt state, from the last stage
    /// reached, at probability `u` of its distribution.
    pub fn extra_wake_ns(&self, halted_ns: Ns, u: f64) -> Ns {
        self.stages.iter().take_while(|s| s.after_ns <= halted_ns).last().map_or(0, |s| s.extra_at(u))
    }
}

/// `[machine.guest_halt]`: the ladder as a scenario writes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuestHaltSpec {
    /// `[idle_us, extra_wake_us]`, or `[idle_us, q_0, ..., q_n]` (the extra's quantiles
    /// from least to greatest, evenly spaced in probability), idle time strictly
    /// ascending.
    pub stages: Vec<Vec<f64>>,
    /// What kind of figures they are: "measured", "derived" or "estimate"; absent, the
    /// scenario's own setting ("override").
    #[serde(default)]
    pub kind: Option<String>,
    /// Where they come from.
    #[serde(default)]
    pub source: Option<String>,
}

impl GuestHaltSpec {
    /// Checks the stages and turns them into the model's ladder.
    pub fn build(&self) -> Result<GuestHalt, String> {
        if self.stages.is_empty() {
            return Err("stages: expected at least one [idle_us, extra_wake_us] pair".into());
        }
        let mut stages: Vec<GuestHaltStage> = Vec::with_capacity(self.stages.len());
        for (i, stage) in self.stages.iter().enumerate() {
            let (idle_us, extra_us) = match stage.as_slice() {
                [idle_us, extra_us @ ..] if !extra_us.is_empty() => (idle_us, extra_us),
                _ => return Err(format!("stages[{i}]: expected [idle_us, extra_wake_us] or [idle_us, quantiles...], got {} number(s)", stage.len())),
            };
            for (k, &v) in stage.iter().enumerate() {
                let what = if k == 0 { "idle_us" } else { "extra_wake_us" };
                // Up to 1000 s, as the idle state overrides: larger would saturate the ns field.
                if !v.is_finite() || !(0.0..=1e9).contains(&v) {
                    return Err(format!(
                        "stages[{i}]: {what} must be a non-negative number of microseconds up to 1e9, got {}",
                        crate::cost::shown(v)
                    ));
                }
            }
            if extra_us.windows(2).any(|w| w[1] < w[0]) {
                return Err(format!("stages[{i}]: the extra's quantiles must not decrease (least to greatest)"));
            }
            let idle_us = *idle_us;
            let after_ns = (idle_us * 1000.0).round() as Ns;
            if let Some(prev) = stages.last() {
                if after_ns <= prev.after_ns {
                    return Err(format!(
                        "stages[{i}]: idle_us must be greater than the stage before it ({} us), got {}",
                        prev.after_ns as f64 / 1000.0,
                        crate::cost::shown(idle_us)
                    ));
                }
            }
            stages.push(GuestHaltStage { after_ns, extra_ns: extra_us.iter().map(|us| (us * 1000.0).round() as Ns).collect() });
        }
        let kind = match self.kind.as_deref() {
            None => Kind::Override,
            Some("measured") => Kind::Measured,
            Some("derived") => Kind::Derived,
            Some("estimate") => Kind::Estimate,
            Some(other) => return Err(format!("kind: expected \"measured\", \"derived\" or \"estimate\", got \"{other}\"")),
        };
        let low = stages.iter().flat_map(|s| s.extra_ns.iter().copied()).min().unwrap_or(0) as f64;
        let high = stages.iter().flat_map(|s| s.extra_ns.iter().copied()).max().unwrap_or(0) as f64;
        let source = self.source.clone().unwrap_or_else(|| "set by the scenario".into());
        Ok(GuestHalt { stages, provenance: Provenance::new(kind, low, high, source) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(stages: &[&[f64]]) -> GuestHaltSpec {
        GuestHaltSpec { stages: stages.iter().map(|s| s.to_vec()).collect(), ..Default::default() }
    }

    #[test]
    fn a_wake_pays_the_last_stage_reached() {
        let g = spec(&[&[0.0, 0.0], &[200.0, 9.0], &[5000.0, 48.0]]).build().unwrap();
        assert_eq!(g.extra_wake_ns(0, 0.5), 0);
        assert_eq!(g.extra_wake_ns(199_999, 0.5), 0);
        assert_eq!(g.extra_wake_ns(200_000, 0.0), 9_000);
        assert_eq!(g.extra_wake_ns(4_999_999, 0.99), 9_000);
        assert_eq!(g.extra_wake_ns(60_000_000_000, 0.5), 48_000);
        // Before the first stage nothing is paid.
        assert_eq!(spec(&[&[100.0, 5.0]]).build().unwrap().extra_wake_ns(99_999, 0.5), 0);
    }

    #[test]
    fn a_distribution_is_drawn_between_its_quantiles() {
        // Least 2 us, median 10, greatest 30.
        let g = spec(&[&[0.0, 2.0, 10.0, 30.0]]).build().unwrap();
        assert_eq!(g.extra_wake_ns(1000, 0.0), 2_000);
        assert_eq!(g.extra_wake_ns(1000, 0.25), 6_000);
        assert_eq!(g.extra_wake_ns(1000, 0.5), 10_000);
        assert_eq!(g.extra_wake_ns(1000, 0.75), 20_000);
        assert_eq!(g.extra_wake_ns(1000, 0.9), 26_000);
    }

    #[test]
    fn bad_stages_are_refused_by_position() {
        assert!(spec(&[]).build().unwrap_err().contains("at least one"));
        let e = spec(&[&[0.0, 0.0], &[0.0, 3.0]]).build().unwrap_err();
        assert!(e.starts_with("stages[1]: idle_us must be greater"), "{e}");
        let e = spec(&[&[0.0, -1.0]]).build().unwrap_err();
        assert!(e.starts_with("stages[0]: extra_wake_us must be a non-negative"), "{e}");
        assert!(spec(&[&[]]).build().unwrap_err().starts_with("stages[0]: expected"));
        let e = spec(&[&[0.0]]).build().unwrap_err();
        assert!(e.starts_with("stages[0]: expected [idle_us, extra_wake_us]"), "{e}");
        let e = spec(&[&[0.0, 5.0, 3.0]]).build().unwrap_err();
        assert!(e.starts_with("stages[0]: the extra's quantiles must not decrease"), "{e}");
        let mut s = spec(&[&[0.0, 1.0]]);
        s.kind = Some("declared".into());
        assert!(s.build().unwrap_err().starts_with("kind: expected"));
    }

    #[test]
    fn the_band_spans_the_stages() {
        let mut s = spec(&[&[0.0, 0.5], &[200.0, 9.0]]);
        s.kind = Some("measured".into());
        let g = s.build().unwrap();
        assert_eq!((g.provenance.kind, g.provenance.low, g.provenance.high), (Kind::Measured, 500.0, 9000.0));
    }
}
