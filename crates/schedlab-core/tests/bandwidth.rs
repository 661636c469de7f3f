//! CFS bandwidth control driven by a small deterministic runner simulation.
//!
//! The driver plays one "runner" per CPU. A runner runs for a while (or forever), is
//! charged at every tick of its CPU as update_curr would on the tick, then sleeps. It
//! follows the engine contract in `schedlab_core::bandwidth`: accounting at ticks, the
//! throttle check at put_prev, check_enqueue_throttle per level at wakeup, slack return
//! per level at sleep, and bandwidth timers fired in time order (before the ticks due at
//! the same instant). A throttled runner stops until its cfs_rq is unthrottled.
//!
//! For one watched group it records the wall-clock CPU time used in each period of the
//! group's grid and, at every period boundary, the runtime its cfs_rqs hold or owe as if
//! charged exactly at that instant: `debt` (overrun not yet repaid) and `silo` (runtime
//! held). `charged(window) = used + debt(start) - debt(end)` is the runtime the window's
//! pool actually paid for; the wall-clock use may exceed it by the overrun still owed at
//! the end (at most one tick per CPU: a CPU notices an empty silo at its next tick).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use proptest::prelude::*;
use schedlab_core::bandwidth::{BandwidthMode, BandwidthSpec, BwTimerRequest, CfsBandwidthControl, GroupId};
use schedlab_core::time::{Ns, NSEC_PER_MSEC, NSEC_PER_USEC};

const MS: Ns = NSEC_PER_MSEC;
const US: Ns = NSEC_PER_USEC;
const TICK: Ns = MS;
const SLICE: Ns = 5 * MS;
const CPU_BOUND: Ns = Ns::MAX;

/// What one runner (on its own CPU) does.
#[derive(Clone, Copy, Debug)]
struct Prog {
    group: GroupId,
    /// Run length per wakeup, or CPU_BOUND.
    run: Ns,
    sleep: Ns,
    /// First wakeup.
    start: Ns,
    /// Offset of this CPU's ticks.
    tick_phase: Ns,
    /// Each sleep is lengthened by up to this much (deterministic pseudo-random).
    jitter: Ns,
    /// Wake at the next `start + k * sleep` instead (a periodic task).
    periodic: bool,
}

