//! rt-app's ramp on an idle Pixel 6 (4 A55 of capacity 160, 2 A76 of 498, 2 X1 of
//! 1024) with schedutil and EAS: a task stepping from 10 % to 90 % duty (of a 16 ms
//! period, work at capacity 1024 as rt-app calibrates it on the biggest CPU; LISA's
//! RampUp shape) starts on a little CPU and leaves it once PELT crosses the little
//! CPU's capacity margin. Phases are consecutive counted loops (rt-app's phases).

use crate::common;

use common::scenario;

/// Periods of the 10 % phase: 62 x 16 ms = 0.992 s, when the 90 % phase starts.
const LOW_PERIODS: u64 = 62;

/// (time, cpu) of each switch into the ramp task (pid 1).
fn ramp(features: &str) -> Vec<(u64, usize)> {
    let s = scenario(&format!(
        "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"6.6\"\ngovernor = \"schedutil\"\nfeatures = {{ {features} }}\n\
         [[tasks]]\nname = \"ramp\"\ncpu = 0\nprogram = [\
         {{ loop = {{ count = {LOW_PERIODS}, body = [{{ run = \"250us\" }}, {{ periodic = {{ period = \"16ms\" }} }}] }} }}, \
         {{ loop = {{ body = [{{ run = \"2250us\" }}, {{ periodic = {{ period = \"16ms\" }} }}] }} }}]\n\
         [run]\nduration_s = 2.0\n"
    ));
    common::switches_into(&s, 1)
}

/// The bound on the move after the step, from PELT and schedutil (the task's util u on
/// the A55, cap 160; tau = 32 ms / ln 2 = 46.17 ms):
/// - at the step u0 >= 11.3: the 10 % phase's mean util is 16 (0.1 x 160) and in one
///   period (16 ms) it decays by at most 2^(-16/32);
/// - frequency invariance: running flat out at f the util tends to 160 x f / fmax, and
///   schedutil's f is the lowest OPP at or above 1.25 x u / 160 x fmax (1 ms rate limit,
///   negligible here), so du/dt >= (1.25 u - u) / tau = u / (4 tau): a quarter of
///   PELT's rate, while the 90 % task runs flat out (f below 0.9 fmax, u < 115.2):
///   4 tau x ln(115.2 / 11.3) = 184.7 x 2.322 = 428.8 ms;
/// - from 115.2 on it may sleep, its work rate 0.9 x 160 = 144: du/dt >= (144 - u) / tau
///   up to fits_capacity()'s margin 160 x 1024 / 1280 = 128: tau x ln(28.8 / 16) = 27.1 ms;
/// - then the tick that sees it (update_misfit_status(), check_update_overutilized_status())
///   and the kick or wakeup that moves it: two jiffies at HZ 250, 8 ms.
///
/// 428.8 + 27.1 + 8 = 463.9 ms.
const MOVE_BOUND_NS: u64 = 463_900_000;

#[test]
fn a_ramping_task_leaves_the_little_cpu_within_the_time_pelt_needs() {
    for features in ["", "ENERGY_AWARE = false"] {
        let sw = ramp(features);
        let step = LOW_PERIODS * 16_000_000;
        // The 10 % phase, after its first 0.2 s (a new task's util is a guess): on the A55s.
        let low: Vec<usize> = sw.iter().filter(|(t, _)| (200_000_000..step).contains(t)).map(|(_, c)| *c).collect();
        assert!(low.len() > 40 && low.iter().all(|&c| c < 4), "{features}: 10 % phase on {low:?}");
        // The 90 % phase: off the A55s within the bound, and not back on them.
        let (moved, _) = *sw.iter().find(|(t, c)| *t >= step && *c >= 4).unwrap_or_else(|| panic!("{features}: never left the A55s"));
        assert!(moved - step <= MOVE_BOUND_NS, "{features}: moved {} ms after the step", (moved - step) / 1_000_000);
        let back = sw.iter().filter(|(t, c)| *t > moved && *c < 4).count();
        assert_eq!(back, 0, "{features}: back on an A55 {back} times");
    }
}
