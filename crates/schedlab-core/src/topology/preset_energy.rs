//! Energy Models of the preset machines, from their device trees.
//!
//! Only machines whose device tree carries `dynamic-power-coefficient` and an OPP table
//! have one (the kernel registers no EM otherwise, and neither does schedlab); x86 and
//! ACPI servers have none.

use crate::energy_model::EmPerfDomain;

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

/// Returns the performance domain of core type `core_type` on machine `machine`, if the
/// machine has an Energy Model.
pub fn perf_domain(machine: &str, core_type: &str) -> Option<EmPerfDomain> {
    if machine != "pixel6" {
        return None;
    }
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
            let pd = perf_domain("pixel6", t).unwrap();
            assert_eq!(pd.states.last().unwrap().frequency_khz, mhz * 1000);
            // Power rises with frequency (voltage never falls along the table).
            assert!(pd.states.windows(2).all(|w| w[0].power_uw < w[1].power_uw), "{t}");
        }
        // Little < mid < big at their top OPPs.
        let p = |t| perf_domain("pixel6", t).unwrap().active_power_mw();
        assert!(p("cortex-a55") < p("cortex-a76") && p("cortex-a76") < p("cortex-x1"));
        assert!(perf_domain("epyc-9654-2s", "zen4").is_none());
    }
}
