//! The steps of a task's program (`program = [...]` in a scenario): what each system call
//! or user action a workload makes takes as parameters. The engine compiles them into
//! `state::task::Insn` and runs them in `sched/program.rs`.

use serde::{Deserialize, Serialize};

use super::topo_spec::one;
use super::{Duration, MemSpec, SchedAttrSpec};

/// One step of a task's program.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum OpSpec {
    /// Compute for this long at capacity 1024.
    Run(Duration),
    /// Compute for an exponentially distributed time with this mean.
    RunExp(Duration),
    /// Spin until this much wall-clock time has passed since the step began, however
    /// much work that is and whether or not the task was preempted (rt-app `runtime`).
    RunFor(Duration),
    /// Sleep (a timer wakes the task).
    Sleep(Duration),
    /// Sleep in poll()/select() with this timeout and no file descriptors: an hrtimer
    /// whose slack is select_estimate_accuracy()'s (0.1 % of the timeout, 0.5 % at
    /// nice > 0, at most 100 ms, at least the task's timer slack).
    Poll(Duration),
    /// Sleep for an exponentially distributed time with this mean.
    SleepExp(Duration),
    /// Block in schedule_timeout(): a wheel timer (jiffy granularity) wakes the task.
    SleepTimeout(Duration),
    /// Arm (or re-arm) a named timer_list of this task: delayed work whose expiry
    /// signals a channel (`{ mod_timer = { timer = "w", delay = "1s", signal = "@kw" } }`).
    ModTimer(ModTimerSpec),
    /// Cancel a named timer of this task (timer_delete).
    DelTimer(String),
    /// Block on a channel with a timeout (wait_event_timeout(): a schedule_timeout()
    /// wheel timer armed while waiting, deleted on an early wakeup; on timeout the
    /// task waits again).
    WaitTimeout(WaitTimeoutSpec),
    /// Sleep until the task's next period boundary (clock_nanosleep(TIMER_ABSTIME), as
    /// rt-app's `timer` event): work delayed past a boundary is not made up by a shorter
    /// period in "relative" mode, while "absolute" (default) keeps the grid and lets
    /// late periods pile up.
    Periodic(PeriodicSpec),
    /// The timer enqueue micro-benchmark: `reps` times mod_timer() then timer_delete()
    /// of one non-pinned timer, in kernel context.
    TimerBench(TimerBenchSpec),
    /// Block until the named channel is signalled (pipe read / futex wait).
    Wait(String),
    /// Signal the named channel, waking one waiter (or banking a token).
    Signal(String),
    /// pthread_cond_wait(): release `mutex` (if given), block until the condition
    /// variable is signalled or broadcast (a signal nobody waits for is lost), then take
    /// `mutex` again.
    CondWait(CondWaitSpec),
    /// pthread_cond_signal(): wake one waiter of the condition variable, if any.
    CondSignal(String),
    /// pthread_cond_broadcast(): wake every waiter of the condition variable.
    CondBroadcast(String),
    /// Rendezvous: block until every task whose program uses this barrier has reached
    /// it (rt-app `barrier`).
    Barrier(String),
    /// sched_yield().
    Yield,
    /// sched_setaffinity() of the task itself to a cpulist ("0-3,8"); a task running
    /// outside the new mask moves at once.
    SetAffinity(String),
    /// Move the task itself into a group ("" or "root": the root group), as writing its
    /// tid to a cgroup's `tasks` file does (sched_move_task()).
    SetGroup(String),
    /// Write one message to a bounded channel (a pipe or socket write): blocks while
    /// the channel holds `capacity` unread messages (`{ send = { channel = "r0",
    /// capacity = 640, wake_at = 600 } }`).
    Send(SendSpec),
    /// futex-style post (FUTEX_WAKE of a flag word): wakes one waiter, or leaves the
    /// flag set for the next wait; posts do not accumulate as signals do.
    Post(String),
    /// Wake every task waiting on the channel (a wake-all of a list of waiters).
    WakeAll(String),
    /// Take the time (gettimeofday): the start of an interval a `record` step measures.
    Mark,
    /// Where a pass of an rt-app phase begins: a line of rt-app's per-activation log
    /// (`schedlab run FILE.json --rtapp-logs DIR`). The rt-app importer puts one at the
    /// head of every phase; it takes no time.
    RtAppPhase,
    /// Record into a named latency histogram the time since the task's last `mark`, or
    /// since the message it last received was sent (`{ record = { histogram = "req",
    /// since = "message" } }`).
    Record(RecordSpec),
    /// Take the named mutex (sleeping if held).
    Lock(String),
    /// Release the named mutex, waking one waiter.
    Unlock(String),
    /// Create tasks from the named template (`[[templates]]`).
    Fork(ForkSpec),
    /// Wait until every child this task forked has exited.
    WaitChildren,
    /// Repeat a body.
    Loop(LoopSpec),
    /// Increment every byte of the per-CPU or per-cid area the task indexes now (rseq).
    TouchArea(TouchAreaSpec),
    /// Touch pages of a shared anonymous region, faulting in (swapping in) absent ones.
    TouchPages(TouchPagesSpec),
    /// MADV_PAGEOUT the region (or reclaim it as kswapd would).
    PageOut(PageOutSpec),
    /// rt-app `mem`: memset() `bytes` of the thread's buffer, run as CPU work of an
    /// estimated length (kept as `mem` for export).
    Mem(MemSpec),
    /// rt-app `iorun`: write() `bytes` to /dev/null in `buffer`-sized writes, run as CPU
    /// work of an estimated length (kept as `iorun` for export).
    Iorun(MemSpec),
    /// rt-app's per-phase scheduling attributes (policy, priority, deadline, uclamp):
    /// kept for export, not modeled (the task keeps its own; issues 34, 35).
    SetSchedAttr(SchedAttrSpec),
    /// End the task.
    Exit,
}

