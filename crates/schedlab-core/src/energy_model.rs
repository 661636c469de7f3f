//! The Energy Model of a CPU performance domain: power at each operating point.
//!
//! Mirrors: kernel/power/energy_model.c (`struct em_perf_domain`, `struct em_perf_state`),
//! filled as `dev_pm_opp_of_register_em()` fills it from the device tree: for every OPP of
//! the domain's table, drivers/opp/of.c `_get_power()` estimates P = C x V^2 x f from the
//! CPU node's `dynamic-power-coefficient` C (uW/MHz/V^2), in micro-watts:
//! `C x mV x mV x MHz / 1_000_000`.
//! Model: dynamic power only, as the kernel's EM has it: static (leakage) power and the
//! power of idle states are not in it, so a CPU in WFI or a power-down state costs 0 here.
//! Under the default performance governor a CPU runs at the top OPP (the frequency its
//! capacity is computed at), so active time is charged at the top OPP's power; under
//! schedutil at the OPPs used (sched/cpufreq.rs).

use serde::Serialize;

/// One operating point (`struct em_perf_state`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EmPerfState {
    /// Frequency, kHz.
    pub frequency_khz: u64,
    /// Power at this frequency, micro-watts.
    pub power_uw: u64,
}

/// A performance domain (CPUs sharing one clock, `opp-shared`) with its OPPs, ascending.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EmPerfDomain {
    /// Name (the core type the domain's CPUs have).
    pub name: String,
    /// Operating points, ascending frequency.
    pub states: Vec<EmPerfState>,
    /// Where the coefficient and OPP table come from.
    pub source: String,
    /// The band of the OPP voltages, as a factor of the ones used, where they are not
    /// declared (None: the device tree declares them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub voltage: Option<crate::provenance::Provenance>,
}

impl EmPerfDomain {
    /// Builds the domain from a device-tree `dynamic-power-coefficient` and an OPP table of
    /// (`opp-hz`, `opp-microvolt`) pairs, computing each power as `_get_power()` does.
    pub fn from_device_tree(name: &str, dynamic_power_coefficient: u64, opps: &[(u64, u64)], source: &str) -> Self {
        let mut states: Vec<EmPerfState> = opps
            .iter()
            .map(|&(hz, microvolt)| {
                let mv = microvolt / 1000;
                let mhz = hz / 1_000_000;
                EmPerfState { frequency_khz: hz / 1000, power_uw: dynamic_power_coefficient * mv * mv * mhz / 1_000_000 }
            })
            .collect();
        states.sort_by_key(|s| s.frequency_khz);
        EmPerfDomain { name: name.to_string(), states, source: source.to_string(), voltage: None }
    }

    /// Power of one CPU running at the top OPP, milliwatts.
    pub fn active_power_mw(&self) -> f64 {
        self.states.last().map_or(0.0, |s| s.power_uw as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_follows_c_v2_f_in_microwatts() {
        // 100 uW/MHz/V^2 at 1 V and 1000 MHz is 100 mW; doubling f doubles it, and
        // 0.5 V quarters it.
        let pd = EmPerfDomain::from_device_tree("t", 100, &[(2_000_000_000, 1_000_000), (1_000_000_000, 500_000)], "test");
        assert_eq!(pd.states[0], EmPerfState { frequency_khz: 1_000_000, power_uw: 25_000 });
        assert_eq!(pd.states[1], EmPerfState { frequency_khz: 2_000_000, power_uw: 200_000 });
        assert_eq!(pd.active_power_mw(), 200.0);
    }
}
