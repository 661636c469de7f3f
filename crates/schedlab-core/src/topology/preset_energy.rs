//! Energy Models of the preset machines, from their device trees.
//!
//! Only machines whose device tree carries `dynamic-power-coefficient` and an OPP table
//! have one (the kernel registers no EM otherwise, and neither does schedlab); x86 and
//! ACPI servers have none.
//!
//! The Snapdragon 888 is the exception that depends on the kernel: mainline's
//! sm8350.dtsi has neither coefficient nor OPP table, so a mainline kernel runs it
//! without an EM (and without EAS); Qualcomm's vendor kernel (5.4, Android) registers one
//! from its lahaina.dtsi coefficients and the voltages of the cpufreq hardware's lookup
//! table (LUT). That EM is opt-in per run (`[machine.energy_model] kernel = "vendor"`),
//! its voltages a band (`voltage`): see [`sd888_vendor_domain`].

use serde::{Deserialize, Serialize};

use crate::energy_model::EmPerfDomain;
use crate::provenance::{Kind, Provenance};

/// \[gs101\] mainline arch/arm64/boot/dts/exynos/google/gs101.dtsi: cpucl0 (Cortex-A55,
/// dynamic-power-coefficient 70), cpucl1 (Cortex-A76, 284), cpucl2 (Cortex-X1, 650), and
/// their opp-table-0/1/2 as (opp-hz, opp-microvolt).
const GS101_A55: (u64, &[(u64, u64)]) = (
    70,
    &[
        (300_000_000, 537_500),
        (574_000_000, 600_000),
        (738_000_000, 618_750),
        (930_000_000, 668_750),
        (1_098_000_000, 712_500),
        (1_197_000_000, 731_250),
        (1_328_000_000, 762_500),
        (1_401_000_000, 781_250),
        (1_598_000_000, 831_250),
        (1_704_000_000, 862_500),
        (1_803_000_000, 906_250),
    ],
);
const GS101_A76: (u64, &[(u64, u64)]) = (
    284,
    &[
        (400_000_000, 506_250),
        (553_000_000, 537_500),
        (696_000_000, 562_500),
        (799_000_000, 581_250),
        (910_000_000, 606_250),
        (1_024_000_000, 625_000),
        (1_197_000_000, 662_500),
        (1_328_000_000, 687_500),
        (1_491_000_000, 731_250),
        (1_663_000_000, 775_000),
        (1_836_000_000, 818_750),
        (1_999_000_000, 868_750),
        (2_130_000_000, 918_750),
        (2_253_000_000, 968_750),
    ],
);
const GS101_X1: (u64, &[(u64, u64)]) = (
    650,
    &[
        (500_000_000, 500_000),
        (851_000_000, 556_250),
        (984_000_000, 575_000),
        (1_106_000_000, 606_250),
        (1_277_000_000, 631_250),
        (1_426_000_000, 662_500),
        (1_582_000_000, 693_750),
        (1_745_000_000, 731_250),
        (1_826_000_000, 750_000),
        (2_048_000_000, 793_750),
        (2_188_000_000, 831_250),
        (2_252_000_000, 850_000),
        (2_401_000_000, 887_500),
        (2_507_000_000, 925_000),
        (2_630_000_000, 968_750),
        (2_704_000_000, 1_000_000),
        (2_802_000_000, 1_056_250),
    ],
);

/// Which end of a voltage band a cluster's OPPs take (`[machine.energy_model] voltage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VoltageEnd {
    /// The band's lowest voltage at every OPP (a part binned fast: less power).
    Low,
    /// The band's centre.
    Centre,
    /// The band's highest voltage at every OPP (a part binned slow: more power).
    High,
}

impl VoltageEnd {
    /// The name scenarios use.
    pub fn name(self) -> &'static str {
        match self {
            VoltageEnd::Low => "low",
            VoltageEnd::Centre => "centre",
            VoltageEnd::High => "high",
        }
    }

    /// Parses a name scenarios use.
    pub fn parse(s: &str) -> Option<VoltageEnd> {
        [VoltageEnd::Low, VoltageEnd::Centre, VoltageEnd::High].into_iter().find(|e| e.name() == s)
    }
}

