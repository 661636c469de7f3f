//! Energy-aware scheduling on the Snapdragon 888 (4 A55 of capacity 325, 3 A78 of 828,
//! 1 X1 of 1024) with the vendor kernel's Energy Model (`[machine.energy_model] kernel =
//! "vendor"`); mainline runs it without one, and so without EAS or schedutil.

use crate::common;

use common::{run_toml, scenario};
use schedlab_core::RunResult;

/// A periodic task (rt-app's run + timer): `work_us` of work (at capacity 1024) every
/// 10 ms, started on `cpu`.
fn periodic(cpu: usize, work_us: u64) -> String {
    format!("[[tasks]]\nname = \"small\"\ncpu = {cpu}\nprogram = [{{ loop = {{ body = [{{ run = \"{work_us}us\" }}, {{ periodic = {{ period = \"10ms\" }} }}] }} }}]\n")
}

/// `energy_model` is the `[machine.energy_model]` table's body ("" for none); a second of
/// warm-up (a new task's first util is a guess), then `seconds`.
fn sd888(energy_model: &str, features: &str, tasks: &str, seconds: f64) -> RunResult {
    let em = if energy_model.is_empty() { String::new() } else { format!("[machine.energy_model]\n{energy_model}\n") };
    run_toml(
        &format!(
            "[machine]\npreset = \"snapdragon-888\"\n{em}[kernel]\nprofile = \"6.6\"\ngovernor = \"schedutil\"\nfeatures = {{ {features} }}\n{tasks}[run]\nduration_s = {}\nwarmup_s = 1.0\n",
            seconds + 1.0
        ),
        1,
    )
}

/// Busy time of CPUs `lo..hi` (A55 0-3, A78 4-6, X1 7) over the whole run's.
fn share(r: &RunResult, lo: usize, hi: usize) -> f64 {
    let all: u64 = r.cpus.iter().map(|c| c.busy_ns).sum();
    r.cpus[lo..hi].iter().map(|c| c.busy_ns).sum::<u64>() as f64 / all.max(1) as f64
}

/// A 10 %-util task (10 % of the A55's capacity: 325 x 0.1 of 1024 per 10 ms = 317 us)
/// started on the X1: with the vendor EM and EAS it moves to a little CPU at its first
/// wakeups, at every end of the voltage band; without EAS the idle X1 it last ran on
/// fits it, so it stays there.
#[test]
fn a_small_task_runs_on_little_cpus_with_the_vendor_em() {
    let t = periodic(7, 317);
    for v in ["low", "centre", "high"] {
        let with = sd888(&format!("kernel = \"vendor\"\nvoltage = \"{v}\""), "", &t, 1.0);
        assert!(share(&with, 0, 4) > 0.9, "EAS at {v}: on the A55s: {}", share(&with, 0, 4));
        assert!(with.summary["eas_feec_placements"] > 50.0, "{v}");
    }
    let without = sd888("kernel = \"vendor\"", "ENERGY_AWARE = false", &t, 1.0);
    assert!(share(&without, 7, 8) > 0.9, "no EAS: stays on the X1: {}", share(&without, 7, 8));
}

/// Mainline's sm8350.dtsi has no Energy Model: no EAS, no schedutil (the governor falls
/// back to the top OPP), no energy figures; the same task stays on the X1.
#[test]
fn mainline_runs_the_sd888_without_an_energy_model() {
    let t = periodic(7, 317);
    for em in ["", "kernel = \"mainline\""] {
        let r = sd888(em, "", &t, 1.0);
        assert!(!r.summary.contains_key("energy_cpu_mj") && !r.summary.contains_key("eas_feec_placements"), "{em}");
        assert!(share(&r, 7, 8) > 0.9, "mainline: stays on the X1: {}", share(&r, 7, 8));
    }
    let vendor = sd888("kernel = \"vendor\"", "", &t, 1.0);
    assert!(vendor.summary["energy_cpu_mj"] > 0.0);
}

/// The band's ends move the energy the same way at every OPP (V^2), placement aside: the
/// same run costs less at the low end than at the centre, and more at the high end.
#[test]
fn energy_follows_the_voltage_band() {
    let t = periodic(7, 317);
    let e = |v: &str| sd888(&format!("kernel = \"vendor\"\nvoltage = \"{v}\""), "", &t, 1.0).summary["energy_cpu_mj"];
    let (lo, mid, hi) = (e("low"), e("centre"), e("high"));
    assert!(lo < mid && mid < hi, "{lo} {mid} {hi}");
}

const TASK: &str = "[[tasks]]\nname = \"t\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 0.01\n";

/// Bad `[machine.energy_model]` tables are one-line errors naming the field.
#[test]
fn bad_energy_model_tables_name_the_field() {
    let err = |machine: &str, em: &str| {
        let toml = format!("[machine]\npreset = \"{machine}\"\n[machine.energy_model]\n{em}\n{TASK}");
        match schedlab_core::Scenario::from_toml_str(&toml, "<test>") {
            Err(e) => e.to_string(),
            Ok(s) => schedlab_core::api::build_machine(&s.machine).map(|_| ()).unwrap_err().to_string(),
        }
    };
    assert!(err("pixel6", "kernel = \"vendor\"").contains("machine.energy_model.kernel"));
    assert!(err("snapdragon-888", "kernel = \"android\"").contains("expected \"mainline\" or \"vendor\""));
    assert!(err("snapdragon-888", "voltage = \"low\"").contains("machine.energy_model.voltage"));
    assert!(err("snapdragon-888", "kernel = \"vendor\"\nvoltage = \"typical\"").contains("expected \"low\", \"centre\" or \"high\""));
    assert!(err("snapdragon-888", "kernel = \"vendor\"\nvoltage = { cortex-a76 = \"low\" }").contains("no core type 'cortex-a76'"));
    // One end per core type: the others stay at the centre.
    let toml =
        format!("[machine]\npreset = \"snapdragon-888\"\n[machine.energy_model]\nkernel = \"vendor\"\nvoltage = {{ cortex-a55 = \"low\" }}\n{TASK}");
    let m = schedlab_core::api::build_machine(&scenario(&toml).machine).unwrap();
    let centre =
        schedlab_core::topology::preset_energy::sd888_vendor_domain("cortex-a55", schedlab_core::topology::preset_energy::VoltageEnd::Centre)
            .unwrap();
    assert!(m.perf_domain(0).unwrap().active_power_mw() < centre.active_power_mw());
    assert!(m.perf_domain(7).unwrap().source.contains("'centre'"));
}
