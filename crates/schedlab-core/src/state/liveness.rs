//! Each task's longest stall in a checked run (the liveness property); `engine::liveness`
//! records them.

use crate::time::Ns;

/// What the liveness property reads after a checked run.
#[derive(Clone, Debug, Default)]
pub struct Liveness {
    /// Per task (pid - 1): its longest stall, ns (one still open at the end included).
    pub max_stall_ns: Vec<Ns>,
    /// Per task: when that longest stall began.
    pub max_stall_from: Vec<Ns>,
    /// The most tasks runnable (queued, running or throttled) at one instant.
    pub peak_runnable: usize,
    pub(crate) since: Vec<Option<Ns>>,
}

impl Liveness {
    pub(crate) fn close(&mut self, p: usize, now: Ns) {
        if let Some(s) = self.since[p].take() {
            if now - s > self.max_stall_ns[p] {
                self.max_stall_ns[p] = now - s;
                self.max_stall_from[p] = s;
            }
        }
    }
}
