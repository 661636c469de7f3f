//! The root domain's map of CPU priorities: which CPUs run at each RT priority, so an RT
//! task being pushed finds the CPUs running the lowest-priority work in a few bit
//! searches.
//!
//! Mirrors: kernel/sched/cpupri.c: `convert_prio()` (kernel prio -> cpupri: -1 INVALID,
//! 0 NORMAL for a CPU with no RT task (its highest_prio.curr is MAX_RT_PRIO - 1), RT
//! prio 0..98 -> 99..1, MAX_RT_PRIO -> 100 HIGHER), `cpupri_set()`, and
//! `cpupri_find_fitness()`: the lowest cpupri levels first, up to the task's own; with a
//! fitness test (capacity, on asymmetric machines) the CPUs that fail it are dropped, and
//! if no level fits, the search runs again without it (priority before fitness).
//! Model: exact; the kernel's memory barriers and racy reads have no counterpart here.

use crate::cpumask::{CpuId, CpuMask};

use super::MAX_RT_PRIO;

/// cpupri of a CPU that is not eligible (offline, not in the root domain).
pub const CPUPRI_INVALID: i32 = -1;
/// cpupri of a CPU running no RT task (fair, idle).
pub const CPUPRI_NORMAL: i32 = 0;
/// cpupri above every RT priority (a deadline or stop task runs there).
pub const CPUPRI_HIGHER: i32 = 100;
const CPUPRI_NR_PRIORITIES: usize = 101;

/// The cpupri of kernel priority `prio` (-1 for none, 0..=MAX_RT_PRIO).
pub fn convert_prio(prio: i32) -> i32 {
    match prio {
        CPUPRI_INVALID => CPUPRI_INVALID,
        p if p == MAX_RT_PRIO as i32 - 1 => CPUPRI_NORMAL,
        p if p == MAX_RT_PRIO as i32 => CPUPRI_HIGHER,
        p => MAX_RT_PRIO as i32 - 1 - p,
    }
}

/// `struct cpupri`: each CPU's level and each level's CPUs.
#[derive(Clone, Debug)]
pub struct CpuPri {
    cpu_to_pri: Vec<i32>,
    pri_to_cpu: Vec<CpuMask>,
}

impl CpuPri {
    /// Every CPU of `nr_cpus` INVALID (cpupri_init()).
    pub fn new(nr_cpus: usize) -> CpuPri {
        CpuPri { cpu_to_pri: vec![CPUPRI_INVALID; nr_cpus], pri_to_cpu: vec![CpuMask::new(); CPUPRI_NR_PRIORITIES] }
    }

    /// Sets `cpu`'s level from the kernel priority of its highest runnable task
    /// (`cpupri_set()`).
    pub fn set(&mut self, cpu: CpuId, prio: i32) {
        let new = convert_prio(prio);
        let old = self.cpu_to_pri[cpu];
        if new == old {
            return;
        }
        if new != CPUPRI_INVALID {
            self.pri_to_cpu[new as usize].set(cpu);
        }
        if old != CPUPRI_INVALID {
            self.pri_to_cpu[old as usize].clear(cpu);
        }
        self.cpu_to_pri[cpu] = new;
    }

    /// `cpu`'s cpupri level.
    pub fn get(&self, cpu: CpuId) -> i32 {
        self.cpu_to_pri[cpu]
    }

    /// The CPUs a task of kernel priority `task_prio` allowed on `allowed` could preempt:
    /// those of the lowest level below the task's that has any (`cpupri_find_fitness()`),
    /// keeping only CPUs that pass `fits` if given; None when no CPU runs lower work.
    pub fn find(&self, task_prio: i32, allowed: &CpuMask, fits: Option<&dyn Fn(CpuId) -> bool>) -> Option<CpuMask> {
        let task_pri = convert_prio(task_prio);
        for idx in 0..task_pri.max(0) as usize {
            let mut lowest = allowed.and(&self.pri_to_cpu[idx]);
            if lowest.is_empty() {
                continue;
            }
            let Some(fits) = fits else { return Some(lowest) };
            for cpu in lowest.clone().iter() {
                if !fits(cpu) {
                    lowest.clear(cpu);
                }
            }
            if !lowest.is_empty() {
                return Some(lowest);
            }
        }
        // No level fits: honour priority over fitness.
        fits.and_then(|_| self.find(task_prio, allowed, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(cpus: &[usize]) -> CpuMask {
        let mut m = CpuMask::new();
        for &c in cpus {
            m.set(c);
        }
        m
    }

    #[test]
    fn a_task_finds_the_cpus_running_the_lowest_priority_work() {
        let mut cp = CpuPri::new(4);
        cp.set(0, 10); // RT prio 10 (sched_priority 89)
        cp.set(1, 50);
        cp.set(2, 99); // no RT task
        cp.set(3, 50);
        let all = mask(&[0, 1, 2, 3]);
        // A prio-20 task preempts the CPU with no RT task first.
        assert_eq!(cp.find(20, &all, None), Some(mask(&[2])));
        // Not allowed there: the two prio-50 CPUs.
        assert_eq!(cp.find(20, &mask(&[0, 1, 3]), None), Some(mask(&[1, 3])));
        // Only CPU 0 allowed, running higher work: nowhere to push.
        assert_eq!(cp.find(20, &mask(&[0]), None), None);
        // A task never pushes onto a CPU running its own priority.
        assert_eq!(cp.find(50, &mask(&[1, 3]), None), None);
        // The CPU's level follows its highest task; INVALID leaves the map.
        cp.set(2, 5);
        assert_eq!(cp.get(2), 94);
        assert_eq!(cp.find(20, &all, None), Some(mask(&[1, 3])));
        cp.set(1, CPUPRI_INVALID);
        assert_eq!(cp.find(20, &all, None), Some(mask(&[3])));
    }

    #[test]
    fn fitness_narrows_the_choice_but_never_blocks_a_push() {
        let mut cp = CpuPri::new(4);
        for cpu in 0..4 {
            cp.set(cpu, 99);
        }
        cp.set(3, 60);
        let all = mask(&[0, 1, 2, 3]);
        let big = |c: usize| c == 3;
        // CPU 3 fits but runs higher work than the lowest level: the search goes on to
        // its level.
        assert_eq!(cp.find(20, &all, Some(&big)), Some(mask(&[3])));
        // Nothing fits at any level below the task: the search without fitness.
        let none = |_: usize| false;
        assert_eq!(cp.find(20, &all, Some(&none)), Some(mask(&[0, 1, 2])));
    }

    #[test]
    fn levels_are_the_kernels() {
        assert_eq!(convert_prio(-1), CPUPRI_INVALID);
        assert_eq!(convert_prio(99), CPUPRI_NORMAL);
        assert_eq!(convert_prio(100), CPUPRI_HIGHER);
        assert_eq!(convert_prio(0), 99);
        assert_eq!(convert_prio(98), 1);
    }
}