/// \[sd888-freq\] Each SD888 policy's `scaling_available_frequencies`, kHz: the frequencies
/// qcom-cpufreq-hw reads from the EPSS lookup table (LUT) of cpufreq domains 0/1/2, which
/// no device tree lists. Declared (what the firmware's LUT tells the kernel), as three
/// public SM8350 sources record them alike: a stock Xiaomi Mi 11 kernel's list in a
/// frequency-limiting script ("Available Freqs in stock Mi11 kernel"), a vendor "CPU DVFS
/// Debug" init script's `lit_cfrqs`/`big_cfrqs`/`gold_cfrqs` for policy0/4/7, and a
/// tuning script's sysfs comments. Their tops are the preset's 1804.8/2419.2/2841.6 MHz.
const SD888_A55_KHZ: &[u64] = &[
    300_000, 403_200, 499_200, 595_200, 691_200, 806_400, 902_400, 998_400, 1_094_400, 1_209_600, 1_305_600, 1_401_600, 1_497_600, 1_612_800,
    1_708_800, 1_804_800,
];
const SD888_A78_KHZ: &[u64] = &[
    710_400, 844_800, 960_000, 1_075_200, 1_209_600, 1_324_800, 1_440_000, 1_555_200, 1_670_400, 1_766_400, 1_881_600, 1_996_800, 2_112_000,
    2_227_200, 2_342_400, 2_419_200,
];
const SD888_X1_KHZ: &[u64] = &[
    844_800, 960_000, 1_075_200, 1_190_400, 1_305_600, 1_420_800, 1_555_200, 1_670_400, 1_785_600, 1_900_800, 2_035_200, 2_150_400, 2_265_600,
    2_380_800, 2_496_000, 2_592_000, 2_688_000, 2_764_800, 2_841_600,
];

/// Half-width of the SD888 voltage band, in 1/10000 of the centre voltage: 7.98 %.
/// Derived from another Samsung part's per-part voltage binning: the largest
/// (max - min) / (max + min) over the 14 ASV groups, among the rows of mainline
/// drivers/soc/samsung/exynos5422-asv.c's ARM and KFC tables 0 whose lowest group is above
/// the 900 mV floor (KFC 1000 MHz: 1100.0 vs 937.5 mV; the ARM rows span 5.0-7.0 %).
/// A stand-in (28 nm, not 5LPE; the SD888's own CPR/LUT spread is unpublished), and it
/// does not cover the gs101-to-SD888 transfer of the centre: an estimate sized by a
/// derived figure. Power goes as V^2: the band's ends are 0.85x and 1.17x the centre's.
pub const SD888_VOLTAGE_BAND_BP: u64 = 798;

/// Voltage (uV) at `khz` on the gs101 OPP table `opps` (opp-hz, opp-microvolt): linear
/// between the OPPs around it, along the nearest segment outside the table (the SD888
/// A78 runs to 2419.2 MHz where gs101's A76 table stops at 2253 MHz, its X1 to 2841.6
/// where gs101's stops at 2802, its A55 to 1804.8 where gs101's stops at 1803).
fn gs101_uv_at(opps: &[(u64, u64)], khz: u64) -> u64 {
    let hz = khz as f64 * 1000.0;
    let i = opps.windows(2).position(|w| hz <= w[1].0 as f64).unwrap_or(opps.len() - 2);
    let ((f0, v0), (f1, v1)) = (opps[i], opps[i + 1]);
    let v = v0 as f64 + (v1 as f64 - v0 as f64) * (hz - f0 as f64) / (f1 as f64 - f0 as f64);
    v.round() as u64
}

