//! The engine's side of the programs' synchronization steps: the system calls a pipe
//! read or write, a futex wait or wake, a mutex and a barrier make.
//!
//! Mirrors: pipe_read()/pipe_write() with their wait queues (wake_up_interruptible_sync:
//! WF_SYNC), futex_wait()/futex_wake(), a pthread mutex's user-space atomic and its
//! futex slow path, pthread_barrier_wait().
//! Model: the objects ([`crate::state::ipc`]) decide who gets a token, the lock or a release;
//! this glue charges the calls (a futex wake is a system call only when someone waits),
//! blocks the caller and wakes whom the object names, from the caller's CPU.

use super::program::Flow;
use crate::state::task::{TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;

impl Simulator {
    /// Returns the channel a name means for task `c`: names starting with '@' are private
    /// to the children of one fork parent (a pipe between the processes one command
    /// line starts); other names are shared by every task.
    pub(super) fn resolve_channel(&mut self, c: TaskId, ch: usize) -> usize {
        if !self.ipc.chan_scoped.get(ch).copied().unwrap_or(false) {
            return ch;
        }
        let key = (self.tasks[c].family, ch);
        let next = self.ipc.chans.len();
        let id = *self.ipc.family_chans.entry(key).or_insert(next);
        if id == next {
            let (capacity, wake_at) = self.ipc.chan_capacity.get(&ch).copied().unwrap_or((0, 0));
            self.ipc.chans.push(crate::state::ipc::Channel { capacity, wake_at, ..Default::default() });
        }
        id
    }

    /// Signals channel `ch` from `cpu` (a pipe write or futex wake by task `waker`, or
    /// a work item queued from a timer callback): wakes the first waiter or banks a
    /// token.
    pub(crate) fn signal_channel(&mut self, ch: usize, cpu: usize, waker: Option<TaskId>) {
        let stamp = waker.map_or(self.now, |w| self.task_clock(w));
        if let Some(w) = self.ipc.chans[ch].signal(stamp) {
            self.tasks[w].msg_stamp = stamp;
            self.try_to_wake_up(w, cpu, waker, waker.is_some());
        }
    }

    /// `wait` (a pipe read, a futex wait): takes a banked message or blocks; with a
    /// `timeout` (a futex wait with a timespec, schedule_timeout()) a timer wakes the
    /// task if no message comes.
    pub(super) fn step_wait(&mut self, c: TaskId, cpu: usize, ch: usize, timeout: Option<Ns>) -> Flow {
        let ch = self.resolve_channel(c, ch);
        self.syscall_entry(c, cpu);
        if self.ipc.chans[ch].tokens > 0 {
            self.take_token(c, ch, cpu);
            self.syscall_exit(c, cpu);
            return Flow::Next;
        }
        self.ipc.chans[ch].waiters.push_back(c);
        if let Some(timeout) = timeout {
            self.tasks[c].waiting_on = Some(ch);
            let ns = self.schedule_timeout(c, cpu, timeout);
            self.tasks[c].overhead_ns += ns;
            self.tasks[c].timer_due = None; // a wakeup, not a timed sleep
        }
        self.block_in_call(c, cpu);
        Flow::Stops
    }

    /// `signal` (a pipe write on an unbounded pipe, a futex wake of one).
    pub(super) fn step_signal(&mut self, c: TaskId, cpu: usize, ch: usize) -> Flow {
        let ch = self.resolve_channel(c, ch);
        self.syscall_entry(c, cpu);
        self.signal_channel(ch, cpu, Some(c));
        self.syscall_exit(c, cpu);
        Flow::Next
    }

    /// `send` (a pipe write): on a full bounded channel the writer sleeps on the
    /// writers' queue and retries the write when woken.
    pub(super) fn step_send(&mut self, c: TaskId, cpu: usize, ch: usize) -> Flow {
        let ch = self.resolve_channel(c, ch);
        self.syscall_entry(c, cpu);
        if self.ipc.chans[ch].send_blocks() {
            self.tasks[c].pc -= 1;
            self.ipc.chans[ch].writers.push_back(c);
            self.block_in_call(c, cpu);
            return Flow::Stops;
        }
        self.signal_channel(ch, cpu, Some(c));
        self.syscall_exit(c, cpu);
        Flow::Next
    }

    /// `post`: with nobody waiting the flag word is set (a later wait returns at once);
    /// otherwise the first waiter is woken.
    pub(super) fn step_post(&mut self, c: TaskId, cpu: usize, ch: usize) -> Flow {
        let ch = self.resolve_channel(c, ch);
        self.syscall_entry(c, cpu);
        if self.ipc.chans[ch].waiters.is_empty() {
            let stamp = self.task_clock(c);
            self.ipc.chans[ch].set_flag(stamp);
        } else {
            self.signal_channel(ch, cpu, Some(c));
        }
        self.syscall_exit(c, cpu);
        Flow::Next
    }

    /// `wake_all`: one clock read for the whole walk, then a futex wake per waiter.
    pub(super) fn step_wake_all(&mut self, c: TaskId, cpu: usize, ch: usize) -> Flow {
        let ch = self.resolve_channel(c, ch);
        let stamp = self.task_clock(c);
        while let Some(w) = self.ipc.chans[ch].waiters.pop_front() {
            self.syscall_entry(c, cpu);
            self.tasks[w].msg_stamp = stamp;
            self.try_to_wake_up(w, cpu, Some(c), false);
            self.syscall_exit(c, cpu);
        }
        Flow::Next
    }

    /// pthread_cond_wait(): releases the mutex, if any, and blocks on the channel.
    pub(super) fn step_cond_wait(&mut self, c: TaskId, cpu: usize, ch: usize, lock: Option<usize>) -> Flow {
        self.syscall_entry(c, cpu);
        if let Some(l) = lock {
            self.release_lock(c, cpu, l);
        }
        self.ipc.chans[ch].waiters.push_back(c);
        self.block_in_call(c, cpu);
        Flow::Stops
    }

    /// pthread_cond_signal() / _broadcast(): futex_wake() of one or all waiters, a
    /// system call only when someone waits.
    pub(super) fn step_cond_signal(&mut self, c: TaskId, cpu: usize, ch: usize, all: bool) -> Flow {
        if !self.ipc.chans[ch].waiters.is_empty() {
            self.syscall_entry(c, cpu);
            while let Some(w) = self.ipc.chans[ch].waiters.pop_front() {
                self.try_to_wake_up(w, cpu, Some(c), false);
                if !all {
                    break;
                }
            }
            self.syscall_exit(c, cpu);
        }
        Flow::Next
    }

    /// pthread_barrier_wait(): the last party wakes the others; any other blocks.
    pub(super) fn step_barrier(&mut self, c: TaskId, cpu: usize, b: usize) -> Flow {
        self.syscall_entry(c, cpu);
        match self.ipc.barriers[b].arrive(c) {
            Some(released) => {
                for w in released {
                    self.try_to_wake_up(w, cpu, Some(c), false);
                }
                self.syscall_exit(c, cpu);
                Flow::Next
            }
            None => {
                self.block_in_call(c, cpu);
                Flow::Stops
            }
        }
    }

    /// pthread_mutex_lock(): an uncontended lock is a user-space atomic on the lock
    /// word; a contended one sleeps in futex_wait() until handed the lock.
    pub(super) fn step_lock(&mut self, c: TaskId, cpu: usize, l: usize) -> Flow {
        self.touch_lock_word(c, cpu, l);
        if self.ipc.locks[l].lock(c) {
            return Flow::Next;
        }
        self.syscall_entry(c, cpu);
        self.block_in_call(c, cpu);
        self.pi_boost(l, cpu);
        Flow::Stops
    }

    /// Releases mutex `l`, handing it to its first waiter.
    pub(super) fn release_lock(&mut self, c: TaskId, cpu: usize, l: usize) {
        self.touch_lock_word(c, cpu, l);
        if let Some(w) = self.ipc.locks[l].unlock() {
            // futex_wake(): a system call only when someone waits.
            self.syscall_entry(c, cpu);
            self.try_to_wake_up(w, cpu, Some(c), false);
            // The new owner takes what the lock's remaining waiters lend.
            if !self.ipc.locks[l].waiters.is_empty() {
                self.pi_boost(l, cpu);
            }
            self.syscall_exit(c, cpu);
        }
    }

    /// A wait on `ch` takes a banked message; on a bounded channel, a read that leaves
    /// it at most `wake_at` full wakes every blocked writer (they retry their write).
    fn take_token(&mut self, c: TaskId, ch: usize, cpu: usize) {
        let (stamp, writers) = self.ipc.chans[ch].take(self.now);
        self.tasks[c].msg_stamp = stamp;
        for w in writers {
            self.try_to_wake_up(w, cpu, Some(c), true);
        }
    }

    /// The lock word of mutex `l` moves to this CPU (the atomic on it).
    fn touch_lock_word(&mut self, c: TaskId, cpu: usize, l: usize) {
        if let Some(from) = self.ipc.locks[l].write_word(cpu) {
            let ns = self.line_latency(cpu, from) as Ns;
            self.tasks[c].overhead_ns += ns;
        }
    }

    /// The caller blocks inside its system call, paying the call's exit when it runs
    /// again.
    fn block_in_call(&mut self, c: TaskId, cpu: usize) {
        let exit = self.path_ns(cpu, cost!(self, kernel.syscall_exit_ns));
        self.block(c, cpu, TaskState::Blocked, exit);
    }
}
