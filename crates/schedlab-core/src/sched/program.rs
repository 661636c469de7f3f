//! Executes tasks' programs: the system calls a workload makes.
//!
//! Mirrors: the kernel entry points the steps stand for: nanosleep/hrtimer sleep,
//! pipe read/write and futex wait/wake (wake_up_interruptible_sync: WF_SYNC), mutex
//! lock/unlock with hand-off, fork (kernel_clone → wake_up_new_task), wait4, exit.
//! Model: instantaneous steps run back to back; a step that takes time (run) or
//! blocks ends the walk. A program that loops without ever taking time is an error.

use crate::engine::queue::{EventClass, EventKind};
use crate::engine::Simulator;
use crate::error::SimError;
use crate::task::{Insn, TaskId, TaskState};

/// Instantaneous steps allowed in a row before a program is declared a busy loop.
const MAX_INSTANT_STEPS: u32 = 1_000_000;

impl Simulator {
    /// Advances task `c` running on `cpu`; returns true if it keeps running.
    pub(crate) fn advance_program(&mut self, c: TaskId, cpu: usize) -> bool {
        let mut steps = 0;
        loop {
            steps += 1;
            if steps > MAX_INSTANT_STEPS {
                self.error = Some(SimError::Limit(format!(
                    "task '{}' loops without taking time (a loop whose body has no run or sleep step?)",
                    self.tasks[c].name
                )));
                return true;
            }
            let t = &self.tasks[c];
            let Some(&insn) = self.programs[t.program].insns.get(t.pc) else {
                self.do_exit(c, cpu);
                return false;
            };
            self.tasks[c].pc += 1;
            match insn {
                Insn::Run(w) => {
                    if w > 0 {
                        self.tasks[c].work_left = w;
                        return true;
                    }
                }
                Insn::RunExp(mean) => {
                    let w = self.rngs[c].exp(mean);
                    if w > 0 {
                        self.tasks[c].work_left = w;
                        return true;
                    }
                }
                Insn::Sleep(d) => {
                    self.sleep_for(c, cpu, d);
                    return false;
                }
                Insn::SleepExp(mean) => {
                    let d = self.rngs[c].exp(mean);
                    self.sleep_for(c, cpu, d);
                    return false;
                }
                Insn::Wait(ch) => {
                    let ch = self.resolve_channel(c, ch);
                    if self.chans[ch].tokens > 0 {
                        self.chans[ch].tokens -= 1;
                    } else {
                        self.chans[ch].waiters.push_back(c);
                        self.block(c, cpu, TaskState::Blocked);
                        return false;
                    }
                }
                Insn::Signal(ch) => {
                    let ch = self.resolve_channel(c, ch);
                    match self.chans[ch].waiters.pop_front() {
                        Some(w) => self.try_to_wake_up(w, cpu, Some(c), true),
                        None => self.chans[ch].tokens += 1,
                    }
                }
                Insn::Lock(l) => {
                    if self.locks[l].owner.is_none() {
                        self.locks[l].owner = Some(c);
                    } else {
                        self.locks[l].waiters.push_back(c);
                        self.block(c, cpu, TaskState::Blocked);
                        return false;
                    }
                }
                Insn::Unlock(l) => {
                    let next = self.locks[l].waiters.pop_front();
                    self.locks[l].owner = next;
                    if let Some(w) = next {
                        self.try_to_wake_up(w, cpu, Some(c), false);
                    }
                }
                Insn::Fork { template, count } => {
                    for _ in 0..count {
                        self.do_fork(c, cpu, template);
                    }
                    return true; // the fork cost is charged as overhead before the next step
                }
                Insn::WaitChildren => {
                    if self.tasks[c].live_children > 0 {
                        self.block(c, cpu, TaskState::Blocked);
                        return false;
                    }
                }
                Insn::LoopStart { .. } | Insn::LoopEnd { .. } => self.step_loop(c, insn),
                Insn::TouchArea { bytes, by_cid, record } => {
                    self.touch_area(c, cpu, bytes, by_cid, record);
                    return true;
                }
                Insn::TouchPages { region, pages, write } => {
                    self.touch_pages(c, cpu, region, pages, write);
                    return true;
                }
                Insn::PageOut { region, extra_mappers, kswapd } => {
                    self.page_out(c, cpu, region, extra_mappers, kswapd);
                    return true;
                }
                Insn::Exit => {
                    self.do_exit(c, cpu);
                    return false;
                }
            }
        }
    }

