//! Group scheduling entities: cpu.weight / cpu.shares between groups, hierarchy.

use crate::common;

use schedlab_core::api::{run, RunOptions};

fn on_one_cpu(profile: &str, features: &str, groups: &str, tasks: &str, seconds: f64) -> schedlab_core::RunResult {
    let text = format!(
        "[machine]\ntopo = {{ cores = 2 }}\n[kernel]\nprofile = \"{profile}\"\nfeatures = {{ {features} }}\n{groups}\n{tasks}\n[run]\nduration_s = {seconds}\n"
    );
    let s = common::scenario(&text);
    run(&s, 1, &RunOptions { check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")).result
}

fn usage(r: &schedlab_core::RunResult, group: &str) -> f64 {
    r.groups.iter().find(|g| g.name == group).unwrap().usage_ns as f64
}

/// Two groups of CPU hogs on one CPU, cpu.weight 200 and 100: the CPU splits 2:1
/// whatever the number of hogs in each (3 against 1 here), for CFS and EEVDF.
#[test]
fn cpu_weight_two_to_one_splits_one_cpu_two_to_one() {
    for profile in ["5.15", "6.6", "6.18"] {
        let r = on_one_cpu(
            profile,
            "",
            "[[groups]]\nname = \"a\"\ncpu_weight = 200\n[[groups]]\nname = \"b\"\ncpu_weight = 100",
            "[[tasks]]\nname = \"a\"\ncount = 1\ngroup = \"a\"\naffinity = \"1\"\nprogram = [{ run = \"1000s\" }]\n\
             [[tasks]]\nname = \"b\"\ncount = 3\ngroup = \"b\"\naffinity = \"1\"\nprogram = [{ run = \"1000s\" }]",
            2.0,
        );
        let ratio = usage(&r, "a") / usage(&r, "b");
        assert!((ratio - 2.0).abs() / 2.0 < 0.02, "{profile}: a/b = {ratio}");
    }
}

/// cpu.shares is the v1 spelling of the same weight; without group entities
/// (FAIR_GROUP_SCHED off) the tasks share by their own weights instead: 1 against 3.
#[test]
fn without_group_entities_tasks_share_by_their_own_weight() {
    let groups = "[[groups]]\nname = \"a\"\ncpu_shares = 1024\n[[groups]]\nname = \"b\"\ncpu_shares = 1024";
    let tasks = "[[tasks]]\nname = \"a\"\ngroup = \"a\"\naffinity = \"1\"\nprogram = [{ run = \"1000s\" }]\n\
                 [[tasks]]\nname = \"b\"\ncount = 3\ngroup = \"b\"\naffinity = \"1\"\nprogram = [{ run = \"1000s\" }]";
    let with = on_one_cpu("6.6", "", groups, tasks, 2.0);
    let without = on_one_cpu("6.6", "FAIR_GROUP_SCHED = false", groups, tasks, 2.0);
    let r_with = usage(&with, "a") / usage(&with, "b");
    let r_without = usage(&without, "a") / usage(&without, "b");
    assert!((r_with - 1.0).abs() < 0.02, "{r_with}");
    assert!((r_without - 1.0 / 3.0).abs() < 0.02, "{r_without}");
}

/// A nested group splits its parent's share: root hog vs parent{hog, child{2 hogs}}
/// gives 1/2, then 1/4 and 1/4 (shared by the child's two hogs) at equal weights.
#[test]
fn nested_groups_split_their_parents_share() {
    let r = on_one_cpu(
        "6.6",
        "",
        "[[groups]]\nname = \"p\"\n[[groups]]\nname = \"c\"\nparent = \"p\"",
        "[[tasks]]\nname = \"r\"\naffinity = \"1\"\nprogram = [{ run = \"1000s\" }]\n\
         [[tasks]]\nname = \"p\"\ngroup = \"p\"\naffinity = \"1\"\nprogram = [{ run = \"1000s\" }]\n\
         [[tasks]]\nname = \"c\"\ncount = 2\ngroup = \"c\"\naffinity = \"1\"\nprogram = [{ run = \"1000s\" }]",
        2.0,
    );
    let t = |n: &str| r.tasks.iter().find(|t| t.name == n).unwrap().run_ns as f64;
    let total = t("r") + t("p") + t("c-0") + t("c-1");
    for (name, share) in [("r", 0.5), ("p", 0.25), ("c-0", 0.125), ("c-1", 0.125)] {
        assert!((t(name) / total - share).abs() < 0.01, "{name}: {} of the CPU", t(name) / total);
    }
}

/// A group's shares are spread over CPUs by where its load is (calc_group_shares): 2
/// hogs of group a on CPU 0 and 1 on CPU 1, each CPU also running one root hog. a's
/// entity weighs 2/3 of 1024 on CPU 0 and 1/3 on CPU 1, so a gets 682/1706 of CPU 0
/// and 341/1365 of CPU 1.
#[test]
fn a_groups_shares_follow_its_load_across_cpus() {
    let r = on_one_cpu(
        "6.6",
        "",
        "[[groups]]\nname = \"a\"",
        "[[tasks]]\nname = \"a0\"\ncount = 2\ngroup = \"a\"\naffinity = \"0\"\nprogram = [{ run = \"1000s\" }]\n\
         [[tasks]]\nname = \"a1\"\ngroup = \"a\"\naffinity = \"1\"\nprogram = [{ run = \"1000s\" }]\n\
         [[tasks]]\nname = \"r\"\ncount = 2\npin_each = true\naffinity = \"0-1\"\nprogram = [{ run = \"1000s\" }]",
        2.0,
    );
    let secs = r.engine.sim_ns as f64;
    let t = |n: &str| r.tasks.iter().find(|t| t.name == n).unwrap().run_ns as f64 / secs;
    let on0 = 682.0 / (682.0 + 1024.0);
    let on1 = 341.0 / (341.0 + 1024.0);
    assert!((t("a0-0") + t("a0-1") - on0).abs() < 0.02, "{}", t("a0-0") + t("a0-1"));
    assert!((t("a1") - on1).abs() < 0.02, "{}", t("a1"));
}