/// `{ send = { channel = "r0", capacity = 640, wake_at = 600 } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendSpec {
    /// Channel written (every `send` to one channel must give the same capacity).
    pub channel: String,
    /// Unread messages the channel holds before a writer blocks.
    pub capacity: u64,
    /// A read that leaves at most this many unread messages wakes the blocked writers
    /// (default capacity - 1: any freed slot). A pipe frees whole pages, a socket
    /// wakes writers when its send buffer is three quarters free.
    pub wake_at: Option<u64>,
}

/// `{ record = { histogram = "request", since = "mark" } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordSpec {
    /// Histogram name (reported under `histograms`).
    pub histogram: String,
    /// Start of the interval: the task's last `mark` (default) or the send time of the
    /// message it last received.
    #[serde(default)]
    pub since: RecordSince,
}

/// Where a recorded interval starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordSince {
    /// The task's last `mark` step.
    #[default]
    Mark,
    /// When the message the task last took from a channel was sent.
    Message,
}

/// `{ mod_timer = { timer = "vmstat", delay = "1s", pinned = true, deferrable = true, signal = "@work" } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModTimerSpec {
    /// Timer name, private to the task.
    pub timer: String,
    /// Expiry from now (rounded up to jiffies).
    pub delay: Duration,
    /// TIMER_PINNED: expires on the CPU that armed it.
    #[serde(default)]
    pub pinned: bool,
    /// TIMER_DEFERRABLE: never wakes an idle CPU.
    #[serde(default)]
    pub deferrable: bool,
    /// Channel signalled at expiry (a kworker waits on it); none: the callback only runs
    /// (as TCP's retransmit and delayed-ACK handlers that find nothing pending).
    #[serde(default)]
    pub signal: Option<String>,
}

