//! Work-conservation loss: CPU time spent idle while a runnable task waited elsewhere.
//!
//! Model: per LLC, the loss rate is min(idle CPUs, migratable waiting tasks); machine
//! wide, min(all idle CPUs, all waiting tasks). Running sums keep every update O(1).

use crate::time::Ns;

/// Idle-while-waiting bookkeeping.
#[derive(Clone, Debug, Default)]
pub struct WorkConservation {
    idle: Vec<u32>,
    waiting: Vec<u32>,
    sum_llc_min: u64,
    total_idle: u64,
    total_waiting: u64,
    /// Accumulated CPU-ns lost within LLCs.
    pub lost_llc_ns: u128,
    /// Accumulated CPU-ns lost machine-wide.
    pub lost_machine_ns: u128,
    /// Accumulated CPU-ns lost in each LLC (brought up to date by `advance`).
    pub lost_per_llc_ns: Vec<u128>,
    llc_stamp: Vec<Ns>,
    stamp: Ns,
}

impl WorkConservation {
    /// Starts with every CPU idle and nothing waiting; `llc_sizes` are CPUs per LLC.
    pub fn new(llc_sizes: impl Iterator<Item = usize>) -> Self {
        let idle: Vec<u32> = llc_sizes.map(|n| n as u32).collect();
        let total_idle = idle.iter().map(|&n| n as u64).sum();
        let n = idle.len();
        Self { waiting: vec![0; n], idle, total_idle, lost_per_llc_ns: vec![0; n], llc_stamp: vec![0; n], ..Default::default() }
    }

    /// Accumulates the loss up to `now`, per LLC too.
    pub fn advance(&mut self, now: Ns) {
        for llc in 0..self.idle.len() {
            self.advance_llc(now, llc);
        }
        self.advance_total(now);
    }

    fn advance_llc(&mut self, now: Ns, llc: usize) {
        let dt = (now - self.llc_stamp[llc]) as u128;
        self.lost_per_llc_ns[llc] += self.idle[llc].min(self.waiting[llc]) as u128 * dt;
        self.llc_stamp[llc] = now;
    }

    fn advance_total(&mut self, now: Ns) {
        let dt = (now - self.stamp) as u128;
        if dt > 0 {
            self.lost_llc_ns += self.sum_llc_min as u128 * dt;
            self.lost_machine_ns += self.total_idle.min(self.total_waiting) as u128 * dt;
            self.stamp = now;
        }
    }

    fn change(&mut self, now: Ns, llc: usize, d_idle: i32, d_waiting: i32) {
        self.advance_total(now);
        self.advance_llc(now, llc);
        let before = self.idle[llc].min(self.waiting[llc]) as u64;
        self.idle[llc] = (self.idle[llc] as i32 + d_idle) as u32;
        self.waiting[llc] = (self.waiting[llc] as i32 + d_waiting) as u32;
        self.sum_llc_min = self.sum_llc_min - before + self.idle[llc].min(self.waiting[llc]) as u64;
        self.total_idle = (self.total_idle as i64 + d_idle as i64) as u64;
        self.total_waiting = (self.total_waiting as i64 + d_waiting as i64) as u64;
    }

    /// A CPU of `llc` became idle (+1) or busy (-1).
    pub fn idle_changed(&mut self, now: Ns, llc: usize, delta: i32) {
        self.change(now, llc, delta, 0);
    }

    /// A migratable task started (+1) or stopped (-1) waiting on a runqueue of `llc`.
    pub fn waiting_changed(&mut self, now: Ns, llc: usize, delta: i32) {
        self.change(now, llc, 0, delta);
    }
}
