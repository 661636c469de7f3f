//! Scheduler feature switches in one table, after kernel/sched/features.h.
//!
//! Mirrors: kernel/sched/features.h (SCHED_FEAT(name, default)) and the
//! /sys/kernel/debug/sched/features interface, extended with the switches that select
//! the before/after form of each mechanism schedlab models.
//! Model: a feature's default depends on the kernel profile (and, for TLB batching, on
//! the architecture), so "the 5.4 kernel" and "the 6.13 kernel" differ by default
//! exactly as those kernels did. A scenario may override any feature by name.

use serde::Serialize;

use crate::kernel::KernelVersion;
use crate::topology::Arch;

/// How a feature's default is decided.
#[derive(Clone, Copy, Debug)]
pub enum FeatureDefault {
    /// The same on every profile.
    Always(bool),
    /// On from this kernel version onward.
    Since(u32, u32),
    /// On before this version.
    Before(u32, u32),
    /// On in [from, to) only.
    Between((u32, u32), (u32, u32)),
    /// On from version `.0` on x86-64, from `.1` on arm64.
    SinceByArch((u32, u32), (u32, u32)),
    /// On for v < first.0 and for second.0 <= v < second.1 (bandwidth slice expiry).
    BeforeOrBetween((u32, u32), ((u32, u32), (u32, u32))),
    /// On from mainline version `.0`, and in the stable series `.1` (major, minor) from
    /// sublevel `.1.2` on: a change backported to a stable tree.
    SinceWithStable((u32, u32), ((u32, u32), u32)),
    /// On in [from, to), except in the stable series `.2.0` from sublevel `.2.1` on: a
    /// change a stable tree reverted.
    BetweenUntilStable((u32, u32), (u32, u32), ((u32, u32), u32)),
}

impl FeatureDefault {
    pub(crate) fn eval(self, v: KernelVersion, arch: Arch) -> bool {
        let at = |(a, b): (u32, u32)| KernelVersion::new(a, b);
        match self {
            FeatureDefault::Always(b) => b,
            FeatureDefault::Since(a, b) => v >= at((a, b)),
            FeatureDefault::Before(a, b) => v < at((a, b)),
            FeatureDefault::Between(lo, hi) => v >= at(lo) && v < at(hi),
            FeatureDefault::SinceByArch(x86, arm) => match arch {
                Arch::X86_64 => v >= at(x86),
                Arch::Arm64 => v >= at(arm),
            },
            FeatureDefault::BeforeOrBetween(before, (lo, hi)) => v < at(before) || (v >= at(lo) && v < at(hi)),
            FeatureDefault::SinceWithStable(mainline, ((a, b), sublevel)) => {
                v >= at(mainline) || ((v.major, v.minor) == (a, b) && v.sublevel_or_zero() >= sublevel)
            }
            FeatureDefault::BetweenUntilStable(lo, hi, ((a, b), sublevel)) => {
                v >= at(lo) && v < at(hi) && !((v.major, v.minor) == (a, b) && v.sublevel_or_zero() >= sublevel)
            }
        }
    }
}

macro_rules! sched_features {
    ($( $name:ident = $default:expr, $why:literal; )*) => {
        /// Every feature switch; the variant names are the kernel's.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Feature { $( #[doc = $why] $name, )* }

        /// The feature table: (feature, name, default rule, reason).
        pub const FEATURE_TABLE: &[(Feature, &str, FeatureDefault, &str)] = &[
            $( (Feature::$name, stringify!($name), $default, $why), )*
        ];
    };
}

use FeatureDefault::*;