/// The SD888's performance domain of `core_type` as the vendor kernel registers it, at
/// voltage band end `end` (None for a core type the SoC does not have).
///
/// Mirrors: the vendor kernel's drivers/cpufreq/qcom-cpufreq-hw.c, which reads each
/// domain's LUT rows (frequency and voltage), adds every row as an OPP
/// (`dev_pm_opp_add()`) and registers the EM from them (`dev_pm_opp_of_register_em()`),
/// whose drivers/opp/of.c `_get_power()` applies the CPU node's
/// `dynamic-power-coefficient` (lahaina.dtsi: CPU0-3 100, CPU4-6 515, CPU7 845; declared).
/// Model: the LUT voltages are per part and unpublished; the centre is derived from
/// gs101.dtsi's declared voltage at the same frequency, the nearest design (both Samsung
/// 5LPE, Cortex-A55 and X1 alike; the A78 takes gs101's A76 table, its predecessor on the
/// same process), with the band [`SD888_VOLTAGE_BAND_BP`] around it. 5.4's `_get_power()`
/// rounds to mW; schedlab keeps the 6.x micro-watts as for every EM.
pub fn sd888_vendor_domain(core_type: &str, end: VoltageEnd) -> Option<EmPerfDomain> {
    let (dpc, khz, gs101) = match core_type {
        "cortex-a55" => (100, SD888_A55_KHZ, GS101_A55.1),
        "cortex-a78" => (515, SD888_A78_KHZ, GS101_A76.1),
        "cortex-x1" => (845, SD888_X1_KHZ, GS101_X1.1),
        _ => return None,
    };
    let scale = match end {
        VoltageEnd::Low => 10_000 - SD888_VOLTAGE_BAND_BP,
        VoltageEnd::Centre => 10_000,
        VoltageEnd::High => 10_000 + SD888_VOLTAGE_BAND_BP,
    };
    let opps: Vec<(u64, u64)> = khz.iter().map(|&k| (k * 1000, (gs101_uv_at(gs101, k) * scale + 5_000) / 10_000)).collect();
    let source = format!(
        "vendor kernel (qcom-cpufreq-hw LUT): lahaina.dtsi dynamic-power-coefficient {dpc} (declared); LUT \
         frequencies as policy scaling_available_frequencies (declared); voltages derived from gs101.dtsi at \
         the same frequency, band end '{}' (+/-{:.2} %, estimate)",
        end.name(),
        SD888_VOLTAGE_BAND_BP as f64 / 100.0
    );
    let mut pd = EmPerfDomain::from_device_tree(core_type, dpc, &opps, &source);
    let (lo, hi) = (1.0 - SD888_VOLTAGE_BAND_BP as f64 / 1e4, 1.0 + SD888_VOLTAGE_BAND_BP as f64 / 1e4);
    let at = match end {
        VoltageEnd::Low => lo,
        VoltageEnd::Centre => 1.0,
        VoltageEnd::High => hi,
    };
    pd.voltage = Some(Provenance::new(
        Kind::Estimate,
        lo / at,
        hi / at,
        "voltage band as a factor of this EM's voltages: gs101.dtsi's at the same frequency (derived), \
         +/-7.98 % from exynos5422-asv.c's per-part ASV spread (derived from another part: an estimate)",
    ));
    Some(pd)
}

