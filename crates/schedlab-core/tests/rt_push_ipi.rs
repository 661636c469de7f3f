//! RT_PUSH_IPI (issue 35): a CPU whose RT priority drops does not pull a waiting RT
//! task itself; it sends the push IPI to the RT-overloaded CPU, which pushes its own
//! task over (tell_cpu_to_push(), rto_push_irq_work_func()). With the feature off the
//! puller takes the task at once (pull_rt_task()'s loop).

use crate::common;

use schedlab_core::api::{build_machine, run, RunOptions};
use schedlab_core::trace::TraceEvent;

/// 2 CPUs. CPU 0 runs a pinned FIFO 90 hog; a FIFO 50 task that may run anywhere
/// arrives on CPU 0 at 1 ms and waits there (CPU 1 runs a pinned FIFO 80 task, higher
/// than it), so CPU 0 is RT-overloaded. At 5 ms the FIFO 80 task sleeps for good: CPU 1's
/// priority drops and it would pull. Returns (when CPU 1's task left, when the waiting
/// task moved and from where to where, the summary's pulls, pushes and push IPIs, the
/// IPI's flight on this machine).
fn pull_case(push_ipi: bool) -> (u64, u64, (usize, usize), [f64; 3], f64) {
    let s = common::scenario(&format!(
        "[machine]\ntopo = {{ cores = 2 }}\n[kernel]\nprofile = \"6.12\"\nfeatures = {{ RT_PUSH_IPI = {push_ipi} }}\n\
         [[tasks]]\nname = \"hi0\"\naffinity = \"0\"\nsched_attr = {{ policy = \"SCHED_FIFO\", priority = 90 }}\nprogram = [{{ run = \"100s\" }}]\n\
         [[tasks]]\nname = \"waiter\"\ncpu = 0\nstart = \"1ms\"\nsched_attr = {{ policy = \"SCHED_FIFO\", priority = 50 }}\nprogram = [{{ run = \"100s\" }}]\n\
         [[tasks]]\nname = \"hi1\"\naffinity = \"1\"\nsched_attr = {{ policy = \"SCHED_FIFO\", priority = 80 }}\n\
         program = [{{ run = \"5ms\" }}, {{ sleep = \"100s\" }}]\n\
         [run]\nduration_s = 0.05\n"
    ));
    let out = run(&s, 1, &RunOptions { trace: true, check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}"));
    let trace = out.trace.unwrap();
    // pids are task indices + 1: hi0 1, waiter 2, hi1 3.
    let left = trace.records.iter().find(|r| matches!(r.event, TraceEvent::Switch { prev: 3, .. })).expect("hi1 slept").ts;
    let (moved, path) = trace
        .records
        .iter()
        .find_map(|r| match r.event {
            TraceEvent::Migrate { pid: 2, orig_cpu, dest_cpu } => Some((r.ts, (orig_cpu, dest_cpu))),
            _ => None,
        })
        .expect("the waiting task moved");
    let sum = |k: &str| out.result.summary[k];
    let m = build_machine(&s.machine).unwrap();
    let flight = m.cost.ipi_latency_ns(m.distance(0, 1));
    (left, moved, path, [sum("rt_pulls"), sum("rt_pushes"), sum("rt_push_ipis")], flight)
}

#[test]
fn with_rt_push_ipi_the_overloaded_cpu_pushes_after_the_ipi() {
    let (left, moved, path, [pulls, pushes, ipis], flight) = pull_case(true);
    eprintln!("RT_PUSH_IPI on: CPU 1 dropped at {left} ns, the task moved at {moved} ns (+{} ns; IPI flight {flight} ns)", moved - left);
    assert_eq!(path, (0, 1));
    assert_eq!((pulls, pushes, ipis), (0.0, 1.0, 1.0), "one IPI, one push from CPU 0, no pull");
    assert!(flight > 0.0);
    assert!(moved as f64 >= left as f64 + flight, "moved at {moved} ns: the IPI left CPU 1 at {left} ns and flies {flight} ns");
    assert!(moved < left + 100_000, "moved at {moved} ns, {} ns after the drop", moved - left);
}

#[test]
fn without_rt_push_ipi_the_puller_takes_the_task_itself() {
    let (left, moved, path, [pulls, pushes, ipis], _) = pull_case(false);
    assert_eq!(path, (0, 1));
    assert_eq!((pulls, pushes, ipis), (1.0, 0.0, 0.0), "a direct pull, no IPI");
    assert_eq!(moved, left, "pulled in CPU 1's own schedule()");
}