sched_features! {
    GENTLE_FAIR_SLEEPERS = Before(6, 6), "CFS: a waking sleeper is placed at most latency/2 behind min_vruntime";
    START_DEBIT = Before(6, 6), "CFS: a new task starts one slice behind, so forks cannot starve others";
    PLACE_LAG = Since(6, 6), "EEVDF: a waking task keeps the lag it had when it slept";
    PLACE_DEADLINE_INITIAL = Since(6, 6), "EEVDF: a new task starts with half a slice to its deadline";
    DELAY_DEQUEUE = Since(6, 12), "EEVDF: a task that sleeps while not eligible stays queued, competing, until it is picked (152e11f6df29)";
    DELAY_ZERO = Since(6, 12), "EEVDF: a delayed task's positive lag is dropped when it leaves or is woken (152e11f6df29)";
    LAG_CLAMP_MAX_SLICE = SinceWithStable((7, 0), ((6, 18), 35)), "EEVDF: update_entity_lag() clamps a leaving entity's lag at the queue's longest slice plus a tick (cfs_rq_max_slice() + TICK_NSEC) instead of max(2 x its own slice, a tick) (6e3c0a4e1ad1, 'sched/fair: Fix lag clamp'; in 7.0 mainline as a third-party note reads it, not checked here; 6.18.2's fair.c has the old clamp, 6.18.35's the new one)";
    PLACE_REL_DEADLINE = Since(6, 12), "EEVDF: a queued task taken off its runqueue to migrate (load balance, active balance) keeps its virtual deadline relative to its vruntime, and place_entity() restores it instead of starting a fresh slice (82e9d0456e06, 'sched/fair: Avoid re-setting virtual deadline on migrations', 6.12; read at 6.18.35: dequeue_entity() without DEQUEUE_SLEEP, place_entity())";
    RUN_TO_PARITY = Since(6, 6), "EEVDF: the current task is not preempted before its slice is done; 6.17+ protects only up to the shortest slice queued beside it (set_protect_slice(), update_protect_slice()), and without the feature still for the base quantum (normalized_sysctl_sched_base_slice)";
    PREEMPT_SHORT = Since(6, 12), "EEVDF: a waking task with a shorter slice than the current one (a custom slice, slice_us / sched_runtime) overrides the current's slice protection (6.12 do_preempt_short(): the protection ends if the wakee is eligible and ahead in deadline or the current is not eligible; 6.17+: the wakeup pick ignores the protection, which ends if the wakee wins), and update_curr() reschedules a current task whose protection is over once it is not eligible (did_preempt_short(), 85e511df3cec)";
    RESCHED_NEXT_SLICE = Since(6, 18), "EEVDF: update_curr() reschedules as soon as the current task's protected slice is over, eligible or not, and the pick decides (6.18 fair.c: resched || !protect_slice(curr); 74eec63661d4 began it)";
    NEXT_BUDDY = Always(false), "EEVDF: a wakeup that does not preempt makes the wakee its cfs_rq's next buddy (set_next_buddy()), which the pick prefers while it is eligible; 6.6 to 6.18.2 on every wakeup but a fork's (check_preempt_wakeup_fair()), 6.18.35 / 6.19 (Mel Gorman's rework) only past the PREEMPT_SHORT case and unless an earlier-deadline buddy is set. Off in features.h in every version (CFS's unconditional next and last buddies are not modeled)";
    PICK_BUDDY = Feature::PICK_BUDDY_DEFAULT, "EEVDF: the pick takes cfs_rq->next if it is eligible, whoever set it (NEXT_BUDDY, or dequeue_entities()' set_next_buddy() of a group whose task sleeps while the group keeps others queued); before it the pick honoured the buddy only under NEXT_BUDDY (2a77e4be12cb 'sched/fair: Untangle NEXT_BUDDY and pick_next_task()', Fixes the 6.6 EEVDF commit; backported to 6.12 and 6.13 stable in the 5 Feb 2025 reviews (6.12.13 inferred from the review date; the 6.13 backport, 6.13.2, not modeled), so mainline 6.14; in 6.12.67's and 6.18's fair.c; 6.18 moved it into pick_eevdf())";
    PELT = Since(3, 8), "per-entity load tracking: load, runnable and util averages drive load balance, wake_affine and group shares (off: instantaneous queued weights)";
    FAIR_GROUP_SCHED = Always(true), "cgroups are scheduling entities: a cfs_rq per group and CPU, weighted by cpu.shares/cpu.weight (off: every task on its CPU's root runqueue)";
    WAKEUP_PREEMPTION = Always(true), "a waking task may preempt the current one";
    CACHE_HOT_BUDDY = Always(true), "the next buddy counts as cache hot for load balance";
    WA_IDLE = Always(true), "wake_affine: prefer an idle waker or previous CPU";
    WA_WEIGHT = Always(true), "wake_affine: compare the two CPUs' loads";
    WA_BIAS = Always(true), "wake_affine: bias the load comparison towards the previous CPU";
    TTWU_QUEUE = Always(true), "remote wakeups go through the target's wake list (one IPI)";
    SIS_PROP = Before(5, 20), "select_idle_cpu scans in proportion to avg_idle / avg scan cost";
    SIS_UTIL = Since(5, 20), "select_idle_cpu scan depth shrinks as the LLC's utilization grows";
    SIS_NODE = Always(false), "after the LLC, scan the other LLCs of the node for an idle CPU (2023 tip, reverted)";
    RD_OVERLOADED = Since(3, 16), "newidle balance runs only while the root domain's overloaded flag is set: add_nr_running() sets it when a runqueue reaches two tasks, and only a balance pass at the root domain rewrites it from what it reads (update_sd_lb_stats()), so it stays set after the second task leaves until such a pass (ed61bbc69c77, 'sched/balancing: Reduce the rate of needless idle load balancing', 3.16; read at 6.18.35: set_rd_overloaded() in add_nr_running() and update_sd_lb_stats()). Off: no overload gate, as before 3.16";
    NEWIDLE_FAIL_BUMP = BetweenUntilStable((6, 17), (6, 19), ((6, 18), 35)), "a newidle balance that pulls nothing records 3/2 of the domain's max_newidle_lb_cost as its cost, and update_newidle_cost() caps the cost at sched_migration_cost + 200 ns, so failing newidle balance gates itself off (155213a2aed4, 'sched/fair: Bump sd->max_newidle_lb_cost when newidle balance fails', 6.17; in 6.18.2's fair.c; reverted by d206fbad9328 with NI_RANDOM in 6.19 and in 6.18.35's fair.c; backports to other stable series not modeled)";
    NEWIDLE_SD_COST_GATE = Since(5, 16), "newidle balance is skipped when avg_idle < sd->max_newidle_lb_cost (5.16+) instead of < sched_migration_cost";
    SCHED_CLUSTER = Since(5, 16), "the CLS sched-domain level: cores sharing cluster resources (Kunpeng 920's 4-core clusters) balanced as a level of their own (778c558f49a2)";
    SIS_CLUSTER = Since(6, 7), "select_idle_cpu scans the target's cluster before the rest of the LLC, and keeps an idle prev/recent CPU of another cluster as fallback (8881e1639f1f, 22165f61d0c4)";
    ENERGY_AWARE = Since(5, 0), "EAS: a wakeup takes the CPU find_energy_efficient_cpu() finds cheapest in the Energy Model while no CPU is overutilized, and load balance stands aside (732cd75b8c92, sysctl kernel.sched_energy_aware); as in the kernel, only on a machine with an Energy Model whose policies run schedutil ([kernel] governor)";
    UTIL_EST = Since(4, 17), "util_est: a task's utilization estimate kept across its sleeps, with each rq's sum of its enqueued tasks', read by EAS and schedutil (7f65ea42eb00)";
    UTIL_EST_FASTUP = Between((5, 5), (6, 8)), "util_est: the ewma jumps up to a larger sample instead of averaging towards it (b8c96361402a; permanent in 6.8's simplified util_est, 7736ae55ba6d)";
    UCLAMP = Since(5, 3), "uclamp: sched_setattr()'s util_min/util_max clamp what EAS and schedutil read of a task and its rq (69842cba9ace, CONFIG_UCLAMP_TASK)";
    MISFIT = Since(4, 20), "asymmetric capacity: a task too big for its CPU (util x 1.25 > capacity) is a misfit that balance and the nohz kick move to a bigger CPU at once (3b1baa6496e6)";
    MISFIT_BEFORE_EAS_EXIT = Since(6, 3), "EAS: find_busiest_group() forces the balance of a misfit group before its early exit while the root domain is not overutilized, so a task misfit only by its uclamp_min (util_fits_cpu() -1, which cpu_overutilized() counts as fitting) is still pulled to a bigger CPU (e5ed0550c04c, 'sched/fair: unlink misfit task from cpu overutilized', 6.3; the same order in 6.18.35's sched_balance_find_src_group(); stable backports to 5.10/5.15/6.1 were posted in Aug 2023, not modeled). Off: the EAS exit comes first";
    SIS_ASYM_CAPACITY = Since(5, 7), "asymmetric capacity: wakeups look for an idle CPU the task fits (select_idle_capacity, b7a331615d25)";
    SIS_ASYM_PREV_FIRST = Since(5, 10), "asymmetric capacity: select_idle_sibling() takes the target, prev or recent_used_cpu when idle and the task fits it (asym_fits_capacity()) before the select_idle_capacity() scan (b4c9c9f15649, 'sched/fair: Prefer prev cpu in asymmetric wakeup path'). Off: 5.7-5.9's scan first";
    ASYM_UTIL_FITS_CPU = Since(6, 2), "asymmetric capacity: the wakeup fit (asym_fits_cpu(), select_idle_capacity()) is util_fits_cpu() on task_util_est() with the task's uclamp_min/max: uclamp_max at or under a CPU's capacity fits it (b759caa1d9f6, a2e7f03ed28f; backported to 5.10/5.15/6.1 stable in Dec 2022-Jan 2023, not modeled). Off: fits_capacity() on the clamped util, uclamp_task_util() (a7008c07a568, 5.6)";
    ASYM_FITS_UCLAMP_MIN_HINT = Since(6, 3), "asymmetric capacity: util_fits_cpu() returns -1 when a CPU fits the util but not uclamp_min; asym_fits_cpu() wants a full fit and select_idle_capacity() falls back to the largest -1 CPU before any non-fitting one (e5ed0550c04c, 'sched/fair: unlink misfit task from cpu overutilized'). Off: 6.2's bool, where such a CPU does not fit and the scan falls back to the largest idle CPU";
    SHARED_RUNQ = Always(false), "per-LLC shared wakequeue pulled before newidle balance (swqueue RFC, never merged)";
    SHARED_RUNQ_STEAL = Always(false), "v1 only: a CPU whose LLC queue is empty also pulls from other LLCs of its node (the RFC's stated next step)";
    SHARED_RUNQ_V2 = Always(false), "shared_runq v2 (2023-07): pulled at the top of newidle_balance before its gates, head-only pop if allowed on this CPU";
    SHARED_RUNQ_ALL = Always(false), "v2: enqueue in __enqueue_entity (every task entering the CFS tree) instead of on wakeup only";
    SHARED_RUNQ_SHARDS = Always(false), "v2/v4: shard each LLC's queue by shared_runq_shard_sz CPUs (v2: cpu % n; v4: (cpu >> 1) % n)";
    SHARED_RUNQ_V3 = Always(false), "shared_runq v3 (2023-08): v2 with __enqueue_entity enqueue and ceil(llc/shard_sz) shards indexed (cpu >> 1) % n";
    SHARED_RUNQ_V3_LLC_SKIP = Always(false), "v3's attempted skip of <= LLC domains in newidle balance: walks every domain anyway, gates avg_idle on the LLC parent's cost";
    SHARED_RUNQ_DISCARD = Always(false), "v3 review (K Prateek Nayak, David Vernet, Aug 2023): the pop drops shard entries whose task is already on a CPU and takes the next, under the shard lock, instead of a task_rq_lock() round trip that fails and retries";
    SHARED_RUNQ_SHARD_16 = Always(false), "v3 review (K Prateek Nayak): shards of 16 CPUs instead of SHARED_RUNQ_SHARD_SZ = 6 (overrides the shared_runq_shard_sz tunable)";
    SHARED_RUNQ_V4 = Always(false), "shared_runq v4 (2023-12): enqueue only onto a non-empty rq, pull after the rd->overload gate ignoring avg_idle, skip <= LLC domains";
    NI_RANDOM = SinceWithStable((6, 19), ((6, 18), 35)), "newidle balance runs a domain with probability = its recent success ratio (Peter Zijlstra, Nov 2025, 'Proportional newidle balance'); backported to 6.18 stable: 6.18.2's features.h lacks it (gfunkmonk/linux-6.18.2), 6.18.35's has it (leftymods/linux-6.18.y), so the first stable carrying it lies in 6.18.3..6.18.35 and 6.18.35 is the earliest known";
    TIMER_PULL = Since(6, 9), "timers stay local; idle CPUs' global timers are pulled by a migrator (timer_migration.c)";
    BW_SLICE_EXPIRY = BeforeOrBetween((3, 16), ((4, 18), (5, 4))), "per-CPU bandwidth slices expire at the period boundary";
    BW_EXPIRY_INVERTED = Between((3, 16), (4, 18)), "3.16-4.17 bug: the expiry test was inverted, so leftovers were extended a tick at a time instead";
    BW_BURST = Since(5, 14), "cpu.cfs_burst_us: unused quota accumulates up to the burst";
    BW_THROTTLE_TIME_NONEMPTY = Since(6, 6), "throttled_time runs only while the throttled cfs_rq holds tasks (79462e8c879a, 'sched: don't account throttle time for empty groups')";
    BW_ASYNC_UNTHROTTLE = Since(6, 2), "distribution unthrottles other CPUs' cfs_rqs through a CSD to each CPU (8ad075c2eb1f, 'sched: Async unthrottling for cfs bandwidth')";
    BW_TASK_THROTTLE = Since(6, 18), "task-based throttle: a throttled group's tasks are held as each returns to user space, not dequeued with the group (e1fad12dcb66, eb962f251fbb)";
    ACPI_IDLE_DUMMY_WAIT = Before(6, 0), "acpi_idle reads the ACPI PM timer after entering an I/O-port C-state (the 2002 'dummy wait'); on Zen the read counted as residency and primed menu towards deeper states (dropped for non-Intel CPUs in 6.0 and stable: K Prateek Nayak / Dave Hansen, 'ACPI: processor idle: Practically limit Dummy wait workaround to old Intel systems')";
    MM_CID = Since(6, 4), "rseq concurrency IDs with per-CPU lazy put and the 100 ms compaction";
    MM_CID_CACHE_LOCAL = Since(6, 13), "mm_cid: reuse the CPU's recent cid and spread up to min(nr_cpus_allowed, mm_users)";
    TLB_BATCH = SinceByArch((4, 3), (6, 5)), "reclaim defers TLB flushes and waits once per batch (try_to_unmap_flush)";
    RT_THROTTLING = Before(6, 12), "RT throttling of the root rt_rq: RT tasks get sched_rt_runtime_us of every sched_rt_period_us, then wait for the period timer (sched_rt_runtime_exceeded(), do_sched_rt_period_timer()); without RT group scheduling it went in 6.12 with the fair server (5f6bd380c7bd, 'sched/rt: Remove default bandwidth control')";
    RT_PUSH_IPI = Since(4, 16), "RT: a CPU whose priority drops does not pull waiting RT tasks itself: tell_cpu_to_push() sends one IPI (irq_work) to the first RT-overloaded CPU, whose rto_push_irq_work_func() pushes its own waiting tasks (push_rt_tasks()) and passes the IPI on to the next overloaded CPU (rto_next_cpu()) until the rto_mask is done (read at 6.18.35: rt.c, features.h SCHED_FEAT(RT_PUSH_IPI, true)). The rto_loop iterator modeled is 4bdced5c9a29 ('sched/rt: Simplify the IPI based RT balancing logic'), 4.16 by the commit's date as recalled, not checked here; an earlier IPI form (b6366f048e0c) is not modeled, so profiles before 4.16 pull directly.";
    DL_SERVER = Since(6, 12), "the fair deadline server: a per-CPU SCHED_DEADLINE entity (fair_server runtime/period, 50 ms / 1 s) that runs fair tasks starved by RT, deferred to its zero-laxity time (63ba8422f876 'sched/deadline: Introduce deadline servers', a110a81c52a9 'sched/deadline: Deferrable dl server')";
}

