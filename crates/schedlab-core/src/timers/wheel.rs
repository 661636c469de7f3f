//! The timer wheel of one CPU base: where a timer lands and when it fires.
//!
//! Mirrors: kernel/time/timer.c: calc_wheel_index(), calc_index(), forward_timer_base(),
//! __run_timers()/collect_expired_timers(), the `__mod_timer()` same-bucket shortcut.
//! Model: a base keeps its pending timers ordered by bucket expiry instead of in 576
//! hashed buckets; what the kernel's layout decides (which level a timer lands in, the
//! bucket expiry rounded up to that level's granularity, a level-n bucket being
//! processed exactly at its expiry jiffy) is computed by the same arithmetic, so every
//! timer fires at the jiffy the kernel's wheel fires it.
//!
//! ```text
//!  level  granularity     deltas it holds (HZ=1000)
//!    0      1 jiffy          0 .. 63 ms
//!    1      8 jiffies       64 .. 511 ms      a timer fires up to 12.5 % late
//!    2     64 jiffies      512 ms .. 4 s      (LVL_GRAN / LVL_START = 8 / 63)
//!   ...
//! ```

use std::collections::BTreeSet;

/// log2 of the granularity step between levels (LVL_CLK_SHIFT).
pub const LVL_CLK_SHIFT: u32 = 3;
/// log2 of the buckets per level (LVL_BITS).
pub const LVL_BITS: u32 = 6;
/// Buckets per level (LVL_SIZE).
pub const LVL_SIZE: u64 = 1 << LVL_BITS;

/// Levels of the wheel at a given HZ (LVL_DEPTH: 9 above HZ 100, else 8).
pub fn lvl_depth(hz: u32) -> u32 {
    if hz > 100 {
        9
    } else {
        8
    }
}

/// log2 of level `lvl`'s granularity in jiffies (LVL_SHIFT).
#[inline]
pub fn lvl_shift(lvl: u32) -> u32 {
    lvl * LVL_CLK_SHIFT
}

/// Granularity of level `lvl` in jiffies (LVL_GRAN).
#[inline]
pub fn lvl_gran(lvl: u32) -> u64 {
    1 << lvl_shift(lvl)
}

/// Smallest delta (jiffies) held by level `lvl` (LVL_START; level 0 starts at 0).
#[inline]
pub fn lvl_start(lvl: u32) -> u64 {
    if lvl == 0 {
        0
    } else {
        (LVL_SIZE - 1) << ((lvl - 1) * LVL_CLK_SHIFT)
    }
}

/// Where a timer lands: its wheel level, bucket index and bucket expiry (jiffies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WheelSlot {
    /// Level.
    pub lvl: u32,
    /// Bucket index in the whole wheel (LVL_OFFS(lvl) + bucket).
    pub idx: u32,
    /// Jiffy at which the bucket is processed: `expires` rounded up to the level's
    /// granularity (never early).
    pub bucket_expiry: u64,
}

/// Returns the bucket of a timer expiring at `expires` on a base at `clk`
/// (calc_wheel_index with calc_index's round-up: `((expires >> shift) + 1) << shift`).
pub fn calc_wheel_index(expires: u64, clk: u64, depth: u32) -> WheelSlot {
    if expires < clk {
        // Already expired: the next level-0 bucket processed (the one of clk).
        return WheelSlot { lvl: 0, idx: (clk & (LVL_SIZE - 1)) as u32, bucket_expiry: clk };
    }
    let delta = expires - clk;
    let cutoff = lvl_start(depth);
    let (expires, lvl) = if delta >= cutoff {
        // WHEEL_TIMEOUT_MAX: clamp very long timeouts into the last level.
        (clk + cutoff - lvl_gran(depth - 1), depth - 1)
    } else {
        let lvl = (1..depth).take_while(|&l| delta >= lvl_start(l)).last().unwrap_or(0);
        (expires, lvl)
    };
    let e = (expires >> lvl_shift(lvl)) + 1;
    WheelSlot { lvl, idx: lvl * LVL_SIZE as u32 + (e & (LVL_SIZE - 1)) as u32, bucket_expiry: e << lvl_shift(lvl) }
}

/// Identifies a timer in the run's timer table.
pub type TimerId = usize;

/// One CPU's timer base (struct timer_base): its clock and pending timers.
#[derive(Clone, Debug)]
pub struct TimerBase {
    /// Jiffy the wheel has been processed up to (base->clk).
    pub clk: u64,
    /// First bucket expiry pending, u64::MAX if none (base->next_expiry).
    pub next_expiry: u64,
    /// Marked idle: a new first timer queued here from elsewhere must wake the CPU.
    pub is_idle: bool,
    pending: BTreeSet<(u64, TimerId)>,
}

