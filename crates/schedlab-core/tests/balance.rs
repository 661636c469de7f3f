//! Load balance between busy CPUs: calculate_imbalance()'s spare-capacity cases
//! (issue 29 item 3).

use crate::common;

fn hogs(n: usize, cores: usize, profile: &str, group: bool, seconds: f64) -> String {
    let (g, ga) = if group { ("[[groups]]\nname = \"probe\"\n", "group = \"probe\"\n") } else { ("", "") };
    format!(
        "[machine]\ntopo = {{ cores = {cores} }}\n[kernel]\nprofile = \"{profile}\"\ntunables = {{ hz = 250 }}\n{g}\
         [[tasks]]\nname = \"h\"\ncount = {n}\n{ga}program = [{{ run = \"1000s\" }}]\n[run]\nduration_s = {seconds}\n"
    )
}

/// Coefficient of variation of the tasks' CPU time.
fn share_cv(r: &schedlab_core::RunResult) -> f64 {
    let v: Vec<f64> = r.tasks.iter().map(|t| t.run_ns as f64).collect();
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt() / mean
}

/// A CPU running one hog next to a CPU running two has spare capacity while the moved
/// hog's utilization climbs back, and is busy (CPU_NOT_IDLE). The kernel (5.5+) asks
/// it for half the task-count difference, (2 - 1) / 2 = 0, and from 6.6
/// sibling_imbalance() gives a busy CPU nothing at all: it waits until it is fully busy
/// and the load comparison (migrate_load) pulls. The model used to ask for one task,
/// so the hog it had just pulled bounced back at the next tick, every time, and in a
/// group the same hog kept two CPUs' worth of turns to itself (cv 0.34).
#[test]
fn a_busy_cpu_with_spare_capacity_does_not_pull_one_of_two() {
    let r = common::run_toml(&hogs(3, 2, "6.18", true, 10.0), 1);
    let cv = share_cv(&r);
    assert!(cv < 0.2, "3 hogs in a group on 2 CPUs: share cv {cv:.3}");
}

/// 5 hogs on 4 CPUs: the busy CPUs no longer pull the single hogs around by task count;
/// the shares even out (cv 0.16 before).
#[test]
fn five_hogs_on_four_cpus_share_evenly() {
    let r = common::run_toml(&hogs(5, 4, "6.18", false, 10.0), 1);
    let cv = share_cv(&r);
    assert!(cv < 0.05, "5 hogs on 4 CPUs: share cv {cv:.3}");
}

/// The odd thread rotates: N hogs on M CPUs (3 on 2, 5 on 4, 9 on 8), with and without a
/// group, have a share cv within 0.05 of the host's 0.045 for 3 on 2 over 20 s
/// (docs/validate-host.md; issue 29's bar), and every hog is moved at some point. With every CPU ticking
/// in lock step (`kernel.tick_irq_jitter_ns = 0`) the balancing CPU always finds the same
/// hog queued at the same tick and moves it and only it (cv 0.18 for 3 on 2, no group).
const HOST_3_ON_2_CV: f64 = 0.045;

#[test]
fn the_odd_hog_rotates() {
    for &(n, m) in &[(3usize, 2usize), (5, 4), (9, 8)] {
        for group in [false, true] {
            for seed in 1..=2 {
                let r = common::run_toml(&hogs(n, m, "6.18", group, 20.0), seed);
                let cv = share_cv(&r);
                eprintln!("{n} on {m}, group {group}, seed {seed}: cv {cv:.3}");
                assert!((cv - HOST_3_ON_2_CV).abs() < 0.05, "{n} hogs on {m} CPUs (group {group}, seed {seed}): share cv {cv:.3}");
            }
        }
    }
    let r = common::run_toml(&hogs(3, 2, "6.18", false, 20.0), 1);
    let moved = r.tasks.iter().filter(|t| t.nr_migrations > 0).count();
    assert_eq!(moved, 3, "every hog of 3 on 2 CPUs is moved: {:?}", r.tasks.iter().map(|t| t.nr_migrations).collect::<Vec<_>>());
}

/// Lock step is what kept the odd hog in place: without tick jitter, 3 on 2 is uneven.
#[test]
fn ticks_in_lock_step_leave_the_odd_hog_in_place() {
    let toml = hogs(3, 2, "6.18", false, 20.0).replace("[kernel]", "[machine.cost]\n\"kernel.tick_irq_jitter_ns\" = 0\n[kernel]");
    let r = common::run_toml(&toml, 1);
    let cv = share_cv(&r);
    assert!(cv > 0.1, "3 hogs on 2 CPUs ticking in lock step: share cv {cv:.3}");
}

/// A CPU going idle brings its periodic balance forward to the idle interval
/// (sched_balance_newidle()'s update_next_balance(): last_balance + the domain's idle
/// interval, 2 ms on 2 CPUs), so the nohz idle balancer, kicked by the busy CPU's tick,
/// balances it at the next tick and pulls the waiting thread. The host's trace of this
/// workload (validate-host `unlimited`, 6.18) shows 24 such pulls a second from the idle
/// task's softirq at the busy CPU's tick; schedlab made 2.3 while an idle CPU kept the
/// 31 ms interval of its last busy balance.
#[test]
fn an_idle_cpu_is_balanced_at_the_idle_interval() {
    let toml = "[machine]\ntopo = { cores = 2 }\n[kernel]\nprofile = \"6.18\"\ntunables = { hz = 250 }\n\
                [[tasks]]\nname = \"t\"\ncount = 4\nprogram = [{ loop = { body = [{ run = \"2ms\" }, { sleep_exp = \"3ms\" }] } }]\n\
                [run]\nduration_s = 10.0\n";
    let r = common::run_toml(toml, 1);
    let pulls: u64 = r.cpus.iter().map(|c| c.periodic_pulls).sum();
    // 166 here with the update, 31 without.
    assert!(pulls > 100, "periodic (idle) balance pulls in 10 s: {pulls}");
}