impl Prog {
    fn new(group: GroupId, run: Ns, sleep: Ns, start: Ns) -> Prog {
        Prog { group, run, sleep, start, tick_phase: 0, jitter: 0, periodic: false }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum St {
    Sleeping,
    Running,
    Blocked,
}

struct Runner {
    p: Prog,
    st: St,
    gen: u64,
    last: Ns,
    left: Ns,
    used: Ns,
    rng: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Ev {
    Probe(usize),
    Timer(BwTimerRequest),
    Tick(usize, u64),
    End(usize, u64),
    Wake(usize),
}

/// Runtime owed and held by a group's cfs_rqs (as if charged at that instant), and its pool.
#[derive(Clone, Copy, Debug)]
struct Probe {
    debt: Ns,
    silo: Ns,
    max_silo: Ns,
    pool: Ns,
}

struct Sim {
    bw: CfsBandwidthControl,
    run: Vec<Runner>,
    q: BinaryHeap<Reverse<(Ns, u8, u64, Ev)>>,
    seq: u64,
    timers: Vec<BwTimerRequest>,
    watch: GroupId,
    period: Ns,
    /// Wall-clock use per period by runners of the watched subtree.
    usage: Vec<Ns>,
    /// The watched group at each boundary, before the events of that instant.
    probes: Vec<Probe>,
}

fn spec(quota: Option<Ns>, period: Ns, burst: Ns) -> BandwidthSpec {
    BandwidthSpec { quota_ns: quota, period_ns: period, burst_ns: burst }
}

/// Root plus one group (id 1).
fn one_group(quota: Ns, period: Ns, burst: Ns) -> Vec<(Option<GroupId>, BandwidthSpec)> {
    vec![(None, spec(None, 100 * MS, 0)), (None, spec(Some(quota), period, burst))]
}

impl Sim {
    fn new(groups: &[(Option<GroupId>, BandwidthSpec)], mode: BandwidthMode, progs: &[Prog], watch: GroupId) -> Sim {
        let bw = CfsBandwidthControl::new(groups, progs.len(), mode, SLICE, TICK);
        let period = bw.spec(watch).period_ns;
        let run = progs
            .iter()
            .enumerate()
            .map(|(i, &p)| Runner { p, st: St::Sleeping, gen: 0, last: 0, left: 0, used: 0, rng: 0x9e37_79b9_7f4a_7c15 ^ (i as u64 + 1) })
            .collect();
        let mut sim = Sim { bw, run, q: BinaryHeap::new(), seq: 0, timers: Vec::new(), watch, period, usage: Vec::new(), probes: Vec::new() };
        for (i, p) in progs.iter().enumerate() {
            sim.push(p.start, 2, Ev::Wake(i));
        }
        sim
    }

    fn push(&mut self, at: Ns, prio: u8, ev: Ev) {
        self.seq += 1;
        self.q.push(Reverse((at, prio, self.seq, ev)));
    }

    fn watched(&self, i: usize) -> bool {
        self.bw.levels(self.run[i].p.group).contains(&self.watch)
    }

    /// Runs every event due up to `end`, then counts running time up to `end`.
    fn run_until(&mut self, end: Ns) {
        for k in 0..=end / self.period {
            self.push(k * self.period, 0, Ev::Probe(k as usize));
        }
        while let Some(&Reverse((at, _, _, ev))) = self.q.peek() {
            if at > end {
                break;
            }
            self.q.pop();
            match ev {
                Ev::Probe(k) => self.probe(k, at),
                Ev::Timer(req) => self.on_timer(req, at),
                Ev::Tick(i, g) if g == self.run[i].gen && self.run[i].st == St::Running => self.on_tick(i, at),
                Ev::End(i, g) if g == self.run[i].gen && self.run[i].st == St::Running => self.on_end(i, at),
                Ev::Wake(i) => self.on_wake(i, at),
                _ => {}
            }
            for r in std::mem::take(&mut self.timers) {
                self.push(r.at, 1, Ev::Timer(r));
            }
        }
        let periods = (end / self.period) as usize;
        if self.usage.len() < periods {
            self.usage.resize(periods, 0);
        }
        for i in 0..self.run.len() {
            if self.run[i].st == St::Running {
                let last = self.run[i].last;
                self.record(i, last, end);
                self.run[i].used += end - last;
                self.run[i].last = end;
            }
        }
    }

    fn probe(&mut self, k: usize, now: Ns) {
        let mut p = Probe { debt: 0, silo: 0, max_silo: 0, pool: self.bw.pool_runtime(self.watch) };
        for i in (0..self.run.len()).filter(|&i| self.watched(i)) {
            let pending = if self.run[i].st == St::Running { now - self.run[i].last } else { 0 };
            let v = self.bw.runtime_remaining(self.watch, i) - pending as i64;
            p.debt += (-v).max(0) as Ns;
            p.silo += v.max(0) as Ns;
            p.max_silo = p.max_silo.max(v.max(0) as Ns);
        }
        assert_eq!(self.probes.len(), k);
        self.probes.push(p);
    }

    fn record(&mut self, i: usize, a: Ns, b: Ns) {
        if !self.watched(i) {
            return;
        }
        let mut t = a;
        while t < b {
            let k = (t / self.period) as usize;
            let e = ((k as Ns + 1) * self.period).min(b);
            if self.usage.len() <= k {
                self.usage.resize(k + 1, 0);
            }
            self.usage[k] += e - t;
            t = e;
        }
    }

    /// update_curr of runner `i` up to `now`; returns the resched request.
    fn charge(&mut self, i: usize, now: Ns) -> bool {
        let (last, g) = (self.run[i].last, self.run[i].p.group);
        let delta = now - last;
        self.record(i, last, now);
        let r = &mut self.run[i];
        r.last = now;
        r.used += delta;
        if r.p.run != CPU_BOUND {
            r.left = r.left.saturating_sub(delta);
        }
        self.bw.account(g, i, delta, now, &mut self.timers)
    }

    fn start_running(&mut self, i: usize, now: Ns) {
        let r = &mut self.run[i];
        r.st = St::Running;
        r.last = now;
        r.gen += 1;
        let (gen, phase, left) = (r.gen, r.p.tick_phase, r.left);
        let next_tick = if now < phase { phase } else { phase + ((now - phase) / TICK + 1) * TICK };
        self.push(next_tick, 2, Ev::Tick(i, gen));
        if left != CPU_BOUND {
            self.push(now + left, 2, Ev::End(i, gen));
        }
    }

    fn block(&mut self, i: usize) {
        self.run[i].st = St::Blocked;
        self.run[i].gen += 1;
    }

    fn on_tick(&mut self, i: usize, now: Ns) {
        let g = self.run[i].p.group;
        if self.charge(i, now) {
            self.bw.check_throttle(g, i, now, &mut self.timers, |_| true);
        }
        if self.bw.is_throttled(g, i) {
            self.block(i);
        } else {
            let gen = self.run[i].gen;
            self.push(now + TICK, 2, Ev::Tick(i, gen));
        }
    }

    fn on_end(&mut self, i: usize, now: Ns) {
        let g = self.run[i].p.group;
        self.charge(i, now);
        // dequeue: every level's cfs_rq on this CPU becomes empty; then put_prev.
        for l in self.bw.levels(g) {
            self.bw.dequeue_last(l, i, now, &mut self.timers);
        }
        self.bw.check_throttle(g, i, now, &mut self.timers, |_| true);
        let r = &mut self.run[i];
        r.st = St::Sleeping;
        r.gen += 1;
        r.rng ^= r.rng << 13;
        r.rng ^= r.rng >> 7;
        r.rng ^= r.rng << 17;
        let jitter = if r.p.jitter > 0 { r.rng % r.p.jitter } else { 0 };
        let wake = if r.p.periodic { r.p.start + ((now - r.p.start) / r.p.sleep + 1) * r.p.sleep } else { now + r.p.sleep + jitter };
        self.push(wake, 2, Ev::Wake(i));
    }

    /// Enqueues runner `i` into the levels of its hierarchy from `from` upwards; runs
    /// it unless a level is or becomes throttled.
    fn enqueue_from(&mut self, i: usize, from: usize, now: Ns) {
        let g = self.run[i].p.group;
        if self.bw.is_throttled(g, i) {
            return self.block(i);
        }
        for l in self.bw.levels(g).into_iter().skip(from) {
            if self.bw.enqueue_check(l, i, now, &mut self.timers).is_some() {
                return self.block(i);
            }
        }
        self.start_running(i, now);
    }

    fn on_wake(&mut self, i: usize, now: Ns) {
        self.run[i].left = self.run[i].p.run;
        self.enqueue_from(i, 0, now);
    }

    fn on_timer(&mut self, req: BwTimerRequest, now: Ns) {
        for (l, cpu) in self.bw.timer_fired(req, now, &mut self.timers) {
            let levels = self.bw.levels(self.run[cpu].p.group);
            if self.run[cpu].st == St::Blocked {
                if let Some(pos) = levels.iter().position(|&x| x == l) {
                    self.enqueue_from(cpu, pos + 1, now);
                }
            }
        }
    }

    /// Runtime the pool paid for over periods [a, b).
    fn charged(&self, a: usize, b: usize) -> Ns {
        self.used(a, b) + self.probes[a].debt - self.probes[b].debt
    }

    fn used(&self, a: usize, b: usize) -> Ns {
        self.usage[a..b].iter().sum()
    }

    fn conserved(&self, g: GroupId) -> bool {
        let c = self.bw.counters(g);
        c.refilled + c.returned == self.bw.pool_runtime(g) + c.dropped + c.handed_out
    }
}

const ALL_MODES: [BandwidthMode; 4] = [BandwidthMode::EXPIRING, BandwidthMode::INVERTED, BandwidthMode::NO_EXPIRY, BandwidthMode::BURST];

#[test]
fn cpu_bound_runner_gets_its_quota_and_is_throttled_every_period() {
    for mode in ALL_MODES {
        for (quota, period) in [(25 * MS, 100 * MS), (7_300 * US, 50 * MS), (60 * MS, 250 * MS)] {
            let mut sim = Sim::new(&one_group(quota, period, 0), mode, &[Prog::new(1, CPU_BOUND, 0, 0)], 1);
            let end = 100 * period;
            sim.run_until(end);
            let (used, want) = (sim.run[0].used as f64, 100.0 * quota as f64);
            assert!((used - want).abs() <= 0.01 * want, "{mode:?} {quota}/{period}: used {used} for {want}");
            let s = sim.bw.stats(1, end);
            assert_eq!((s.nr_periods, s.nr_throttled), (100, 100), "{mode:?} {quota}/{period}");
            assert!(s.throttled_time > 0 && sim.conserved(1));
        }
    }
}

#[test]
fn a_group_below_its_quota_is_never_throttled() {
    for mode in ALL_MODES {
        // Four CPUs, 2 ms every 50 ms each: 16 ms per 100 ms under a 50 ms quota, room
        // even for four 5 ms slices that expire.
        let progs: Vec<Prog> = (0..4).map(|c| Prog::new(1, 2 * MS, 48 * MS, c * 3 * MS + 250 * US)).collect();
        let mut sim = Sim::new(&one_group(50 * MS, 100 * MS, 0), mode, &progs, 1);
        sim.run_until(3_000 * MS);
        let s = sim.bw.stats(1, 3_000 * MS);
        assert!(s.nr_periods >= 29, "{mode:?}: {s:?}");
        assert_eq!((s.nr_throttled, s.throttled_time), (0, 0), "{mode:?}");
        // Every burst ran on time: 60 bursts of 2 ms per runner.
        assert!(sim.run.iter().all(|r| r.used == 120 * MS && r.st == St::Sleeping), "{mode:?}");
    }
}

#[test]
fn a_child_is_throttled_when_its_parent_runs_out() {
    for mode in ALL_MODES {
        // Parent 20 ms/100 ms; child 2 unlimited, child 3 with a quota it never reaches.
        let groups = vec![
            (None, spec(None, 100 * MS, 0)),
            (None, spec(Some(20 * MS), 100 * MS, 0)),
            (Some(1), spec(None, 100 * MS, 0)),
            (Some(1), spec(Some(80 * MS), 100 * MS, 0)),
        ];
        let progs = [Prog::new(2, CPU_BOUND, 0, 0), Prog::new(3, CPU_BOUND, 0, 0)];
        let mut sim = Sim::new(&groups, mode, &progs, 1);
        sim.run_until(2_000 * MS);
        let total: Ns = sim.run.iter().map(|r| r.used).sum();
        assert!(total.abs_diff(400 * MS) <= SLICE + 2 * TICK, "{mode:?}: children used {total}");
        let (parent, child) = (sim.bw.stats(1, 2_000 * MS), sim.bw.stats(3, 2_000 * MS));
        assert_eq!(parent.nr_throttled, parent.nr_periods, "{mode:?}");
        assert_eq!((child.nr_throttled, child.throttled_time), (0, 0), "{mode:?}");
        // Child 3 got far less than its own 80 ms/100 ms: its parent throttled it.
        assert!(sim.run[1].used < 300 * MS && parent.throttled_time >= 2 * 1_500 * MS, "{mode:?}");
    }
}

#[test]
fn burst_lets_an_idle_group_run_quota_plus_burst_in_one_period_and_no_more() {
    let (quota, period, burst) = (20 * MS, 50 * MS, 20 * MS);
    // 60 ms of work every 250 ms (5 periods), waking on a period boundary.
    let progs = [Prog { periodic: true, ..Prog::new(1, 60 * MS, 250 * MS, 100 * MS) }];
    let mut peak = [0; 2];
    for (m, mode) in [BandwidthMode::BURST, BandwidthMode::NO_EXPIRY].into_iter().enumerate() {
        let mut sim = Sim::new(&one_group(quota, period, burst), mode, &progs, 1);
        sim.run_until(5_000 * MS);
        peak[m] = *sim.usage.iter().max().unwrap();
        let s = sim.bw.stats(1, 5_000 * MS);
        let allowed = if mode.burst { quota + burst } else { quota };
        // At most the pool, the 1 ms the CPU kept at its last sleep, and one tick late.
        assert!(peak[m] <= allowed + MS + TICK, "{mode:?}: {peak:?}");
        assert_eq!(mode.burst, s.nr_bursts > 0 && s.burst_time > 0, "{mode:?}: {s:?}");
        assert!(sim.conserved(1));
    }
    assert!(peak[0] >= quota + burst && peak[1] < quota + burst, "{peak:?}");
    // A CPU-bound group cannot average more than its quota with burst.
    let mut sim = Sim::new(&one_group(quota, period, burst), BandwidthMode::BURST, &[Prog::new(1, CPU_BOUND, 0, 0)], 1);
    sim.run_until(40 * period);
    assert!(sim.used(0, 40) <= 40 * quota + burst + SLICE + TICK, "{}", sim.used(0, 40));
}

/// One CPU-bound runner on CPU 0 and N-1 runners doing 2 µs every ~10 ms on their own
/// CPUs, one group with 10 ms / 100 ms, 5 s (github indeedeng/fibtest's shape). Every
/// CPU ticks at `tick_phase` + k ms. Returns (fast runner's use, group use, nr_throttled).
fn fibtest(n: usize, mode: BandwidthMode, tick_phase: Ns) -> (Ns, Ns, u64) {
    let mut progs = vec![Prog { tick_phase, ..Prog::new(1, CPU_BOUND, 0, 0) }];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 1..n {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let start = (seed >> 33) % (10 * MS);
        progs.push(Prog { jitter: 50 * US, tick_phase, ..Prog::new(1, 2 * US, 10 * MS, start) });
    }
    let mut sim = Sim::new(&one_group(10 * MS, 100 * MS, 0), mode, &progs, 1);
    let end = 5_000 * MS;
    sim.run_until(end);
    let s = sim.bw.stats(1, end);
    assert_eq!(s.nr_periods, 50);
    assert!(sim.conserved(1));
    // Whatever the behaviour, the group stays near its 500 ms (+ one slice per CPU).
    let group: Ns = sim.run.iter().map(|r| r.used).sum();
    assert!(group <= 50 * 10 * MS + n as Ns * (SLICE + TICK), "{mode:?} N={n}: {group}");
    (sim.run[0].used, group, s.nr_throttled)
}

/// Prints the fast thread's CPU time with expiring slices (4.18-5.3), the 3.16-4.17
/// inverted test and without expiry (5.4+). Ticks on the period timer's grid first, then
/// the mean over four tick phases: a throttled fast thread unthrottled with 1 ns at the
/// refill runs until its next tick, so the tick phase sets the expiring figure's floor.
#[test]
fn fibtest_fast_thread_gets_more_without_slice_expiry() {
    let ms = |ns: Ns| ns as f64 / 1e6;
    for n in [8, 16, 40, 80] {
        let (with, g_with, thr_with) = fibtest(n, BandwidthMode::EXPIRING, 0);
        let (inv, g_inv, thr_inv) = fibtest(n, BandwidthMode::INVERTED, 0);
        let (without, g_without, thr_without) = fibtest(n, BandwidthMode::NO_EXPIRY, 0);
        eprintln!(
            "fibtest N={n:>2}, ticks on the period grid: fast thread {:>5.1} ms with expiry, {:>5.1} ms inverted, \
             {:>5.1} ms without, ratio {:>5.2}; group {:.1}/{:.1}/{:.1} ms; nr_throttled {thr_with}/{thr_inv}/{thr_without} of 50",
            ms(with),
            ms(inv),
            ms(without),
            without as f64 / with.max(1) as f64,
            ms(g_with),
            ms(g_inv),
            ms(g_without),
        );
        assert!(without >= with, "N={n}: {without} < {with}");
        let (mut sum_with, mut sum_without) = (0, 0);
        for phase in [0, 250 * US, 500 * US, 750 * US] {
            let (w, _, _) = fibtest(n, BandwidthMode::EXPIRING, phase);
            let (wo, _, _) = fibtest(n, BandwidthMode::NO_EXPIRY, phase);
            assert!(wo >= w, "N={n} tick phase {phase}: {wo} < {w}");
            sum_with += w;
            sum_without += wo;
        }
        eprintln!(
            "fibtest N={n:>2}, mean over tick phases 0/250/500/750 µs: {:>5.1} ms with expiry, {:>5.1} ms without, ratio {:>5.2}",
            ms(sum_with / 4),
            ms(sum_without / 4),
            sum_without as f64 / sum_with.max(1) as f64,
        );
    }
}

#[derive(Clone, Debug)]
struct Work {
    period: Ns,
    quota: Ns,
    progs: Vec<Prog>,
}

/// Random workloads: 1-16 CPUs, period 5-100 ms, quota up to the CPUs' capacity, each
/// runner CPU-bound (1 in 4) or running 50 µs-20 ms then sleeping 0.1-60 ms, with a
/// random start and tick phase.
fn work() -> impl Strategy<Value = Work> {
    let runner = (0u8..4, 50u64..20_000, 100u64..60_000, 0u64..20_000, 0u64..1_000);
    (5u64..=100, 1u64..=1_000, prop::collection::vec(runner, 1..=16)).prop_map(|(period_ms, permille, rs)| {
        let period = period_ms * MS;
        let quota = (period * rs.len() as Ns * permille / 1_000).max(MS);
        let progs = rs
            .iter()
            .map(|&(kind, run, sleep, start, phase)| Prog {
                tick_phase: phase * US,
                ..Prog::new(1, if kind == 0 { CPU_BOUND } else { run * US }, sleep * US, start * US)
            })
            .collect();
        Work { period, quota, progs }
    })
}

const PERIODS: usize = 20;

fn simulate(w: &Work, mode: BandwidthMode) -> Sim {
    let mut sim = Sim::new(&one_group(w.quota, w.period, 0), mode, &w.progs, 1);
    sim.run_until(PERIODS as Ns * w.period);
    assert!(sim.conserved(1));
    sim
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]

    /// 4.18-5.3: what a period pays for never exceeds the quota by more than the expiry
    /// check's lateness (one tick per CPU); wall-clock use adds the throttle check's.
    #[test]
    fn expiring_slices_bound_each_period(w in work()) {
        let sim = simulate(&w, BandwidthMode::EXPIRING);
        let n = w.progs.len() as Ns;
        for k in 0..PERIODS {
            prop_assert!(sim.charged(k, k + 1) <= w.quota + n * TICK, "period {}: charged {} quota {}", k, sim.charged(k, k + 1), w.quota);
            prop_assert!(sim.used(k, k + 1) <= w.quota + 2 * n * TICK, "period {}: used {}", k, sim.used(k, k + 1));
        }
    }

    /// 5.4+: over any K consecutive periods the pool pays for at most K x quota plus one
    /// slice per CPU (runtime left in the silos); wall-clock use adds a tick per CPU.
    /// Behind it: no silo ever holds more than a slice, and runtime is conserved (a
    /// window pays at most what the pool and silos held at its start, the pool being
    /// refilled to the quota at the boundary, plus a quota per later refill).
    #[test]
    fn unexpiring_slices_bound_every_window(w in work()) {
        let sim = simulate(&w, BandwidthMode::NO_EXPIRY);
        let n = w.progs.len() as Ns;
        for (k, p) in sim.probes.iter().enumerate() {
            prop_assert!(p.max_silo <= SLICE, "boundary {}: a silo holds {}", k, p.max_silo);
        }
        for a in 0..PERIODS {
            let start = sim.probes[a].pool.max(w.quota) + sim.probes[a].silo;
            for b in a + 1..=PERIODS {
                prop_assert!(sim.charged(a, b) <= start + (b - a - 1) as Ns * w.quota, "[{}, {}): charged {} > credit", a, b, sim.charged(a, b));
            }
        }
        for a in 0..PERIODS {
            for b in a + 1..=PERIODS {
                let k = (b - a) as Ns;
                prop_assert!(sim.charged(a, b) <= k * w.quota + n * SLICE, "[{}, {}): charged {}", a, b, sim.charged(a, b));
                prop_assert!(sim.used(a, b) <= k * w.quota + n * (SLICE + TICK), "[{}, {}): used {}", a, b, sim.used(a, b));
            }
        }
    }
}
