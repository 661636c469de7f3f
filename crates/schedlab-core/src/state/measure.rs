//! The measured window of a run: the warm-up it skips and the blocks its stationarity
//! check compares (`[run] warmup_s`); `engine::warmup` takes the samples.

use crate::time::Ns;

/// Blocks of the measured window (two halves of five: a standard error from five block
/// means each). Declared.
pub const BLOCKS: usize = 10;
/// Differences below this fraction of a figure's scale are not reported, whatever the
/// blocks' spread (a deterministic workload's blocks can be identical). Declared.
pub const STATIONARITY_FLOOR: f64 = 0.02;

/// Cumulative headline figures at one instant.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sample {
    pub(crate) at: Ns,
    pub(crate) busy_ns: Ns,
    /// Per group: (usage_ns, nr_periods, nr_throttled).
    pub(crate) groups: Vec<(Ns, u64, u64)>,
}

/// The warm-up and the block samples of a run with a fixed duration.
#[derive(Clone, Debug, Default)]
pub(crate) struct Measurement {
    /// When figures start (the warm-up's end; 0 without one).
    pub from: Ns,
    /// Warm-up still to end at this time.
    pub pending_warmup: Option<Ns>,
    /// Block boundaries still to sample (ascending).
    pub boundaries: Vec<Ns>,
    pub(crate) samples: Vec<Sample>,
    /// Per group at the warm-up: its usage then (block samples count from it).
    pub usage_base: Vec<Ns>,
    /// The figures at the warm-up's end, subtracted from the result.
    pub(crate) baseline: Option<Baseline>,
}

/// What the warm-up accumulated.
#[derive(Clone, Debug)]
pub(crate) struct Baseline {
    pub(crate) tasks: Vec<crate::metrics::TaskStats>,
    pub(crate) cpus: Vec<crate::metrics::CpuStats>,
    pub(crate) groups: Vec<crate::metrics::GroupStats>,
    pub(crate) summary: std::collections::BTreeMap<String, f64>,
    pub(crate) migrations: [u64; 5],
    pub(crate) llc_lost: Vec<u128>,
    pub(crate) locks: Vec<crate::lock::LockStats>,
    pub(crate) rq_locks: Vec<crate::lock::LockStats>,
    pub(crate) cfs_b_locks: Vec<crate::lock::LockStats>,
}

impl Measurement {
    /// A run of `end` ns (None: until done) with `warmup` ns of warm-up.
    pub fn new(end: Option<Ns>, warmup: Ns, nr_groups: usize) -> Self {
        let mut m = Measurement { usage_base: vec![0; nr_groups], ..Default::default() };
        if warmup > 0 {
            m.pending_warmup = Some(warmup);
        }
        if let Some(end) = end {
            let span = end.saturating_sub(warmup);
            if span >= BLOCKS as Ns {
                m.boundaries = (1..BLOCKS as Ns).rev().map(|i| warmup + span * i / BLOCKS as Ns).collect();
            }
        }
        m
    }
}
