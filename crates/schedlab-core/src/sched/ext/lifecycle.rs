//! A sched_ext scheduler's life: loading it, the watchdog, ejection back to fair, and
//! the result's figures (the class's overview is mod.rs).

use crate::ext::{SCX_DSP_DFL_MAX_BATCH, SCX_WATCHDOG_MAX_TIMEOUT};
use crate::sched::class::EnqueueFlags;
use crate::state::scx::ScxOp;
use crate::state::task::TaskState;
use crate::state::Simulator;
use crate::time::Ns;

impl Simulator {
    /// Loads the scenario's sched_ext scheduler (scx_enable()): `ops.init()`, then every
    /// task of a fair policy (or SCHED_EXT only, with SCX_OPS_SWITCH_PARTIAL) joins the
    /// class as it starts. Refused before 6.12, which has no sched_ext.
    pub(crate) fn setup_sched_ext(&mut self, spec: &crate::scenario::SchedExtSpec) -> Result<(), crate::error::ScenarioError> {
        use crate::error::ScenarioError;
        let ops = crate::ext::load(spec, self.k.version, self.m.nr_cpus())?;
        let mut flags = ops.flags();
        flags.switch_partial |= spec.switch_partial;
        self.scx.enabled = true;
        self.scx.switched_all = !flags.switch_partial;
        self.scx.name = ops.name().to_string();
        self.scx.max_batch = if ops.dispatch_max_batch() == 0 { SCX_DSP_DFL_MAX_BATCH } else { ops.dispatch_max_batch() };
        self.scx.builtin_idle = !ops.has_update_idle() || flags.keep_builtin_idle;
        self.scx.flags = flags;
        let timeout_ms = ops.timeout_ms();
        if timeout_ms * 1_000_000 > SCX_WATCHDOG_MAX_TIMEOUT {
            return Err(ScenarioError::new("kernel.sched_ext.scheduler", format!("{}: timeout_ms {timeout_ms} above 30000 (E2BIG)", spec.scheduler)));
        }
        self.scx.timeout = if timeout_ms == 0 { SCX_WATCHDOG_MAX_TIMEOUT } else { timeout_ms * 1_000_000 };
        self.scx.ops = Some(ops);
        // At enable every online CPU starts idle.
        self.scx.idle_cpus = self.m.all_cpus();
        self.scx.idle_smt = self.m.all_cpus();
        self.scx.self_kick = vec![None; self.m.nr_cpus()];
        let r = self.scx_call(ScxOp::Other(0), "init", |ops, k| ops.init(k));
        if let Some(Err(e)) = r {
            return Err(ScenarioError::new("kernel.sched_ext.scheduler", format!("{}: ops.init() failed: {e}", spec.scheduler)));
        }
        self.arm_scx_watchdog(self.now + self.scx.timeout / 2);
        Ok(())
    }

    pub(super) fn arm_scx_watchdog(&mut self, at: Ns) {
        let key = self.timers.hr.start(0, at, 0, crate::timers::hrtimer::HrtimerFn::ScxWatchdog);
        self.push_hrtimer_event(key);
    }

    /// The watchdog's pass (scx_watchdog_workfn() / check_rq_for_timeouts()) or the
    /// disable work an error queued: a runnable task of the class that has waited more
    /// than `timeout_ms` since it became runnable ejects the scheduler
    /// (SCX_EXIT_ERROR_STALL).
    pub(crate) fn scx_watchdog(&mut self, _cpu: usize) {
        if !self.scx.enabled {
            return;
        }
        if let Some(exit) = self.scx.disable_pending.take() {
            self.scx_disable(exit);
            return;
        }
        let now = self.now;
        let stalled = self.tasks.iter().enumerate().find(|(p, t)| {
            t.sched.scx && t.state == TaskState::Runnable && self.rqs[t.cpu].curr != Some(*p) && now > self.scx.get(*p).runnable_at + self.scx.timeout
        });
        if let Some((p, t)) = stalled {
            let waited = (now - self.scx.get(p).runnable_at) as f64 / 1e9;
            let msg = format!("{} [{}] failed to run for {waited:.3} s", t.stats.name, p + 1);
            self.scx_disable(crate::state::scx::ScxExit { kind: 1026, at: now, msg, disabled_at: now });
            return;
        }
        self.arm_scx_watchdog(now + self.scx.timeout / 2);
    }

