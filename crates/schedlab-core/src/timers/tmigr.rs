//! The timer migration hierarchy of the pull model (6.9+).
//!
//! Mirrors: kernel/time/timer_migration.c: tmigr_init()/tmigr_setup_groups() (the
//! shape), tmigr_cpu_activate()/tmigr_active_up(), tmigr_cpu_deactivate()/
//! tmigr_inactive_up() with tmigr_update_events(), tmigr_cpu_new_timer(),
//! tmigr_requires_handle_remote(), tmigr_handle_remote() and tmigr_quick_check().
//! Model: the same groups of 8 children per NUMA node below the cross-node level, the
//! same (active, migrator) state per group and the same timerqueues of child events
//! with their lazily cleaned "ignore" flags. The simulation is single-threaded, so
//! the cmpxchg/seq protocol collapses to plain updates; its cost is charged by the
//! caller from the lines each operation touched (`TmigrCost`).
//!
//! ```text
//!  2 nodes x 24 CPUs (the kernel's own example):
//!  LVL 2                     [GRP2:0]
//!  LVL 1          [GRP1:0]              [GRP1:1]
//!  LVL 0   [0-7] [8-15] [16-23]   [24-31] [32-39] [40-47]
//! ```

use std::collections::BTreeSet;

use crate::time::Ns;

/// Children per group (TMIGR_CHILDREN_PER_GROUP).
pub const TMIGR_CHILDREN_PER_GROUP: usize = 8;
/// No expiry (KTIME_MAX).
pub const KTIME_MAX: Ns = Ns::MAX;

/// Returns ceil(log2(n)) (order_base_2), 0 for n <= 1.
fn order_base_2(n: usize) -> u32 {
    if n <= 1 {
        0
    } else {
        usize::BITS - (n - 1).leading_zeros()
    }
}

/// The hierarchy's size as tmigr_init() computes it: (levels, crossnode level).
pub fn hierarchy_levels(ncpus: usize, nnodes: usize) -> (u32, u32) {
    let bits = TMIGR_CHILDREN_PER_GROUP.ilog2();
    let cpus_per_node = ncpus.div_ceil(nnodes.max(1));
    let cpulvl = order_base_2(cpus_per_node).div_ceil(bits);
    let nodelvl = order_base_2(nnodes).div_ceil(bits);
    (cpulvl + nodelvl, cpulvl)
}

/// A child's event as queued in its parent group (struct tmigr_event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmigrEvent {
    /// Expiry (KTIME_MAX = none).
    pub expires: Ns,
    /// The child is active again: the event is stale and is dropped lazily.
    pub ignore: bool,
    /// CPU whose global timers this event stands for.
    pub cpu: usize,
    /// Expiry under which it sits in the parent's timerqueue (KTIME_MAX = not queued).
    queued_at: Ns,
}

impl TmigrEvent {
    fn new(cpu: usize) -> Self {
        TmigrEvent { expires: KTIME_MAX, ignore: true, cpu, queued_at: KTIME_MAX }
    }
}

/// What a child of a group is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Child {
    /// A CPU (level-0 groups).
    Cpu(usize),
    /// A group of the level below.
    Group(usize),
}

/// One group of the hierarchy (struct tmigr_group).
#[derive(Clone, Debug)]
pub struct TmigrGroup {
    /// Level (0 = groups of CPUs).
    pub level: u32,
    /// NUMA node, None at and above the cross-node level (NUMA_NO_NODE).
    pub numa_node: Option<usize>,
    /// Parent group.
    pub parent: Option<usize>,
    /// Children by groupmask bit (None: a bit reserved for an old top level).
    pub children: Vec<Option<Child>>,
    /// Bitmask of active children (migr_state.active).
    pub active: u8,
    /// Bit of the migrator child (migr_state.migrator); None = TMIGR_NONE.
    pub migrator: Option<u8>,
    /// This group's bit in its parent (groupmask).
    pub groupmask: u8,
    /// Events of idle children, ordered by expiry: (expiry, child bit).
    events: BTreeSet<(Ns, u8)>,
    /// First expiry as last computed under the group lock (may be stale-early, as in
    /// the kernel, until the queue is next cleaned).
    pub next_expiry: Ns,
    /// This group's own event in its parent (groupevt).
    pub groupevt: TmigrEvent,
    /// CPU that last wrote the group's lines (prices the next access).
    pub last_cpu: usize,
}

