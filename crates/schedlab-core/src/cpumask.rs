//! A fixed-size CPU bitmap, the simulator's `struct cpumask`.
//!
//! Mirrors: include/linux/cpumask.h (cpumask_test_cpu, cpumask_weight, for_each_cpu).
//! Model: a fixed capacity of `MAX_CPUS` keeps masks `Copy` and allocation-free on the
//! event loop's hot path.

/// The largest machine the simulator models (a kernel's NR_CPUS is commonly 2048 to
/// 8192; 2048 covers the largest machines sold and keeps a mask at 256 bytes).
pub const MAX_CPUS: usize = 2048;
const WORDS: usize = MAX_CPUS / 64;

/// CPU number, 0-based as in the kernel.
pub type CpuId = usize;

/// A set of CPUs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CpuMask {
    bits: [u64; WORDS],
}

/// Hashes the words up to the last set bit: equal masks hash alike, and interning a
/// 64-CPU mask hashes 8 bytes, not 256.
impl std::hash::Hash for CpuMask {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let used = self.bits.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
        self.bits[..used].hash(state);
    }
}

impl Default for CpuMask {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuMask {
    /// Returns the empty mask.
    pub const fn new() -> Self {
        Self { bits: [0; WORDS] }
    }

    /// Returns a mask holding CPUs `0..n`.
    pub fn first_n(n: usize) -> Self {
        let mut m = Self::new();
        for c in 0..n {
            m.set(c);
        }
        m
    }

    /// Returns a mask holding exactly `cpu`.
    pub fn single(cpu: CpuId) -> Self {
        let mut m = Self::new();
        m.set(cpu);
        m
    }

    /// Adds a CPU.
    pub fn set(&mut self, cpu: CpuId) {
        self.bits[cpu / 64] |= 1 << (cpu % 64);
    }

    /// Removes a CPU.
    pub fn clear(&mut self, cpu: CpuId) {
        self.bits[cpu / 64] &= !(1 << (cpu % 64));
    }

    /// Tells whether the mask holds `cpu`.
    #[inline]
    pub fn test(&self, cpu: CpuId) -> bool {
        cpu < MAX_CPUS && self.bits[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    /// Returns the number of CPUs in the mask.
    pub fn weight(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Tells whether the mask is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }

    /// Returns the lowest CPU in the mask.
    pub fn first(&self) -> Option<CpuId> {
        self.bits.iter().enumerate().find(|(_, &w)| w != 0).map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
    }

    /// Returns the lowest CPU >= `from` that is in neither `a` nor `b`, below `limit`
    /// (for_each_cpu_andnot's step over a mask's complement, without building it).
    pub fn next_in_neither(a: &CpuMask, b: &CpuMask, from: CpuId, limit: CpuId) -> Option<CpuId> {
        let mut i = from / 64;
        let mut w = !(a.bits.get(i)? | b.bits[i]) & (!0u64 << (from % 64));
        loop {
            if w != 0 {
                let c = i * 64 + w.trailing_zeros() as usize;
                return (c < limit).then_some(c);
            }
            i += 1;
            if i >= WORDS || i * 64 >= limit {
                return None;
            }
            w = !(a.bits[i] | b.bits[i]);
        }
    }

    /// Word `i` of the mask: CPUs 64i to 64i + 63.
    #[inline]
    pub fn word(&self, i: usize) -> u64 {
        self.bits[i]
    }

    /// The mask's words in for_each_cpu_wrap order from `from`, as (word index, its CPUs
    /// still to walk): `iter_wrap` a word at a time, for walks that test 64 CPUs at once.
    pub fn wrap_words(&self, from: CpuId) -> impl Iterator<Item = (usize, u64)> + '_ {
        let from = if from >= MAX_CPUS { 0 } else { from };
        let (idx, bit) = (from / 64, from % 64);
        let head = std::iter::once((idx, self.bits[idx] & (!0u64 << bit)));
        let middle = (1..WORDS).map(move |k| (idx + k) % WORDS).map(|i| (i, self.bits[i]));
        let tail = std::iter::once((idx, self.bits[idx] & ((1u64 << bit) - 1)));
        head.chain(middle).chain(tail).filter(|&(_, w)| w != 0)
    }

    /// Returns the highest CPU in the mask.
    pub fn last(&self) -> Option<CpuId> {
        self.bits.iter().enumerate().rev().find(|(_, &w)| w != 0).map(|(i, w)| i * 64 + 63 - w.leading_zeros() as usize)
    }

    /// Returns the intersection.
    pub fn and(&self, other: &CpuMask) -> CpuMask {
        let mut m = *self;
        for (a, b) in m.bits.iter_mut().zip(other.bits.iter()) {
            *a &= *b;
        }
        m
    }

    /// Returns the CPUs of `self` not in `other`.
    pub fn andnot(&self, other: &CpuMask) -> CpuMask {
        let mut m = *self;
        for (a, b) in m.bits.iter_mut().zip(other.bits.iter()) {
            *a &= !*b;
        }
        m
    }

    /// Returns the union.
    pub fn or(&self, other: &CpuMask) -> CpuMask {
        let mut m = *self;
        for (a, b) in m.bits.iter_mut().zip(other.bits.iter()) {
            *a |= *b;
        }
        m
    }

    /// Tells whether every CPU of `self` is in `other`.
    pub fn is_subset(&self, other: &CpuMask) -> bool {
        self.bits.iter().zip(other.bits.iter()).all(|(a, b)| a & !b == 0)
    }

    /// Tells whether the two masks share a CPU (cpumask_intersects).
    #[inline]
    pub fn intersects(&self, other: &CpuMask) -> bool {
        self.bits.iter().zip(other.bits.iter()).any(|(a, b)| a & b != 0)
    }

    /// Iterates the CPUs in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = CpuId> + '_ {
        self.iter_from(0)
    }

