//! Where a hardware figure comes from, what kind of figure it is, and how sure it is.
//!
//! Mirrors: nothing in the kernel. The kernel's code reads *declared* figures (what
//! firmware or a device tree tells it, such as an idle state's exit latency); the
//! hardware takes *measured* time. A simulator that charges the declared bound as the
//! wake invents effects, so every figure the model charges says which it is.
//! Model: a figure is a point value with a band [low, high] its source justifies: a
//! measured median with its spread, a derived figure with its assumption, an estimate
//! with a wide band. Results that depend on a figure with a wide band say so.

use std::borrow::Cow;

use serde::Serialize;

/// What kind of figure a constant is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A benchmark of the silicon (or of the part's family, as the source says).
    Measured,
    /// What firmware or a device tree tells the kernel (the governors read it; the
    /// hardware need not take that long).
    Declared,
    /// Computed from other sources, with the assumption stated.
    Derived,
    /// No source: a reasoned guess with a wide band.
    Estimate,
    /// Set by the scenario (`[machine.cost]`), replacing the preset's figure.
    Override,
}

impl Kind {
    /// The snake_case name used in output.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Measured => "measured",
            Kind::Declared => "declared",
            Kind::Derived => "derived",
            Kind::Estimate => "estimate",
            Kind::Override => "override",
        }
    }
}

/// The source, kind and band of one figure (its value lives where it is used).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Provenance {
    /// What kind of figure it is.
    pub kind: Kind,
    /// Lowest value the source supports, in the figure's unit.
    pub low: f64,
    /// Highest value the source supports, in the figure's unit.
    pub high: f64,
    /// Citation, and the assumption for a derived figure or the reasoning of an estimate.
    pub source: Cow<'static, str>,
}

impl Provenance {
    /// A figure of `kind` with band [low, high] and its source.
    pub fn new(kind: Kind, low: f64, high: f64, source: impl Into<Cow<'static, str>>) -> Provenance {
        debug_assert!(low <= high, "band [{low}, {high}] is reversed");
        Provenance { kind, low, high, source: source.into() }
    }

    /// An exact figure (band of zero width): a declared table entry or a definition.
    pub fn exact(kind: Kind, value: f64, source: impl Into<Cow<'static, str>>) -> Provenance {
        Provenance::new(kind, value, value, source)
    }

    /// The provenance of a value the scenario set: exact, kind `override`.
    pub fn overridden(value: f64) -> Provenance {
        Provenance::exact(Kind::Override, value, "set by the scenario")
    }

    /// Whether `value` lies inside the band.
    pub fn contains(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_hold_their_value() {
        let p = Provenance::new(Kind::Measured, 5.0, 15.0, "gVisor PR #14526");
        assert!(p.contains(10.0) && !p.contains(16.0) && !p.contains(4.9));
        let o = Provenance::overridden(40.0);
        assert_eq!((o.kind, o.low, o.high), (Kind::Override, 40.0, 40.0));
        assert_eq!(serde_json::to_value(Kind::Derived).unwrap(), "derived");
    }
}
