//! Seeded random streams, one per named use, so a change in one use never shifts another.
//!
//! Model: PCG-64 (rand_pcg::Pcg64Mcg); a stream's seed mixes the run seed with a
//! stable FNV-1a hash of the stream's name through SplitMix64. Tasks draw from their
//! own stream, so two configurations of one scenario see the same random durations
//! (common random numbers) and their difference is the mechanism's.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// A named random stream.
#[derive(Clone, Debug)]
pub struct Stream(Pcg64Mcg);

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv1a_from(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// A uniform draw in `0..n` that depends only on the run's seed and `keys`, with no stream
/// state: an event's own randomness (a CPU's tick delivery at a given jiffy) stays the
/// same whatever else the run draws, and draws nothing from another stream.
pub fn keyed_below(seed: u64, keys: &[u64], n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let h = keys.iter().fold(splitmix64(seed ^ FNV_OFFSET), |h, &k| splitmix64(h ^ k));
    h % n
}

impl Stream {
    /// Creates the stream `name` of run `seed`.
    pub fn new(seed: u64, name: &str) -> Stream {
        Stream::from_hash(seed, fnv1a_from(FNV_OFFSET, name.as_bytes()))
    }

    /// The stream `task:{tid}`, its name written on the stack (a build of 100,000 tasks
    /// allocated 100,000 strings for it).
    pub fn for_task(seed: u64, tid: usize) -> Stream {
        use std::io::Write;
        let mut name = std::io::Cursor::new([0u8; 32]);
        write!(name, "task:{tid}").expect("a usize fits in 32 bytes with its prefix");
        let len = name.position() as usize;
        Stream::from_hash(seed, fnv1a_from(FNV_OFFSET, &name.get_ref()[..len]))
    }

    fn from_hash(seed: u64, name_hash: u64) -> Stream {
        let a = splitmix64(seed ^ name_hash);
        let b = splitmix64(a);
        Stream(Pcg64Mcg::new(((a as u128) << 64) | b as u128 | 1))
    }

    /// Returns an exponentially distributed duration with the given mean (ns).
    pub fn exp(&mut self, mean: u64) -> u64 {
        let u: f64 = self.0.random::<f64>();
        (-(1.0 - u).ln() * mean as f64).round() as u64
    }

    /// Returns a uniform integer in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.random_range(0..n.max(1))
    }

    /// Returns a uniform float in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.0.random::<f64>()
    }
}

impl SeedableRng for Stream {
    type Seed = [u8; 8];
    fn from_seed(seed: [u8; 8]) -> Self {
        Stream::new(u64::from_le_bytes(seed), "")
    }
}

impl rand::RngCore for Stream {
    fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.0.fill_bytes(dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let mut a = Stream::new(7, "task:1");
        let mut b = Stream::new(7, "task:1");
        let mut c = Stream::new(7, "task:2");
        let xa: Vec<u64> = (0..4).map(|_| a.below(1 << 40)).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.below(1 << 40)).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.below(1 << 40)).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn a_task_stream_is_the_stream_of_its_name() {
        for tid in [0, 1, 9, 10, 99, 100, 12_345, 99_999, 1 << 40, usize::MAX] {
            let (mut a, mut b) = (Stream::for_task(11, tid), Stream::new(11, &format!("task:{tid}")));
            assert_eq!((a.below(1 << 60), a.below(1 << 60)), (b.below(1 << 60), b.below(1 << 60)), "task {tid}");
        }
    }
}
