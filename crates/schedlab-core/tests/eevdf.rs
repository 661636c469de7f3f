//! EEVDF mechanisms seen from a run: delayed dequeue (6.12+).

use crate::common;

use common::run_toml;

/// A task running 1 ms and sleeping 3 ms beside a hog on one CPU goes to sleep with
/// negative lag (it ran 1 ms while the hog waited). Without
/// DELAY_DEQUEUE it keeps that lag through the sleep and wakes behind, waiting for the
/// hog's slice; with it (and DELAY_ZERO) the hog runs it off while it sleeps, so it
/// wakes with none and preempts: its slow wakeups are faster. (A 2 ms / 2 ms task runs
/// in slices alternating with the hog and sleeps with little lag: no difference.)
#[test]
fn delayed_dequeue_spends_negative_lag_during_the_sleep() {
    let run = |on: bool| {
        let r = run_toml(
            &format!(
                "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.12\"\nfeatures = {{ DELAY_DEQUEUE = {on} }}\n\
                 [[tasks]]\nname = \"hog\"\nprogram = [{{ run = \"100s\" }}]\n\
                 [[tasks]]\nname = \"b\"\nprogram = [{{ loop = {{ body = [{{ run = \"1ms\" }}, {{ sleep = \"3ms\" }}] }} }}]\n\
                 [run]\nduration_s = 5\n"
            ),
            1,
        );
        r.histograms["wakeup_latency"].p99_ns
    };
    let (with, without) = (run(true), run(false));
    assert!((with as f64) < 0.9 * without as f64, "p99 wakeup latency {with} ns with delayed dequeue vs {without} ns without");
}