impl Default for TimerBase {
    fn default() -> Self {
        TimerBase { clk: 0, next_expiry: u64::MAX, is_idle: false, pending: BTreeSet::new() }
    }
}

impl TimerBase {
    /// Forwards an idle base's clock before an enqueue (forward_timer_base): to
    /// jiffies, or to the next expiry if that is earlier.
    pub fn forward(&mut self, jiffies: u64) {
        if jiffies <= self.clk {
            return;
        }
        self.clk = if self.next_expiry > jiffies { jiffies } else { self.next_expiry.max(self.clk) };
    }

    /// Queues a timer in `slot`; returns true if it became the base's first timer.
    pub fn enqueue(&mut self, t: TimerId, slot: WheelSlot) -> bool {
        self.pending.insert((slot.bucket_expiry, t));
        if slot.bucket_expiry < self.next_expiry {
            self.next_expiry = slot.bucket_expiry;
            return true;
        }
        false
    }

    /// Removes a pending timer queued at `bucket_expiry`.
    pub fn detach(&mut self, t: TimerId, bucket_expiry: u64) {
        let removed = self.pending.remove(&(bucket_expiry, t));
        debug_assert!(removed, "detach of a timer not pending on this base");
        // The kernel recomputes next_expiry lazily (next_expiry_recalc); the value it
        // reaches is the first pending bucket, which is what is kept here.
        self.next_expiry = self.pending.first().map_or(u64::MAX, |&(e, _)| e);
    }

    /// Removes and returns every timer whose bucket is due at `jiffies`, in bucket
    /// order, advancing `clk` past the last bucket processed (__run_timers).
    pub fn collect_expired(&mut self, jiffies: u64, out: &mut Vec<TimerId>) {
        let mut last = None;
        while let Some(&(e, t)) = self.pending.first() {
            if e > jiffies {
                break;
            }
            self.pending.pop_first();
            out.push(t);
            last = Some(e);
        }
        if let Some(e) = last {
            self.clk = self.clk.max(e + 1);
        }
        self.next_expiry = self.pending.first().map_or(u64::MAX, |&(e, _)| e);
    }

    /// Number of pending timers.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Tells whether no timer is pending.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Pending timers in bucket order (for invariant checks).
    pub fn iter(&self) -> impl Iterator<Item = (u64, TimerId)> + '_ {
        self.pending.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_boundaries_follow_lvl_start() {
        assert_eq!(lvl_start(1), 63);
        assert_eq!(lvl_start(2), 63 * 8);
        assert_eq!(lvl_gran(2), 64);
        // Level 0: rounded up by one jiffy (a timer armed mid-tick never fires early).
        assert_eq!(calc_wheel_index(1010, 1000, 9), WheelSlot { lvl: 0, idx: (1011 % 64) as u32, bucket_expiry: 1011 });
        // 100 jiffies ahead lands in level 1, granularity 8, rounded up.
        let s = calc_wheel_index(1100, 1000, 9);
        assert_eq!(s.lvl, 1);
        assert_eq!(s.bucket_expiry, ((1100 >> 3) + 1) << 3);
        // Already expired: the current clk bucket.
        assert_eq!(calc_wheel_index(900, 1000, 9).bucket_expiry, 1000);
    }

    #[test]
    fn never_early_and_at_most_one_granule_late() {
        for depth in [8, 9] {
            for clk in [0u64, 7, 1000, 123_456] {
                for delta in (0..200_000u64).step_by(37) {
                    let s = calc_wheel_index(clk + delta, clk, depth);
                    assert!(s.bucket_expiry > clk + delta || delta >= lvl_start(depth), "early");
                    if delta < lvl_start(depth) {
                        let late = s.bucket_expiry - (clk + delta);
                        assert!(late <= lvl_gran(s.lvl), "late by {late} at level {}", s.lvl);
                        // Levels >= 1 are at most 12.5 % (8/63) late relative to the delta.
                        if s.lvl >= 1 {
                            assert!(late as f64 <= delta as f64 * 8.0 / 63.0 + 1e-9);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn base_expires_in_bucket_order_and_tracks_next_expiry() {
        let mut b = TimerBase::default();
        assert!(b.enqueue(1, calc_wheel_index(10, 0, 9)));
        assert!(!b.enqueue(2, calc_wheel_index(20, 0, 9)));
        assert!(b.enqueue(3, calc_wheel_index(5, 0, 9)));
        assert_eq!(b.next_expiry, 6);
        let mut out = Vec::new();
        b.collect_expired(10, &mut out);
        assert_eq!(out, vec![3]);
        assert_eq!(b.clk, 7);
        b.collect_expired(11, &mut out);
        assert_eq!(out, vec![3, 1]);
        b.detach(2, 21);
        assert!(b.is_empty() && b.next_expiry == u64::MAX);
    }
}
