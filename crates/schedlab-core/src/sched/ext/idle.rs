//! The ext class's built-in idle tracking (the idle masks and claims),
//! scx_select_cpu_dfl() and kicks (the class's overview is mod.rs).

use crate::ext::{KickFlags, WakeFlags};
use crate::state::scx::ScxOp;
use crate::state::task::{SchedClass, TaskId};
use crate::state::Simulator;

impl Simulator {
    /// scx_select_cpu_dfl(): an idle CPU for `p` near `prev` (claimed), else `prev`:
    /// (cpu, found idle). 6.13+: the waker's CPU for a sync wakeup sharing prev's LLC,
    /// then a wholly idle core (prev's, its LLC's, its node's, any), prev if idle, an idle
    /// CPU in prev's LLC, node, anywhere; 6.12 has no LLC and node steps.
    pub(super) fn scx_select_cpu_dfl(&mut self, p: TaskId, prev: usize, wf: WakeFlags) -> (usize, bool) {
        if !self.scx.builtin_idle {
            self.scx_error("built-in idle tracking is disabled".into());
            return (prev, false);
        }
        let allowed = *self.tasks[p].cpus_allowed;
        let topo = self.k.version >= crate::kernel::KernelVersion::new(6, 13);
        let waker = self.scx.waker_cpu;
        if wf.sync && waker < self.m.nr_cpus() {
            if topo && allowed.test(prev) && self.m.share_llc(waker, prev) && self.scx_claim(prev) {
                return (prev, true);
            }
            if !self.scx.idle_cpus.is_empty() && self.rqs[waker].scx.local.is_empty() && allowed.test(waker) {
                return (waker, true);
            }
        }
        let llc = *self.m.llc_mask(prev);
        let node = self.m.node_span[self.m.cpus[prev].node];
        if self.has_smt {
            if allowed.test(prev) && self.scx.idle_smt.test(prev) && self.scx_claim(prev) {
                return (prev, true);
            }
            let smt = self.scx.idle_smt.and(&allowed);
            if let Some(c) = self.scx_claim_nearest(&smt, topo.then_some((&llc, &node)), prev) {
                return (c, true);
            }
        }
        if allowed.test(prev) && self.scx_claim(prev) {
            return (prev, true);
        }
        let idle = self.scx.idle_cpus.and(&allowed);
        match self.scx_claim_nearest(&idle, topo.then_some((&llc, &node)), prev) {
            Some(c) => (c, true),
            None => (prev, false),
        }
    }

    /// A CPU of `mask` claimed nearest `prev`: in prev's LLC, then its node (6.13+:
    /// `scopes`), then anywhere.
    fn scx_claim_nearest(
        &mut self,
        mask: &crate::cpumask::CpuMask,
        scopes: Option<(&crate::cpumask::CpuMask, &crate::cpumask::CpuMask)>,
        prev: usize,
    ) -> Option<usize> {
        if let Some((llc, node)) = scopes {
            for scope in [llc, node] {
                if let Some(c) = self.scx_claim_in(&mask.and(scope), prev) {
                    return Some(c);
                }
            }
        }
        self.scx_claim_in(mask, prev)
    }

    /// The first CPU of `mask` after `prev` (wrapping) that could be claimed.
    pub(super) fn scx_claim_in(&mut self, mask: &crate::cpumask::CpuMask, prev: usize) -> Option<usize> {
        let c = mask.iter_wrap(prev + 1).next()?;
        self.scx_claim(c).then_some(c)
    }

    /// scx_idle_test_and_clear_cpu(): reserves idle `cpu` (its core leaves the idle-core
    /// mask).
    pub(super) fn scx_claim(&mut self, cpu: usize) -> bool {
        if !self.scx.idle_cpus.test(cpu) {
            return false;
        }
        self.scx.idle_cpus.clear(cpu);
        for &s in self.m.smt_siblings(cpu) {
            self.scx.idle_smt.clear(s);
        }
        true
    }