impl TmigrGroup {
    fn new(level: u32, numa_node: Option<usize>, cpu: usize) -> Self {
        TmigrGroup {
            level,
            numa_node,
            parent: None,
            children: Vec::new(),
            active: 0,
            migrator: None,
            groupmask: 0,
            events: BTreeSet::new(),
            next_expiry: KTIME_MAX,
            groupevt: TmigrEvent::new(cpu),
            last_cpu: cpu,
        }
    }

    /// tmigr_check_migrator(): `childmask` is the migrator or there is none.
    fn handled_by(&self, childmask: u8) -> bool {
        self.migrator.is_none_or(|m| 1 << m == childmask)
    }
}

/// Per-CPU state (struct tmigr_cpu).
#[derive(Clone, Debug)]
pub struct TmigrCpu {
    /// Level-0 group.
    pub group: usize,
    /// Bit in the level-0 group.
    pub groupmask: u8,
    /// The CPU stopped its tick and left the hierarchy's active set.
    pub idle: bool,
    /// When the CPU must wake for global timers: the system's first global event if
    /// it was the last to go idle, KTIME_MAX otherwise.
    pub wakeup: Ns,
    /// This CPU's first global timer, queued in its level-0 group while idle.
    pub cpuevt: TmigrEvent,
    /// Its global timers are being expired by another CPU right now.
    pub remote: bool,
}

/// Lines one hierarchy operation touched, for the caller to price: the CPU that last
/// wrote each group (or tmigr_cpu) line read-modify-written on the way.
#[derive(Clone, Debug, Default)]
pub struct TmigrCost {
    /// Previous writer of each line touched.
    pub lines_from: Vec<usize>,
}

/// The whole hierarchy.
#[derive(Clone, Debug)]
pub struct Tmigr {
    /// Groups in creation order.
    pub groups: Vec<TmigrGroup>,
    /// Per CPU.
    pub cpus: Vec<TmigrCpu>,
    /// Levels built (fewer than `hierarchy_levels` when a level needs only one group).
    pub levels: u32,
    /// Cross-node level (tmigr_crossnode_level).
    pub crossnode_level: u32,
}

/// Walk state of one hierarchy operation (struct tmigr_walk).
struct Walk {
    nextexp: Ns,
    firstexp: Ns,
    remote: bool,
    cpu: usize,
}

