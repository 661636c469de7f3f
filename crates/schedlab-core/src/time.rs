//! Simulated time: integer nanoseconds, never floating point.
//!
//! Model: one clock for the whole machine (rq clocks, jiffies and hrtimers all derive
//! from it), so two runs with the same seed are bit-identical on any host.

/// Simulated time or a duration, in nanoseconds.
pub type Ns = u64;

/// Nanoseconds per microsecond.
pub const NSEC_PER_USEC: Ns = 1_000;
/// Nanoseconds per millisecond.
pub const NSEC_PER_MSEC: Ns = 1_000_000;
/// Nanoseconds per second.
pub const NSEC_PER_SEC: Ns = 1_000_000_000;

/// a * b / c, rounded down, in 64 bits unless the product overflows (a 128-bit
/// division is a slow library call).
pub(crate) fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p / c,
        None => (a as u128 * b as u128 / c as u128) as u64,
    }
}

/// a * b / c, rounded up (see [`mul_div`]).
pub(crate) fn mul_div_ceil(a: u64, b: u64, c: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p.div_ceil(c),
        None => (a as u128 * b as u128).div_ceil(c as u128) as u64,
    }
}

/// Returns the length of one jiffy (tick period) at the given HZ.
pub fn tick_nsec(hz: u32) -> Ns {
    NSEC_PER_SEC / hz as Ns
}

/// The longest duration a scenario may write (10^6 s, 11.6 days): sums of a few stay far
/// from the clock's 2^64 ns, and runs stop at [`MAX_SIM_NS`] at the latest.
pub const MAX_DURATION_NS: Ns = 1_000_000 * NSEC_PER_SEC;

/// The simulated time no run goes past (2^62 ns, 146 years): the clock plus any duration
/// a scenario may write stays below 2^64 ns.
pub const MAX_SIM_NS: Ns = 1 << 62;

/// Parses a duration with an explicit unit ("10ms", "2.5s", "100us", "750ns").
///
/// Returns a message naming what was expected when the text has no known unit.
pub fn parse_duration(text: &str) -> Result<Ns, String> {
    let t = text.trim();
    let split =
        t.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(|| format!("'{t}' has no unit: expected a number with ns, us, ms or s"))?;
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| format!("'{t}' is not a number followed by a unit"))?;
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => return Err(format!("unknown unit '{other}' in '{t}': expected ns, us, ms or s")),
    };
    if !value.is_finite() || value < 0.0 {
        return Err(format!("'{t}' must be a non-negative duration"));
    }
    let ns = (value * scale).round();
    if ns > MAX_DURATION_NS as f64 {
        return Err(format!("'{t}' is longer than the {} s a duration may be", MAX_DURATION_NS / NSEC_PER_SEC));
    }
    Ok(ns as Ns)
}

/// A duration written with its unit ("10ms", "2.5s", "100us").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub Ns);

impl serde::Serialize for Duration {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}ns", self.0))
    }
}

impl<'de> serde::Deserialize<'de> for Duration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Duration;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a duration string with a unit, like \"10ms\", \"250us\" or \"1.5s\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Duration, E> {
                parse_duration(v).map(Duration).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul_div_rounds_as_named_with_or_without_overflow() {
        assert_eq!((mul_div(7, 3, 2), mul_div_ceil(7, 3, 2), mul_div_ceil(8, 3, 2)), (10, 11, 12));
        // 2^40 * 2^40 overflows 64 bits: the 128-bit path gives the exact quotient.
        let big = 1u64 << 40;
        assert_eq!(mul_div(big, big, 1 << 30), 1 << 50);
        assert_eq!(mul_div_ceil(big, big + 1, 1 << 50), (1 << 30) + 1);
    }

    #[test]
    fn parses_units_and_rejects_bare_numbers() {
        assert_eq!(parse_duration("10ms"), Ok(10 * NSEC_PER_MSEC));
        assert_eq!(parse_duration("2.5s"), Ok(2_500_000_000));
        assert_eq!(parse_duration("100 us"), Ok(100_000));
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("10 parsecs").is_err());
        assert_eq!(tick_nsec(250), 4 * NSEC_PER_MSEC);
    }
}