/// Delayed dequeue inside a task group: bursty threads of one cgroup on two CPUs keep
/// running (every invariant checked after every event).
#[test]
fn delayed_dequeue_in_a_group_keeps_every_thread_running() {
    use schedlab_core::api::{run, RunOptions};
    let text = "[machine]\ntopo = { cores = 2 }\n[kernel]\nprofile = \"6.18\"\n[[groups]]\nname = \"g\"\n\
                [[tasks]]\nname = \"t\"\ncount = 4\ngroup = \"g\"\nprogram = [{ loop = { body = [{ run = \"2ms\" }, { sleep_exp = \"3ms\" }] } }]\n\
                [run]\nduration_s = 1.0\n";
    let s = common::scenario(text);
    let r = run(&s, 1, &RunOptions { check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")).result;
    for t in &r.tasks {
        assert!(t.nr_wakeups > 100, "{}: {} wakeups, {} ns run", t.name, t.nr_wakeups, t.run_ns);
    }
}

/// 6.18's update_curr() reschedules once the current task's protected slice is over
/// (`resched || !protect_slice(curr)`), and the pick decides. A hog alone on its CPU
/// loses its protection at its first deadline (and a pick that keeps it running does
/// not renew it: pick_next_task_fair() sets only entities that change). A sleeper
/// woken with zero lag ties the hog on eligibility and loses on deadline, so
/// wakeup_preempt() keeps the hog; the hog's next update_curr() (its clock read, 3 us
/// later) reschedules, the hog is then past V and the sleeper runs. Without the rule
/// the sleeper waits for the hog's deadline, half a slice on average.
#[test]
fn an_unprotected_current_task_is_rescheduled_at_its_next_update() {
    let run = |features: &str| {
        let r = run_toml(
            &format!(
                "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.18\"\ntunables = {{ hz = 250 }}\nfeatures = {{ {features} }}\n\
                 [[tasks]]\nname = \"hog\"\ncputime_poll = \"3us\"\nprogram = [{{ run = \"100s\" }}]\n\
                 [[tasks]]\nname = \"b\"\nprogram = [{{ loop = {{ body = [{{ run = \"100us\" }}, {{ sleep = \"5ms\" }}] }} }}]\n\
                 [run]\nduration_s = 2\n"
            ),
            1,
        );
        let h = &r.histograms["wakeup_latency"];
        (h.p90_ns, h.count)
    };
    let (with, n) = run("");
    let (without, m) = run("RESCHED_NEXT_SLICE = false, PREEMPT_SHORT = false");
    eprintln!("p90 {with} ns ({n} wakeups) with the rule, {without} ns ({m}) without");
    assert!(n > 300 && m > 300, "{n} / {m} wakeups");
    assert!(with < 30_000, "p90 wakeup latency {with} ns: the hog should go at its next clock read");
    assert!(without > 100_000, "p90 wakeup latency {without} ns: without the rule the sleeper waits for the hog's deadline");
}

/// A pick that keeps the current task running does not renew its slice protection:
/// pick_next_task_fair() calls set_next_entity() (set_protect_slice()) only for the
/// entities that change. Without delayed dequeue the sleeper keeps the negative lag
/// of its 100 us run (-50 us) and wakes behind V: the hog, unprotected, is
/// rescheduled at each clock read and picked again until the sleeper is eligible, 100
/// us of the hog's run later. Had the re-pick renewed the protection, the sleeper
/// would wait for the hog's deadline, anywhere in the 0.7 ms slice.
#[test]
fn picking_the_current_task_again_does_not_renew_its_protection() {
    let r = run_toml(
        "[machine]\ntopo = { cores = 1 }\n[kernel]\nprofile = \"6.18\"\ntunables = { hz = 250 }\nfeatures = { DELAY_DEQUEUE = false }\n\
         [[tasks]]\nname = \"hog\"\ncputime_poll = \"3us\"\nprogram = [{ run = \"100s\" }]\n\
         [[tasks]]\nname = \"b\"\nprogram = [{ loop = { body = [{ run = \"100us\" }, { sleep = \"5ms\" }] } }]\n\
         [run]\nduration_s = 2\n",
        1,
    );
    let h = &r.histograms["wakeup_latency"];
    eprintln!("wakeup latency p20 {} p50 {} p90 {} ns over {}", h.p20_ns, h.p50_ns, h.p90_ns, h.count);
    assert!(h.count > 300, "{} wakeups", h.count);
    assert!((80_000..=130_000).contains(&h.p20_ns) && h.p90_ns < 130_000, "the sleeper runs once eligible: p20 {} p90 {} ns", h.p20_ns, h.p90_ns);
}

/// One CPU: `hogs` CPU hogs (clock read every 3 us, so update_curr() sees a protection
/// end at once) and a sleeper that runs 100 us every 1 ms. PLACE_LAG is off so the
/// sleeper wakes at V, zero lag: a lone hog, at V too, is eligible and keeps the
/// protection it got at its last pick. Returns (share of the sleeper's wakeups run
/// within 20 us, p50 and p90 wakeup latency in ns).
fn short_slice_wakeups(profile: &str, features: &str, hogs: usize, hog_slice: &str, b_slice: &str) -> (f64, u64, u64) {
    let r = run_toml(
        &format!(
            "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"{profile}\"\ntunables = {{ hz = 250 }}\nfeatures = {{ PLACE_LAG = false{features} }}\n\
             [[tasks]]\nname = \"hog\"\ncount = {hogs}\n{hog_slice}cputime_poll = \"3us\"\nprogram = [{{ run = \"100s\" }}]\n\
             [[tasks]]\nname = \"b\"\n{b_slice}program = [{{ loop = {{ body = [{{ run = \"100us\" }}, {{ sleep = \"1ms\" }}] }} }}]\n\
             [run]\nduration_s = 3\n"
        ),
        1,
    );
    let h = &r.histograms["wakeup_latency"];
    assert!(h.count > 500, "{profile} {features}: {} wakeups", h.count);
    let fast = h.buckets.iter().filter(|&&(upper, _)| upper <= 20_000).map(|&(_, n)| n).sum::<u64>() as f64 / h.count as f64;
    (fast, h.p50_ns, h.p90_ns)
}

/// A hog asking for 3 ms and the sleeper asking for 1 ms: the sleeper's deadline is
/// V + 1 ms against the hog's V + 0..3 ms, so it is often ahead. PREEMPT_SHORT lets it
/// preempt then at once (6.12: do_preempt_short() cancels the protection; 6.18: the
/// wakeup pick ignores it); without the feature it waits for the hog's protection to
/// end, its deadline. (Delayed dequeue is off: a sleeper still queued at the hog's pick
/// would cut the hog's 6.18 protection to its own 1 ms slice, and the pick that then
/// dequeues it keeps the hog running unprotected.)
#[test]
fn a_shorter_slice_wakee_preempts_a_protected_hog() {
    for profile in ["6.12", "6.18"] {
        let (hog, b) = ("slice_us = 3000\n", "slice_us = 1000\n");
        let (with, p50_with, _) = short_slice_wakeups(profile, ", DELAY_DEQUEUE = false", 1, hog, b);
        let (without, p50_without, _) = short_slice_wakeups(profile, ", DELAY_DEQUEUE = false, PREEMPT_SHORT = false", 1, hog, b);
        eprintln!("{profile}: within 20 us {with:.3} with PREEMPT_SHORT, {without:.3} without; p50 {p50_with} / {p50_without} ns");
        assert!(with > 0.4, "{profile}: {with:.3} of wakeups preempt at once with PREEMPT_SHORT");
        assert!(without < 0.1, "{profile}: {without:.3} of wakeups preempt at once without it");
        assert!(p50_with < 20_000 && p50_without > 200_000, "{profile}: p50 {p50_with} ns with, {p50_without} ns without");
    }
}

/// The sleeper beside two hogs with the default slice (0.7 ms on 6.18 at one CPU), each
/// picked with a fresh request: with the default slice the sleeper waits for the running
/// hog's protection to end; asking for 100 us it preempts at once whenever its deadline
/// is the earliest of the eligible (the waiting hog's is earlier otherwise).
#[test]
fn a_short_custom_slice_shortens_wakeup_latency_against_the_default() {
    let (short, p50_short, p90_short) = short_slice_wakeups("6.18", "", 2, "", "slice_us = 100\n");
    let (default, p50_default, p90_default) = short_slice_wakeups("6.18", "", 2, "", "");
    eprintln!("within 20 us: {short:.3} with a 100 us slice, {default:.3} with the default; p50 {p50_short} / {p50_default}, p90 {p90_short} / {p90_default} ns");
    assert!(short > 0.5 && default < 0.1, "{short:.3} / {default:.3}");
    assert!(p50_short < 20_000 && p50_default > 100_000, "p50 {p50_short} / {p50_default} ns");
    assert!(p90_short < p90_default, "p90 {p90_short} / {p90_default} ns");
}

/// NEXT_BUDDY: two hogs take turns on one CPU and a sleeper asking for a 5 ms slice
/// (zero lag: PLACE_LAG off) wakes every 1.1 ms. Its wakeup does not preempt the running
/// hog (protected, its own deadline later); at the hog's slice end EEVDF would mostly
/// take the waiting hog (eligible, earlier deadline), the next buddy takes the sleeper.
/// 6.18.35 (the rework) picks the eligible buddy in the wakeup check itself, ahead of
/// the protection: it runs at once. Returns the p50 and p99 wakeup latency, ns.
fn buddy_wakeups(profile: &str, on: bool) -> (u64, u64) {
    let r = run_toml(
        &format!(
            "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"{profile}\"\ntunables = {{ hz = 250 }}\n\
             features = {{ PLACE_LAG = false, DELAY_DEQUEUE = false, NEXT_BUDDY = {on} }}\n\
             [[tasks]]\nname = \"hog\"\ncount = 2\ncputime_poll = \"3us\"\nprogram = [{{ run = \"100s\" }}]\n\
             [[tasks]]\nname = \"b\"\nslice_us = 5000\nprogram = [{{ loop = {{ body = [{{ run = \"100us\" }}, {{ sleep = \"1ms\" }}] }} }}]\n\
             [run]\nduration_s = 3\n"
        ),
        1,
    );
    let h = &r.histograms["wakeup_latency"];
    assert!(h.count > 500, "{profile}: {} wakeups", h.count);
    (h.p50_ns, h.p99_ns)
}

#[test]
fn a_next_buddy_runs_next_when_eligible() {
    for profile in ["6.12", "6.18.2", "6.18.35"] {
        let (p50_on, p99_on) = buddy_wakeups(profile, true);
        let (p50_off, p99_off) = buddy_wakeups(profile, false);
        eprintln!("{profile}: p50 {p50_on} / {p50_off} ns, p99 {p99_on} / {p99_off} ns with / without NEXT_BUDDY");
        assert!(p99_on < p99_off, "{profile}: p99 {p99_on} with the buddy, {p99_off} without");
        if profile == "6.18.35" {
            assert!(p99_on < 20_000, "{profile}: the eligible buddy preempts at once: p99 {p99_on}");
        }
    }
}

/// dequeue_entities()' buddy: a task that sleeps leaving its group's queue non-empty
/// makes the group the next buddy of the queue above, which PICK_BUDDY (6.18) honours.
/// Bursty threads of two groups beside a root hog on one CPU run with every invariant
/// checked after every event, with the buddy and without.
#[test]
fn the_dequeue_buddy_keeps_every_invariant() {
    use schedlab_core::api::{run, RunOptions};
    let mut runs = Vec::new();
    for on in [true, false] {
        let text = format!(
            "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.18\"\nfeatures = {{ PICK_BUDDY = {on} }}\n[[groups]]\nname = \"g\"\n[[groups]]\nname = \"h\"\n\
             [[tasks]]\nname = \"g\"\ncount = 3\ngroup = \"g\"\nprogram = [{{ loop = {{ body = [{{ run = \"300us\" }}, {{ sleep_exp = \"1ms\" }}] }} }}]\n\
             [[tasks]]\nname = \"h\"\ncount = 2\ngroup = \"h\"\nprogram = [{{ loop = {{ body = [{{ run = \"2ms\" }}, {{ sleep_exp = \"1ms\" }}] }} }}]\n\
             [[tasks]]\nname = \"hog\"\nprogram = [{{ run = \"100s\" }}]\n[run]\nduration_s = 1.0\n"
        );
        let s = common::scenario(&text);
        let r = run(&s, 1, &RunOptions { check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")).result;
        runs.push(r.histograms["wakeup_latency"].p50_ns);
        for t in &r.tasks {
            assert!(t.run_ns > 0, "PICK_BUDDY {on}: {} never ran", t.name);
        }
    }
    eprintln!("wakeup latency p50 {} ns with the buddy, {} ns without", runs[0], runs[1]);
    assert_ne!(runs[0], runs[1], "the buddy changes the picks");
}