impl Tmigr {
    /// Builds the hierarchy as CPUs come online in order (tmigr_setup_groups()): at
    /// each level a CPU joins the newest group of its node that has room; a level above
    /// appears only once a level holds two groups, and the old top becomes child 0 of
    /// the new one (its bit reserved when the new top is created).
    pub fn new(cpu_nodes: &[usize], nnodes: usize) -> Tmigr {
        let n = cpu_nodes.len();
        let (max_levels, crossnode) = hierarchy_levels(n, nnodes);
        let max_levels = max_levels.max(1) as usize;
        let mut t = Tmigr { groups: Vec::new(), cpus: Vec::with_capacity(n), levels: 0, crossnode_level: crossnode };
        let mut by_level: Vec<Vec<usize>> = vec![Vec::new(); max_levels];
        for (cpu, &node) in cpu_nodes.iter().enumerate() {
            // tmigr_get_group() level by level until a connected or lone top group.
            let mut stack = Vec::new();
            loop {
                let lvl = stack.len();
                let want_node = ((lvl as u32) < crossnode).then_some(node);
                let found = by_level[lvl].iter().rev().copied().find(|&g| {
                    let g = &t.groups[g];
                    g.numa_node == want_node && g.children.len() < TMIGR_CHILDREN_PER_GROUP
                });
                let g = found.unwrap_or_else(|| {
                    let mut grp = TmigrGroup::new(lvl as u32, want_node, cpu);
                    if by_level[lvl].is_empty() && lvl > 0 {
                        grp.children.push(None); // bit 0 reserved for the previous top
                    }
                    t.groups.push(grp);
                    by_level[lvl].push(t.groups.len() - 1);
                    t.groups.len() - 1
                });
                stack.push(g);
                let next = stack.len();
                if t.groups[g].parent.is_some() || next == max_levels || (by_level[next].is_empty() && by_level[next - 1].len() == 1) {
                    break;
                }
            }
            // Connect the CPU, then each new child to its parent.
            let bit = t.groups[stack[0]].children.len();
            t.groups[stack[0]].children.push(Some(Child::Cpu(cpu)));
            t.cpus.push(TmigrCpu {
                group: stack[0],
                groupmask: 1 << bit,
                idle: true,
                wakeup: KTIME_MAX,
                cpuevt: TmigrEvent::new(cpu),
                remote: false,
            });
            for w in stack.windows(2) {
                let (child, parent) = (w[0], w[1]);
                if t.groups[child].parent.is_some() {
                    continue;
                }
                let bit = t.groups[parent].children.len();
                t.groups[parent].children.push(Some(Child::Group(child)));
                t.groups[child].parent = Some(parent);
                t.groups[child].groupmask = 1 << bit;
            }
            // A new top level adopts the previous top as its child 0.
            let top = *stack.last().expect("one level at least");
            let lvl = t.groups[top].level as usize;
            if lvl > 0 && by_level[lvl].len() == 1 && t.groups[top].children[0].is_none() {
                let old = by_level[lvl - 1].iter().copied().find(|&g| t.groups[g].parent.is_none() && g != top);
                if let Some(old) = old {
                    t.groups[top].children[0] = Some(Child::Group(old));
                    t.groups[old].parent = Some(top);
                    t.groups[old].groupmask = 1;
                }
            }
        }
        t.levels = by_level.iter().filter(|l| !l.is_empty()).count() as u32;
        // Every CPU comes online active (tmigr_cpu_online()).
        let mut cost = TmigrCost::default();
        for cpu in 0..n {
            t.activate(cpu, &mut cost);
        }
        t
    }

    /// The groups of one level.
    pub fn level_groups(&self, lvl: u32) -> impl Iterator<Item = &TmigrGroup> {
        self.groups.iter().filter(move |g| g.level == lvl)
    }

    fn child(&self, g: usize, bit: u8) -> Child {
        self.groups[g].children[bit as usize].expect("queued child exists")
    }

    fn touch(&mut self, g: usize, cpu: usize, cost: &mut TmigrCost) {
        cost.lines_from.push(self.groups[g].last_cpu);
        self.groups[g].last_cpu = cpu;
    }

    /// Idle exit (tmigr_cpu_activate() / tmigr_active_up()): the CPU is active again;
    /// every group on its way up that had no migrator takes this branch as migrator.
    pub fn activate(&mut self, cpu: usize, cost: &mut TmigrCost) {
        let tc = &mut self.cpus[cpu];
        if !tc.idle {
            return;
        }
        tc.idle = false;
        tc.cpuevt.ignore = true;
        tc.wakeup = KTIME_MAX;
        let (mut g, mut childmask) = (tc.group, tc.groupmask);
        loop {
            self.touch(g, cpu, cost);
            let grp = &mut self.groups[g];
            let walk_done = grp.migrator.is_some();
            grp.active |= childmask;
            if !walk_done {
                grp.migrator = Some(childmask.trailing_zeros() as u8);
            }
            // Lockless: the group's event in its parent becomes stale.
            grp.groupevt.ignore = true;
            match (walk_done, grp.parent) {
                (false, Some(p)) => {
                    childmask = grp.groupmask;
                    g = p;
                }
                _ => break,
            }
        }
    }