    /// Returns the channel a name means for task `c`: names starting with '@' are private
    /// to the children of one fork parent (a pipe between the processes one command
    /// line starts); other names are shared by every task.
    fn resolve_channel(&mut self, c: TaskId, ch: usize) -> usize {
        if !self.chan_scoped.get(ch).copied().unwrap_or(false) {
            return ch;
        }
        let key = (self.tasks[c].family, ch);
        let next = self.chans.len();
        let id = *self.family_chans.entry(key).or_insert(next);
        if id == next {
            self.chans.push(Default::default());
        }
        id
    }

    /// Executes a loop head or tail (`pc` already past it).
    fn step_loop(&mut self, c: TaskId, insn: Insn) {
        let t = &mut self.tasks[c];
        match insn {
            Insn::LoopStart { count: Some(0), end } => t.pc = end + 1,
            Insn::LoopStart { count, .. } => {
                let head = t.pc - 1;
                t.loops.push((head, count));
            }
            Insn::LoopEnd { start } => {
                let top = t.loops.last_mut().expect("LoopEnd without LoopStart");
                debug_assert_eq!(top.0, start);
                let again = match &mut top.1 {
                    None => true,
                    Some(n) => {
                        *n -= 1;
                        *n > 0
                    }
                };
                if again {
                    t.pc = start + 1;
                } else {
                    t.loops.pop();
                }
            }
            _ => unreachable!("not a loop step"),
        }
    }

    /// Takes the task's next steps now if they are loop control followed by pure
    /// computation, so the switch-in cost and the computation form one segment (one
    /// event instead of two; the timeline is the same).
    pub(crate) fn fold_next_run(&mut self, c: TaskId) {
        if self.tasks[c].work_left != 0 {
            return;
        }
        for _ in 0..8 {
            let t = &self.tasks[c];
            let Some(&insn) = self.programs[t.program].insns.get(t.pc) else { return };
            let w = match insn {
                Insn::LoopStart { .. } | Insn::LoopEnd { .. } => {
                    self.tasks[c].pc += 1;
                    self.step_loop(c, insn);
                    continue;
                }
                Insn::Run(w) => w,
                Insn::RunExp(mean) => self.rngs[c].exp(mean),
                _ => return,
            };
            let t = &mut self.tasks[c];
            t.pc += 1;
            t.work_left = w;
            return;
        }
    }

    fn sleep_for(&mut self, c: TaskId, cpu: usize, d: u64) {
        self.block(c, cpu, TaskState::Sleeping);
        let gen = self.tasks[c].sleep_gen;
        self.q.push(self.now + d, EventClass::Timer, EventKind::SleepTimer { task: c as u32, gen });
    }

    /// Takes the running task off its runqueue because it sleeps or blocks.
    fn block(&mut self, c: TaskId, cpu: usize, state: TaskState) {
        self.dequeue_task_fair(cpu, c);
        self.tasks[c].state = state;
    }

    fn do_fork(&mut self, parent: TaskId, cpu: usize, template: usize) {
        let tpl = self.templates[template].clone();
        let n = self.tasks[parent].live_children;
        let mask = tpl.affinity.map_or(self.m.all_cpus(), |a| a.and(&self.m.all_cpus()));
        let mask = if mask.is_empty() { self.m.all_cpus() } else { mask };
        let child = self.create_task(format!("{}-{n}", tpl.name), tpl.program, tpl.nice, mask, tpl.group, tpl.process.as_deref(), tpl.footprint, Some(parent));
        self.tasks[child].cpu = if mask.test(cpu) { cpu } else { mask.first().unwrap_or(cpu) };
        self.tasks[parent].live_children += 1;
        self.tasks[parent].overhead_ns += self.m.cost.fork_ns as u64;
        self.wake_up_new_task(child, cpu, Some(parent));
    }

    fn do_exit(&mut self, c: TaskId, cpu: usize) {
        self.mm_exit(c, cpu);
        self.dequeue_task_fair(cpu, c);
        let t = &mut self.tasks[c];
        t.state = TaskState::Exited;
        t.stats.exit_ns = Some(self.now);
        self.live_tasks -= 1;
        if let Some(p) = self.tasks[c].parent {
            self.tasks[p].live_children -= 1;
            let parent_waits = self.tasks[p].state == TaskState::Blocked
                && matches!(self.programs[self.tasks[p].program].insns.get(self.tasks[p].pc.wrapping_sub(1)), Some(Insn::WaitChildren));
            if self.tasks[p].live_children == 0 && parent_waits {
                self.try_to_wake_up(p, cpu, Some(c), false);
            }
        }
    }
}
