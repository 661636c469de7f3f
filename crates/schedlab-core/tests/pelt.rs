//! PELT as the engine keeps it: the averages follow duty cycles, decay while blocked,
//! are capacity-invariant, and drive wake_affine as the kernel's cpu_load() does.

use crate::common;

use common::run_toml;

fn cpu_end(profile_features: &str, machine: &str, tasks: &str, seconds: f64, cpu: usize) -> (u64, u64) {
    let r = run_toml(
        &format!("[machine]\n{machine}\n[kernel]\nprofile = \"6.6\"\nfeatures = {{ {profile_features} }}\n{tasks}\n[run]\nduration_s = {seconds}\n"),
        1,
    );
    let c = &r.cpus[cpu];
    (c.util_avg_end, c.load_avg_end)
}

/// A task running 1 ms in 4 has a utilization near a quarter of the CPU; without PELT
/// there is no utilization signal.
#[test]
fn utilization_follows_the_duty_cycle() {
    let task = "[[tasks]]\nname = \"d\"\naffinity = \"1\"\nprogram = [{ loop = { body = [{ run = \"1ms\" }, { sleep = \"3ms\" }] } }]";
    let (util, _) = cpu_end("", "topo = { cores = 2 }", task, 2.0, 1);
    assert!((util as i64 - 256).abs() < 64, "{util}");
    let (util, _) = cpu_end("PELT = false", "topo = { cores = 2 }", task, 2.0, 1);
    assert_eq!(util, 0);
}

/// After 100 ms of running and 10 ms asleep the CPU still carries most of the task's
/// load (blocked load, y^10 = 0.81); the queued weight is already 0.
#[test]
fn load_decays_while_the_task_is_blocked() {
    let task = "[[tasks]]\nname = \"b\"\naffinity = \"1\"\nprogram = [{ run = \"100ms\" }, { sleep = \"10s\" }]";
    let (_, load) = cpu_end("", "topo = { cores = 2 }", task, 0.11, 1);
    assert!(load > 650 && load < 900, "{load}");
    let (_, load) = cpu_end("PELT = false", "topo = { cores = 2 }", task, 0.11, 1);
    assert_eq!(load, 0);
}

/// Utilization is capacity-invariant: a CPU-bound task on a Pixel 6 A55 (capacity 160)
/// and on an A76 (498) shows about those capacities.
#[test]
fn utilization_is_capacity_invariant() {
    for (cpu, cap) in [(0usize, 160i64), (4, 498)] {
        let task = format!("[[tasks]]\nname = \"h\"\naffinity = \"{cpu}\"\nprogram = [{{ run = \"1000s\" }}]");
        let (util, _) = cpu_end("", "preset = \"pixel6\"", &task, 1.0, cpu);
        assert!((util as i64 - cap).abs() <= cap / 20 + 2, "CPU {cpu}: {util} vs {cap}");
    }
}

/// wake_affine_weight() compares cpu_load()s. CPU 0 runs the waker and a hog; CPU 1 runs
/// two hogs; the wakee (started on CPU 1) has run 50 us every 10 ms for 150 ms, so its
/// PELT load (as of its last dequeue: the kernel does not sync it here) has decayed to
/// a few % when the waker (sharing CPU 0 with the hog) first wakes it, at about 200 ms (a sync wakeup: the waker's own load is
/// discounted). With PELT, CPU 0's load plus the wakee's is below CPU 1's
/// minus it, and the wakee moves to the waker's CPU; with queued weights it counts a
/// full 1024 on both sides and stays on CPU 1.
#[test]
fn wake_affine_weighs_cpu_load_averages() {
    let tasks = "[[tasks]]\nname = \"w\"\naffinity = \"0\"\nprogram = [{ run = \"100ms\" }, { signal = \"c\" }, { run = \"1s\" }]\n\
                 [[tasks]]\nname = \"h\"\ncount = 2\naffinity = \"1\"\nprogram = [{ run = \"1000s\" }]\n\
                 [[tasks]]\nname = \"h0\"\naffinity = \"0\"\nprogram = [{ run = \"1000s\" }]\n\
                 [[tasks]]\nname = \"p\"\ncpu = 1\nprogram = [{ loop = { count = 15, body = [{ sleep = \"10ms\" }, { run = \"50us\" }] } }, { wait = \"c\" }, { run = \"50us\" }, { sleep = \"10s\" }]";
    let run = |features: &str| {
        let r = run_toml(
            &format!(
                "[machine]\ntopo = {{ cores = 2 }}\n[kernel]\nprofile = \"6.6\"\nfeatures = {{ {features} }}\n{tasks}\n[run]\nduration_s = 0.3\n"
            ),
            1,
        );
        r.tasks.iter().find(|t| t.name == "p").unwrap().nr_migrations
    };
    assert_eq!(run(""), 1, "with PELT the wakee joins its waker");
    assert_eq!(run("PELT = false"), 0, "with queued weights it stays");
}