    /// Stopping the tick (tmigr_cpu_deactivate()): the CPU leaves the active set, its
    /// first global timer `nextexp` is queued and the migrator role handed over.
    /// Returns what this CPU must wake for: the system's first global event if it was
    /// the last active CPU, else KTIME_MAX.
    pub fn deactivate(&mut self, cpu: usize, nextexp: Ns, cost: &mut TmigrCost) -> Ns {
        debug_assert!(!self.cpus[cpu].idle, "deactivate of an idle CPU");
        if nextexp != KTIME_MAX {
            self.cpus[cpu].cpuevt.ignore = false;
        }
        let mut w = Walk { nextexp, firstexp: KTIME_MAX, remote: false, cpu };
        let (mut g, mut childmask) = (self.cpus[cpu].group, self.cpus[cpu].groupmask);
        let mut child = Child::Cpu(cpu);
        loop {
            // tmigr_inactive_up(): the child is inactive at this point of the walk.
            self.touch(g, cpu, cost);
            let grp = &mut self.groups[g];
            grp.active &= !childmask;
            let mut walk_done = true;
            if grp.migrator == Some(childmask.trailing_zeros() as u8) {
                grp.migrator = (grp.active != 0).then(|| grp.active.trailing_zeros() as u8);
                walk_done = grp.migrator.is_some();
            }
            self.update_events(g, child, &mut w, cost);
            let grp = &self.groups[g];
            match (walk_done, grp.parent) {
                (false, Some(p)) => {
                    child = Child::Group(g);
                    childmask = grp.groupmask;
                    g = p;
                }
                _ => break,
            }
        }
        let tc = &mut self.cpus[cpu];
        tc.idle = true;
        tc.wakeup = w.firstexp;
        w.firstexp
    }

    /// tmigr_update_events(): requeue the child's event in group `g` and refresh the
    /// group's first expiry; at an idle top level, hand its first expiry back through
    /// `w.firstexp`. Returns walk_done.
    fn update_events(&mut self, g: usize, child: Child, w: &mut Walk, cost: &mut TmigrCost) -> bool {
        let (bit, nextexp, ignore, first_cpu) = match child {
            Child::Group(c) => {
                if self.groups[c].active != 0 {
                    return true;
                }
                self.next_groupevt(c);
                let cg = &self.groups[c];
                let nextexp = cg.next_expiry;
                let first_cpu = cg.events.first().map_or(cg.groupevt.cpu, |&(_, b)| self.event_cpu(c, b));
                let ignore = nextexp == KTIME_MAX;
                self.groups[c].groupevt.ignore = ignore;
                (self.groups[c].groupmask.trailing_zeros() as u8, nextexp, ignore, first_cpu)
            }
            Child::Cpu(c) => {
                let ev = self.cpus[c].cpuevt;
                if ev.ignore && !w.remote && self.groups[g].parent.is_some() {
                    return true;
                }
                (self.cpus[c].groupmask.trailing_zeros() as u8, w.nextexp, ev.ignore, c)
            }
        };
        self.touch(g, w.cpu, cost);
        let mut walk_done = false;
        let evt = *self.event_of(child);
        let mut requeue = true;
        if evt.queued_at != KTIME_MAX {
            if evt.queued_at == nextexp && !ignore {
                self.event_of_mut(child).cpu = first_cpu;
                requeue = false;
            } else {
                let grp = &mut self.groups[g];
                grp.events.remove(&(evt.queued_at, bit));
                if grp.events.is_empty() {
                    grp.next_expiry = KTIME_MAX;
                }
                self.event_of_mut(child).queued_at = KTIME_MAX;
            }
        }
        if requeue {
            if ignore {
                if !w.remote || self.groups[g].active != 0 {
                    walk_done = true;
                }
            } else {
                let e = self.event_of_mut(child);
                e.expires = nextexp;
                e.cpu = first_cpu;
                e.queued_at = nextexp;
                let grp = &mut self.groups[g];
                grp.events.insert((nextexp, bit));
                if grp.events.first() == Some(&(nextexp, bit)) {
                    grp.next_expiry = nextexp;
                }
            }
        }
        // check_toplvl: an idle top level hands its first event to the last idle CPU.
        if self.groups[g].parent.is_none() && self.groups[g].migrator.is_none() {
            walk_done = true;
            if !w.remote {
                self.next_groupevt(g);
                w.firstexp = self.groups[g].next_expiry;
            }
        }
        walk_done
    }