    /// scx_disable_workfn(): the scheduler is gone and every task of the class goes back
    /// to the fair class, as the kernel does; the run goes on. A running task is moved
    /// when its CPU, rescheduled now, puts it (`put_prev_task_scx()`).
    pub(super) fn scx_disable(&mut self, mut exit: crate::state::scx::ScxExit) {
        self.scx.ops = None;
        self.scx.enabled = false;
        self.scx.switched_all = false;
        let now = self.now;
        for p in 0..self.tasks.len() {
            if !self.tasks[p].sched.scx {
                continue;
            }
            let cpu = self.tasks[p].cpu;
            match self.tasks[p].state {
                TaskState::Running => self.resched_curr(cpu, 0),
                TaskState::Runnable => {
                    self.dequeue_task_scx(cpu, p, true);
                    self.tasks[p].sched.scx = false;
                    self.activate_task(cpu, p, EnqueueFlags { moved_from: Some(cpu), ..EnqueueFlags::NONE });
                    self.wakeup_preempt(cpu, p, 0);
                }
                _ => self.tasks[p].sched.scx = false,
            }
        }
        exit.disabled_at = now;
        self.scx.exit = Some(exit);
    }

    /// The bpf_timer of the scheduler fired on `cpu`.
    pub(crate) fn scx_timer_fire(&mut self, cpu: usize) {
        self.scx_call(ScxOp::Other(cpu), "timer", |ops, k| ops.timer(k));
    }

    /// scx_bpf_error(): the first error is kept for the result.
    /// The scheduler is ejected once the current path ends (the kernel's irq_work and
    /// helper kthread: scx_vexit() then scx_disable_workfn()).
    pub(super) fn scx_error(&mut self, msg: String) {
        if self.scx.disable_pending.is_some() || self.scx.exit.is_some() {
            return;
        }
        self.scx.disable_pending = Some(crate::state::scx::ScxExit { kind: 1024, at: self.now, msg, disabled_at: 0 });
        let at = self.now + 1;
        self.arm_scx_watchdog(at);
    }

    /// The class's figures for the result's summary (`scx_*`) and its warnings, only in
    /// runs with a scheduler loaded.
    pub(crate) fn scx_summary(&self) -> Vec<(String, f64)> {
        if !self.scx.enabled && self.scx.exit.is_none() {
            return Vec::new();
        }
        let c = &self.scx.counters;
        let mut out: Vec<(String, f64)> = [
            ("scx_select_cpu", c.select_cpu),
            ("scx_enqueue", c.enqueue),
            ("scx_dispatch", c.dispatch),
            ("scx_dequeue", c.dequeue),
            ("scx_direct_dispatch", c.direct_dispatch),
            ("scx_dispatched", c.dispatched),
            ("scx_keep_prev", c.keep_prev),
            ("scx_keep_last", c.keep_last),
            ("scx_dispatch_loops_exhausted", c.dispatch_loops_exhausted),
            ("scx_ev_select_cpu_fallback", c.select_cpu_fallback),
            ("scx_dispatch_bad_cpu", c.dispatch_bad_cpu),
            ("scx_ev_refill_slice_dfl", c.enq_slice_dfl),
            ("scx_kicks", c.kicks),
            ("scx_kick_preempts", c.kick_preempts),
            ("scx_cpu_release", c.cpu_release),
            ("scx_cpu_acquire", c.cpu_acquire),
            ("scx_slice_expired", c.slice_expired),
            ("scx_exit_kind", self.scx.exit.as_ref().map_or(0, |x| x.kind as u64)),
        ]
        .iter()
        .map(|&(k, v)| (k.to_string(), v as f64))
        .collect();
        out.push(("scx_global_dsq_inserted".into(), self.scx.global.inserted as f64));
        for (id, q) in &self.scx.user {
            out.push((format!("scx_dsq_{id}_inserted"), q.inserted as f64));
            out.push((format!("scx_dsq_{id}_max_queued"), q.max_queued as f64));
        }
        for (name, n) in &self.scx.op_calls {
            out.push((format!("scx_ops_{name}"), *n as f64));
        }
        out
    }

    /// The warning a scheduler's error leaves in the result.
    pub(crate) fn scx_warnings(&self) -> Vec<String> {
        match &self.scx.exit {
            Some(x) => vec![format!(
                "sched_ext scheduler '{}' was ejected at {:.6} s ({}, raised at {:.6} s): {}; its tasks ran under the fair class from then on",
                self.scx.name,
                x.disabled_at as f64 / 1e9,
                if x.kind == 1026 { "SCX_EXIT_ERROR_STALL" } else { "SCX_EXIT_ERROR" },
                x.at as f64 / 1e9,
                x.msg
            )],
            None => Vec::new(),
        }
    }
}
