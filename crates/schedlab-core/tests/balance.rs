//! Load balance between busy CPUs: calculate_imbalance()'s spare-capacity cases
//! (issue 29 item 3).

mod common;

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