    fn event_of(&self, child: Child) -> &TmigrEvent {
        match child {
            Child::Cpu(c) => &self.cpus[c].cpuevt,
            Child::Group(c) => &self.groups[c].groupevt,
        }
    }

    fn event_of_mut(&mut self, child: Child) -> &mut TmigrEvent {
        match child {
            Child::Cpu(c) => &mut self.cpus[c].cpuevt,
            Child::Group(c) => &mut self.groups[c].groupevt,
        }
    }

    fn event_cpu(&self, g: usize, bit: u8) -> usize {
        self.event_of(self.child(g, bit)).cpu
    }

    /// tmigr_next_groupevt(): drop ignored events at the head of the queue and cache
    /// the first remaining expiry.
    fn next_groupevt(&mut self, g: usize) {
        self.groups[g].next_expiry = KTIME_MAX;
        while let Some(&(e, bit)) = self.groups[g].events.first() {
            let child = self.child(g, bit);
            if !self.event_of(child).ignore {
                self.groups[g].next_expiry = e;
                return;
            }
            self.groups[g].events.pop_first();
            self.event_of_mut(child).queued_at = KTIME_MAX;
        }
    }

    /// A new first global timer on an idle CPU (tmigr_cpu_new_timer()), e.g. armed
    /// from an interrupt in idle. Returns what the CPU must wake for.
    pub fn new_timer(&mut self, cpu: usize, nextexp: Ns, cost: &mut TmigrCost) -> Ns {
        let tc = &self.cpus[cpu];
        let mut ret = tc.wakeup;
        if nextexp != KTIME_MAX && (nextexp != tc.cpuevt.expires || tc.cpuevt.ignore) {
            ret = if tc.remote {
                KTIME_MAX
            } else {
                self.cpus[cpu].cpuevt.ignore = false;
                let mut w = Walk { nextexp, firstexp: KTIME_MAX, remote: false, cpu };
                self.new_timer_up(cpu, &mut w, cost);
                w.firstexp
            };
            self.cpus[cpu].wakeup = ret;
        }
        ret
    }

    /// walk_groups(tmigr_new_timer_up) from `from_cpu`'s level-0 group.
    fn new_timer_up(&mut self, from_cpu: usize, w: &mut Walk, cost: &mut TmigrCost) {
        let mut g = self.cpus[from_cpu].group;
        let mut child = Child::Cpu(from_cpu);
        loop {
            if self.update_events(g, child, w, cost) {
                return;
            }
            match self.groups[g].parent {
                Some(p) => {
                    child = Child::Group(g);
                    g = p;
                }
                None => return,
            }
        }
    }

    /// tmigr_requires_handle_remote(): at a tick of `cpu` (with the jiffy-granular
    /// `now`), whether a group it is responsible for has an expired event.
    pub fn requires_handle_remote(&self, cpu: usize, now: Ns) -> bool {
        let tc = &self.cpus[cpu];
        if tc.idle {
            return now >= tc.wakeup;
        }
        let (mut g, mut childmask) = (tc.group, tc.groupmask);
        loop {
            let grp = &self.groups[g];
            if !grp.handled_by(childmask) {
                return false;
            }
            if now >= grp.next_expiry {
                return true;
            }
            match grp.parent {
                Some(p) => {
                    childmask = grp.groupmask;
                    g = p;
                }
                None => return false,
            }
        }
    }

