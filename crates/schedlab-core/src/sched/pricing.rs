//! The cost table as the scheduling paths read it: each read recorded in the run's read
//! set (`engine.constants_read`), so a sensitivity study varies what a run depends on and
//! nothing else. Leaves are read with `cost!(self, kernel.schedule_ns)`; the compound
//! prices (a line at a distance, an IPI's flight, a refill, a read pass) here.

use crate::cost::{key_index, Distance};
use crate::state::Simulator;

impl Simulator {
    /// A cache line's transfer to a CPU from where it was, at distance `d`.
    #[inline]
    pub(crate) fn line_at(&self, d: Distance) -> f64 {
        self.stats.cost_reads.note_line(d);
        self.m.cost.cacheline.at(d)
    }

    /// A cache line's transfer between CPUs `a` and `b` (at their distance).
    #[inline]
    pub(crate) fn line_latency(&self, a: usize, b: usize) -> f64 {
        self.line_at(self.m.distance(a, b))
    }

    /// A cache line's move from `from` to `to`, ns (nothing on the same CPU).
    #[inline]
    pub(crate) fn line_ns(&self, from: usize, to: usize) -> crate::time::Ns {
        if from == to {
            0
        } else {
            self.line_latency(from, to) as crate::time::Ns
        }
    }

    /// An IPI's flight at distance `d` (`CostTable::ipi_latency_ns`).
    pub(crate) fn ipi_latency_ns(&self, d: Distance) -> f64 {
        self.stats.cost_reads.note(const { key_index("kernel.ipi_delivery_ns") });
        self.stats.cost_reads.note_line(d);
        self.m.cost.ipi_latency_ns(d)
    }

    /// The refill of `bytes` last cached at distance `d` (`CostTable::refill_ns`).
    pub(crate) fn refill_ns(&self, bytes: u64, d: Distance) -> f64 {
        if d != Distance::SameCpu && bytes != 0 {
            self.stats.cost_reads.note_line(d);
            self.stats.cost_reads.note_line(Distance::SameCpu);
            self.stats.cost_reads.note(const { key_index("miss_parallelism") });
        }
        self.m.cost.refill_ns(bytes, d)
    }

    /// One pass of independent reads (`CostTable::read_pass_ns`).
    pub(crate) fn read_pass_ns(&self, longest_ns: f64, total_ns: f64) -> f64 {
        self.stats.cost_reads.note(const { key_index("miss_parallelism") });
        self.m.cost.read_pass_ns(longest_ns, total_ns)
    }

    /// A balance statistics pass (`LoadSums::scan_cost`) reads the line latencies of its
    /// spans and miss_parallelism.
    pub(crate) fn note_scan_reads(&self) {
        for d in Distance::ALL {
            if self.load_sums.scan_distances & 1 << d as u8 != 0 {
                self.stats.cost_reads.note_line(d);
            }
        }
        self.stats.cost_reads.note(const { key_index("miss_parallelism") });
    }

    /// What the run read of the machine's constants (`engine.constants_read`): the
    /// cost-table leaves, then the wake of each idle state paid, by state name.
    pub(crate) fn constants_read(&self) -> Vec<String> {
        let mut out = self.stats.cost_reads.names();
        let mut idle = std::collections::BTreeSet::new();
        for (d, bits) in self.stats.idle_wake_reads.iter().enumerate() {
            for (i, s) in self.m.idle_drivers[d].states.iter().enumerate() {
                if bits.get() & 1 << i != 0 {
                    idle.insert(format!("cpuidle.{}.wake_us", s.name));
                }
            }
        }
        out.extend(idle);
        out
    }
}