/// A background kernel timer that re-arms itself from its callback, like a driver
/// watchdog or a periodic housekeeping timer (`[[timers]]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelTimerSpec {
    /// Name.
    pub name: String,
    /// Re-arm period (rounded up to jiffies).
    pub period: Duration,
    /// One timer per CPU, first armed there; else one timer, first armed on CPU 0.
    #[serde(default)]
    pub per_cpu: bool,
    /// TIMER_PINNED: it always expires on the CPU it was first armed on (per-CPU
    /// housekeeping armed with add_timer_on()); else a global timer, re-armed wherever
    /// its callback runs (and pushed off an idle CPU before 6.9).
    #[serde(default)]
    pub pinned: bool,
    /// TIMER_DEFERRABLE.
    #[serde(default)]
    pub deferrable: bool,
    /// CPU time of the callback.
    #[serde(default)]
    pub work: Duration,
}

/// `{ cond_wait = { cond = "queue", mutex = "m" } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CondWaitSpec {
    /// Condition variable (its own namespace).
    pub cond: String,
    /// Mutex released while waiting and taken again after.
    #[serde(default)]
    pub mutex: Option<String>,
}

/// `{ wait_timeout = { channel = "req", timeout = "10ms" } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitTimeoutSpec {
    /// Channel waited on.
    pub channel: String,
    /// Timeout of each wait (rounded up to jiffies).
    pub timeout: Duration,
}

/// `{ periodic = { period = "16667us", mode = "absolute" } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeriodicSpec {
    /// Period.
    pub period: Duration,
    /// "absolute" (the next boundary is the last one plus the period) or "relative"
    /// (a late task restarts the grid from now).
    #[serde(default)]
    pub mode: PeriodicMode,
    /// rt-app's `timer` exactly (src/rt-app.c, rtapp_timer): the grid starts at the
    /// task's start, not at its first periodic step, and a late period does not sleep
    /// ("relative": the grid restarts at the late time).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rt_app: bool,
}

/// How a periodic step treats lateness (rt-app's timer `mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PeriodicMode {
    /// Keep the grid: a late period's work starts at once.
    #[default]
    Absolute,
    /// Restart the grid from now when late.
    Relative,
}

/// `{ timer_bench = { reps = 1000, delay = "100ms" } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimerBenchSpec {
    /// Enqueue/dequeue pairs.
    pub reps: u64,
    /// Expiry of each enqueue (never reached: each timer is deleted right away).
    pub delay: Duration,
}

/// `{ touch_area = { bytes = 16384, index = "mm_cid", record = true } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TouchAreaSpec {
    /// Bytes of the area.
    pub bytes: u64,
    /// "cpu_id" (rseq cpu_id) or "mm_cid" (rseq concurrency id; falls back to cpu_id
    /// when the kernel profile has no mm_cid).
    pub index: AreaIndex,
    /// Record the pass time in the `touch_area` histogram.
    #[serde(default)]
    pub record: bool,
}

/// How user space indexes its per-CPU data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AreaIndex {
    /// rseq cpu_id.
    CpuId,
    /// rseq mm_cid.
    MmCid,
}

/// `{ touch_pages = { region = "buf", pages = 256 } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TouchPagesSpec {
    /// Region name (created at first use with this many pages).
    pub region: String,
    /// Pages touched, from the start of the region.
    pub pages: u64,
    /// Writes (dirty the PTEs) rather than reads.
    #[serde(default)]
    pub write: bool,
}

/// `{ page_out = { region = "buf" } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageOutSpec {
    /// Region name.
    pub region: String,
    /// Other processes also mapping every page (each ran on one CPU, round robin).
    #[serde(default)]
    pub extra_mappers: u32,
    /// Reclaim as kswapd/direct reclaim (32-page batches) instead of MADV_PAGEOUT, which
    /// skips pages mapped by more than one process.
    #[serde(default)]
    pub kswapd: bool,
}

/// `{ fork = { template = "cc1", count = 1 } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForkSpec {
    /// Template name.
    pub template: String,
    /// How many children.
    #[serde(default = "one")]
    pub count: usize,
}

/// `{ loop = { count = 10, body = [...] } }`; no count = forever.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopSpec {
    /// Iterations (absent = until the run ends).
    pub count: Option<u64>,
    /// The repeated steps.
    pub body: Vec<OpSpec>,
}