    /// tmigr_handle_remote(): on `cpu`, at each level it is migrator of (or where none
    /// is set), expire the due global timers of idle CPUs. `expire(remote)` runs that
    /// CPU's due global timers here and returns its next global expiry (KTIME_MAX if
    /// none). Returns the number of remote CPUs handled.
    pub fn handle_remote(&mut self, cpu: usize, now: Ns, cost: &mut TmigrCost, mut expire: impl FnMut(usize) -> Ns) -> u32 {
        let tc = &self.cpus[cpu];
        let (mut g, mut childmask) = (tc.group, tc.groupmask);
        if !self.groups[g].handled_by(childmask) && tc.wakeup == KTIME_MAX {
            return 0;
        }
        let mut handled = 0;
        let mut firstexp = KTIME_MAX;
        loop {
            if !self.groups[g].handled_by(childmask) {
                break;
            }
            // tmigr_handle_remote_up(): one expired event at a time.
            loop {
                self.touch(g, cpu, cost);
                self.next_groupevt(g);
                let Some(&(e, bit)) = self.groups[g].events.first() else { break };
                if now < e {
                    break;
                }
                let child = self.child(g, bit);
                self.groups[g].events.pop_first();
                self.event_of_mut(child).queued_at = KTIME_MAX;
                self.next_groupevt(g);
                let remote = self.event_of(child).cpu;
                if self.handle_remote_cpu(remote, cpu, now, cost, &mut expire) {
                    handled += 1;
                }
            }
            firstexp = self.groups[g].next_expiry;
            match self.groups[g].parent {
                Some(p) => {
                    childmask = self.groups[g].groupmask;
                    g = p;
                }
                None => break,
            }
        }
        self.cpus[cpu].wakeup = firstexp;
        handled
    }

    /// tmigr_handle_remote_cpu(): expire `remote`'s global timers on `cpu` unless it
    /// woke up, is being handled already, or its event moved to the future.
    fn handle_remote_cpu(&mut self, remote: usize, cpu: usize, now: Ns, cost: &mut TmigrCost, expire: &mut impl FnMut(usize) -> Ns) -> bool {
        let rc = &self.cpus[remote];
        if rc.remote || rc.cpuevt.ignore || now < rc.cpuevt.expires {
            return false;
        }
        cost.lines_from.push(remote); // its tmigr_cpu lock
        self.cpus[remote].remote = true;
        self.cpus[remote].wakeup = KTIME_MAX;
        let next = expire(remote);
        if self.cpus[remote].idle {
            let mut w = Walk { nextexp: next, firstexp: KTIME_MAX, remote: true, cpu };
            self.new_timer_up(remote, &mut w, cost);
        }
        self.cpus[remote].remote = false;
        true
    }

    /// tmigr_quick_check(): the forecast tick_nohz_next_event() uses (no state change):
    /// KTIME_MAX unless `cpu` would be the last active CPU all the way up, in which case
    /// the earliest global event it would have to wake for.
    pub fn quick_check(&self, cpu: usize, nextevt: Ns) -> Ns {
        let tc = &self.cpus[cpu];
        let mut g = tc.group;
        let grp = &self.groups[g];
        if grp.migrator != Some(tc.groupmask.trailing_zeros() as u8) {
            return KTIME_MAX;
        }
        let mut next = nextevt;
        loop {
            let grp = &self.groups[g];
            if grp.active.count_ones() > 1 {
                return KTIME_MAX;
            }
            next = next.min(grp.next_expiry);
            match grp.parent {
                Some(p) => g = p,
                None => return next,
            }
        }
    }