/// The Pixel 6's performance domain of `core_type` from mainline gs101.dtsi (None for a
/// core type the SoC does not have).
pub fn gs101_perf_domain(core_type: &str) -> Option<EmPerfDomain> {
    let (dpc, opps) = match core_type {
        "cortex-a55" => GS101_A55,
        "cortex-a76" => GS101_A76,
        "cortex-x1" => GS101_X1,
        _ => return None,
    };
    Some(EmPerfDomain::from_device_tree(core_type, dpc, opps, "gs101.dtsi dynamic-power-coefficient and OPP tables"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gs101_top_opps_match_the_capacities_frequencies() {
        // The presets' capacities use the top OPPs 1803/2253/2802 MHz.
        for (t, mhz) in [("cortex-a55", 1803), ("cortex-a76", 2253), ("cortex-x1", 2802)] {
            let pd = gs101_perf_domain(t).unwrap();
            assert_eq!(pd.states.last().unwrap().frequency_khz, mhz * 1000);
            // Power rises with frequency (voltage never falls along the table).
            assert!(pd.states.windows(2).all(|w| w[0].power_uw < w[1].power_uw), "{t}");
        }
        // Little < mid < big at their top OPPs.
        let p = |t| gs101_perf_domain(t).unwrap().active_power_mw();
        assert!(p("cortex-a55") < p("cortex-a76") && p("cortex-a76") < p("cortex-x1"));
        // The preset's record gives each of its core types gs101's domain.
        let m = crate::topology::presets::preset("pixel6").unwrap();
        assert!(m.perf_domains.iter().all(|d| d.is_some()));
        assert!(crate::topology::presets::preset("epyc-9654-2s").unwrap().perf_domains.iter().all(|d| d.is_none()));
    }

    const SD888: [&str; 3] = ["cortex-a55", "cortex-a78", "cortex-x1"];
    const ENDS: [VoltageEnd; 3] = [VoltageEnd::Low, VoltageEnd::Centre, VoltageEnd::High];

    #[test]
    fn sd888_top_opps_give_the_presets_capacities() {
        // The capacities come from capacity-dmips-mhz x the top frequency (lahaina.dtsi
        // 1024/1946/2048): the EM's top OPPs must be those frequencies.
        let m = crate::topology::presets::preset("snapdragon-888").unwrap();
        let tops: Vec<u64> = SD888.iter().map(|t| sd888_vendor_domain(t, VoltageEnd::Centre).unwrap().states.last().unwrap().frequency_khz).collect();
        assert_eq!(tops, [1_804_800, 2_419_200, 2_841_600]);
        let clusters: Vec<super::super::presets::Cluster> = SD888
            .iter()
            .zip([1024, 1946, 2048])
            .zip(&tops)
            .map(|((t, d), &k)| super::super::presets::Cluster { cores: 1, core_type: t, dmips_mhz: d, max_khz: k })
            .collect();
        let caps = super::super::presets::dt_capacities(&clusters);
        for (i, t) in SD888.iter().enumerate() {
            let cpu = m.cpus.iter().find(|c| c.core_type == *t).unwrap();
            assert_eq!(cpu.capacity, caps[i], "{t}");
        }
    }

    #[test]
    fn sd888_power_rises_with_frequency_and_cluster_at_every_band_end() {
        for end in ENDS {
            for t in SD888 {
                let pd = sd888_vendor_domain(t, end).unwrap();
                assert!(pd.states.windows(2).all(|w| w[0].power_uw < w[1].power_uw), "{t} {end:?}");
            }
            let p = |t| sd888_vendor_domain(t, end).unwrap().active_power_mw();
            assert!(p("cortex-a55") < p("cortex-a78") && p("cortex-a78") < p("cortex-x1"), "{end:?}");
        }
        assert!(sd888_vendor_domain("cortex-a76", VoltageEnd::Centre).is_none());
    }

    #[test]
    fn sd888_band_low_end_is_below_the_high_end_at_every_opp() {
        for t in SD888 {
            let [lo, mid, hi] = ENDS.map(|e| sd888_vendor_domain(t, e).unwrap());
            for ((l, c), h) in lo.states.iter().zip(&mid.states).zip(&hi.states) {
                assert!(l.power_uw < c.power_uw && c.power_uw < h.power_uw, "{t} at {} kHz", c.frequency_khz);
            }
            // Power goes as V^2: the ends are (1 -/+ 7.98 %)^2 of the centre, within the
            // rounding of voltages to whole mV.
            let (l, c, h) = (lo.active_power_mw(), mid.active_power_mw(), hi.active_power_mw());
            assert!((l / c - 0.9202f64.powi(2)).abs() < 0.005 && (h / c - 1.0798f64.powi(2)).abs() < 0.005, "{t}: {l} {c} {h}");
            let band = mid.voltage.as_ref().unwrap();
            assert!(band.low < 1.0 && band.high > 1.0 && band.kind == Kind::Estimate);
        }
    }

    #[test]
    fn gs101_voltage_is_interpolated_and_extrapolated_along_the_nearest_segment() {
        // On an OPP: its declared voltage; halfway between two: halfway between theirs.
        assert_eq!(gs101_uv_at(GS101_A55.1, 1_401_000), 781_250);
        assert_eq!(gs101_uv_at(GS101_A55.1, (1_401_000 + 1_598_000) / 2), (781_250 + 831_250) / 2);
        // Past gs101's A76 top (2253 MHz, 968.75 mV; 2130 MHz, 918.75 mV): the same slope.
        let v = gs101_uv_at(GS101_A76.1, 2_419_200);
        let slope = (968_750.0f64 - 918_750.0) / (2_253.0 - 2_130.0);
        assert_eq!(v, (968_750.0 + slope * (2_419.2 - 2_253.0)).round() as u64);
        assert!(v > 968_750);
    }
}
