//! The shared runqueue's rules, driven directly on a small machine.

use crate::scenario::Scenario;
use crate::state::task::TaskState;
use crate::state::Simulator;

/// A 4-CPU, 1-LLC machine (or `topo`) with `n` always-running tasks started on CPU 0,
/// and `extra` task tables.
fn sim(features: &str, topo: &str, n: usize, extra: &str) -> Simulator {
    let toml = format!(
        "[machine]\ntopo = {{ {topo} }}\n[kernel]\nprofile = \"6.5\"\nfeatures = {{ {features} }}\n{extra}\
         [[tasks]]\nname = \"t\"\ncount = {n}\ncpu = 0\nprogram = [{{ run = \"1s\" }}]\n[run]\nduration_s = 1.0\n"
    );
    let s = Scenario::from_toml_str(&toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
    Simulator::new(&s, 1, false).unwrap_or_else(|e| panic!("{e}"))
}

fn id(s: &Simulator, name: &str) -> usize {
    s.tasks.iter().position(|t| t.stats.name == name).unwrap_or_else(|| panic!("no task {name}"))
}

const SMALL: &str = "sockets = 1, llcs = 1, cores = 4";

#[test]
fn pulls_take_the_shard_in_fifo_order_and_keep_the_state_consistent() {
    let mut s = sim("SHARED_RUNQ_V2 = true, SHARED_RUNQ_ALL = true", SMALL, 6, "");
    let shard = s.swq.cpu_shard[0];
    let queued = s.swq.shard_tasks(shard);
    assert_eq!(queued.len(), 6, "every task entering CPU 0's tree is in the shard");
    for (k, cpu) in [1, 2, 3].into_iter().enumerate() {
        assert!(s.sched_balance_newidle(cpu));
        let head = queued[k];
        assert_eq!(s.tasks[head].cpu, cpu, "CPU {cpu} pulls the oldest entry");
        s.check_invariants().unwrap();
    }
    // A pulled task re-entered a tree, so it is queued again, at the tail.
    assert_eq!(s.swq.shard_tasks(shard).last(), Some(&queued[2]));
}

#[test]
fn pinned_and_disallowed_tasks_are_never_pulled() {
    let extra = "[[tasks]]\nname = \"pinned\"\naffinity = \"0\"\nprogram = [{ run = \"1s\" }]\n\
                 [[tasks]]\nname = \"two\"\naffinity = \"0,2\"\ncpu = 0\nprogram = [{ run = \"1s\" }]\n";
    for features in ["SHARED_RUNQ_V2 = true, SHARED_RUNQ_ALL = true", "SHARED_RUNQ_V4 = true", "SHARED_RUNQ = true"] {
        let mut s = sim(features, SMALL, 2, extra);
        let (pinned, two) = (id(&s, "pinned"), id(&s, "two"));
        assert_eq!(s.swq.shard_of(pinned), None, "{features}: a pinned task is never enqueued");
        if features.starts_with("SHARED_RUNQ =") {
            // v1 enqueues on wakeup only; queue both by hand as woken tasks.
            for p in [pinned, two, id(&s, "t-0")] {
                s.swq_enqueue(p, 0, 0);
            }
            assert_eq!(s.swq.shard_of(pinned), None);
            assert!(s.swq_pull(1));
        } else {
            let shard = s.swq.cpu_shard[0];
            assert_eq!(s.swq.shard_tasks(shard)[0], two, "{features}: 'two' heads the shard");
            // v2+: the head may not run on CPU 1, so nothing is pulled (no list walk).
            s.sched_balance_newidle(1);
            assert_eq!(s.tasks[two].cpu, 0, "{features}: CPU 1 may not take it");
            assert!(s.sched_balance_newidle(2), "{features}: CPU 2 may take it");
            assert_eq!(s.tasks[two].cpu, 2);
        }
        assert_eq!(s.tasks[pinned].cpu, 0);
        assert_ne!(s.tasks[two].cpu, 1, "{features}");
        s.check_invariants().unwrap();
    }
}

#[test]
fn with_all_a_preempted_task_is_queued_in_its_shard() {
    for (features, expect) in
        [("SHARED_RUNQ_V2 = true, SHARED_RUNQ_ALL = true", true), ("SHARED_RUNQ_V2 = true", false), ("SHARED_RUNQ_V4 = true", true)]
    {
        let mut s = sim(features, SMALL, 2, "");
        while s.rqs[0].curr.is_none() {
            assert!(s.step());
        }
        let c = s.rqs[0].curr.unwrap();
        assert_eq!(s.swq.shard_of(c), None, "a running task is in no shard");
        s.update_curr(0);
        s.put_prev_task_fair(0, c);
        s.set_curr(0, None);
        assert_eq!(s.tasks[c].state, TaskState::Runnable);
        assert_eq!(s.swq.shard_of(c).is_some(), expect, "{features}");
        if expect {
            assert_eq!(s.swq.shard_of(c), Some(s.swq.cpu_shard[0]));
        }
        s.check_invariants().unwrap();
    }
}

#[test]
fn a_cpu_about_to_idle_pulls_from_the_shard_before_any_regular_balance() {
    for features in ["SHARED_RUNQ_V2 = true, SHARED_RUNQ_ALL = true", "SHARED_RUNQ_V3 = true", "SHARED_RUNQ_V4 = true"] {
        let mut s = sim(features, "sockets = 1, llcs = 1, cores = 4, smt = 2", 4, "");
        assert!(s.rd.nr_overloaded > 0);
        let before = (s.stats.counters.newidle_lb_llc, s.stats.counters.newidle_lb_above_llc, s.rqs[5].stats.newidle_skips);
        assert!(s.sched_balance_newidle(5), "{features}");
        assert_eq!(s.rqs[5].stats.shared_runq_pulls, 1);
        assert_eq!(
            (s.stats.counters.newidle_lb_llc, s.stats.counters.newidle_lb_above_llc, s.rqs[5].stats.newidle_skips),
            before,
            "{features}: no load_balance() ran"
        );
    }
    // v1: in pick_next_task_fair, ahead of newidle balance.
    let mut s = sim("SHARED_RUNQ = true", SMALL, 3, "");
    let p = id(&s, "t-1");
    s.swq_enqueue(p, 0, 0);
    assert!(s.swq_pull(3));
    assert_eq!(s.tasks[p].cpu, 3);
    assert_eq!(s.stats.counters.newidle_lb_llc + s.stats.counters.newidle_lb_above_llc, 0);
}

#[test]
fn v3s_llc_skip_walks_the_same_domains_and_v4_skips_the_llc_ones() {
    let topo = "sockets = 1, llcs = 2, cores = 4, smt = 2";
    let levels = |s: &Simulator| (0..s.m.domains[0].len()).filter(|&l| !s.srq_skips_level(0, l)).collect::<Vec<_>>();
    let base = sim("", topo, 1, "");
    let v3 = sim("SHARED_RUNQ_V3 = true", topo, 1, "");
    let v3_skip = sim("SHARED_RUNQ_V3 = true, SHARED_RUNQ_V3_LLC_SKIP = true", topo, 1, "");
    let v4 = sim("SHARED_RUNQ_V4 = true", topo, 1, "");
    assert_eq!(base.m.domains[0].len(), 3, "SMT, MC, PKG");
    assert_eq!(levels(&v3_skip), levels(&base), "the skip was a no-op: every domain is walked");
    assert_eq!(levels(&v3), levels(&base));
    assert_eq!(levels(&v4), vec![2], "v4 walks only above the LLC");
    // What the v3 patch did change: the avg_idle gate reads the LLC's parent.
    assert_eq!(base.srq_gate_level(0), Some(0));
    assert_eq!(v3_skip.srq_gate_level(0), Some(2));
    assert_eq!(sim("SHARED_RUNQ_V3 = true, SHARED_RUNQ_V3_LLC_SKIP = true", SMALL, 1, "").srq_gate_level(0), None);
}

#[test]
fn shards_follow_each_versions_layout() {
    // 16 CPUs in one LLC, shard size 6.
    let topo = "sockets = 1, llcs = 1, cores = 16";
    let v2 = sim("SHARED_RUNQ_V2 = true, SHARED_RUNQ_SHARDS = true", topo, 1, "");
    assert_eq!(v2.swq.llc_shards(0), (0, 2), "v2: max(16 / 6, 1)");
    assert_eq!((v2.swq.cpu_shard[5], v2.swq.cpu_shard[6]), (1, 0), "v2: cpu % n");
    let v3 = sim("SHARED_RUNQ_V3 = true", topo, 1, "");
    assert_eq!(v3.swq.llc_shards(0), (0, 3), "v3: ceil(16 / 6)");
    assert_eq!((v3.swq.cpu_shard[2], v3.swq.cpu_shard[3], v3.swq.cpu_shard[4]), (1, 1, 2), "v3: (cpu >> 1) % n");
    let one = sim("SHARED_RUNQ_V2 = true", topo, 1, "");
    assert_eq!(one.swq.llc_shards(0), (0, 1));
    let err = Scenario::from_toml_str("[machine]\npreset = \"ryzen-7950x\"\n[kernel]\nfeatures = { SHARED_RUNQ = true, SHARED_RUNQ_V4 = true }\n[[tasks]]\nname = \"a\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 0.1\n", "<t>")
        .map(|s| Simulator::new(&s, 1, false).err().map(|e| e.to_string()));
    assert!(matches!(err, Ok(Some(e)) if e.contains("at most one")));
}

/// A task woken onto idle CPU 1 is in the shard while CPU 1's __schedule() is due to
/// switch to it; idle CPU 2 pops it, drops its own lock and waits for CPU 1's lock,
/// which CPU 1 holds through the switch: the task is on a CPU, the pull fails (v2's
/// ret 1 starts the pick over), and CPU 2 takes its own lock back.
#[test]
fn a_pull_that_finds_its_task_running_leaves_it_and_pays_the_relock() {
    let extra = "[[tasks]]\nname = \"p\"\ncpu = 1\nprogram = [{ sleep = \"1ms\" }, { run = \"1s\" }]\n";
    let mut s = sim("SHARED_RUNQ_V2 = true, SHARED_RUNQ_ALL = true", SMALL, 1, extra);
    let p = id(&s, "p");
    let mut steps = 0;
    // Past the start (where every task is woken at once): p's wakeup after its sleep.
    while !(s.now > 0 && s.swq.shard_of(p).is_some() && s.rqs[1].resched_pending && s.rqs[1].curr.is_none()) {
        assert!(s.step() && steps < 100_000, "p is never woken onto idle CPU 1");
        steps += 1;
    }
    assert_eq!((s.tasks[p].cpu, s.tasks[p].state), (1, TaskState::Runnable));
    // CPU 1's Resched is due now (a polling idle CPU): its switch has the lock first.
    s.rqs[1].resched_at = s.rqs[1].resched_at.min(s.now);
    assert!(s.rqs[2].curr.is_none());
    let charged = |s: &Simulator| s.rqs[2].irq_until.max(s.now);
    let (before, failed) = (charged(&s), s.swq.failed_pulls);
    let (src_contended, own_acq) = (s.spinlocks.rq[1].stats.contended, s.spinlocks.rq[2].stats.acquisitions);
    let shard = s.swq.cpu_shard[1];
    assert_eq!(s.swq.shard_tasks(shard), vec![p], "p alone in the shard");
    assert!(!s.sched_balance_newidle(2), "nothing is pulled");
    assert_eq!(s.tasks[p].cpu, 1, "p stays where it is about to run");
    assert_eq!(s.rqs[2].stats.shared_runq_pulls, 0);
    assert_eq!(s.swq.failed_pulls, failed + 1);
    assert_eq!(s.swq.shard_of(p), None, "popped");
    assert_eq!(s.spinlocks.rq[1].stats.contended, src_contended + 1, "CPU 2 waited for CPU 1's switch");
    assert!(s.spinlocks.rq[2].stats.acquisitions > own_acq, "CPU 2 re-locked its runqueue");
    // The wait: CPU 1's hold through the switch, then its lock line handed over.
    let k = &s.m.cost.kernel;
    let hold = s.path_ns(1, k.schedule_ns + s.m.cost.context_switch_ns);
    assert!(charged(&s) - before >= hold + s.line_ns(1, 2), "{} < {hold} + a line", charged(&s) - before);
    s.check_invariants().unwrap();
}
