//! The LISA-style check (eas/check.rs): each find_energy_efficient_cpu() decision against
//! the cheapest allowed CPU on the same snapshot. Recording must not move the run, and
//! the judge must find the misses feec's candidate restriction makes.

use crate::common;

use common::scenario;
use schedlab_core::api::{run, RunOptions};
use schedlab_core::eas::check::FeecMiss;
use schedlab_core::eas::energy::{CpuSnap, EasSnapshot, FeecRules, TaskSnap};
use schedlab_core::eas::Uclamp;

/// The eas experiment's periodic set on the Pixel 6 (6.6, schedutil, EAS on).
const PERIODIC: &str = "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"6.6\"\ngovernor = \"schedutil\"\n\
    [[tasks]]\nname = \"small0\"\ncpu = 4\nprogram = [{ loop = { body = [{ run = \"156us\" }, { periodic = { period = \"10ms\" } }] } }]\n\
    [[tasks]]\nname = \"small1\"\ncpu = 5\nprogram = [{ loop = { body = [{ run = \"250us\" }, { periodic = { period = \"10ms\" } }] } }]\n\
    [[tasks]]\nname = \"medium\"\ncpu = 0\nprogram = [{ loop = { body = [{ run = \"3890us\" }, { periodic = { period = \"10ms\" } }] } }]\n\
    [run]\nduration_s = 1.0\n";

/// Recording changes nothing but adds its own keys; every wakeup feec placed is judged.
#[test]
fn recording_the_check_does_not_move_the_run() {
    let s = scenario(PERIODIC);
    let plain = run(&s, 1, &RunOptions::default()).unwrap();
    let checked = run(&s, 1, &RunOptions { eas_check: true, ..Default::default() }).unwrap();
    assert!(plain.eas_check.is_none());
    assert!(!plain.result.summary.keys().any(|k| k.starts_with("eas_check")));
    let decisions = checked.eas_check.expect("recorded");
    let placed = checked.result.summary["eas_feec_placements"];
    assert!(placed > 100.0, "{placed}");
    assert_eq!(decisions.len() as f64, placed);
    assert_eq!(checked.result.summary["eas_check_decisions"], placed);
    let mut a = plain.result.clone();
    let mut b = checked.result.clone();
    b.summary.retain(|k, _| !k.starts_with("eas_check"));
    a.engine.wall_ns = 0;
    b.engine.wall_ns = 0;
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    // The chosen CPU's energy is never below the best's: the best is a minimum over a
    // set that holds every CPU feec may choose when one fits.
    for d in &decisions {
        if let (Some(best), FeecMiss::Within | FeecMiss::Candidates | FeecMiss::FitsOrder) = (d.best_energy, d.miss) {
            assert!(d.energy >= best, "{d:?}");
        }
    }
}

/// Two A55-like CPUs in one domain (capacity 160) and a big one (1024). CPU 0 holds a
/// task capped at uclamp_max 30 (util 60); CPU 1, where the waking task last ran, an
/// unclamped util 40. The waking task (util 20, capped at 30) fits everywhere. feec
/// evaluates prev_cpu 1 and the big CPU, and not CPU 0: it has less spare capacity than
/// prev_cpu (80 against 100). Yet on CPU 0 the domain's OPP follows the caps (max(30,
/// 40) = 40, x1.25 -> 600 MHz) where on CPU 1 it follows 60 (-> 900 MHz): CPU 0 is the
/// cheapest. The judge must call this a miss of the candidate restriction.
#[test]
fn the_judge_finds_the_max_spare_restriction_under_uclamp_max() {
    use schedlab_core::eas::energy::{EmCostState, PerfDomainCosts};
    let st = |f: u64, p: u64, fmax: u64| EmCostState { frequency_khz: f, power_uw: p, cost: p * fmax / f };
    let fmax = 1_800_000;
    let little = PerfDomainCosts {
        states: vec![st(300_000, 10_000, fmax), st(600_000, 30_000, fmax), st(900_000, 60_000, fmax), st(fmax, 250_000, fmax)],
        scale_cpu: 160,
    };
    let big = PerfDomainCosts { states: vec![st(1_000_000, 600_000, 3_000_000), st(3_000_000, 2_000_000, 3_000_000)], scale_cpu: 1024 };
    let capped = Uclamp { min: 0, max: 30 };
    let snap = EasSnapshot {
        cpus: vec![
            CpuSnap { capacity: 160, util_avg: 60, util_est: 60, uclamp: Some(capped), pd: 0 },
            // util_avg holds the sleeping task's blocked 20; util_est only the enqueued 40.
            CpuSnap { capacity: 160, util_avg: 60, util_est: 40, uclamp: Some(Uclamp::NONE), pd: 0 },
            CpuSnap { capacity: 1024, util_avg: 0, util_est: 0, uclamp: None, pd: 1 },
        ],
        pds: vec![little, big],
        util_est_on: true,
        uclamp_used: true,
    };
    let p = TaskSnap { util_avg: 20, util_est: 20, uclamp: capped, prev_cpu: 1, allowed: vec![true; 3] };
    let chosen = snap.find_energy_efficient_cpu(&p, false, FeecRules::V6).unwrap();
    assert_eq!(chosen, 1, "feec keeps prev_cpu");
    assert_eq!(snap.feec_candidates(&p, FeecRules::V6), vec![1, 2]);
    let d = snap.judge_feec(&p, 0, chosen, FeecRules::V6, 0);
    assert_eq!(d.best_cpu, Some(0));
    assert!(d.best_energy.unwrap() * 105 < d.energy * 100, "{d:?}");
    assert_eq!(d.miss, FeecMiss::Candidates);
}