impl Feature {
    /// PICK_BUDDY's default rule: whether the feature exists in a version (before it the
    /// pick honoured the buddy under NEXT_BUDDY).
    pub(crate) const PICK_BUDDY_DEFAULT: FeatureDefault = FeatureDefault::SinceWithStable((6, 14), ((6, 12), 13));
}

/// The set of features in force for one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    /// One bit per feature (u128: the table passed 64 entries with issue 34's asym forms).
    bits: u128,
}

impl Features {
    /// Returns the defaults of a kernel version on an architecture.
    pub fn defaults(v: KernelVersion, arch: Arch) -> Features {
        let mut f = Features { bits: 0 };
        for &(feat, _, default, _) in FEATURE_TABLE {
            f.set(feat, default.eval(v, arch));
        }
        f
    }

    /// Tells whether a feature is on (`sched_feat(X)`).
    #[inline]
    pub fn has(&self, f: Feature) -> bool {
        self.bits & (1u128 << f as u32) != 0
    }

    /// Turns a feature on or off.
    pub fn set(&mut self, f: Feature, on: bool) {
        if on {
            self.bits |= 1u128 << f as u32;
        } else {
            self.bits &= !(1u128 << f as u32);
        }
    }

    /// Looks a feature up by its kernel name (a leading "NO_" is not accepted here).
    pub fn lookup(name: &str) -> Option<Feature> {
        let name = if name == "SWQUEUE" { "SHARED_RUNQ" } else { name };
        FEATURE_TABLE.iter().find(|e| e.1 == name).map(|e| e.0)
    }

