//! The root domain's overutilized flag on the Pixel 6 (4 A55 of capacity 160, 2 A76,
//! 2 X1) with schedutil and EAS, set and cleared where the kernel does it (6.6 and 6.18
//! alike): set by check_update_overutilized_status() at an enqueue or tick of a CPU
//! whose util does not fit; cleared only by update_sd_lb_stats() of a root-level
//! load_balance(), which reads each idle CPU's util as its last blocked-load update left
//! it (nohz_newidle_balance() / NOHZ_STATS_KICK every LOAD_AVG_PERIOD ms).

use crate::common;

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
///
/// 10.3 + 32 + 10 + 252 + 14 = 318.3 ms.
#[allow(clippy::approx_constant)] // 318.3 ms, the sum above: near 1/pi by chance
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

/// A task boosted to uclamp_min = 1024, pinned to A55 CPU 0 while it runs a light
/// periodic load (0.5 ms of work every 10 ms: util about 50, which fits the A55, and
/// cpu_overutilized() counts util_fits_cpu()'s -1 as fitting, so the root domain stays
/// not overutilized), then opens its affinity to every CPU and runs 20 ms of work
/// without sleeping, so no wakeup lets feec move it. It is a misfit at once
/// (task_fits_cpu() wants util_fits_cpu() > 0). Returns how long after the affinity
/// change it first runs on a big CPU.
fn boosted_misfit_moves_after(profile: &str, features: &str) -> u64 {
    let s = common::scenario(&format!(
        "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"{profile}\"\ngovernor = \"schedutil\"\nfeatures = {{ {features} }}\n\
         [[tasks]]\nname = \"ui\"\ncpu = 0\naffinity = \"0\"\nsched_attr = {{ util_min = 1024 }}\nprogram = [\
         {{ loop = {{ count = 30, body = [{{ run = \"500us\" }}, {{ periodic = {{ period = \"10ms\" }} }}] }} }}, \
         {{ set_affinity = \"0-7\" }}, {{ run = \"20ms\" }}, {{ sleep = \"1s\" }}]\n\
         [run]\nduration_s = 1.0\n"
    ));
    let sw = common::switches_into(&s, 1);
    // The 30 periods end at 300 ms; the switch of the 31st activation is the last on CPU 0 before the move.
    let open = sw.iter().filter(|(t, c)| *t >= 290_000_000 && *c == 0).map(|(t, _)| *t).next().expect("the last period");
    let moved = sw.iter().find(|(t, c)| *t > open && *c >= 4).unwrap_or_else(|| panic!("{profile} {features}: never moved: {sw:?}"));
    assert!(sw.iter().all(|(t, c)| *t >= open || *c == 0), "{profile}: left CPU 0 while pinned");
    moved.0 - open
}

/// 6.3+ (e5ed0550c04c) forces a misfit group's balance before find_busiest_group()'s
/// EAS exit: the boosted task is pulled within 16 ms of becoming a misfit: the tick that
/// flags it (a jiffy, 4 ms at HZ 250), nohz.next_balance of the idle CPUs (the domain's
/// balance interval, 8 ms for the 8-CPU MC level) and the tick that sends the kick (4 ms);
/// the kicked CPU's balance pushes the running task at once (measured: 10.9 ms). Before,
/// the exit comes first and it waits until its own util makes the A55 overutilized: from
/// about 50 towards 160 at the top OPP (uclamp_min asks for it), past 128 after
/// tau ln(110/32) = 57 ms, tau = 46.2 ms (measured: 75.9 ms); the 6.6 and 6.18 forms with
/// the feature off stand for the earlier kernels.
#[test]
fn a_misfit_is_pulled_before_the_eas_exit_from_6_3() {
    for profile in ["6.6", "6.18"] {
        let t = boosted_misfit_moves_after(profile, "");
        assert!(t <= 16_000_000, "{profile}: moved {} us after", t / 1000);
        let before = boosted_misfit_moves_after(profile, "MISFIT_BEFORE_EAS_EXIT = false");
        eprintln!("{profile}: moved {} us after, {} us with the EAS exit first", t / 1000, before / 1000);
        assert!(before >= 40_000_000, "{profile} before 6.3: moved {} us after", before / 1000);
    }
}