    /// scx_update_idle() from the idle class: `cpu` enters or leaves idle (the masks,
    /// then `ops.update_idle()` on a change).
    #[inline]
    pub(crate) fn scx_update_idle(&mut self, cpu: usize, idle: bool) {
        if !self.scx.enabled {
            return;
        }
        let was = self.scx.idle_cpus.test(cpu);
        if idle {
            self.scx.idle_cpus.set(cpu);
            if self.m.smt_siblings(cpu).iter().all(|&s| self.scx.idle_cpus.test(s)) {
                for &s in self.m.smt_siblings(cpu) {
                    self.scx.idle_smt.set(s);
                }
            }
        } else {
            self.scx.idle_cpus.clear(cpu);
            for &s in self.m.smt_siblings(cpu) {
                self.scx.idle_smt.clear(s);
            }
        }
        if was != idle {
            self.scx_call(ScxOp::Other(cpu), "update_idle", |ops, k| ops.update_idle(k, cpu, idle));
        }
    }

    /// The end of `cpu`'s schedule(): a kick the CPU sent itself during it is sent now.
    pub(crate) fn scx_schedule_done(&mut self, cpu: usize) {
        if let Some(f) = self.scx.self_kick.get_mut(cpu).and_then(Option::take) {
            self.scx_kick(cpu, cpu, f);
        }
    }

    /// kick_one_cpu(): a preempting kick ends the slice of the class's task running on
    /// `cpu`; an idle kick wakes only an idle CPU; then `cpu` reschedules.
    pub(super) fn scx_kick(&mut self, from: usize, cpu: usize, f: KickFlags) {
        self.scx.counters.kicks += 1;
        let curr = self.rqs[cpu].curr;
        if f.idle && curr.is_some() {
            return;
        }
        if let Some(c) = curr.filter(|&c| self.class_of(c) == SchedClass::Ext) {
            if f.preempt {
                self.scx.task(c).slice = 0;
                self.scx.counters.kick_preempts += 1;
            }
        } else if curr.is_some() {
            // The CPU runs a higher class: it will not pick the class's tasks now.
            return;
        }
        self.resched_curr(cpu, from);
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::WakeFlags;
    use crate::scenario::Scenario;
    use crate::state::Simulator;

    /// A 2-core, 2-thread machine with scx_simple loaded and a task that starts later.
    fn smt_machine() -> Simulator {
        let toml = "[machine]\ntopo = { cores = 2, smt = 2 }\n[kernel]\nprofile = \"6.12\"\nsched_ext = { scheduler = \"simple\" }\n\
                    [[tasks]]\nname = \"t\"\nstart = \"1s\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 2\n";
        let s = Scenario::from_toml_str(toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
        Simulator::new(&s, 1, false).unwrap_or_else(|e| panic!("{e}"))
    }

    /// scx_select_cpu_dfl() takes a wholly idle core before an idle SMT sibling of a busy
    /// CPU, even the task's own prev; with no idle core left, prev if idle.
    #[test]
    fn the_default_pick_prefers_an_idle_core_to_an_idle_sibling() {
        let mut sim = smt_machine();
        sim.scx_update_idle(0, false);
        let sibling = sim.m.smt_siblings(0).iter().copied().find(|&c| c != 0).expect("SMT");
        let wake = WakeFlags { ttwu: true, ..Default::default() };
        let (cpu, idle) = sim.scx_select_cpu_dfl(0, sibling, wake);
        assert!(idle && !sim.m.smt_siblings(0).contains(&cpu), "picked CPU {cpu}, on the busy core");
        // The claim took the other core out of the idle-core mask: now prev itself.
        assert_eq!(sim.scx_select_cpu_dfl(0, sibling, wake), (sibling, true));
        // Nothing idle but one claimed CPU's sibling: that one, then nothing.
        let last = sim.scx.idle_cpus.first().expect("one idle CPU left");
        assert_eq!(sim.scx_select_cpu_dfl(0, sibling, wake), (last, true));
        assert_eq!(sim.scx_select_cpu_dfl(0, sibling, wake), (sibling, false));
    }
}