    /// Checks the hierarchy's invariants: every group with an active child has a
    /// migrator among its active children and none without; a group is active in its
    /// parent exactly when it has an active child; CPU idle flags match their bits.
    pub fn check(&self) -> Result<(), String> {
        for (i, g) in self.groups.iter().enumerate() {
            match g.migrator {
                Some(m) if g.active & (1 << m) == 0 => return Err(format!("tmigr group {i}: migrator {m} is not an active child ({:#b})", g.active)),
                None if g.active != 0 => return Err(format!("tmigr group {i}: active children {:#b} but no migrator", g.active)),
                _ => {}
            }
            if let Some(p) = g.parent {
                let in_parent = self.groups[p].active & g.groupmask != 0;
                if in_parent != (g.active != 0) {
                    return Err(format!("tmigr group {i}: active={:#b} but its bit in parent {p} is {in_parent}", g.active));
                }
            }
        }
        for (c, tc) in self.cpus.iter().enumerate() {
            let bit = self.groups[tc.group].active & tc.groupmask != 0;
            if bit == tc.idle {
                return Err(format!("tmigr cpu {c}: idle={} but its bit in group {} is {bit}", tc.idle, tc.group));
            }
        }
        Ok(())
    }

    /// Tells whether every CPU is idle.
    pub fn all_idle(&self) -> bool {
        self.cpus.iter().all(|c| c.idle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(t: &Tmigr) -> Vec<usize> {
        (0..t.levels).map(|l| t.level_groups(l).count()).collect()
    }

    #[test]
    fn hierarchy_shape_matches_tmigr_init() {
        let flat = |n: usize| Tmigr::new(&vec![0; n], 1);
        assert_eq!(hierarchy_levels(8, 1), (1, 1));
        assert_eq!(shape(&flat(8)), vec![1]);
        assert_eq!(hierarchy_levels(64, 1), (2, 2));
        assert_eq!(shape(&flat(64)), vec![8, 1]);
        assert_eq!(hierarchy_levels(72, 1), (3, 3));
        assert_eq!(shape(&flat(72)), vec![9, 2, 1]);
        let two = |per: usize| {
            let nodes: Vec<usize> = (0..2 * per).map(|c| c / per).collect();
            Tmigr::new(&nodes, 2)
        };
        assert_eq!(hierarchy_levels(48, 2), (3, 2));
        assert_eq!(shape(&two(24)), vec![6, 2, 1]);
        assert_eq!(hierarchy_levels(384, 2), (4, 3));
        assert_eq!(shape(&two(192)), vec![48, 6, 2, 1]);
        // Below the cross-node level, no group mixes nodes.
        let t = two(24);
        for g in &t.groups {
            if g.level < t.crossnode_level {
                assert!(g.numa_node.is_some());
            }
        }
        t.check().unwrap();
    }

    #[test]
    fn last_cpu_idle_gets_the_first_global_event() {
        let mut t = Tmigr::new(&[0; 16], 1);
        let mut c = TmigrCost::default();
        for cpu in 1..16 {
            let e = t.deactivate(cpu, if cpu == 5 { 1000 } else { KTIME_MAX }, &mut c);
            assert_eq!(e, KTIME_MAX, "cpu {cpu} is not the last");
            t.check().unwrap();
        }
        assert_eq!(t.quick_check(0, 5000), 1000);
        assert_eq!(t.deactivate(0, 3000, &mut c), 1000);
        t.check().unwrap();
        assert!(t.all_idle());
        assert!(t.requires_handle_remote(0, 1000) && !t.requires_handle_remote(0, 999));
        // CPU 0 wakes, is migrator everywhere, and expires CPU 5's timer remotely.
        t.activate(0, &mut c);
        t.check().unwrap();
        assert!(t.requires_handle_remote(0, 1000));
        let mut expired = Vec::new();
        t.handle_remote(0, 1000, &mut c, |r| {
            expired.push(r);
            KTIME_MAX
        });
        assert_eq!(expired, vec![5]);
        assert!(!t.requires_handle_remote(0, 2000));
    }

    #[test]
    fn migrator_hands_over_to_an_active_child() {
        let mut t = Tmigr::new(&[0; 8], 1);
        let mut c = TmigrCost::default();
        assert_eq!(t.groups[0].migrator, Some(0));
        t.deactivate(0, KTIME_MAX, &mut c);
        assert_eq!(t.groups[0].migrator, Some(1));
        t.activate(0, &mut c);
        assert_eq!(t.groups[0].migrator, Some(1), "an active migrator keeps the role");
        t.check().unwrap();
    }
}
