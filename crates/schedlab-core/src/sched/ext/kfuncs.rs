//! The kfuncs a sched_ext policy calls: scx_bpf_* and the task fields BPF reads and
//! writes (the class's overview is mod.rs).

use crate::ext::{DsqId, EnqFlags, Kfuncs, KickFlags, WakeFlags};
use crate::state::scx::ScxOp;
use crate::state::task::TaskId;
use crate::state::Simulator;
use crate::time::Ns;

/// The kfuncs as a scheduler sees them: the simulator, with the op being run.
pub(crate) struct ScxKfuncs<'a> {
    pub(super) sim: &'a mut Simulator,
}

impl Kfuncs for ScxKfuncs<'_> {
    fn now(&self) -> Ns {
        self.sim.now
    }

    fn nr_cpus(&self) -> usize {
        self.sim.m.nr_cpus()
    }

    fn this_cpu(&self) -> usize {
        self.sim.scx.op.map_or(0, ScxOp::cpu)
    }

    fn create_dsq(&mut self, id: u64) -> Result<(), String> {
        if id >> 63 != 0 {
            return Err(format!("DSQ id 0x{id:x} has the built-in flag"));
        }
        if self.sim.scx.user.contains_key(&id) {
            return Err(format!("DSQ 0x{id:x} exists"));
        }
        self.sim.scx.user.insert(id, Default::default());
        Ok(())
    }

    fn dsq_insert(&mut self, p: TaskId, dsq: DsqId, slice: Ns, flags: EnqFlags) {
        self.insert(p, dsq, slice, EnqFlags { vtime: false, ..flags });
    }

    fn dsq_insert_vtime(&mut self, p: TaskId, dsq: DsqId, slice: Ns, vtime: u64, flags: EnqFlags) {
        self.sim.scx.task(p).dsq_vtime = vtime;
        self.insert(p, dsq, slice, EnqFlags { vtime: true, ..flags });
    }

    fn dsq_move_to_local(&mut self, dsq: u64) -> bool {
        match self.sim.scx.op {
            Some(ScxOp::Dispatch(cpu)) => self.sim.scx_move_to_local(cpu, dsq),
            _ => {
                self.sim.scx_error("scx_bpf_dsq_move_to_local() outside ops.dispatch()".into());
                false
            }
        }
    }

    fn dsq_nr_queued(&self, dsq: DsqId) -> usize {
        let s = &self.sim.scx;
        match dsq {
            DsqId::Local => self.sim.rqs[self.this_cpu()].scx.local.len(),
            DsqId::LocalOn(c) => self.sim.rqs.get(c).map_or(0, |rq| rq.scx.local.len()),
            DsqId::Global => s.global.len(),
            DsqId::User(id) => s.user.get(&id).map_or(0, |q| q.len()),
        }
    }

    fn dispatch_nr_slots(&self) -> usize {
        match self.sim.scx.op {
            Some(ScxOp::Dispatch(_)) => self.sim.scx.max_batch.saturating_sub(self.sim.scx.dsp_buf.len()),
            _ => 0,
        }
    }

    fn kick_cpu(&mut self, cpu: usize, flags: KickFlags) {
        if cpu >= self.sim.m.nr_cpus() {
            self.sim.scx_error(format!("scx_bpf_kick_cpu() of invalid CPU {cpu}"));
            return;
        }
        let from = self.this_cpu();
        if cpu == from && self.sim.scx.in_balance == Some(cpu) {
            // Sent by the irq_work once this CPU's schedule() drops the rq lock.
            let k = &mut self.sim.scx.self_kick[cpu];
            let prev = k.unwrap_or_default();
            *k = Some(KickFlags { idle: prev.idle && flags.idle, preempt: prev.preempt || flags.preempt });
            return;
        }
        self.sim.scx_kick(from, cpu, flags);
    }

    fn select_cpu_dfl(&mut self, p: TaskId, prev_cpu: usize, wake_flags: WakeFlags) -> (usize, bool) {
        self.sim.scx_select_cpu_dfl(p, prev_cpu, wake_flags)
    }

    fn task_running(&self, p: TaskId) -> bool {
        self.sim.rqs[self.sim.tasks[p].cpu].curr == Some(p)
    }

    fn task_cpu(&self, p: TaskId) -> usize {
        self.sim.tasks[p].cpu
    }

    fn task_allowed_on(&self, p: TaskId, cpu: usize) -> bool {
        self.sim.tasks[p].cpus_allowed.test(cpu)
    }

    fn task_weight(&self, p: TaskId) -> u64 {
        self.sim.scx.get(p).weight
    }

    fn task_vtime(&self, p: TaskId) -> u64 {
        self.sim.scx.get(p).dsq_vtime
    }

    fn set_task_vtime(&mut self, p: TaskId, v: u64) {
        self.sim.scx.task(p).dsq_vtime = v;
    }

    fn task_slice(&self, p: TaskId) -> Ns {
        self.sim.scx.get(p).slice
    }

    fn timer_start(&mut self, delay: Ns) {
        let cpu = self.this_cpu();
        let at = self.sim.now + delay.max(1);
        let key = self.sim.timers.hr.start(cpu, at, 0, crate::timers::hrtimer::HrtimerFn::ScxTimer);
        self.sim.push_hrtimer_event(key);
    }

    fn error(&mut self, msg: String) {
        self.sim.scx_error(msg);
    }
}

impl ScxKfuncs<'_> {
    /// scx_bpf_dsq_insert[_vtime]()'s common part: the slice (0 keeps what is left, at
    /// least 1 ns), then a direct dispatch from select_cpu / enqueue or a slot of the
    /// dispatch buffer.
    fn insert(&mut self, p: TaskId, dsq: DsqId, slice: Ns, flags: EnqFlags) {
        let e = self.sim.scx.task(p);
        e.slice = if slice != 0 { slice } else { e.slice.max(1) };
        match self.sim.scx.op {
            Some(ScxOp::SelectCpu(_, q)) | Some(ScxOp::Enqueue(_, q)) => {
                if q != p {
                    self.sim.scx_error(format!("insert of task {p} from an op of task {q}"));
                    return;
                }
                let e = self.sim.scx.task(p);
                if e.ddsp.is_some() {
                    self.sim.scx_error("task already direct-dispatched".into());
                    return;
                }
                e.ddsp = Some((dsq, flags));
            }
            Some(ScxOp::Dispatch(_)) => {
                if self.sim.scx.dsp_buf.len() >= self.sim.scx.max_batch {
                    self.sim.scx_error(format!("dispatch buffer overflow ({} slots)", self.sim.scx.max_batch));
                    return;
                }
                self.sim.scx.dsp_buf.push((p, dsq, flags));
            }
            _ => self.sim.scx_error("DSQ insert outside ops.select_cpu(), ops.enqueue() and ops.dispatch()".into()),
        }
    }
}
