//! The root domain's overutilized flag on the Pixel 6 (4 A55 of capacity 160, 2 A76,
//! 2 X1) with schedutil and EAS, set and cleared where the kernel does it (6.6 and 6.18
//! alike): set by check_update_overutilized_status() at an enqueue or tick of a CPU
//! whose util does not fit; cleared only by update_sd_lb_stats() of a root-level
//! load_balance(), which reads each idle CPU's util as its last blocked-load update left
//! it (nohz_newidle_balance() / NOHZ_STATS_KICK every LOAD_AVG_PERIOD ms).

mod common;

use common::run_toml;
use schedlab_core::RunResult;

/// A small periodic task (156 us of work at capacity 1024 every 10 ms: 10 % of an A55)
/// from CPU 0, with `hog` beside it, `seconds` long.
fn run(profile: &str, hog: &str, seconds: f64) -> RunResult {
    run_toml(
        &format!(
            "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"{profile}\"\ngovernor = \"schedutil\"\n[[tasks]]\nname = \"small\"\ncpu = 0\nprogram = [{{ loop = {{ body = [{{ run = \"156us\" }}, {{ periodic = {{ period = \"10ms\" }} }}] }} }}]\n{hog}[run]\nduration_s = {seconds}\n"
        ),
        1,
    )
}

/// A hog pinned to A55 CPU 3: 80 ms of work at capacity 1024 (about 0.5 s on the A55),
/// then exit; or forever.
fn hog(exits: bool) -> String {
    let program = if exits { "[{ run = \"80ms\" }, \"exit\"]" } else { "[{ loop = { body = [{ run = \"10ms\" }] } }]" };
    format!("[[tasks]]\nname = \"hog\"\ncpu = 3\naffinity = \"3\"\nprogram = {program}\n")
}

/// The bound on clearing after the hog exits, from the kernel's path:
/// - CPU 3's blocked util must fall below fits_capacity()'s 160 x 1024 / 1280 = 128: from
///   at most 160, 32 ms x log2(160 / 128) = 10.3 ms of PELT decay (32 ms half-life);
/// - a blocked-load update must read it: nohz.next_blocked is LOAD_AVG_PERIOD = 32 ms
///   after the last, taken at the small task's next idle entry (within its 10 ms period);
/// - a root-level balance must follow: on the busy small task's CPU at a tick when the
///   busy interval has passed, max_interval (2 x 8 CPUs = 16 ms) x busy_factor 16 - one
///   jiffy = 252 ms, plus up to a period (10 ms) and a jiffy (4 ms at HZ 250) for the
///   tick to land while the task runs.
/// 10.3 + 32 + 10 + 252 + 14 = 318.3 ms.
const CLEAR_BOUND_S: f64 = 0.3183;

#[test]
fn overutilized_turns_eas_off_and_back_on() {
    for profile in ["6.6", "6.18"] {
        let quiet = run(profile, "", 2.0);
        let always = run(profile, &hog(false), 2.0);
        let once = run(profile, &hog(true), 2.0);
        let s = |r: &RunResult, k: &str| r.summary[k];
        // No hog: every wakeup of the small task goes through feec, the flag never sets.
        assert_eq!(s(&quiet, "eas_overutilized_changes"), 0.0, "{profile}");
        assert!(s(&quiet, "eas_feec_placements") >= 195.0, "{profile}: {}", s(&quiet, "eas_feec_placements"));
        // A hog for the whole run: set once, never cleared, feec stops.
        assert_eq!(s(&always, "eas_overutilized_changes"), 1.0, "{profile}");
        assert!(s(&always, "eas_feec_placements") < 20.0, "{profile}: {}", s(&always, "eas_feec_placements"));
        // A hog that exits: set once, cleared once, within the bound after its exit.
        let exit_s = once.tasks.iter().find(|t| t.name == "hog").unwrap().run_ns as f64 / 1e9;
        let ou = s(&once, "eas_overutilized_seconds");
        assert_eq!(s(&once, "eas_overutilized_changes"), 2.0, "{profile}");
        assert!(ou < exit_s + CLEAR_BOUND_S, "{profile}: set {ou} s, hog ran {exit_s} s");
        // Set while the hog ran (its util crosses 128 within ~0.1 s of its start).
        assert!(ou > exit_s - 0.15, "{profile}: set {ou} s, hog ran {exit_s} s");
        // feec resumes: every wakeup after the clear (one per 10 ms) goes through it.
        let after = (2.0 - exit_s - CLEAR_BOUND_S) / 0.010;
        let feec = s(&once, "eas_feec_placements");
        assert!(feec >= 0.97 * after, "{profile}: {feec} feec placements, {after} wakeups after the bound");
    }
}