    /// Returns every feature with its state, in table order (recorded in results).
    pub fn to_map(&self) -> std::collections::BTreeMap<String, bool> {
        FEATURE_TABLE.iter().map(|e| (e.1.to_string(), self.has(e.0))).collect()
    }
}

/// One row of the feature table, for listing.
#[derive(Clone, Debug, Serialize)]
pub struct FeatureInfo {
    /// Kernel-style name.
    pub name: &'static str,
    /// Default on the requested profile and architecture.
    pub default: bool,
    /// One-line reason.
    pub reason: &'static str,
}

/// Lists the feature table with defaults for a profile and architecture.
pub fn list(v: KernelVersion, arch: Arch) -> Vec<FeatureInfo> {
    FEATURE_TABLE.iter().map(|&(_, name, default, reason)| FeatureInfo { name, default: default.eval(v, arch), reason }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_kernel_history() {
        let f = |a, b| Features::defaults(KernelVersion::new(a, b), Arch::Arm64);
        assert!(f(3, 10).has(Feature::BW_SLICE_EXPIRY));
        assert!(!f(4, 14).has(Feature::BW_SLICE_EXPIRY));
        assert!(f(4, 14).has(Feature::BW_EXPIRY_INVERTED));
        assert!(f(5, 3).has(Feature::BW_SLICE_EXPIRY));
        assert!(!f(5, 4).has(Feature::BW_SLICE_EXPIRY));
        assert!(!f(6, 12).has(Feature::MM_CID_CACHE_LOCAL) && f(6, 13).has(Feature::MM_CID_CACHE_LOCAL));
        assert!(!f(6, 4).has(Feature::TLB_BATCH) && f(6, 5).has(Feature::TLB_BATCH));
        assert!(Features::defaults(KernelVersion::new(5, 4), Arch::X86_64).has(Feature::TLB_BATCH));
        assert!(FEATURE_TABLE.len() <= 128, "Features::bits holds 128");
        assert_eq!(Features::lookup("SWQUEUE"), Some(Feature::SHARED_RUNQ));
    }

    #[test]
    fn a_stable_backport_is_on_from_its_sublevel_and_in_later_mainline() {
        let on = |v: &str| Features::defaults(KernelVersion::parse(v).unwrap(), Arch::X86_64).has(Feature::NI_RANDOM);
        assert!(!on("6.18") && !on("6.18.2") && !on("6.18.34"));
        assert!(on("6.18.35") && on("6.18.44") && on("6.19"));
        assert!(!on("6.17.99"), "another stable series does not carry it");
        let clamp = |v: &str| Features::defaults(KernelVersion::parse(v).unwrap(), Arch::X86_64).has(Feature::LAG_CLAMP_MAX_SLICE);
        assert!(!clamp("6.18.2") && clamp("6.18.35") && !clamp("6.19") && clamp("7.0"));
        let bump = |v: &str| Features::defaults(KernelVersion::parse(v).unwrap(), Arch::X86_64).has(Feature::NEWIDLE_FAIL_BUMP);
        assert!(!bump("6.16") && bump("6.17") && bump("6.18") && bump("6.18.2") && bump("6.18.34"));
        assert!(!bump("6.18.35") && !bump("6.18.44") && !bump("6.19"), "reverted in 6.19 and 6.18.35");
    }
}