    /// Iterates the CPUs >= `from` in ascending order.
    pub fn iter_from(&self, from: CpuId) -> CpuIter<'_> {
        if from >= MAX_CPUS {
            return CpuIter { bits: &self.bits, idx: 0, w: 0, steps_left: 0, last_mask: 0 };
        }
        let idx = from / 64;
        CpuIter { bits: &self.bits, idx, w: self.bits[idx] & (!0u64 << (from % 64)), steps_left: WORDS - 1 - idx, last_mask: !0 }
    }

    /// Iterates the CPUs from `from` up, then wrapping round to those below it
    /// (for_each_cpu_wrap).
    pub fn iter_wrap(&self, from: CpuId) -> CpuIter<'_> {
        let from = if from >= MAX_CPUS { 0 } else { from };
        let (idx, bit) = (from / 64, from % 64);
        // Every other word once, then the first word again for the bits below `from`.
        CpuIter { bits: &self.bits, idx, w: self.bits[idx] & (!0u64 << bit), steps_left: WORDS, last_mask: (1u64 << bit) - 1 }
    }

    /// Parses a kernel cpulist ("0-3,8,10-11").
    pub fn parse_list(text: &str) -> Result<CpuMask, String> {
        let mut m = CpuMask::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let lo: usize = lo.parse().map_err(|_| format!("'{part}' is not a CPU number or range"))?;
            let hi: usize = hi.parse().map_err(|_| format!("'{part}' is not a CPU number or range"))?;
            if lo > hi || hi >= MAX_CPUS {
                return Err(format!("'{part}' is not a valid range below {MAX_CPUS}"));
            }
            for c in lo..=hi {
                m.set(c);
            }
        }
        Ok(m)
    }

    /// Formats the mask as a kernel cpulist.
    pub fn to_list(&self) -> String {
        let mut out = Vec::new();
        let cpus: Vec<_> = self.iter().collect();
        let mut i = 0;
        while i < cpus.len() {
            let mut j = i;
            while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
                j += 1;
            }
            out.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
            i = j + 1;
        }
        out.join(",")
    }
}

/// The CPUs of a mask in a walk over its words (see `iter_from` and `iter_wrap`): a plain
/// struct rather than an iterator chain, since the wakeup scans step it on every wakeup.
pub struct CpuIter<'a> {
    bits: &'a [u64; WORDS],
    /// The word being walked, and its bits not yet returned.
    idx: usize,
    w: u64,
    /// Words still to load; the last one is masked with `last_mask`.
    steps_left: usize,
    last_mask: u64,
}

impl Iterator for CpuIter<'_> {
    type Item = CpuId;

    #[inline]
    fn next(&mut self) -> Option<CpuId> {
        loop {
            if self.w != 0 {
                let b = self.w.trailing_zeros() as usize;
                self.w &= self.w - 1;
                return Some(self.idx * 64 + b);
            }
            if self.steps_left == 0 {
                return None;
            }
            self.steps_left -= 1;
            self.idx = if self.idx + 1 == WORDS { 0 } else { self.idx + 1 };
            self.w = self.bits[self.idx];
            if self.steps_left == 0 {
                self.w &= self.last_mask;
            }
        }
    }
}

impl serde::Serialize for CpuMask {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_list())
    }
}

impl std::fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CpuMask({})", self.to_list())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulist_round_trip() {
        let m = CpuMask::parse_list("0-3,8,10-11").unwrap();
        assert_eq!(m.weight(), 7);
        assert_eq!(m.to_list(), "0-3,8,10-11");
        assert!(m.test(8) && !m.test(9));
        assert!(CpuMask::parse_list("3-1").is_err());
        assert!(CpuMask::parse_list("x").is_err());
    }

    #[test]
    fn complement_walk_last_cpu_and_wrapped_order() {
        let a = CpuMask::parse_list("0-2,64,70").unwrap();
        let b = CpuMask::parse_list("3,5-63").unwrap();
        let mut got = Vec::new();
        let mut c = 0;
        while let Some(x) = CpuMask::next_in_neither(&a, &b, c, 72) {
            got.push(x);
            c = x + 1;
        }
        assert_eq!(got, vec![4, 65, 66, 67, 68, 69, 71]);
        assert_eq!(CpuMask::next_in_neither(&a, &b, 0, 4), None);
        assert_eq!((a.first(), a.last(), b.last(), CpuMask::new().last()), (Some(0), Some(70), Some(63), None));
        // The word walk against a bit-by-bit reference, the last CPU included.
        let mut w = a;
        w.set(MAX_CPUS - 1);
        let every: Vec<_> = (0..MAX_CPUS).filter(|&c| w.test(c)).collect();
        assert_eq!(w.iter().collect::<Vec<_>>(), every);
        for from in [0, 1, 3, 64, 65, 71, MAX_CPUS - 1, MAX_CPUS] {
            let above: Vec<_> = every.iter().copied().filter(|&c| c >= from).collect();
            assert_eq!(w.iter_from(from).collect::<Vec<_>>(), above, "from {from}");
            let want: Vec<_> = above.iter().copied().chain(every.iter().copied().filter(|&c| c < from)).collect();
            assert_eq!(w.iter_wrap(from).collect::<Vec<_>>(), want, "from {from}");
            let by_words: Vec<_> =
                w.wrap_words(from).flat_map(|(i, bits)| (0..64).filter(move |b| bits >> b & 1 == 1).map(move |b| i * 64 + b)).collect();
            assert_eq!(by_words, want, "words from {from}");
        }
        assert_eq!(CpuMask::next_in_neither(&a, &b, MAX_CPUS - 1, MAX_CPUS), Some(MAX_CPUS - 1));
    }
}
