//! The root domain's map of each CPU's earliest deadline, for global EDF: a max-heap of
//! the CPUs running deadline tasks keyed by their earliest deadline, and the mask of
//! CPUs running none, so a deadline task being pushed finds at once a free CPU or the
//! one whose earliest deadline is the latest.
//!
//! Mirrors: kernel/sched/cpudeadline.c (read at 6.18.35): `cpudl_heapify_up()`,
//! `cpudl_heapify_down()`, `cpudl_set()`, `cpudl_clear()` (the CPU goes back to
//! free_cpus), `cpudl_maximum()` and `cpudl_find()`: the free CPUs the task may use if
//! any, else the heap's top if the task may run there and its deadline is earlier.
//! Model: exact for symmetric machines; the capacity fitness of asymmetric ones
//! (dl_task_fits_capacity()) is not applied. Deadlines compare as dl_time_before() with
//! no wrap (times start at 0).

use crate::cpumask::{CpuId, CpuMask};

/// `struct cpudl`.
#[derive(Clone, Debug, Default)]
pub struct CpuDl {
    /// The heap: (cpu, its earliest deadline), latest first.
    elements: Vec<(CpuId, u64)>,
    /// Each CPU's place in the heap, if it has deadline tasks.
    idx: Vec<Option<usize>>,
    /// CPUs with no deadline task.
    free_cpus: CpuMask,
}

impl CpuDl {
    /// Every CPU of `nr_cpus` free (cpudl_init() and cpudl_set_freecpu() at online).
    pub fn new(nr_cpus: usize) -> CpuDl {
        let mut free_cpus = CpuMask::new();
        for c in 0..nr_cpus {
            free_cpus.set(c);
        }
        CpuDl { elements: Vec::new(), idx: vec![None; nr_cpus], free_cpus }
    }

    fn put(&mut self, i: usize, e: (CpuId, u64)) {
        self.elements[i] = e;
        self.idx[e.0] = Some(i);
    }

    fn heapify_up(&mut self, mut i: usize) {
        let orig = self.elements[i];
        while i > 0 {
            let p = (i - 1) >> 1;
            if orig.1 < self.elements[p].1 {
                break;
            }
            let pe = self.elements[p];
            self.put(i, pe);
            i = p;
        }
        self.put(i, orig);
    }

    fn heapify_down(&mut self, mut i: usize) {
        let orig = self.elements[i];
        let n = self.elements.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut largest = i;
            let mut largest_dl = orig.1;
            if l < n && largest_dl < self.elements[l].1 {
                largest = l;
                largest_dl = self.elements[l].1;
            }
            if r < n && largest_dl < self.elements[r].1 {
                largest = r;
            }
            if largest == i {
                break;
            }
            let le = self.elements[largest];
            self.put(i, le);
            i = largest;
        }
        self.put(i, orig);
    }

    fn heapify(&mut self, i: usize) {
        if i > 0 && self.elements[(i - 1) >> 1].1 < self.elements[i].1 {
            self.heapify_up(i);
        } else {
            self.heapify_down(i);
        }
    }

    /// `cpudl_set()`: `cpu`'s earliest deadline is now `dl`.
    pub fn set(&mut self, cpu: CpuId, dl: u64) {
        match self.idx[cpu] {
            None => {
                self.elements.push((cpu, dl));
                let i = self.elements.len() - 1;
                self.idx[cpu] = Some(i);
                self.free_cpus.clear(cpu);
                self.heapify_up(i);
            }
            Some(i) => {
                self.elements[i].1 = dl;
                self.heapify(i);
            }
        }
    }

    /// `cpudl_clear()`: `cpu` has no deadline task any more.
    pub fn clear(&mut self, cpu: CpuId) {
        if let Some(i) = self.idx[cpu].take() {
            let last = self.elements.pop().expect("a CPU in the heap");
            if last.0 != cpu {
                self.put(i, last);
                self.heapify(i);
            }
        }
        self.free_cpus.set(cpu);
    }

    /// `cpudl_maximum()`: the CPU whose earliest deadline is the latest, with it.
    pub fn maximum(&self) -> Option<(CpuId, u64)> {
        self.elements.first().copied()
    }

    /// `cpudl_find()`: the CPUs a task with absolute deadline `deadline` allowed on
    /// `allowed` should go to: the free ones, else the latest-deadline CPU if its
    /// deadline is later than the task's; None when there is none.
    pub fn find(&self, deadline: u64, allowed: &CpuMask) -> Option<CpuMask> {
        let free = self.free_cpus.and(allowed);
        if !free.is_empty() {
            return Some(free);
        }
        let (best, dl) = self.maximum()?;
        (allowed.test(best) && deadline < dl).then(|| CpuMask::single(best))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(n: usize) -> CpuMask {
        let mut m = CpuMask::new();
        for c in 0..n {
            m.set(c);
        }
        m
    }

    #[test]
    fn the_heap_keeps_the_latest_earliest_deadline_on_top() {
        let mut cp = CpuDl::new(6);
        for (cpu, dl) in [(0, 50), (1, 10), (2, 90), (3, 30), (4, 70), (5, 20)] {
            cp.set(cpu, dl);
        }
        assert_eq!(cp.maximum(), Some((2, 90)));
        cp.set(2, 5);
        assert_eq!(cp.maximum(), Some((4, 70)));
        cp.clear(4);
        assert_eq!(cp.maximum(), Some((0, 50)));
        cp.set(1, 200);
        assert_eq!(cp.maximum(), Some((1, 200)));
        // Drain in order: every clear keeps the heap a heap.
        let mut order = Vec::new();
        while let Some((c, d)) = cp.maximum() {
            order.push(d);
            cp.clear(c);
        }
        assert_eq!(order, vec![200, 50, 30, 20, 5]);
    }

    #[test]
    fn find_prefers_a_free_cpu_then_the_latest_deadline_if_later() {
        let mut cp = CpuDl::new(3);
        cp.set(0, 100);
        cp.set(1, 40);
        // CPU 2 runs no deadline task.
        assert_eq!(cp.find(60, &all(3)), Some(CpuMask::single(2)));
        cp.set(2, 70);
        // No free CPU: the latest (CPU 0, 100) if the task's deadline is earlier.
        assert_eq!(cp.find(60, &all(3)), Some(CpuMask::single(0)));
        assert_eq!(cp.find(120, &all(3)), None);
        // Not allowed there: nothing (the kernel looks no further than the top).
        let mut not0 = all(3);
        not0.clear(0);
        assert_eq!(cp.find(60, &not0), None);
        cp.clear(1);
        assert_eq!(cp.find(60, &not0), Some(CpuMask::single(1)));
    }
}
